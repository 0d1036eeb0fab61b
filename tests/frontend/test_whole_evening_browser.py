"""The whole evening as people live it, in Chromium and in French: the organiser invites six
members, who sign up on their phones and register themselves; at the door he checks them in,
undoes one check-in made by mistake, opens the soirée and gives a rebuy; after the close a
player disputes a hand, the arbiter sees the effect of a void and rules it; the results page,
the PDF's text and the settlement CSV all show the correction, and the transfers shown at the
close are still there. At 390 and 1280 px; screenshots in the test's folder and /tmp/shots."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone
from playwright.sync_api import Page, expect

from games.models import Hand
from ledger.models import Posting
from tests.pdf import pdf_pages_text
from tournaments.models import Registration, Ruling, Soiree
from tournaments.services import club_create, membership_add, soiree_create

from .conftest import fits, shot, sign_in

pytestmark = [pytest.mark.postgres, pytest.mark.browser]

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
NEWCOMERS = (("ana", "Ana", "Lenoir"), ("basile", "Basile", "Roux"),
             ("cecile", "Cécile", "Aubert"), ("damien", "Damien", "Morel"),
             ("eloise", "Éloïse", "Faure"), ("fabien", "Fabien", "Garnier"))
PASSWORD = "Vingt-et-un-au-Comet"


def _sign_out(page: Page) -> None:
    page.click("header form[action='/accounts/logout/'] button")


def _moved(hand: Hand) -> bool:
    return Posting.objects.filter(entry__source__startswith=f"hand:{hand.pk}/",
                                  account__owner__isnull=False).exists()


@pytest.mark.parametrize("live_server_process", ["embedded"], indirect=True)
def test_an_evening_from_the_invitations_to_the_ruling_on_its_settlement(
        live_server_process: Any, page: Page, organiser: Any, tmp_path: Path,
        django_user_model: Any) -> None:
    club = club_create(name="Cercle des Lumières", slug="lumieres", organiser=organiser)
    arbiter = django_user_model.objects.create_user("arbitre", password=PASSWORD)
    membership_add(club=club, user=arbiter, role="auditor")
    now = timezone.now()
    soiree = soiree_create(club=club, name="Samedi de Ma commère", game="commere",
                           starts_at=now + timedelta(hours=1), ends_at=now + timedelta(hours=3),
                           buy_in=60, move_timeout=timedelta(seconds=1), deals_per_partie=2,
                           pause_between_hands=timedelta(seconds=1),
                           forced_move_delay=timedelta(0), comet_window=timedelta(0),
                           share_window=timedelta(seconds=1), created_by=organiser)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.context.set_extra_http_headers({"Accept-Language": "fr-FR,fr;q=0.9"})
    url = live_server_process.url

    # The organiser makes six invitation links on his club's page.
    page.set_viewport_size(DESKTOP)
    sign_in(page, url, "olga", "pw-olga-123", f"/clubs/{club.pk}/members")
    links = []
    for _ in NEWCOMERS:
        page.click("#make-link")
        links.append(page.locator("#new-link").input_value())
    assert len(set(links)) == 6
    shot(page, tmp_path, "whole-1-desktop-fr-members")
    _sign_out(page)

    # Each signs up on a phone with his name, and registers for the soirée himself.
    page.set_viewport_size(PHONE)
    for link, (username, first, last) in zip(links, NEWCOMERS, strict=True):
        page.goto(link)
        page.fill("#id_username", username)
        page.fill("#id_first_name", first)
        page.fill("#id_last_name", last)
        page.fill("#id_password1", PASSWORD)
        page.fill("#id_password2", PASSWORD)
        page.click("#sign-up button[type=submit]")
        expect(page.locator("h1")).to_have_text("Accueil")
        page.goto(f"{url}/soirees/{soiree.pk}/")
        page.get_by_role("button", name="S’inscrire").click()
        expect(page.get_by_role("button", name="Se désinscrire")).to_be_visible()
        if username == "ana":
            assert fits(page, PHONE["width"])
            shot(page, tmp_path, "whole-2-phone-fr-registered")
        _sign_out(page)
    assert Registration.objects.filter(soiree=soiree).count() == 6

    # At the door: six check-ins, one undone (a mistake), the opening, a rebuy.
    page.set_viewport_size(DESKTOP)
    sign_in(page, url, "olga", "pw-olga-123", f"/soirees/{soiree.pk}/manage")
    page.on("dialog", lambda dialog: dialog.accept())  # each undoing action asks first
    for username, *_ in NEWCOMERS:
        row = page.locator(f'#registrations li[data-player="{username}"]')
        row.get_by_role("button", name="Pointer").click()
        expect(row).to_contain_text("pointé à")
    fabien = page.locator('#registrations li[data-player="fabien"]')
    fabien.get_by_role("button", name="Annuler le pointage").click()
    expect(fabien).to_contain_text("pas encore pointé")
    page.get_by_role("button", name="Ouvrir maintenant").click()
    expect(page.locator("#status")).to_have_text("en cours")
    ana = page.locator('#registrations li[data-player="ana"]')
    ana.get_by_role("button", name="Recave (60)").click()
    # Her stack: the buy-in and the rebuy, less an ante if a hand began meanwhile.
    expect(ana.locator("[data-chips-of=ana]")).to_have_text(re.compile(r"^(11\d|120) jetons$"))
    page.reload()  # the chips stay shown after a reload
    expect(page.locator("[data-chips-of=ana]")).to_have_text(re.compile(r"^(11\d|120) jetons$"))
    shot(page, tmp_path, "whole-3-desktop-fr-manage")
    soiree.refresh_from_db()
    seated = set(Hand.objects.filter(partie__soiree_table__soiree=soiree)
                 .values_list("partie__seats__player__username", flat=True))
    assert {"ana", "basile", "cecile", "damien", "eloise"} <= seated and "fabien" not in seated
    page.get_by_role("button", name="Clore maintenant").click()
    for _ in range(180):
        soiree.refresh_from_db()
        if soiree.status == Soiree.Status.CLOSED:
            break
        page.wait_for_timeout(1000)
    assert soiree.status == Soiree.Status.CLOSED
    shown = list(soiree.settlement["transfers"])
    _sign_out(page)

    # A player disputes a hand she played; the arbiter sees a void's effect, then rules it.
    hand = next(h for h in Hand.objects.filter(partie__soiree_table__soiree=soiree,
                                               partie__seats__player__username="ana")
                .order_by("started_at") if _moved(h))
    page.set_viewport_size(PHONE)
    sign_in(page, url, "ana", PASSWORD, f"/hands/{hand.pk}/audit")
    page.fill("#dispute-reason", "Une carte a été donnée deux fois.")
    page.get_by_role("button", name="Ouvrir une contestation").click()
    expect(page.locator(".dispute")).to_contain_text("Une carte a été donnée deux fois.")
    _sign_out(page)
    page.set_viewport_size(DESKTOP)
    sign_in(page, url, "arbitre", PASSWORD, f"/hands/{hand.pk}/audit")
    rule = page.locator("form.rule-form")
    rule.locator("input[name=kind][value=void]").check()
    rule.get_by_role("button", name="Voir son effet").click()
    expect(rule.locator(".effect")).to_contain_text("Avant qu’elle soit passée")
    rule.locator("textarea[name=reason]").fill("Donne mal distribuée : elle est annulée.")
    rule.get_by_role("button", name="Décider").click()
    expect(page.locator(".ruling")).to_contain_text("la donne est annulée")
    assert Ruling.objects.get().kind == "void"
    _sign_out(page)

    # Everyone's sheets show the correction, after the transfers shown at the close.
    soiree.refresh_from_db()
    assert soiree.settlement["transfers"] == shown and soiree.settlement["corrections"]
    sign_in(page, url, "basile", PASSWORD, f"/soirees/{soiree.pk}/results")
    lines = page.locator("#settlement-lines li")
    expect(lines).to_have_count(len(shown) + len(soiree.settlement["corrections"]))
    expect(page.locator("#settlement-lines")).to_contain_text("correction après une décision")
    expect(page.locator(".standings")).to_contain_text("Ana Lenoir")
    shot(page, tmp_path, "whole-4-desktop-fr-results")
    page.set_viewport_size(PHONE)
    assert fits(page, PHONE["width"])
    shot(page, tmp_path, "whole-5-phone-fr-results")
    with page.expect_download() as download:
        page.get_by_role("link", name="Télécharger le PDF").click()
    text = pdf_pages_text(Path(download.value.path()).read_bytes())
    assert "correction après une décision" in text and "Ana Lenoir" in text
    csv = page.request.get(f"{url}/soirees/{soiree.pk}/settlement.csv").text()
    assert "correction après une décision" in csv
    assert errors == []
