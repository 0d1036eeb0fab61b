"""The Comet window tells nobody where the Comet is (RULES.md §3, games/services/advance.py).

Two hands of the same table, a person (who never moves) and three heuristic bots: in one the
person holds the Comet, in the other a bot does. Until the Comet is played, a spectator sees
the same kind of deadline, the same wait and the same event fields in both.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from rest_framework.test import APIClient

from games.models import Hand
from games.services import deadline_fire, partie_start, seat_comet_order, store
from tests.seeding import seed_stream

pytestmark = pytest.mark.django_db

T0 = datetime(2030, 5, 4, 20, 0, tzinfo=UTC)
WINDOW = timedelta(seconds=3)


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
