"""Live updates in a real browser: the table and soirée pages, served by the live server
(uvicorn) on PostgreSQL and Redis, show what another process commits without waiting for their
poll."""

from __future__ import annotations

import time
import uuid
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from playwright.sync_api import Page, expect

from games.services import move_play, partie_start, store

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.browser]


def _sign_in(page: Page, server: Any, path: str, username: str, password: str) -> None:
    """Open ``path`` on ``server`` through the sign-in page, as ``username``."""
    page.goto(f"{server.url}/accounts/login/?next={path}")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("button[type=submit]")


def test_the_table_page_shows_a_move_played_elsewhere_at_once(
        asgi_server: Any, page: Page, django_user_model: Any) -> None:
    people = [django_user_model.objects.create_user(name, password="pw-for-tests")
              for name in ("alice", "bruno", "chloe", "denis")]
    partie = partie_start(
        game="commere", players=people, options={"rounds": 3, "compulsory_announce": False},
        buy_in=100, at=timezone.now(), forced_move_delay=timedelta(0),
        comet_window=timedelta(0), move_timeout=timedelta(minutes=5))
    hand = partie.hands.get()
    _sign_in(page, asgi_server, f"/hands/{hand.pk}/", "alice", "pw-for-tests")
    expect(page.locator("#state")).to_contain_text(f"seq {hand.last_seq} ·")
    page.wait_for_function("window.liveSource && window.liveSource.readyState === 1")

    loaded = store.load(hand)  # the awaited seat moves, as its own browser or a timer would
    seat = loaded.game.to_act(loaded.state)[0]
    played = move_play(hand_id=hand.pk, user=people[seat], move=loaded.game.legal_moves(
        loaded.state)[seat][0], seq=hand.last_seq, command_id=uuid.uuid4(), at=timezone.now())
    began = time.monotonic()

    # The page reads its hand every 10 s by itself: within 3 s, only the push can have told it.
    expect(page.locator("#state")).to_contain_text(f"seq {played.hand.last_seq} ·",
                                                   timeout=3000)
    assert time.monotonic() - began < 3


def test_the_soiree_page_shows_a_table_s_next_hand_at_once(asgi_server: Any, page: Page) -> None:
    from django.core.management import call_command

    from games.services import partie_tick
    from tournaments.models import Soiree, SoireeTable
    from tournaments.services import soiree_open

    call_command("demo_soiree", "--tables", "2", "--pause", "60", "--minutes", "120")
    soiree = Soiree.objects.get()
    soiree_open(soiree=soiree, at=timezone.now())
    table = SoireeTable.objects.filter(soiree=soiree).order_by("number").first()
    assert table is not None
    played = table.partie.hands.filter(status="over").count()  # the bots' hands end at once
    _sign_in(page, asgi_server, f"/soirees/{soiree.pk}/", "olga", "olga-pass")
    first_table = page.locator(".table").first
    expect(first_table).to_contain_text(f"{played} hand(s) played")
    page.wait_for_function("source && source.readyState === 1")

    # The next hand, dealt by the clock as beat would (the bots play it at once).
    assert partie_tick(partie_id=table.partie_id, at=timezone.now() + timedelta(seconds=61))

    # The page reads its tables every 10 s by itself: within 3 s, only the push can have told it.
    expect(first_table).to_contain_text(f"{played + 1} hand(s) played", timeout=3000)
