"""Live updates in a real browser: the table and soirée pages, served by a server process of
their own, show at once what another seat plays, over their WebSocket (the pages do not poll
their hand, so nothing else can have told them)."""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import urllib.request
import uuid
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone
from playwright.sync_api import Page, expect

from games.models import Hand
from games.services import move_play, partie_start, store

from .conftest import wait_for_js

pytestmark = [pytest.mark.postgres, pytest.mark.browser]

PASSWORD = "pw-for-tests"



@pytest.fixture(autouse=True)
def seeded_deals(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every deal this process makes from a seed derived from the test's name."""
    counter = iter(range(1_000_000))
    monkeypatch.setattr("games.services.parties.new_seed", lambda: hashlib.sha256(
        f"{request.node.nodeid}:{next(counter)}".encode()).hexdigest())


def _sign_in(page: Page, server: Any, path: str, username: str, password: str) -> None:
    """Open ``path`` on ``server`` through the sign-in page, as ``username``."""
    page.goto(f"{server.url}/accounts/login/?next={path}")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("button[type=submit]")


def _post_move(server: Any, hand: Hand, user: Any, move: Any) -> int:
    """The move as the seat's own client posts it to the server."""
    body = json.dumps({"command_id": str(uuid.uuid4()), "seq": hand.last_seq,
                       "move": move.to_dict()}).encode()
    token = base64.b64encode(f"{user.get_username()}:{PASSWORD}".encode()).decode()
    request = urllib.request.Request(
        f"{server.url}/api/hands/{hand.pk}/moves", data=body, method="POST",
        headers={"Content-Type": "application/json", "Authorization": f"Basic {token}"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        return int(json.loads(answer.read())["seq"])


def _play_in_a_thread(hand: Hand, user: Any, move: Any) -> int:
    """The move played in this process, as the Celery worker plays a time-out: its frames reach
    the server through Redis. On a thread of its own, outside Playwright's event loop."""
    played: dict[str, int] = {}

    def run() -> None:
        try:
            played["seq"] = move_play(hand_id=hand.pk, user=user, move=move, seq=hand.last_seq,
                                      command_id=uuid.uuid4(), at=timezone.now()).hand.last_seq
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(30)
    return played["seq"]


def test_the_table_page_shows_a_move_by_another_seat_at_once(
        live_server_process: Any, page: Page, django_user_model: Any, settings: Any) -> None:
    if live_server_process.redis_url:
        settings.CHANNEL_LAYERS = {"default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [live_server_process.redis_url], "prefix": "academie:live"}}}
    people = [django_user_model.objects.create_user(name, password=PASSWORD)
              for name in ("alice", "bruno", "chloe", "denis")]
    partie = partie_start(
        game="commere", players=people, options={"rounds": 3, "compulsory_announce": False},
        buy_in=100, at=timezone.now(), forced_move_delay=timedelta(0),
        comet_window=timedelta(0), move_timeout=timedelta(minutes=5))
    hand = partie.hands.get()
    loaded = store.load(hand)
    mover = loaded.game.to_act(loaded.state)[0]
    seats = {s.number: s.player for s in partie.seats.all()}
    viewer = seats[(mover + 1) % len(seats)]
    _sign_in(page, live_server_process, f"/hands/{hand.pk}/", viewer.get_username(), PASSWORD)
    wait_for_js(page, f"window.tablePage && window.tablePage.current() && "
                       f"window.tablePage.current().seq === {hand.last_seq}")
    wait_for_js(page, "window.live && window.live.socket.readyState === 1")
    cards = page.locator("#hand button").count()

    move = loaded.game.legal_moves(loaded.state)[mover][0]
    if live_server_process.redis_url:
        seq = _play_in_a_thread(hand, seats[mover], move)
    else:
        seq = _post_move(live_server_process, hand, seats[mover], move)

    wait_for_js(page, f"window.tablePage.current().seq === {seq}", timeout=3)
    # The viewer's own cards are still drawn: the frame is his seat's.
    assert cards == 3 and page.locator("#hand button").count() == 3


@pytest.mark.redis
@pytest.mark.parametrize("live_server_process", ["redis"], indirect=True)
def test_the_soiree_page_shows_a_table_s_next_hand_at_once(
        live_server_process: Any, page: Page, settings: Any) -> None:
    from django.core.management import call_command

    from games.services import partie_tick
    from tournaments.models import Soiree, SoireeTable
    from tournaments.services import soiree_open

    settings.CHANNEL_LAYERS = {"default": {
        "BACKEND": "channels_redis.core.RedisChannelLayer",
        "CONFIG": {"hosts": [live_server_process.redis_url], "prefix": "academie:live"}}}
    # A soirée opens once a person is checked in (alice); the table watched is one of bots.
    call_command("demo_soiree", "--tables", "2", "--pause", "60", "--minutes", "120",
                 "--human", "alice")
    soiree = Soiree.objects.get()
    if soiree.status == Soiree.Status.SCHEDULED:
        soiree_open(soiree=soiree, at=timezone.now())
    tables = SoireeTable.objects.filter(soiree=soiree).order_by("number")
    table = tables.exclude(partie__seats__player__username="alice").first()
    assert table is not None
    played = table.partie.hands.filter(status="over").count()  # the bots' hands end at once
    _sign_in(page, live_server_process, f"/soirees/{soiree.pk}/", "olga", "olga-pass")
    first_table = page.locator(".table").nth(list(tables).index(table))
    expect(first_table).to_contain_text(
        f"{played} hand played" if played == 1 else f"{played} hands played")
    # Each socket open and its first frame (the table as it joined) handled; then the page's
    # own reads of its tables wait, until a frame makes it read them.
    wait_for_js(page, "Object.values(sockets).length && Object.values(sockets).every("
                       "s => s.socket.readyState === 1 && s.seq >= 0) && !framed.waiting()")
    page.evaluate("lastRead = Date.now() + 3600 * 1000")
    # The next hand, dealt by the clock as beat would (the bots play it at once), on a thread
    # of its own, outside Playwright's event loop.
    dealt: list[Any] = []

    def tick() -> None:
        try:
            dealt.append(partie_tick(partie_id=table.partie_id,
                                     at=timezone.now() + timedelta(seconds=61)))
        finally:
            connection.close()

    thread = threading.Thread(target=tick)
    thread.start()
    thread.join(30)
    assert dealt and dealt[0] is not None

    expect(first_table).to_contain_text(f"{played + 1} hands played", timeout=3000)
