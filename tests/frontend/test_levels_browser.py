"""The bots' levels in a real browser: a player makes a casual table from the lobby with two
*fort* bots, the table names their level, and the bots play their hand out. Screenshots in
French and English, on a desktop and a 390 px phone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from games.models import Partie

from .conftest import shot, sign_in, wait_for_js

pytestmark = [pytest.mark.postgres, pytest.mark.browser]

PASSWORD = "pw-for-tests"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}


@pytest.mark.parametrize("live_server_process", ["embedded"], indirect=True)
def test_a_player_makes_a_table_with_fort_bots(
        live_server_process: Any, page: Page, django_user_model: Any, tmp_path: Path) -> None:
    django_user_model.objects.create_user("alice", password=PASSWORD)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.set_viewport_size(PHONE)
    page.context.set_extra_http_headers({"Accept-Language": "fr-FR,fr;q=0.9"})
    sign_in(page, live_server_process.url, "alice", PASSWORD)

    level = page.locator("#new-bot-level")
    expect(level.locator("option")).to_have_text(["Débutant", "Habile", "Fort"])
    expect(level).to_have_value("heuristic")
    assert page.evaluate("document.documentElement.scrollWidth <= 390")
    shot(page, tmp_path, "levels-1-lobby-phone-fr")
    page.select_option("#new-game", "comet")
    page.fill("#new-bots", "2")
    page.select_option("#new-bot-level", "ismcts")
    page.get_by_role("button", name="Créer la table").click()

    # Everyone is seated at once: the lobby opens the table's first hand.
    page.wait_for_url("**/hands/*/", timeout=30_000)
    partie = Partie.objects.get()
    assert list(partie.seats.order_by("number").values_list("bot", flat=True)) == [
        "", "ismcts", "ismcts"]
    wait_for_js(page, "window.tablePage && window.tablePage.current() !== null")
    badges = page.locator(".tp-seat .badge.bot")
    expect(badges).to_have_count(2)
    expect(badges.first).to_contain_text("Fort")
    shot(page, tmp_path, "levels-2-table-phone-fr")
    page.set_viewport_size(DESKTOP)
    shot(page, tmp_path, "levels-3-table-desktop-fr")

    page.select_option("#language-switch select", "en")
    with page.expect_navigation():
        page.click("#language-switch button")
    wait_for_js(page, "window.tablePage && window.tablePage.current() !== null")
    expect(page.locator(".tp-seat .badge.bot").first).to_contain_text("Strong")
    shot(page, tmp_path, "levels-4-table-desktop-en")
    page.goto(f"{live_server_process.url}/")
    expect(page.locator("#new-bot-level option")).to_have_text(["Beginner", "Skilled", "Strong"])
    page.set_viewport_size(PHONE)
    page.locator("#new-table").scroll_into_view_if_needed()
    shot(page, tmp_path, "levels-5-lobby-phone-en")
    assert errors == []
