"""The Comet window tells nobody where the Comet is (RULES.md §3, games/services/advance.py).

Two hands of the same table, a person (who never moves) and three heuristic bots: in one the
person holds the Comet, in the other a bot does. Until the Comet is played, a spectator sees
the same kind of deadline, the same wait and the same event fields in both.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from channels.testing import WebsocketCommunicator
from django.test import Client
from rest_framework.test import APIClient

from config.asgi import application
from games.models import Hand
from games.services import deadline_fire, partie_start, seat_comet_order, store
from tests.seeding import seed_stream

pytestmark = pytest.mark.django_db

T0 = datetime(2030, 5, 4, 20, 0, tzinfo=UTC)
WINDOW = timedelta(seconds=8)  # "ask me" is offered from 8 s


def _holder(seed: str, django_user_model: Any, monkeypatch: pytest.MonkeyPatch,
            order: str = "blocked") -> tuple[int, Hand]:
    monkeypatch.setattr("games.services.parties.new_seed", lambda: seed)
    alice = django_user_model.objects.create_user(f"alice-{seed[:8]}-{order}")
    partie = partie_start(game="comet", players=[alice], bots=["heuristic"] * 3, buy_in=100,
                          comet_window=WINDOW, forced_move_delay=timedelta(seconds=1),
                          move_timeout=timedelta(seconds=30), at=T0)
    seat_comet_order(partie_id=partie.pk, user=alice, order=order)
    hand = partie.hands.get()
    return store.load(hand).state.comet_holder, hand


def _hands_held_by_the_person_and_by_a_bot(django_user_model: Any,
                                           monkeypatch: pytest.MonkeyPatch,
                                           order: str = "blocked") -> dict[str, Hand]:
    seeds = seed_stream("comet-window")
    found: dict[str, Hand] = {}
    while len(found) < 2:
        holder, hand = _holder(seeds(), django_user_model, monkeypatch, order)
        # The hand must still wait for someone, with the Comet in a hand (a bot may play it
        # at once, or the deal may end before anyone waits).
        loaded = store.load(hand)
        if hand.status != Hand.Status.PLAYING or not loaded.game.comet_window_open(loaded.state):
            continue
        found.setdefault("person" if holder == 0 else "bot", hand)
    return found


def _what_a_spectator_sees(hand: Hand, user: Any) -> list[tuple[Any, ...]]:
    """Until the Comet is played: each decision's deadline kind and wait, and the fields of
    the events shown."""
    spectator = APIClient()
    spectator.force_authenticate(user)
    seen = []
    clock = T0
    while hand.status == Hand.Status.PLAYING:
        loaded = store.load(hand)
        if not loaded.game.comet_window_open(loaded.state):
            break
        view = spectator.get(f"/api/hands/{hand.id}/").json()
        events = spectator.get(f"/api/hands/{hand.id}/events").json()["events"]
        wait = (datetime.fromisoformat(view["deadline"].replace("Z", "+00:00")) - clock)
        seen.append((view["deadline_kind"], wait,
                     {e["by"] for e in events if e["type"] in ("play", "open", "keep_comet")}
                     | {e["seat"] for e in events if e["type"] == "keep_comet"}))
        clock += wait
        assert deadline_fire(hand_id=hand.id, seq=hand.last_seq, at=clock)
        hand.refresh_from_db()
    return seen


@pytest.mark.parametrize("order", ["blocked", "out", "first", "never", "ask"])
def test_a_spectator_cannot_tell_a_person_holding_the_comet_from_a_bot(django_user_model,
                                                                      monkeypatch, order):
    """Whatever the person's standing order: every chance lasts the window, and the events
    say neither how a move was made nor who kept the Comet."""
    hands = _hands_held_by_the_person_and_by_a_bot(django_user_model, monkeypatch, order)
    # Staff see a casual table without sitting at it (games.permissions).
    watcher = django_user_model.objects.create_user("watcher", is_staff=True)
    person = _what_a_spectator_sees(hands["person"], watcher)
    bot = _what_a_spectator_sees(hands["bot"], watcher)
    assert person and bot
    # Every decision while the Comet may be played waits the window, in both hands ...
    assert {(kind, wait) for kind, wait, _ in person} == {("comet", WINDOW)}
    assert {(kind, wait) for kind, wait, _ in bot} == {("comet", WINDOW)}
    # ... and no event says how another seat's move was made (a forced card would say that
    # its player has no Comet).
    assert set().union(*(bys for *_, bys in person + bot)) <= {None}


def _frames_a_spectator_receives(hand: Hand, user: Any) -> list[tuple[Any, ...]]:
    """Until the Comet is played, each chance ended by the clock: the frames a spectator's
    live socket receives, as (event type, how it was made, deadline kind, the wait the frame
    announces from its event's time)."""
    client = Client()
    client.force_login(user)
    headers = [(b"host", b"testserver"), (b"origin", b"http://testserver"),
               (b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode())]

    async def received(socket: WebsocketCommunicator) -> list[dict[str, Any]]:
        got = []
        while not await socket.receive_nothing(timeout=0.5):
            got.append(await socket.receive_json_from())
        return got

    def chance_ends(at: datetime) -> bool:
        hand.refresh_from_db()
        loaded = store.load(hand)
        if hand.status != Hand.Status.PLAYING or not loaded.game.comet_window_open(
                loaded.state):
            return False
        assert hand.deadline is not None
        assert deadline_fire(hand_id=hand.id, seq=hand.last_seq, at=hand.deadline)
        return True

    async def watch() -> list[dict[str, Any]]:
        socket = WebsocketCommunicator(application, f"/ws/parties/{hand.partie_id}/", headers)
        assert (await socket.connect())[0]
        await received(socket)  # the catch-up: the hand as it stands
        frames: list[dict[str, Any]] = []
        while await sync_to_async(chance_ends)(T0):
            frames += await received(socket)
        await socket.disconnect()
        return frames

    shapes = []
    for frame in async_to_sync(watch)():
        event = frame.get("event") or {}
        at = datetime.fromisoformat(event["at"].replace("Z", "+00:00")) if event else None
        deadline = frame.get("deadline")
        wait = (datetime.fromisoformat(deadline.replace("Z", "+00:00")) - at
                if deadline and at else None)
        shapes.append((event.get("type"), event.get("by"), frame.get("deadline_kind"), wait))
    return shapes


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("order", ["blocked", "ask"])
def test_a_spectators_frames_wait_alike_whoever_holds_the_comet(django_user_model, monkeypatch,
                                                               settings, order):
    """The live frames say what the API says: each chance waits the window, whether the
    person or a bot holds the Comet, and no frame says how a seat's move was made."""
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "games.live.InProcessChannelLayer"}}
    hands = _hands_held_by_the_person_and_by_a_bot(django_user_model, monkeypatch, order)
    watcher = django_user_model.objects.create_user("watcher", is_staff=True)

    person = _frames_a_spectator_receives(hands["person"], watcher)
    bot = _frames_a_spectator_receives(hands["bot"], watcher)

    assert person and bot
    waits = {(kind, wait) for _, _, kind, wait in person + bot if kind == "comet"}
    assert waits == {("comet", WINDOW)}, (person, bot)
    assert {by for _, by, _, _ in person + bot if by is not None} <= {"service"}, (person, bot)
