"""In Chromium: the seating prints alone, and the room screen fills a 1080p projector."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.utils import timezone
from playwright.sync_api import Page

from tests.pdf import pdf_pages_text
from tournaments.models import Soiree
from tournaments.services import soiree_close_now, soiree_open

from .conftest import shot, wait_for_js

pytestmark = [pytest.mark.postgres, pytest.mark.browser]
SHOTS = Path("/tmp/shots44")


def _sign_in(page: Page, url: str, then: str) -> None:
    """olga, the demo's organiser, reading French as the club does."""
    page.set_extra_http_headers({"Accept-Language": "fr"})
    page.goto(f"{url}/accounts/login/?next={then}")
    page.fill("#id_username", "olga")
    page.fill("#id_password", "olga-pass")
    page.click("button[type=submit]")


@pytest.mark.parametrize("live_server_process", ["embedded"], indirect=True)
def test_the_seating_prints_alone_one_block_per_table_with_its_seed(
        live_server_process: Any, page: Page, tmp_path: Path) -> None:
    call_command("demo_soiree", "--tables", "3", "--pause", "30", "--minutes", "30",
                 "--human", "ana")
    soiree = Soiree.objects.get()
    soiree_open(soiree=soiree, at=timezone.now())
    _sign_in(page, live_server_process.url, f"/soirees/{soiree.pk}/manage")
    page.click("#print-seating-link")
    page.wait_for_selector(".seating-block")

    pdf = tmp_path / "seating.pdf"
    page.pdf(path=str(pdf), format="A4")
    soiree.refresh_from_db()
    pages = pdf_pages_text(pdf.read_bytes()).split("\f")
    SHOTS.mkdir(exist_ok=True)
    page.emulate_media(media="print")  # what the printer gets, to look at
    page.screenshot(path=str(SHOTS / "seating-print.png"), full_page=True)
    page.emulate_media(media="screen")
    shutil.copy(pdf, SHOTS / "seating.pdf")

    blocks = page.locator(".seating-block").all_inner_texts()
    assert len(blocks) == 3
    text = "\f".join(pages)
    assert soiree.seating_seed and soiree.seating_seed in re.sub(r"\s", "", text)
    for block in blocks:  # each table whole on one printed page, its heading with its seats
        heading, *names = [line for line in block.splitlines() if line.strip()]
        assert any(heading in p and all(n.strip() in p for n in names) for p in pages)
    for manage_only in ("Inscriptions", "Arrivée tardive", "Imprimer le placement",
                        "Annonces", "Ouvrir", "Clôturer"):
        assert manage_only not in text
    # In print, names are large: at least 20 pt (26.7 px).
    page.emulate_media(media="print")
    size = page.evaluate("parseFloat(getComputedStyle(document.querySelector("
                         "'.seating-block li')).fontSize)")
    assert size >= 26


@pytest.mark.parametrize("live_server_process", ["embedded"], indirect=True)
def test_the_room_screen_fills_a_1080p_projector_and_says_when_tables_wait(
        live_server_process: Any, page: Page, tmp_path: Path) -> None:
    call_command("demo_soiree", "--tables", "3", "--pause", "1", "--minutes", "30",
                 "--deals", "50", "--human", "ana", "--move-timeout", "1")
    soiree = Soiree.objects.get()
    soiree_open(soiree=soiree, at=timezone.now())
    page.set_viewport_size({"width": 1920, "height": 1080})
    _sign_in(page, live_server_process.url, f"/soirees/{soiree.pk}/room")
    wait_for_js(page, "document.querySelectorAll('.room-table li').length >= 9")

    def px(selector: str) -> float:
        return float(page.evaluate(f"parseFloat(getComputedStyle(document.querySelector("
                                   f"'{selector}')).fontSize)"))

    SHOTS.mkdir(exist_ok=True)
    shutil.copy(shot(page, tmp_path, "room-1080p"), SHOTS / "room-1080p.png")
    assert px(".room-table li") >= 48
    assert px("#clock") >= 120
    assert re.fullmatch(r"encore \d+ min", page.locator("#left").inner_text())
    # The screen is used: the tables and leaders reach past half its height, not beyond it.
    used = page.evaluate("document.querySelector('.room-body').getBoundingClientRect().bottom")
    assert 540 < used <= 1080

    soiree_close_now(soiree=soiree, at=timezone.now())
    wait_for_js(page, "document.querySelectorAll('.room-table.idle').length === 3", timeout=120)
    assert page.locator(".room-table .room-idle").all_inner_texts() == ["en attente"] * 3
    wait_for_js(page, "document.getElementById('left').textContent === "
                      "'La soirée est terminée'", timeout=20)
    shutil.copy(shot(page, tmp_path, "room-1080p-over"), SHOTS / "room-1080p-over.png")
