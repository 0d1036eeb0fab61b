"""The room screen follows the evening live: its tables' hands move on while the page stays."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.utils import timezone
from playwright.sync_api import Page

from tournaments.models import Soiree
from tournaments.services import soiree_open

from .conftest import shot, wait_for_js

pytestmark = [pytest.mark.postgres, pytest.mark.browser]


@pytest.mark.parametrize("live_server_process", ["embedded"], indirect=True)
def test_the_room_screen_shows_the_tables_and_the_leaders_live(
        live_server_process: Any, page: Page, tmp_path: Path) -> None:
    # A soirée opens once a person is checked in: alice, away from her table, whose decisions
    # time out at once.
    call_command("demo_soiree", "--tables", "2", "--pause", "1", "--minutes", "30",
                 "--deals", "50", "--human", "alice", "--move-timeout", "0.2")
    soiree = Soiree.objects.get()
    soiree_open(soiree=soiree, at=timezone.now())
    page.set_viewport_size({"width": 1600, "height": 900})
    page.goto(f"{live_server_process.url}/accounts/login/?next=/soirees/{soiree.pk}/room")
    page.fill("#id_username", "olga")
    page.fill("#id_password", "olga-pass")
    page.click("button[type=submit]")
    wait_for_js(page, "document.querySelectorAll('.room-table').length === 2")
    # The table of bots alone (alice's waits for her time-outs and the Comet's window).
    bots = ("[...document.querySelectorAll('.room-table')]"
            ".find(t => !t.innerText.includes('alice'))")
    first = page.evaluate(f"{bots}.innerText")
    number = int(re.search(r"(\d+)\s*$", first.splitlines()[0]).group(1))

    # The server's own clock deals the next hands (1 s apart): the screen follows.
    wait_for_js(page, f"/(\\d+)\\s*$/.exec({bots}.innerText.split('\\n')[0])[1] > {number}",
                timeout=30)
    shot(page, tmp_path, "room-screen")

    assert re.fullmatch(r"\d+ min left", page.locator("#left").inner_text())
    # The leaders: the evening's standings so far, its people only (the club's bots, which
    # play the club's chips, are apart on the results sheet).
    wait_for_js(page, "document.querySelectorAll('#leaders li').length === 1", timeout=90)
    leaders = {line.rsplit(" ", 1)[0] for line in page.locator("#leaders li").all_inner_texts()}
    assert leaders == {"alice"}
