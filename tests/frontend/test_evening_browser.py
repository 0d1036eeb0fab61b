"""A whole evening run from the pages in Chromium: the organiser creates a soirée, changes it,
checks four people in with a click each, opens it (bots fill the table), gives a rebuy, tells
the room something, has an absent player replaced by a bot, watches the standings and the room
screen follow the hands, closes it and downloads the results sheet. French on a phone and
English on a desktop; screenshots in the test's folder and /tmp/shots."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone
from playwright.sync_api import Page, expect

from games.models import Hand
from ledger.models import Account
from tournaments.models import Announcement, Membership, Soiree
from tournaments.services import club_create, membership_add, registration_add

from .conftest import shot, wait_for_js

pytestmark = [pytest.mark.postgres, pytest.mark.browser]

PASSWORD = "pw-for-tests"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1440, "height": 900}
MEMBERS = ("alice", "bruno", "chloe", "denis")


def _local(at: Any) -> str:
    return timezone.localtime(at).strftime("%Y-%m-%dT%H:%M")


def _switch_language(page: Page, code: str) -> None:
    page.select_option("#language-switch select", code)
    page.click("#language-switch button")
    wait_for_js(page, f"document.documentElement.lang === '{code}'")


def _fits(page: Page) -> bool:
    return bool(page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"))


@pytest.mark.parametrize("live_server_process", ["embedded"], indirect=True)
def test_an_organiser_runs_a_whole_evening_from_the_pages(
        live_server_process: Any, page: Page, django_user_model: Any, tmp_path: Path,
        organiser: Any) -> None:
    organiser.set_password(PASSWORD)
    organiser.save()
    club = club_create(name="Cercle des Lumières", slug="lumieres", organiser=organiser)
    members = [django_user_model.objects.create_user(name, password=PASSWORD)
               for name in MEMBERS]
    for member in members:
        membership_add(club=club, user=member, role=Membership.Role.PLAYER)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.set_viewport_size(PHONE)
    page.context.set_extra_http_headers({"Accept-Language": "fr-FR,fr;q=0.9"})
    url = live_server_process.url

    page.goto(f"{url}/accounts/login/?next=/soirees/new")
    page.fill("#id_username", organiser.username)
    page.fill("#id_password", PASSWORD)
    page.click("main button[type=submit]")

    # Created: Ma commère, a second to move, bots allowed; then changed before it opens.
    starts = timezone.now() + timedelta(hours=1)
    form = page.locator("#new-soiree")
    form.get_by_label("Nom").fill("Samedi de Ma commère")
    form.get_by_label("Jeu").select_option("commere")
    form.get_by_label("Début").fill(_local(starts))
    form.get_by_label("Fin").fill(_local(starts + timedelta(hours=3)))
    form.get_by_label("Temps pour jouer (secondes)").fill("1")
    form.get_by_role("button", name="Créer la soirée").click()
    page.wait_for_url("**/manage")
    soiree = Soiree.objects.get()
    page.get_by_role("link", name="Modifier la soirée (nom, jeu, horaires, cave, robots)").click()
    page.wait_for_url("**/edit")
    page.get_by_label("Cave (jetons)").fill("60")
    page.get_by_role("button", name="Enregistrer les modifications").click()
    page.wait_for_url("**/manage")
    expect(page.locator("#facts")).to_contain_text("60 jetons")
    soiree.refresh_from_db()
    assert soiree.buy_in == 60

    # The door: four registered people checked in with a click each.
    for member in members:
        registration_add(soiree=soiree, user=member)
    page.reload()
    for name in MEMBERS:
        row = page.locator(f'#registrations li[data-player="{name}"]')
        row.get_by_role("button", name="Pointer").click()
        expect(row).to_contain_text("pointé à")

    # Opened now: one table, the four people and three of the club's bots.
    page.get_by_role("button", name="Ouvrir maintenant").click()
    expect(page.locator("#status")).to_have_text("en cours")
    table = page.locator("#tables-now .seating-table")
    expect(table).to_have_count(1)
    expect(table.locator("li")).to_have_count(7)
    expect(table).to_contain_text("(robot)")

    # A rebuy (double-clicked: posted once), through the ledger.
    alice = page.locator('#registrations li[data-player="alice"]')
    alice.get_by_role("button", name="Recave (60)").dblclick()
    # Her stack at this soirée: the buy-in and one rebuy, less an ante if a hand began.
    expect(alice.locator("[data-chips-of=alice]")).to_have_text(re.compile(r"^(11\d|120) jetons$"))
    wallet = Account.objects.get(club_key="lumieres", owner=members[0], kind="wallet",
                                 ref=soiree.stack_ref)
    rebuys = wallet.postings.filter(entry__source__endswith="/rebuy").count()
    assert rebuys == 1

    # Words to the room, and bruno, absent, replaced by a bot after the hand in play.
    page.get_by_label("Annoncer à la salle").fill("Pause à 22 h")
    page.get_by_role("button", name="Annoncer", exact=True).click()
    expect(page.locator("#announcements")).to_contain_text("Pause à 22 h")
    asked: list[str] = []

    def accept(dialog: Any) -> None:  # the page asks before a player is replaced
        asked.append(dialog.message)
        dialog.accept()

    page.once("dialog", accept)
    page.locator('#tables-now li[data-player="bruno"]').get_by_role(
        "button", name="Remplacer par un robot").click()
    expect(page.locator("#announcements")).to_contain_text(
        "bruno cède sa place à un robot à la table 1")
    assert len(asked) == 1 and "bruno" in asked[0]
    assert _fits(page)
    shot(page, tmp_path, "evening-1-phone-fr-manage")

    # At the table, the change is announced (here to a spectator, on the phone).
    hand = Hand.objects.filter(partie__soiree_table__soiree=soiree).latest("started_at")
    page.goto(f"{url}/hands/{hand.pk}/")
    expect(page.locator("#news")).to_contain_text("bruno cède sa place à un robot à la table 1")
    shot(page, tmp_path, "evening-2-phone-fr-table-news")

    # The room screen (English, on a desktop) and the soirée page follow the hands.
    page.goto(f"{url}/soirees/{soiree.pk}/manage")
    _switch_language(page, "en")
    # (The tables' section is there only while a partie is in play: between two it is not.)
    expect(page.locator("#registrations-title")).to_have_text("Registrations")
    shot(page, tmp_path, "evening-3-phone-en-manage")
    room = page.context.new_page()
    room.set_viewport_size(DESKTOP)
    room.goto(f"{url}/soirees/{soiree.pk}/room")
    wait_for_js(room, "document.querySelectorAll('#news li').length >= 2")
    wait_for_js(room, "document.querySelectorAll('.room-table li').length === 7")
    expect(room.locator("#news-title")).to_have_text("Announcements")
    page.goto(f"{url}/soirees/{soiree.pk}/")
    wait_for_js(page, "document.querySelectorAll('#standings tr').length > 1", timeout=90)
    first = page.locator("#standings").inner_text()
    wait_for_js(room, "document.querySelectorAll('#leaders li').length > 0", timeout=30)
    # bruno's seat goes to a bot once the first partie is between hands.
    wait_for_js(page, "document.querySelector('#news') && "
                      "/bruno's seat at table 1/.test(document.querySelector('#news').innerText)"
                      " && !document.querySelector('#news li.pending')", timeout=90)
    wait_for_js(page, f"document.querySelector('#standings').innerText !== {first!r}",
                timeout=90)
    assert Announcement.objects.filter(soiree=soiree, kind="replace",
                                       done_at__isnull=False).count() == 1
    shot(room, tmp_path, "evening-4-desktop-en-room")
    assert _fits(page)
    shot(page, tmp_path, "evening-5-phone-en-soiree")

    # Closed from the manage page (in French again): the hand in play finishes, then the
    # settlement.
    page.goto(f"{url}/soirees/{soiree.pk}/manage")
    _switch_language(page, "fr")
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Clore maintenant").click()
    expect(page.locator("#facts")).to_contain_text("Clôture demandée à")
    for _ in range(120):
        soiree.refresh_from_db()
        if soiree.status == Soiree.Status.CLOSED:
            break
        page.wait_for_timeout(500)
    assert soiree.status == Soiree.Status.CLOSED
    page.goto(f"{url}/soirees/{soiree.pk}/results")
    with page.expect_download() as download:
        page.locator(f'a[href="/soirees/{soiree.pk}/results.pdf"]').click()
    pdf = Path(download.value.path()).read_bytes()
    assert pdf.startswith(b"%PDF") and len(pdf) > 1000
    names = {row["player"] for row in soiree.standings["players"]}
    assert {"alice", "chloe", "denis"} <= names
    # Among the people, and the club for its bots; the bots are listed apart.
    assert not names & {row["player"] for row in soiree.standings["bots"]}
    assert all({t["from"], t["to"]} <= names | {"#club"}
               for t in soiree.settlement["transfers"])
    page.set_viewport_size(DESKTOP)
    shot(page, tmp_path, "evening-6-desktop-fr-results")
    assert errors == []
