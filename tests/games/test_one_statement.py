"""The usual move outside a transaction: the hand read without a lock, then one statement that
writes the events, the hand row and the Command row (moves._in_one_statement). Everything
else (chips, the hand's end, retries, refusals) is played again in a transaction.

These tests commit (``transaction=True``) and run on PostgreSQL only: inside the test's own
transaction, or on SQLite, every move takes the transaction path (tests/games/test_services.py).
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.db import connection, connections, transaction
from django.test.utils import CaptureQueriesContext

from games.engine.base import Move
from games.errors import IllegalMoveError, StaleSequence
from games.models import Command, Hand, HandEvent, Partie
from games.services import chips, move_play, partie_start, recent, store
from tests.games.test_concurrency import (
    _fire_until_the_announcement,
    _seed_with_an_announcement,
)

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

T0 = datetime(2030, 5, 4, 20, 0, tzinfo=UTC)
SEED = "1f" * 32


@pytest.fixture
def people(django_user_model: Any) -> list[Any]:
    return [django_user_model.objects.create_user(f"solo{i}") for i in range(4)]


def _partie(people: Sequence[Any], seed: str, monkeypatch: pytest.MonkeyPatch) -> Partie:
    monkeypatch.setattr("games.services.parties.new_seed", lambda: seed)
    return partie_start(game="commere", players=people, options={"rounds": 1}, buy_in=50,
                        table_label="quiet table", at=T0, move_timeout=timedelta(minutes=5))


def _awaited(hand: Hand) -> tuple[int, list[Move]]:
    loaded = store.load(hand)
    seat = loaded.game.to_act(loaded.state)[0]
    return seat, loaded.game.legal_moves(loaded.state)[seat]


def _a_move_that_goes_on(hand: Hand) -> tuple[int, Move]:
    seat, legal = _awaited(hand)
    goes_on = [m for m in legal if m.type != "announce"]
    assert goes_on, "the fixed seed's first decision is an announcement: choose another seed"
    return seat, goes_on[0]


def _first_decision(people: Sequence[Any], monkeypatch: pytest.MonkeyPatch
                    ) -> tuple[Hand, dict[int, Any], int, Move]:
    """A partie's first hand (fixed seed), its players by seat, and a move for the awaited
    seat that does not end the hand."""
    hand = _partie(people, SEED, monkeypatch).hands.get()
    users = {s.number: s.player for s in hand.partie.seats.all()}
    seat, move = _a_move_that_goes_on(hand)
    return hand, users, seat, move


def _statements(queries: CaptureQueriesContext) -> list[str]:
    return [q["sql"].split(" ", 1)[0] for q in queries]


def test_a_usual_move_is_a_read_and_one_statement(people, monkeypatch):
    hand, users, seat, move = _first_decision(people, monkeypatch)
    recent.hands.clear()  # as if another process had dealt the hand (tests/games/test_recent.py)
    seq, command_id = hand.last_seq, uuid.uuid4()

    with CaptureQueriesContext(connection) as queries:
        played = move_play(hand_id=hand.id, user=users[seat], move=move, seq=seq,
                           command_id=command_id, at=T0 + timedelta(seconds=1))

    assert _statements(queries) == ["SELECT", "WITH"]
    assert "FOR UPDATE" not in queries[0]["sql"]
    assert played.response["applied_from_seq"] == seq + 1 and not played.retried
    hand.refresh_from_db()
    assert hand.status == Hand.Status.PLAYING and hand.last_seq == played.response["seq"]
    assert hand.deadline is not None and hand.deadline_seq == hand.last_seq
    stored = HandEvent.objects.get(hand=hand, seq=seq + 1)
    assert (stored.type, stored.command_id, stored.actor_id) == (move.type, command_id,
                                                                  users[seat].pk)
    assert Command.objects.get(command_id=command_id).response == played.response
    # The snapshot written by the statement is the state its events give.
    assert store.load(hand).state == store.replay(hand).state
    assert store.load(hand).last_hash == store.replay(hand).last_hash


def test_the_deadline_is_scheduled_once_the_statement_has_written_the_move(people,
                                                                          monkeypatch):
    hand, users, seat, move = _first_decision(people, monkeypatch)
    scheduled: list[tuple[Any, int, bool]] = []

    def schedule_deadline(*, hand_id: Any, seq: int, at: datetime) -> None:
        # What a timer would find if it fired at once: the move must already be there.
        written = HandEvent.objects.filter(hand_id=hand_id, seq=seq).exists()
        scheduled.append((hand_id, seq, written))

    monkeypatch.setattr("games.tasks.schedule_deadline", schedule_deadline)
    played = move_play(hand_id=hand.id, user=users[seat], move=move, seq=hand.last_seq,
                       command_id=uuid.uuid4(), at=T0 + timedelta(seconds=1))

    assert scheduled == [(hand.id, played.response["seq"], True)]


def test_an_illegal_move_is_refused_with_its_rule_and_writes_nothing(people, monkeypatch):
    partie = _partie(people, SEED, monkeypatch)
    hand = partie.hands.get()
    users = {s.number: s.player for s in partie.seats.all()}
    seat, _ = _awaited(hand)
    other = (seat + 1) % 4
    seq = hand.last_seq

    with pytest.raises(IllegalMoveError) as refused:
        move_play(hand_id=hand.id, user=users[other], move=Move("offer", card="7S"), seq=seq,
                  command_id=uuid.uuid4(), at=T0 + timedelta(seconds=1))

    assert refused.value.rule == "turn" and refused.value.status == 400
    hand.refresh_from_db()
    assert hand.last_seq == seq and not Command.objects.exists()


def test_a_retried_command_gets_its_first_answer_and_appends_nothing(people, monkeypatch):
    hand, users, seat, move = _first_decision(people, monkeypatch)
    seq, command_id = hand.last_seq, uuid.uuid4()
    first = move_play(hand_id=hand.id, user=users[seat], move=move, seq=seq,
                      command_id=command_id, at=T0 + timedelta(seconds=1))
    events = HandEvent.objects.count()

    again = move_play(hand_id=hand.id, user=users[seat], move=move, seq=seq,
                      command_id=command_id, at=T0 + timedelta(seconds=2))

    assert again.retried and again.response == first.response
    assert HandEvent.objects.count() == events


def test_the_move_that_ends_the_hand_is_played_in_a_transaction_with_its_chips(people,
                                                                              monkeypatch):
    partie = _partie(people, _seed_with_an_announcement(4), monkeypatch)
    hand = partie.hands.get()
    users = {s.number: s.player for s in partie.seats.all()}
    seat, clock = _fire_until_the_announcement(hand)

    with CaptureQueriesContext(connection) as queries:
        played = move_play(hand_id=hand.id, user=users[seat], move=Move("announce"),
                           seq=hand.last_seq, command_id=uuid.uuid4(), at=clock)

    # Read once without a lock (the attempt), then again with it, in the transaction.
    reads = [q["sql"] for q in queries if q["sql"].startswith("SELECT h.")]
    assert len(reads) == 2 and "FOR UPDATE" in reads[1]
    hand.refresh_from_db()
    assert hand.status == Hand.Status.OVER and played.response["seq"] == hand.last_seq
    assert recent.hands.take(hand.pk, hand.last_seq) is None  # an ended hand is not kept
    pays = HandEvent.objects.filter(hand=hand, type="pay", payload__amount__gt=0)
    assert pays.exists()
    assert chips.reconcile_hand(hand=hand) == []  # every payment in the ledger, once


@pytest.mark.parametrize("kept", [True, False], ids=["kept-hand", "hand-read"])
def test_a_move_racing_a_locked_writer_waits_for_it_then_loses_with_409(people, monkeypatch,
                                                                         kept):
    """The locked writer holds the hand's row: the one-statement move's update waits for it
    (it runs before the statement's inserts, so neither holds what the other waits on), then
    finds the row moved on and nothing of it is written; whether it read the hand or this
    process kept it (recent.py)."""
    hand, users, seat, move = _first_decision(people, monkeypatch)
    if not kept:
        recent.hands.clear()
    seq = hand.last_seq
    written, done = threading.Event(), threading.Event()
    first = uuid.uuid4()

    def locked_writer() -> None:
        try:
            with transaction.atomic():
                move_play(hand_id=hand.id, user=users[seat], move=move, seq=seq,
                          command_id=first, at=T0 + timedelta(seconds=1))
                written.set()
                time.sleep(0.5)  # holds the row (and its event's key) a while
        finally:
            done.set()
            connections.close_all()

    thread = threading.Thread(target=locked_writer)
    thread.start()
    assert written.wait(30)
    began = time.monotonic()
    with pytest.raises(StaleSequence) as lost:
        move_play(hand_id=hand.id, user=users[seat], move=move, seq=seq,
                  command_id=uuid.uuid4(), at=T0 + timedelta(seconds=1))
    waited = time.monotonic() - began
    thread.join(30)

    assert done.is_set() and lost.value.status == 409
    assert waited > 0.2  # it waited for the locked writer's commit
    assert len(recent.hands) == 0  # the loser keeps nothing
    hand.refresh_from_db()
    assert list(Command.objects.values_list("command_id", flat=True)) == [first]
    assert not HandEvent.objects.filter(hand=hand).exclude(command_id=first).filter(
        seq__gt=seq).exists()
    assert store.load(hand).state == store.replay(hand).state


def test_without_autocommit_the_move_is_played_in_the_callers_transaction(people,
                                                                       monkeypatch):
    hand, users, seat, move = _first_decision(people, monkeypatch)
    transaction.set_autocommit(False)
    try:
        with CaptureQueriesContext(connection) as queries:
            move_play(hand_id=hand.id, user=users[seat], move=move, seq=hand.last_seq,
                      command_id=uuid.uuid4(), at=T0 + timedelta(seconds=1))
        transaction.commit()
    finally:
        transaction.set_autocommit(True)
    reads = [q["sql"] for q in queries if q["sql"].startswith("SELECT h.")]
    assert len(reads) == 1 and "FOR UPDATE" in reads[0]  # no attempt without the lock


def test_a_hand_without_a_usable_snapshot_is_replayed_under_the_lock(people, monkeypatch):
    hand, users, seat, move = _first_decision(people, monkeypatch)
    recent.hands.clear()  # its state is read from the row, not kept by this process
    Hand.objects.filter(pk=hand.pk).update(snapshot=b"not a pickle")

    with CaptureQueriesContext(connection) as queries:
        played = move_play(hand_id=hand.id, user=users[seat], move=move, seq=hand.last_seq,
                           command_id=uuid.uuid4(), at=T0 + timedelta(seconds=1))

    reads = [q["sql"] for q in queries if q["sql"].startswith("SELECT h.")]
    assert len(reads) == 2 and "FOR UPDATE" in reads[1]  # the attempt gave up, unreplayed
    hand.refresh_from_db()
    assert hand.last_seq == played.response["seq"]
    assert store.load(hand).state == store.replay(hand).state
