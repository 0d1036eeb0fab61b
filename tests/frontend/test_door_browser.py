"""At the door, on the organiser's page: a rebuy and a cash-out, each through the ledger."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone
from playwright.sync_api import Page, expect

from ledger.models import JournalEntry
from tournaments import services

from .conftest import shot

pytestmark = [pytest.mark.postgres, pytest.mark.browser]

PASSWORD = "pw-for-tests"


@pytest.mark.parametrize("live_server_process", ["embedded"], indirect=True)
def test_the_organiser_rebuys_and_cashes_out_a_player(
        live_server_process: Any, page: Page, django_user_model: Any, tmp_path: Path) -> None:
    olga = django_user_model.objects.create_user("olga", password=PASSWORD)
    alice = django_user_model.objects.create_user("alice", password=PASSWORD)
    club = services.club_create(name="Cercle", slug="cercle", organiser=olga)
    services.membership_add(club=club, user=alice, role="player")
    now = timezone.now()
    soiree = services.soiree_create(club=club, name="Jeudi", starts_at=now + timedelta(hours=1),
                                    ends_at=now + timedelta(hours=3), game="comet", buy_in=40)
    services.checkin(soiree=soiree, user=alice, at=now)
    page.goto(f"{live_server_process.url}/accounts/login/?next=/soirees/{soiree.pk}/manage")
    page.fill("#id_username", "olga")
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    person = page.locator('li.person[data-player="alice"]')

    person.get_by_role("button", name="Rebuy (40)").click()
    expect(person.locator(".chips")).to_have_text("80 chips")
    asked: list[str] = []

    def accept(dialog: Any) -> None:
        asked.append(dialog.message)
        dialog.accept()

    page.once("dialog", lambda dialog: dialog.dismiss())  # asked first: dismissed, nothing
    person.get_by_role("button", name="Cash out").click()
    page.wait_for_timeout(300)
    assert not JournalEntry.objects.filter(source=f"soiree:{soiree.pk}/cash-out").exists()
    page.once("dialog", accept)
    person.get_by_role("button", name="Cash out").click()
    expect(person.locator(".chips")).to_have_text("0 chips")
    assert asked == ["Cash alice out? All his chips go back to the bank."]
    shot(page, tmp_path, "door-rebuy-cash-out")

    sources = list(JournalEntry.objects.filter(source__startswith=f"soiree:{soiree.pk}/")
                   .order_by("id").values_list("source", flat=True))
    assert sources == [f"soiree:{soiree.pk}/buy-in", f"soiree:{soiree.pk}/rebuy",
                       f"soiree:{soiree.pk}/cash-out"]


@pytest.mark.parametrize("live_server_process", ["embedded"], indirect=True)
def test_a_check_in_undone_leaves_the_soiree_waiting_and_the_page_says_why(
        live_server_process: Any, page: Page, django_user_model: Any, tmp_path: Path) -> None:
    olga = django_user_model.objects.create_user("olga", password=PASSWORD)
    alice = django_user_model.objects.create_user("alice", password=PASSWORD)
    club = services.club_create(name="Cercle", slug="cercle", organiser=olga)
    services.membership_add(club=club, user=alice, role="player")
    now = timezone.now()
    soiree = services.soiree_create(club=club, name="Jeudi", starts_at=now + timedelta(hours=1),
                                    ends_at=now + timedelta(hours=3), game="comet", buy_in=40)
    services.checkin(soiree=soiree, user=alice, at=now)
    page.context.set_extra_http_headers({"Accept-Language": "fr"})
    page.goto(f"{live_server_process.url}/accounts/login/?next=/soirees/{soiree.pk}/manage")
    page.fill("#id_username", "olga")
    page.fill("#id_password", PASSWORD)
    page.click("main button[type=submit]")
    person = page.locator('li.person[data-player="alice"]')
    expect(person.get_by_role("button", name="Annuler le pointage")).to_be_visible()
    expect(page.locator("#waiting")).to_have_count(0)
    for width, name in ((1280, "desktop"), (390, "phone")):
        page.set_viewport_size({"width": width, "height": 900})
        shot(page, tmp_path, f"door-undo-{name}-fr")

    page.once("dialog", lambda dialog: dialog.accept())
    person.get_by_role("button", name="Annuler le pointage").click()
    expect(person).to_contain_text("pas encore pointé")
    expect(page.locator("#waiting")).to_contain_text("Personne n’est encore arrivé")
    expect(page.get_by_role("button", name="Annuler la soirée")).to_be_visible()
    assert list(JournalEntry.objects.filter(source=f"soiree:{soiree.pk}/buy-in")
                .order_by("id").values_list("reverses", flat=True))[1] is not None
    for width, name in ((1280, "desktop"), (390, "phone")):
        page.set_viewport_size({"width": width, "height": 900})
        shot(page, tmp_path, f"door-waiting-{name}-fr")

    # Open now is refused, and says why beside the button.
    page.get_by_role("button", name="Ouvrir maintenant").click()
    expect(page.locator("#actions [role=alert]").first).to_contain_text(
        "Personne n’est encore arrivé")
    soiree.refresh_from_db()
    assert soiree.status == "scheduled"
