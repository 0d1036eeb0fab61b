"""Joining a club in a real browser, in French: the organiser makes an invitation link on his
club's members page (desktop), and the person invited opens it on a phone, signs up with her
name and a password, and lands in the lobby as a signed-in member. Screenshots at 1280 and
390 px go to /tmp/shots44."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tournaments.models import Invitation, Membership
from tournaments.services import club_create

from .conftest import fits, sign_in

pytestmark = [pytest.mark.postgres, pytest.mark.browser]

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
SHOTS = Path("/tmp/shots44")


def _shot(page: Page, tmp_path: Path, name: str) -> None:
    path = tmp_path / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    SHOTS.mkdir(exist_ok=True)
    shutil.copy(path, SHOTS / path.name)


@pytest.mark.parametrize("live_server_process", ["embedded"], indirect=True)
def test_an_organiser_invites_and_the_newcomer_signs_up_into_the_lobby(
        live_server_process: Any, page: Page, organiser: Any, tmp_path: Path,
        django_user_model: Any) -> None:
    club = club_create(name="Cercle des Lumières", slug="lumieres", organiser=organiser)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.context.set_extra_http_headers({"Accept-Language": "fr-FR,fr;q=0.9"})
    url = live_server_process.url

    page.set_viewport_size(DESKTOP)
    sign_in(page, url, "olga", "pw-olga-123")
    page.click("#club-members a")
    expect(page.locator("h1")).to_have_text("Membres de Cercle des Lumières")
    page.fill("#id_email", "helene@example.org")
    page.click("#make-link")
    link = page.locator("#new-link").input_value()
    expect(page.locator(".messages")).to_contain_text("Le lien a été envoyé à helene@example.org")
    assert link.startswith(f"{url}/accounts/invitation/")
    _shot(page, tmp_path, "members-1280")
    page.click("header form[action='/accounts/logout/'] button")

    page.set_viewport_size(PHONE)
    page.goto(link)
    expect(page.locator("h1")).to_have_text("Rejoindre Cercle des Lumières")
    page.fill("#id_username", "helene")
    page.fill("#id_first_name", "Hélène")
    page.fill("#id_last_name", "Fournier")
    expect(page.locator("#id_email")).to_have_value("helene@example.org")
    page.fill("#id_password1", "court")
    page.fill("#id_password2", "court")
    page.click("#sign-up button[type=submit]")
    expect(page.locator(".errorlist").first).to_contain_text("trop court")
    assert fits(page, PHONE["width"])
    _shot(page, tmp_path, "signup-error-390")
    page.fill("#id_password1", "Vingt-et-un-au-Comet")
    page.fill("#id_password2", "Vingt-et-un-au-Comet")
    _shot(page, tmp_path, "signup-390")
    page.click("#sign-up button[type=submit]")

    expect(page.locator("h1")).to_have_text("Accueil")
    expect(page.locator(".messages")).to_contain_text("Bienvenue à Cercle des Lumières")
    expect(page.locator("header")).to_contain_text("Hélène Fournier")  # her name, not her username
    assert fits(page, PHONE["width"])
    _shot(page, tmp_path, "lobby-390")
    page.set_viewport_size(DESKTOP)
    page.goto(link)
    expect(page.locator("#reason")).to_contain_text("déjà été utilisé")
    _shot(page, tmp_path, "used-link-1280")
    helene = django_user_model.objects.get(username="helene")
    assert helene.get_full_name() == "Hélène Fournier"
    assert Membership.objects.filter(club=club, user=helene, role="player").exists()
    assert Invitation.objects.get().used_by == helene
    assert errors == []
