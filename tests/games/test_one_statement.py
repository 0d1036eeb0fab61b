"""The usual move outside a transaction: the hand read without a lock, then one statement that
writes the events, the hand row and the Command row (moves._in_one_statement). A move with
chips or that ends its hand is written as played in a transaction (moves._in_guarded);
retries and refusals are played again in a transaction, the hand locked.

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
from games.services import chips, move_play, moves, partie_start, recent, store
from ledger.exceptions import InsufficientChips
from ledger.models import JournalEntry
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


def _at_the_announcement(partie: Partie) -> tuple[Hand, dict[int, Any], int, datetime]:
    """The partie's first hand played by its timers until its awaited seat's only move is to
    announce (the move that ends it): the hand, its players by seat, that seat, the clock."""
    hand = partie.hands.get()
    users = {s.number: s.player for s in partie.seats.all()}
    seat, clock = _fire_until_the_announcement(hand)
    return hand, users, seat, clock


def _ledger_batches(queries: CaptureQueriesContext) -> list[str]:
    return [q["sql"] for q in queries if "ledger_post_many(" in q["sql"]]


def test_the_move_that_ends_the_hand_is_played_in_a_transaction_with_its_chips(people,
                                                                              monkeypatch):
    partie = _partie(people, _seed_with_an_announcement(4), monkeypatch)
    hand, users, seat, clock = _at_the_announcement(partie)

    with CaptureQueriesContext(connection) as queries:
        played = move_play(hand_id=hand.id, user=users[seat], move=Move("announce"),
                           seq=hand.last_seq, command_id=uuid.uuid4(), at=clock)

    # Read once without a lock (the attempt), never with it: in the transaction, the hand's
    # guarded write comes first (it takes the row's lock), and the payments after it.
    reads = [q["sql"] for q in queries if q["sql"].startswith("SELECT h.")]
    assert len(reads) == 1 and "FOR UPDATE" not in reads[0]
    sqls = [q["sql"] for q in queries]
    after_read = sqls[sqls.index(reads[0]) + 1:]
    assert after_read[0] == "BEGIN" or after_read[0].startswith("WITH u AS (UPDATE"), after_read
    first_write = next(q for q in after_read if q != "BEGIN")
    assert first_write.startswith('WITH u AS (UPDATE "games_hand"'), sqls
    assert len(_ledger_batches(queries)) == 1
    hand.refresh_from_db()
    assert hand.status == Hand.Status.OVER and played.response["seq"] == hand.last_seq
    assert recent.hands.take(hand.pk, hand.last_seq) is None  # an ended hand is not kept
    pays = HandEvent.objects.filter(hand=hand, type="pay", payload__amount__gt=0)
    assert pays.exists()
    assert chips.reconcile_hand(hand=hand) == []  # every payment in the ledger, once


def _spy_on_commit_callbacks(monkeypatch: pytest.MonkeyPatch, hand: Hand
                             ) -> tuple[list[Any], list[Any]]:
    """Count the player's moves decided (``moves.apply_move``) and record the next-hand timers
    queued, each with the hand's status as committed when its callback ran."""
    decided: list[Any] = []
    queued: list[Any] = []
    real = moves.apply_move

    def apply_move(*args: Any, **kwargs: Any) -> Any:
        decided.append(args[4])  # the move
        return real(*args, **kwargs)

    def schedule_next_hand(*, partie_id: Any, at: datetime) -> None:
        queued.append((partie_id, Hand.objects.get(pk=hand.pk).status))

    monkeypatch.setattr(moves, "apply_move", apply_move)
    monkeypatch.setattr("games.tasks.schedule_next_hand", schedule_next_hand)
    return decided, queued


def test_the_ending_move_is_decided_once_and_queues_the_next_hand_after_its_commit(
        people, monkeypatch):
    """With a pause between hands: the attempt plays the move once, the transaction writes
    it without playing it again, and the timer that deals the next hand is queued by the
    attempt's callback, once, after the commit that ended the hand."""
    seed = _seed_with_an_announcement(4)
    monkeypatch.setattr("games.services.parties.new_seed", lambda: seed)
    partie = partie_start(game="commere", players=people, options={"rounds": 3}, buy_in=50,
                          table_label="paused table", at=T0, move_timeout=timedelta(minutes=5),
                          pause_between_hands=timedelta(seconds=30))
    hand, users, seat, clock = _at_the_announcement(partie)
    decided, queued = _spy_on_commit_callbacks(monkeypatch, hand)

    played = move_play(hand_id=hand.id, user=users[seat], move=Move("announce"),
                       seq=hand.last_seq, command_id=uuid.uuid4(), at=clock)

    assert decided == [Move("announce")]
    assert queued == [(partie.pk, Hand.Status.OVER)]
    assert played.response["next_hand"] is None
    hand.refresh_from_db()
    assert hand.status == Hand.Status.OVER and chips.reconcile_hand(hand=hand) == []


def test_an_ending_move_that_deals_the_next_hand_queues_no_timer_for_it(people, monkeypatch):
    partie = _partie_that_goes_on(people, monkeypatch)
    hand, users, seat, clock = _at_the_announcement(partie)
    decided, queued = _spy_on_commit_callbacks(monkeypatch, hand)

    played = move_play(hand_id=hand.id, user=users[seat], move=Move("announce"),
                       seq=hand.last_seq, command_id=uuid.uuid4(), at=clock)

    assert decided == [Move("announce")] and queued == []
    assert played.response["next_hand"] is not None


def _partie_that_goes_on(people: Sequence[Any], monkeypatch: pytest.MonkeyPatch) -> Partie:
    """A partie of three rounds whose first hand ends with an announcement, and that deals
    its next hand at once."""
    seed = _seed_with_an_announcement(4)
    monkeypatch.setattr("games.services.parties.new_seed", lambda: seed)
    return partie_start(game="commere", players=people, options={"rounds": 3}, buy_in=50,
                        table_label="busy table", at=T0, move_timeout=timedelta(minutes=5),
                        pause_between_hands=timedelta(0))


def test_the_hands_payments_and_the_next_hands_antes_are_one_ledger_batch(people, monkeypatch):
    partie = _partie_that_goes_on(people, monkeypatch)
    hand, users, seat, clock = _at_the_announcement(partie)
    wallets = {s.number: chips.wallet(partie, s.player).balance for s in partie.seats.all()}
    pot = chips.pot(partie).balance
    seq = hand.last_seq

    with CaptureQueriesContext(connection) as queries:
        played = move_play(hand_id=hand.id, user=users[seat], move=Move("announce"),
                           seq=seq, command_id=uuid.uuid4(), at=clock)

    assert played.response["next_hand"] is not None
    following = Hand.objects.get(pk=played.response["next_hand"]["id"])
    batches = _ledger_batches(queries)
    assert len(batches) == 1  # the hand's payments and the new hand's antes
    reads = [q["sql"] for q in queries if q["sql"].startswith("SELECT h.")]
    assert len(reads) == 1 and "FOR UPDATE" not in reads[0]
    # The accounts were read by the hand's guarded write, not by a statement of their own.
    assert not [q for q in queries if q["sql"].startswith("SELECT a.")]
    assert len([q for q in queries if q["sql"].startswith("WITH ")]) == 2  # end; new hand
    hand.refresh_from_db()
    assert chips.reconcile_hand(hand=hand) == [] and chips.reconcile_hand(hand=following) == []
    antes = HandEvent.objects.filter(hand=following, type="pay", payload__amount__gt=0)
    assert antes.exists()
    # In the batch, one entry per hand, in order: the hand's payments (netted: the payers and
    # the winner, once each), then the new hand's antes (each seat to the pot).
    ending = HandEvent.objects.filter(hand=hand, type="pay", seq__gt=seq, payload__amount__gt=0)
    first_pay, last_pay = ending.order_by("seq").first(), ending.order_by("seq").last()
    written = list(JournalEntry.objects.filter(source__contains="/events:").order_by("-id")[:2])
    assert [e.source for e in reversed(written)] == [
        f"hand:{hand.pk}/events:{first_pay.seq}-{last_pay.seq}",
        f"hand:{following.pk}/events:{antes.order_by('seq').first().seq}"
        f"-{antes.order_by('seq').last().seq}"]
    assert written[1].idempotency_key == f"hand:{hand.pk}:{first_pay.seq}"
    assert written[0].postings.count() == antes.count() + 1
    # The new hand's deal counted the chips as the hand's payments left them.
    paid = {s: 0 for s in wallets}  # by the ending move (the antes were in ``wallets``)
    for e in HandEvent.objects.filter(hand=hand, type="pay", seq__gt=seq):
        for side, sign in ((e.payload["from"], -1), (e.payload["to"], 1)):
            if side != "pot":
                paid[int(side)] += sign * e.payload["amount"]
    dealt = HandEvent.objects.get(hand=following, seq=1).payload
    assert dealt["chips_before"] == {str(s): wallets[s] + paid[s] for s in wallets}
    pot_paid = sum(e.payload["amount"] * (1 if e.payload["to"] == "pot" else -1)
                   for e in HandEvent.objects.filter(hand=hand, type="pay", seq__gt=seq)
                   if "pot" in (e.payload["from"], e.payload["to"]))
    assert dealt["pot_before"] == pot + pot_paid
    for s in partie.seats.all():
        assert chips.wallet(partie, s.player).balance == dealt["chips_before"][str(s.number)] - sum(
            e.payload["amount"] for e in antes if e.payload["from"] == s.number)


def test_a_stale_read_of_the_ending_move_writes_nothing_and_loses_with_409(people,
                                                                         monkeypatch):
    """The attempt plays the ending move on the hand as this process kept it; another writer
    ended the hand meanwhile. The guarded write refuses, the transaction (and the payments
    held in it) rolls back, and the move, played again under the lock, loses like any stale
    move."""
    partie = _partie(people, _seed_with_an_announcement(4), monkeypatch)
    hand, users, seat, clock = _at_the_announcement(partie)
    seq = hand.last_seq
    kept, seats = store.read_hand(hand.pk)
    loaded = store.from_snapshot(kept)
    assert loaded is not None
    with transaction.atomic():  # the locked path: it keeps nothing in this process
        move_play(hand_id=hand.id, user=users[seat], move=Move("announce"), seq=seq,
                  command_id=uuid.uuid4(), at=clock)
    recent.hands.keep(kept, seats, loaded)  # as this process last saw it: at seq
    events, entries = HandEvent.objects.count(), JournalEntry.objects.count()
    guarded = []
    real = moves._in_guarded
    monkeypatch.setattr(moves, "_in_guarded", lambda *a: guarded.append(1) or real(*a))

    with pytest.raises(StaleSequence):
        move_play(hand_id=hand.id, user=users[seat], move=Move("announce"), seq=seq,
                  command_id=uuid.uuid4(), at=clock)

    assert guarded == [1]  # the attempt went on in a transaction, and gave up there
    assert HandEvent.objects.count() == events and JournalEntry.objects.count() == entries
    hand.refresh_from_db()
    assert chips.reconcile_hand(hand=hand) == []


def test_a_ledger_refusal_on_the_guarded_path_rolls_it_back_and_plays_it_locked(people,
                                                                               monkeypatch):
    partie = _partie_that_goes_on(people, monkeypatch)
    hand, users, seat, clock = _at_the_announcement(partie)
    real, calls = chips._post, []

    def refuse_first(accounts: Any, groups: Any) -> None:
        calls.append(accounts.holding)
        if len(calls) == 1:
            raise InsufficientChips("refused once, for the test", account_id=0, balance=0,
                                    needed=1)
        real(accounts, groups)

    monkeypatch.setattr(chips, "_post", refuse_first)

    with CaptureQueriesContext(connection) as queries:
        played = move_play(hand_id=hand.id, user=users[seat], move=Move("announce"),
                           seq=hand.last_seq, command_id=uuid.uuid4(), at=clock)

    reads = [q["sql"] for q in queries if q["sql"].startswith("SELECT h.")]
    assert len(reads) == 2 and "FOR UPDATE" in reads[1]  # then played under the lock
    assert len(calls) > 1
    hand.refresh_from_db()
    following = Hand.objects.get(pk=played.response["next_hand"]["id"])
    assert hand.status == Hand.Status.OVER and played.response["seq"] == hand.last_seq
    assert HandEvent.objects.filter(hand=hand).count() == hand.last_seq  # no gap, no twin
    assert chips.reconcile_hand(hand=hand) == [] and chips.reconcile_hand(hand=following) == []
    assert Hand.objects.filter(partie=partie).count() == 2


def test_the_last_hand_of_a_partie_ends_it_with_its_payments_in_the_pot_shared(people,
                                                                            monkeypatch):
    """At zero pause the ending move of the partie's last hand closes the partie in the same
    command, on the guarded path: the payments held are posted before the pot is read and
    shared (RULES.md §1), so the pot is shared with them and left empty."""
    partie = _partie(people, _seed_with_an_announcement(4), monkeypatch)
    Partie.objects.filter(pk=partie.pk).update(pause_between_hands=timedelta(0))
    hand, users, seat, clock = _at_the_announcement(partie)
    guarded: list[int] = []
    real = moves._in_guarded
    monkeypatch.setattr(moves, "_in_guarded", lambda *a: guarded.append(1) or real(*a))

    played = move_play(hand_id=hand.id, user=users[seat], move=Move("announce"),
                       seq=hand.last_seq, command_id=uuid.uuid4(), at=clock)

    partie.refresh_from_db()
    hand.refresh_from_db()
    assert guarded == [1] and played.response["next_hand"] is None
    assert partie.status == Partie.Status.OVER and hand.status == Hand.Status.OVER
    assert chips.reconcile_hand(hand=hand) == []
    assert chips.pot(partie).balance == 0
    wallets = sum(chips.wallet(partie, s.player).balance for s in partie.seats.all())
    assert wallets == 4 * 50  # every chip bought in is in a wallet again


def test_a_failed_deal_on_the_guarded_path_ends_the_hand_without_it(people, monkeypatch,
                                                                    caplog):
    """The next hand's deal fails in the ending move's transaction: it is rolled back whole
    and the move played once more, locked, without the deal (the timer deals it later); the
    deal is tried once, and logged once."""
    partie = _partie_that_goes_on(people, monkeypatch)
    hand, users, seat, clock = _at_the_announcement(partie)
    tried: list[int] = []

    def broken_deal(*args: Any, **kwargs: Any) -> Any:
        tried.append(1)
        raise RuntimeError("the deal breaks, for the test")

    monkeypatch.setattr(moves, "deal_after", broken_deal)

    played = move_play(hand_id=hand.id, user=users[seat], move=Move("announce"),
                       seq=hand.last_seq, command_id=uuid.uuid4(), at=clock)

    hand.refresh_from_db()
    assert tried == [1]
    assert [r for r in caplog.records if "dealing the next hand" in r.getMessage()]
    assert len([r for r in caplog.records if "dealing the next hand" in r.getMessage()]) == 1
    assert hand.status == Hand.Status.OVER and played.response["next_hand"] is None
    assert Hand.objects.filter(partie=partie).count() == 1
    assert chips.reconcile_hand(hand=hand) == []
    assert HandEvent.objects.filter(hand=hand).count() == hand.last_seq


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


def test_comet_hands_played_by_people_post_every_payment_once_on_the_guarded_path(
        people, monkeypatch):
    """Comet hands played to their end through ``move_play`` as the API calls it: a Comet
    played mid-hand makes its payments (a move with chips that does not end the hand, on the
    guarded path, its hand kept for the next move), and every hand's end its own. After each
    hand the ledger matches its events, and the state from the snapshot is the replay's."""
    import random

    partie = partie_start(game="comet", players=people[:3], options={"deals": 3}, buy_in=60,
                          table_label="comet table", at=T0, move_timeout=timedelta(minutes=5),
                          forced_move_delay=timedelta(0), comet_window=timedelta(0),
                          pause_between_hands=timedelta(0))
    users = {s.number: s.player for s in partie.seats.all()}
    paths: list[tuple[bool, bool]] = []  # (the hand went on, a payment was made), per guarded move
    real = moves._in_guarded

    def spy(*args: Any) -> Any:
        played = real(*args)
        if played is not None:
            pays = HandEvent.objects.filter(hand=played.hand, type="pay",
                                            seq__gte=played.response["applied_from_seq"])
            paths.append((played.hand.status == Hand.Status.PLAYING, pays.exists()))
        return played

    monkeypatch.setattr(moves, "_in_guarded", spy)
    deadlines: list[bool] = []  # each queued once its move is committed: its event is there

    def schedule_deadline(*, hand_id: Any, seq: int, at: datetime) -> None:
        deadlines.append(HandEvent.objects.filter(hand_id=hand_id, seq=seq).exists())

    monkeypatch.setattr("games.tasks.schedule_deadline", schedule_deadline)
    rng = random.Random(7)
    clock = T0
    hands = 0
    hand = partie.hands.get()
    for _ in range(400):
        hand.refresh_from_db()
        if hand.status == Hand.Status.OVER:
            assert chips.reconcile_hand(hand=hand) == []
            hands += 1
            following = Hand.objects.filter(partie=partie, number=hand.number + 1).first()
            if following is None:
                break
            hand = following
            continue
        assert store.load(hand).state == store.replay(hand).state
        seat, legal = _awaited(hand)
        clock += timedelta(seconds=1)
        move_play(hand_id=hand.id, user=users[seat], move=rng.choice(legal), seq=hand.last_seq,
                  command_id=uuid.uuid4(), at=clock)
    assert hands >= 2
    assert (False, True) in paths  # a hand's end with its payments
    mid_hand = [p for p in paths if p[0]]
    assert mid_hand and all(paid for _, paid in mid_hand)  # chips posted, the hand went on
    assert deadlines and all(deadlines)
    partie.refresh_from_db()
    wallets = sum(chips.wallet(partie, s.player).balance for s in partie.seats.all())
    assert wallets + chips.pot(partie).balance == 3 * 60  # every chip bought in, once
