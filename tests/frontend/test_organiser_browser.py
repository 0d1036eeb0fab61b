"""An organiser runs a soirée from the pages in a real browser: creates it from the lobby's link
(after a refusal the page explains), checks four members in with a click each, opens it, reads
the seating and its seed (and prints it without the buttons), and closes it after confirming;
on a 390 px phone and a desktop, in French and in English. Screenshots are kept in the test's
folder and copied to /tmp/shots."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone
from playwright.sync_api import Page, expect

from tournaments.models import Membership, Registration, Soiree, SoireeTable
from tournaments.services import club_create, membership_add, registration_add

from .conftest import shot, wait_for_js

pytestmark = [pytest.mark.postgres, pytest.mark.browser]

PASSWORD = "pw-for-tests"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
MEMBERS = ("alice", "bruno", "chloe", "denis")


def _fits(page: Page, width: int) -> bool:
    """Nothing on the page is wider than the screen (no sideways scrolling)."""
    return bool(page.evaluate(f"document.documentElement.scrollWidth <= {width}"))


def _local(at: Any) -> str:
    """``at`` as a datetime-local input's value, in the club's time zone."""
    return timezone.localtime(at).strftime("%Y-%m-%dT%H:%M")


def _switch_language(page: Page, code: str) -> None:
    page.select_option("#language-switch select", code)
    page.click("#language-switch button")
    wait_for_js(page, f"document.documentElement.lang === '{code}'")


@pytest.mark.parametrize("live_server_process", ["embedded"], indirect=True)
def test_an_organiser_creates_checks_in_opens_and_closes_a_soiree_from_the_pages(
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
    page.on("console", lambda message: errors.append(message.text)
            if "Content Security Policy" in message.text else None)
    page.set_viewport_size(PHONE)
    page.context.set_extra_http_headers({"Accept-Language": "fr-FR,fr;q=0.9"})

    page.goto(f"{live_server_process.url}/accounts/login/?next=/")
    page.fill("#id_username", organiser.username)
    page.fill("#id_password", PASSWORD)
    page.click("main button[type=submit]")
    page.get_by_role("link", name="Créer une soirée").click()

    # The form, first with an end before the start: the API refuses and the page says why.
    starts = timezone.now() + timedelta(hours=2)
    form = page.locator("#new-soiree")
    expect(form.get_by_label("Club")).to_have_value("lumieres")
    form.get_by_label("Nom").fill("Jeudi de la Comète")
    form.get_by_label("Jeu").select_option("comet")
    form.get_by_label("Début").fill(_local(starts))
    form.get_by_label("Fin").fill(_local(starts - timedelta(hours=1)))
    form.get_by_label("Temps pour jouer (secondes)").fill("45")
    form.get_by_label("Cave (jetons)").fill("40")
    form.get_by_label("Donnes par partie").fill("3")
    assert form.get_by_label("Des robots peuvent compléter les places vides").is_checked()
    assert _fits(page, PHONE["width"])
    shot(page, tmp_path, "organiser-1-phone-fr-new")
    form.get_by_role("button", name="Créer la soirée").click()
    expect(form.get_by_role("alert")).to_contain_text("Refusé :")
    # The refusal in the page's language (French here, not the API's English default).
    expect(form.get_by_role("alert")).to_contain_text("Une soirée doit finir après son début")
    assert not Soiree.objects.exists()

    form.get_by_label("Fin").fill(_local(starts + timedelta(hours=3)))
    form.get_by_role("button", name="Créer la soirée").click()
    page.wait_for_url("**/manage")
    soiree = Soiree.objects.get()
    assert page.url.endswith(f"/soirees/{soiree.pk}/manage")
    assert (soiree.name, soiree.game, soiree.buy_in, soiree.deals_per_partie) == (
        "Jeudi de la Comète", "comet", 40, 3)
    assert soiree.move_timeout == timedelta(seconds=45) and soiree.bots_allowed
    assert _local(soiree.starts_at) == _local(starts)
    expect(page.locator("#status")).to_have_text("prévue")

    # The members register themselves (through the API, as the lobby's players would).
    for member in members:
        registration_add(soiree=soiree, user=member)
    page.reload()
    expect(page.locator("#registrations")).to_contain_text("4 joueurs inscrits ; pointés : 0.")
    for name in MEMBERS:
        row = page.locator(f'#registrations li[data-player="{name}"]')
        row.get_by_role("button", name="Pointer").click()
        expect(row).to_contain_text("pointé à")
    expect(page.locator("#registrations")).to_contain_text("4 joueurs inscrits ; pointés : 4.")
    assert Registration.objects.filter(soiree=soiree, checked_in_at__isnull=False).count() == 4

    # A late arrival nobody knows: refused, and said beside the form.
    late = page.locator("#late-arrival")
    late.get_by_label("Un retardataire").fill("zed")
    late.get_by_role("button", name="Pointer").click()
    expect(late.get_by_role("alert")).to_contain_text("Refusé :")
    expect(late.get_by_role("alert")).to_contain_text("no such player")
    assert _fits(page, PHONE["width"])
    shot(page, tmp_path, "organiser-2-phone-fr-checked-in")

    page.get_by_role("button", name="Ouvrir maintenant").click()
    expect(page.locator("#status")).to_have_text("en cours")
    soiree.refresh_from_db()
    assert soiree.seating_seed
    expect(page.locator("#seed")).to_have_text(soiree.seating_seed)
    seated = page.locator("#seating .seating-table li").all_inner_texts()
    assert set(MEMBERS) <= set(seated)
    assert page.locator("#seating .seating-table").count() == SoireeTable.objects.filter(
        soiree=soiree).count()
    assert _fits(page, PHONE["width"])
    shot(page, tmp_path, "organiser-3-phone-fr-seating")

    # Printed: the seating and its seed, without a button or a form.
    page.emulate_media(media="print")
    expect(page.locator("#seed")).to_be_visible()
    expect(page.get_by_role("button", name="Clore maintenant")).to_be_hidden()
    expect(page.get_by_role("button", name="Imprimer le placement")).to_be_hidden()
    expect(page.locator("header")).to_be_hidden()
    shot(page, tmp_path, "organiser-4-print-fr")
    page.emulate_media(media="screen")

    _switch_language(page, "en")
    expect(page.locator("#seating-title")).to_have_text("Seating")
    expect(page.locator("#status")).to_have_text("open")
    expect(page.get_by_role("button", name="Close now")).to_be_visible()
    assert _fits(page, PHONE["width"])
    shot(page, tmp_path, "organiser-5-phone-en-seating")
    page.set_viewport_size(DESKTOP)
    shot(page, tmp_path, "organiser-6-desktop-en-seating")
    page.goto(f"{live_server_process.url}/soirees/new")
    expect(page.get_by_role("button", name="Create the soirée")).to_be_visible()
    shot(page, tmp_path, "organiser-7-desktop-en-new")
    page.goto(f"{live_server_process.url}/soirees/{soiree.pk}/")
    page.get_by_role("link", name="Run the soirée (check-in, open, close, seating)").click()
    page.wait_for_url(f"**/soirees/{soiree.pk}/manage")
    _switch_language(page, "fr")

    # Closing asks first: dismissed, nothing happens; accepted, the soirée stops dealing.
    page.once("dialog", lambda dialog: dialog.dismiss())
    page.get_by_role("button", name="Clore maintenant").click()
    page.wait_for_timeout(500)
    soiree.refresh_from_db()
    assert soiree.close_asked_at is None
    messages: list[str] = []

    def accept(dialog: Any) -> None:
        messages.append(dialog.message)
        dialog.accept()

    page.once("dialog", accept)
    page.get_by_role("button", name="Clore maintenant").click()
    expect(page.locator("#facts")).to_contain_text("Clôture demandée à")
    assert messages and messages[0].startswith("Clore la soirée maintenant ?")
    soiree.refresh_from_db()
    assert soiree.close_asked_at is not None
    assert soiree.ends_at - soiree.starts_at == timedelta(hours=3)  # the planned times kept
    expect(page.get_by_role("button", name="Clore maintenant")).to_have_count(0)
    shot(page, tmp_path, "organiser-8-desktop-fr-closing")
    assert errors == []
