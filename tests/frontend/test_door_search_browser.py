"""At the door, on a phone: the organiser types part of a late arrival's name, without its
accents, picks her among the suggestions and checks her in. And the member's side of the door:
he registers from the soirée's page and unregisters from the lobby."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone
from playwright.sync_api import Page, expect

from tournaments import services
from tournaments.models import Registration

from .conftest import fits, shot, sign_in

pytestmark = [pytest.mark.postgres, pytest.mark.browser]

PASSWORD = "pw-for-tests"
PHONE = {"width": 390, "height": 844}


@pytest.mark.parametrize("live_server_process", ["embedded"], indirect=True)
def test_the_organiser_finds_a_late_arrival_by_her_name_without_accents_and_checks_her_in(
        live_server_process: Any, page: Page, django_user_model: Any, tmp_path: Path) -> None:
    make = django_user_model.objects.create_user
    olga = make("olga", password=PASSWORD)
    club = services.club_create(name="Cercle", slug="cercle", organiser=olga)
    helene = make("Helene", first_name="Hélène", last_name="Fournier")
    bruno = make("bruno", first_name="Bruno", last_name="Lefèvre")
    for member in (helene, bruno, make("henri", first_name="Henri", last_name="Legrand")):
        services.membership_add(club=club, user=member, role="player")
    elsewhere = services.club_create(name="Voisins", slug="voisins", organiser=make("victor"))
    services.membership_add(club=elsewhere, role="player", user=make(
        "helena", first_name="Héléna", last_name="Fourneau"))
    now = timezone.now()
    soiree = services.soiree_create(club=club, name="Jeudi", starts_at=now + timedelta(hours=1),
                                    ends_at=now + timedelta(hours=3), game="comet", buy_in=40)
    page.set_viewport_size(PHONE)
    page.context.set_extra_http_headers({"Accept-Language": "fr"})
    sign_in(page, live_server_process.url, "olga", PASSWORD, f"/soirees/{soiree.pk}/manage")
    late = page.locator("#late-arrival")
    box = late.get_by_role("combobox", name="Un retardataire")
    expect(box).to_be_visible()

    # "helene": Hélène Fournier is suggested, alone (Héléna is of another club).
    box.press_sequentially("helene", delay=40)
    listbox = page.get_by_role("listbox", name="Membres trouvés")
    option = listbox.get_by_role("option", name=re.compile("Hélène Fournier"))
    expect(option).to_be_visible()
    expect(listbox.get_by_role("option")).to_have_count(1)
    expect(option).to_contain_text("Helene")
    expect(box).to_have_attribute("aria-expanded", "true")
    expect(page.locator("#late-player-status")).to_have_text(
        "Membres trouvés : 1. Les flèches les parcourent.")
    assert fits(page, PHONE["width"])
    shot(page, tmp_path, "door-search-1-phone-fr-suggested")

    # Picked: the box names her; checked in by her username, the row says so.
    option.click()
    expect(box).to_have_value("Hélène Fournier")
    expect(listbox).to_be_hidden()
    late.get_by_role("button", name="Pointer").click()
    row = page.locator('#registrations li.person[data-player="Helene"]')
    expect(row).to_contain_text("pointé à")
    expect(row).to_contain_text("Hélène Fournier")
    expect(row.get_by_role("button", name="Annuler le pointage")).to_be_visible()
    registration = Registration.objects.get(soiree=soiree, user=helene)
    assert registration.checked_in_at is not None
    assert fits(page, PHONE["width"])
    shot(page, tmp_path, "door-search-2-phone-fr-checked-in")

    # With the keyboard: "LEF", the arrow down, Enter picks, Enter again checks in.
    box = page.locator("#late-arrival").get_by_role("combobox", name="Un retardataire")
    box.press_sequentially("LEF", delay=40)
    expect(page.get_by_role("option", name=re.compile("Bruno Lefèvre"))).to_be_visible()
    box.press("ArrowDown")
    expect(page.get_by_role("option", name=re.compile("Bruno Lefèvre"))).to_have_attribute(
        "aria-selected", "true")
    box.press("Enter")
    expect(box).to_have_value("Bruno Lefèvre")
    box.press("Enter")
    expect(page.locator('#registrations li.person[data-player="bruno"]')).to_contain_text(
        "pointé à")
    assert Registration.objects.get(soiree=soiree, user=bruno).checked_in_at is not None

    # A whole name typed, not picked: it is one member's, he is checked in.
    box = page.locator("#late-arrival").get_by_role("combobox", name="Un retardataire")
    box.fill("HENRI legrand")
    page.locator("#late-arrival").get_by_role("button", name="Pointer").click()
    expect(page.locator('#registrations li.person[data-player="henri"]')).to_contain_text(
        "pointé à")

    # A search too long is refused with its limit, in words; nobody else is checked in.
    box = page.locator("#late-arrival").get_by_role("combobox", name="Un retardataire")
    box.fill("h" * 120)
    expect(page.locator("#late-arrival [role=alert]")).to_have_text(
        "La recherche fait au plus 100 caractères, pas 120.")
    expect(page.get_by_role("listbox", name="Membres trouvés")).to_be_hidden()
    shot(page, tmp_path, "door-search-3-phone-fr-too-long")
    assert Registration.objects.filter(soiree=soiree).count() == 3


@pytest.mark.parametrize("live_server_process", ["embedded"], indirect=True)
def test_a_member_registers_on_the_soirees_page_and_unregisters_in_the_lobby(
        live_server_process: Any, page: Page, django_user_model: Any, tmp_path: Path) -> None:
    make = django_user_model.objects.create_user
    club = services.club_create(name="Cercle", slug="cercle", organiser=make("olga"))
    alice = make("alice", password=PASSWORD)
    services.membership_add(club=club, user=alice, role="player")
    now = timezone.now()
    soiree = services.soiree_create(club=club, name="Ce soir", game="comet", buy_in=40,
                                    starts_at=now + timedelta(minutes=30),
                                    ends_at=now + timedelta(minutes=90))
    page.set_viewport_size(PHONE)
    page.context.set_extra_http_headers({"Accept-Language": "fr"})
    sign_in(page, live_server_process.url, "alice", PASSWORD, f"/soirees/{soiree.pk}/")

    mine = page.locator(".my-registration")
    mine.get_by_role("button", name="S’inscrire").click()
    expect(mine.get_by_role("button", name="Se désinscrire")).to_be_visible()
    expect(mine).to_contain_text("Inscrit, pas encore pointé")
    assert Registration.objects.filter(soiree=soiree, user=alice).exists()
    assert fits(page, PHONE["width"])
    shot(page, tmp_path, "register-1-phone-fr-soiree-page")

    page.goto(f"{live_server_process.url}/")
    mine = page.locator(f'#soirees .my-registration[data-soiree="{soiree.pk}"]')
    mine.get_by_role("button", name="Se désinscrire").click()
    expect(mine.get_by_role("button", name="S’inscrire")).to_be_visible()
    assert not Registration.objects.filter(soiree=soiree, user=alice).exists()
    assert fits(page, PHONE["width"])
    shot(page, tmp_path, "register-2-phone-fr-lobby")

    # Checked in at the door: the lobby says when, and offers nothing.
    services.checkin(soiree=soiree, user=alice, at=timezone.now())
    page.reload()
    expect(mine).to_contain_text("Inscrit, pointé à")
    expect(mine.get_by_role("button")).to_have_count(0)
