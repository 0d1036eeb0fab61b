"""Many writers at once on one hand, each on its own database connection.

Every worker is a thread with its own connection (Django's connections are per thread), so the
row lock and the (hand, seq) unique constraint are exercised by PostgreSQL itself: the tests
commit (``transaction=True``) and run only in the PostgreSQL pass.
"""

from __future__ import annotations

import hashlib
import random
import threading
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

import pytest
from django.db import connection, connections

from games.engine.base import Move
from games.engine.bots import TimeoutBot
from games.engine.deal import commitment
from games.engine.play import play_hand
from games.engine.registry import get_game
from games.engine.shares import deck_v3, first_dealer_v2
from games.engine.verify import verify_record
from games.errors import GameError, StaleSequence
from games.models import Command, Hand, HandEvent, Partie
from games.selectors import hand_record
from games.services import deadline_fire, hand_deal, move_play, partie_start, store

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

T0 = datetime(2030, 5, 4, 20, 0, tzinfo=UTC)
SUBMITTERS = 50


@pytest.fixture
def people(django_user_model: Any) -> list[Any]:
    return [django_user_model.objects.create_user(f"racer{i}") for i in range(4)]


def _commere_partie(people: Sequence[Any], **options: Any) -> Partie:
    return partie_start(game="commere", players=people, options={"rounds": 1, **options},
                        buy_in=50, table_label="race table", at=T0,
                        move_timeout=timedelta(minutes=5))


def _pending(hand: Hand) -> tuple[int, list[Move]]:
    """The awaited seat and its legal moves, replayed from the stored events."""
    loaded = store.load(hand)
    seat = loaded.game.to_act(loaded.state)[0]
    return seat, loaded.game.legal_moves(loaded.state)[seat]


def _all_at_once(calls: Sequence[Callable[[], Any]]) -> list[tuple[str, Any]]:
    """Run every call in its own thread and connection, released together by a barrier;
    return ("ok", value) or ("error", exception) per call, in order."""
    barrier = threading.Barrier(len(calls))
    results: list[tuple[str, Any]] = [("missing", None)] * len(calls)

    def run(i: int, call: Callable[[], Any]) -> None:
        try:
            connection.ensure_connection()  # connect first, so that the race is on the lock
            barrier.wait(timeout=60)
            results[i] = ("ok", call())
        except Exception as exc:  # the caller inspects every outcome
            results[i] = ("error", exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i, c)) for i, c in enumerate(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a writer is stuck"
    return results


def _assert_stream_intact(hand: Hand) -> list[int]:
    seqs = list(HandEvent.objects.filter(hand=hand).order_by("seq").values_list("seq", flat=True))
    hand.refresh_from_db()
    assert seqs == list(range(1, hand.last_seq + 1)), "a gap or a duplicate seq in the stream"
    return seqs


def test_fifty_competing_moves_at_one_seq_apply_exactly_one_each_time(people):
    partie = _commere_partie(people)
    hand = partie.hands.get()
    users = {s.number: s.player for s in partie.seats.all()}
    rounds = 0
    while hand.status == Hand.Status.PLAYING and rounds < 3:
        rounds += 1
        seq = hand.last_seq
        seat, legal = _pending(hand)
        ids = [uuid.uuid4() for _ in range(SUBMITTERS)]
        moves = [legal[i % len(legal)] for i in range(SUBMITTERS)]
        at = T0 + timedelta(seconds=rounds)

        results = _all_at_once([
            partial(move_play, hand_id=hand.id, user=users[seat], move=moves[i], seq=seq,
                    command_id=ids[i], at=at) for i in range(SUBMITTERS)])

        applied = [i for i, (kind, _) in enumerate(results) if kind == "ok"]
        assert len(applied) == 1, results
        losers = [value for kind, value in results if kind == "error"]
        assert len(losers) == SUBMITTERS - 1
        assert all(isinstance(e, StaleSequence) and e.status == 409 for e in losers), losers
        winner = applied[0]
        answer = results[winner][1].response
        assert answer["applied_from_seq"] == seq + 1

        _assert_stream_intact(hand)
        assert hand.last_seq == answer["seq"] > seq
        new = list(HandEvent.objects.filter(hand=hand, seq__gt=seq).order_by("seq"))
        assert new[0].type == moves[winner].type
        assert new[0].payload.get("card") == moves[winner].card
        assert new[0].command_id == ids[winner]
        # Nothing of a losing command reached the stream or the command table.
        losing = set(ids) - {ids[winner]}
        assert not HandEvent.objects.filter(command_id__in=losing).exists()
        recorded = Command.objects.filter(command_id__in=ids).values_list("command_id", flat=True)
        assert list(recorded) == [ids[winner]]

    # Play the hand out on the timers: the stream written under contention still verifies.
    clock = T0 + timedelta(hours=1)
    while hand.status == Hand.Status.PLAYING:
        clock = max(clock, hand.deadline) + timedelta(seconds=1)
        assert deadline_fire(hand_id=hand.id, seq=hand.last_seq, at=clock)
        hand.refresh_from_db()
    _assert_stream_intact(hand)
    assert verify_record(hand_record(hand=hand)) == hand_record(hand=hand)["digest"]


def _seed_with_an_announcement(n: int) -> str:
    """A seed whose round, played by default moves, ends with a seat's announcement."""
    game = get_game("commere")
    options = game.normalise_options({"rounds": 1})
    for i in range(200):
        seed = hashlib.sha256(f"announce-{i}".encode()).hexdigest()
        deck, dealer = deck_v3("commere", seed, {}), first_dealer_v2(seed, n)
        _, events = play_hand(game, deck=deck, dealer=dealer,
                              seats=[{"seat": s, "player": f"p{s}"} for s in range(n)],
                              options=options, chips_before={str(s): 50 for s in range(n)},
                              pot_before=0, commitment=commitment(seed),
                              bots=[TimeoutBot(random.Random(0)) for _ in range(n)])
        if any(e.type == "announce" for e in events):
            return seed
    raise AssertionError("no seed among those tried ends with an announcement")


def _fire_until_the_announcement(hand: Hand) -> tuple[int, datetime]:
    """Let the timers play ``hand`` (refreshed) until its awaited seat's only move is to
    announce; that seat, and the clock then."""
    clock = T0
    seat, legal = _pending(hand)
    while legal != [Move("announce")]:
        clock = max(clock, hand.deadline) + timedelta(seconds=1)
        assert deadline_fire(hand_id=hand.id, seq=hand.last_seq, at=clock)
        hand.refresh_from_db()
        seat, legal = _pending(hand)
    return seat, clock


def test_fifty_moves_racing_the_move_that_ends_the_hand_all_lose_with_409(people, monkeypatch):
    seed = _seed_with_an_announcement(4)
    monkeypatch.setattr("games.services.parties.new_seed", lambda: seed)
    partie = _commere_partie(people)
    hand = partie.hands.get()
    users = {s.number: s.player for s in partie.seats.all()}
    seat, clock = _fire_until_the_announcement(hand)
    seq = hand.last_seq
    ids = [uuid.uuid4() for _ in range(SUBMITTERS)]

    results = _all_at_once([
        lambda cid=cid: move_play(hand_id=hand.id, user=users[seat], move=Move("announce"),
                                  seq=seq, command_id=cid, at=clock) for cid in ids])

    assert [kind for kind, _ in results].count("ok") == 1
    losers = [value for kind, value in results if kind == "error"]
    assert len(losers) == SUBMITTERS - 1
    assert all(isinstance(e, StaleSequence) and e.status == 409 for e in losers), losers[:3]
    hand.refresh_from_db()
    assert hand.status == Hand.Status.OVER
    _assert_stream_intact(hand)
    assert HandEvent.objects.filter(hand=hand, type="announce").count() == 1
    assert Command.objects.filter(command_id__in=ids).count() == 1


def test_one_command_id_sent_by_many_connections_is_applied_once(people):
    partie = _commere_partie(people)
    hand = partie.hands.get()
    users = {s.number: s.player for s in partie.seats.all()}
    seat, legal = _pending(hand)
    seq = hand.last_seq
    command_id = uuid.uuid4()

    def submit() -> dict[str, Any]:
        return move_play(hand_id=hand.id, user=users[seat], move=legal[-1], seq=seq,
                         command_id=command_id, at=T0 + timedelta(seconds=1)).response

    results = _all_at_once([submit] * 12)

    answers = [value for kind, value in results if kind == "ok"]
    errors = [value for kind, value in results if kind == "error"]
    assert answers, errors
    assert all(a == answers[0] for a in answers)  # the first answer, repeated
    assert all(isinstance(e, StaleSequence) for e in errors), errors
    assert answers[0]["applied_from_seq"] == seq + 1
    _assert_stream_intact(hand)
    assert hand.last_seq == answers[0]["seq"]
    mine = list(HandEvent.objects.filter(command_id=command_id).values_list("seq", flat=True))
    assert mine and mine == list(range(seq + 1, seq + 1 + len(mine)))  # one block, once
    assert Command.objects.filter(command_id=command_id).count() == 1


def test_duplicated_timers_racing_a_player_play_the_decision_once(people):
    partie = _commere_partie(people)
    hand = partie.hands.get()
    users = {s.number: s.player for s in partie.seats.all()}
    seat, legal = _pending(hand)
    seq = hand.last_seq
    late = hand.deadline + timedelta(seconds=1)
    ids = [uuid.uuid4() for _ in range(5)]
    calls: list[Callable[[], Any]] = [
        lambda: deadline_fire(hand_id=hand.id, seq=seq, at=late) for _ in range(10)]
    calls += [lambda cid=cid: move_play(hand_id=hand.id, user=users[seat], move=legal[0],
                                        seq=seq, command_id=cid, at=late) for cid in ids]

    results = _all_at_once(calls)

    timers = [value for kind, value in results[:10]]
    players = results[10:]
    played = timers.count(True) + sum(1 for kind, _ in players if kind == "ok")
    assert played == 1, results
    assert all(value is False for value in timers if value is not True)
    assert all(isinstance(value, StaleSequence) for kind, value in players if kind == "error")
    _assert_stream_intact(hand)
    first = HandEvent.objects.get(hand=hand, seq=seq + 1)
    assert first.by in ("player", "timeout", "forced")
    assert HandEvent.objects.filter(hand=hand, seq=seq + 1).count() == 1


def test_concurrent_deals_of_the_next_hand_deal_it_once(people):
    partie = _commere_partie(people, rounds=3)
    hand = partie.hands.get()
    clock = T0
    while hand.status == Hand.Status.PLAYING:
        clock = max(clock, hand.deadline) + timedelta(seconds=1)
        deadline_fire(hand_id=hand.id, seq=hand.last_seq, at=clock)
        hand.refresh_from_db()
    deal_at = clock + timedelta(seconds=10)

    results = _all_at_once([lambda: hand_deal(partie=partie, at=deal_at)] * 8)

    dealt = [value for kind, value in results if kind == "ok"]
    refused = [value for kind, value in results if kind == "error"]
    assert len(dealt) == 1 and isinstance(dealt[0], Hand), results
    assert len(refused) == 7
    assert all(isinstance(e, GameError) and e.code == "hand_in_progress" for e in refused)
    assert list(partie.hands.order_by("number").values_list("number", flat=True)) == [1, 2]
    second = partie.hands.get(number=2)
    assert second.dealer == (hand.dealer + 1) % 4
    assert HandEvent.objects.filter(hand=second, seq=1, type="hand_started").count() == 1
