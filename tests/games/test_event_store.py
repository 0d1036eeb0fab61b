"""The event store: append-only in the database, hash-chained, and every tampering found.

The triggers (PostgreSQL only: SQLite has none) are tried with raw SQL. Tampering goes around
them the way an intruder with the database's own rights would (``session_replication_role``),
and ``verify_hands`` must still name the hand on both databases.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.db import DatabaseError, connection, transaction

from games.engine.base import Event
from games.engine.seals import hash_v3, seals_of
from games.engine.verify import Discrepancy, verify_record
from games.errors import StaleSequence
from games.models import Hand, HandEvent, HandSeed, Partie
from games.selectors import hand_record
from games.services import chips, store
from ledger import services as ledger
from ledger.models import JournalEntry

from .factories import play_bots_partie

pytestmark = pytest.mark.django_db

T0 = datetime(2030, 5, 4, 20, 0, tzinfo=UTC)


def _bot_partie(game: str = "comet", seats: int = 3, hands: int = 1, **options: Any) -> Partie:
    """A partie of bots played to its end through the services (bots never wait)."""
    return play_bots_partie(game, ["heuristic"] * seats, hands, at=T0, **options)


@pytest.fixture
def finished_hand() -> Hand:
    return _bot_partie().hands.get()


def _verify_hands() -> tuple[str, CommandError | None]:
    out = StringIO()
    try:
        call_command("verify_hands", stdout=out)
    except CommandError as exc:
        return out.getvalue(), exc
    return out.getvalue(), None


@contextmanager
def _triggers_suspended(*tables: str) -> Iterator[Any]:
    """What an intruder with the database's rights could do: write past the triggers."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # Run the deferred checks of the rows written so far while they are still whole.
            _check_deferred_now(cursor)
            cursor.execute("SET session_replication_role = replica")
            try:
                yield cursor
            finally:
                cursor.execute("SET session_replication_role = DEFAULT")
        else:
            yield cursor


def _check_deferred_now(cursor: Any) -> None:
    """PostgreSQL: run the pending deferred checks (foreign keys, balanced entries) now."""
    cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    cursor.execute("SET CONSTRAINTS ALL DEFERRED")


def _db_uuid(value: Any) -> Any:
    """A UUID as a raw query parameter (SQLite stores it as 32 hex digits)."""
    return value.hex if connection.vendor == "sqlite" else value


def _row(event_id: int) -> tuple[Any, ...]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT seq, type, payload, by, at, prev, hash FROM games_handevent "
                       "WHERE id = %s", [event_id])
        return tuple(cursor.fetchone())


# -- append-only in the database ---------------------------------------------------------------


@pytest.mark.postgres
@pytest.mark.parametrize("sql", [
    "UPDATE games_handevent SET payload = %s WHERE id = %s",
    "UPDATE games_handevent SET by = 'timeout' WHERE id = %s",
    "UPDATE games_handevent SET hash = 'x' WHERE id = %s",
    "DELETE FROM games_handevent WHERE id = %s",
    "DELETE FROM games_handevent",
])
def test_raw_sql_cannot_change_or_remove_an_event(finished_hand, sql):
    event = HandEvent.objects.filter(hand=finished_hand, type="pay").first()
    before = _row(event.id)
    count = HandEvent.objects.count()
    params: list[Any] = [event.id] if "%s" in sql else []
    if sql.count("%s") == 2:
        params = [json.dumps({**event.payload, "amount": 99}), event.id]

    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic(), \
            connection.cursor() as cursor:
        cursor.execute(sql, params)

    assert _row(event.id) == before
    assert HandEvent.objects.count() == count


@pytest.mark.postgres
def test_the_orm_cannot_change_or_remove_an_event_either(finished_hand):
    event = HandEvent.objects.filter(hand=finished_hand).last()
    before = _row(event.id)

    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        HandEvent.objects.filter(pk=event.pk).update(by="forced")
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        event.delete()

    assert _row(event.id) == before


@pytest.mark.postgres
def test_truncate_of_the_events_is_refused_on_postgresql(finished_hand):
    count = HandEvent.objects.count()

    with connection.cursor() as cursor:
        _check_deferred_now(cursor)  # else TRUNCATE refuses for the pending foreign-key checks
        with pytest.raises(DatabaseError, match="append-only: TRUNCATE"), transaction.atomic():
            cursor.execute("TRUNCATE games_handevent")

    assert HandEvent.objects.count() == count > 0


@pytest.mark.postgres
def test_the_seed_cannot_be_changed_or_removed(finished_hand):
    seed = finished_hand.secret.seed

    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic(), \
            connection.cursor() as cursor:
        cursor.execute("UPDATE games_handseed SET seed = %s WHERE hand_id = %s",
                       ["0" * 64, _db_uuid(finished_hand.pk)])
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        HandSeed.objects.filter(hand=finished_hand).delete()

    assert HandSeed.objects.get(hand=finished_hand).seed == seed


# -- the hash chain ------------------------------------------------------------------------------


def test_the_stream_is_a_hash_chain_from_the_commitment(finished_hand):
    events = store.events(finished_hand)
    seed = finished_hand.secret.seed

    assert finished_hand.commitment == hashlib.sha256(bytes.fromhex(seed)).hexdigest()
    assert [e["seq"] for e in events] == list(range(1, finished_hand.last_seq + 1))
    assert events[0]["type"] == "hand_started" and events[-1]["type"] == "hand_over"
    assert events[0]["prev"] == finished_hand.commitment
    for before, after in zip(events, events[1:], strict=False):
        assert after["prev"] == before["hash"]
    # Version 3: each hash is over the event's sealed form, keyed by the hand's seed.
    assert finished_hand.record_format == 3
    assert all(e["hash"] == hash_v3(e, seals_of(e, seed)) for e in events)
    assert all(e["at"].endswith("Z") for e in events)
    assert hand_record(hand=finished_hand)["digest"] == events[-1]["hash"]


def test_a_second_writer_at_a_taken_seq_loses_on_the_unique_constraint(finished_hand):
    stale = Hand.objects.get(pk=finished_hand.pk)
    stale.last_seq -= 1  # a writer that read the hand one event ago
    stream = store.events(finished_hand)
    events = list(HandEvent.objects.filter(hand=finished_hand))

    rival = Event("hand_over", "service", {"result": stream[-1]["result"]})

    with pytest.raises(StaleSequence), transaction.atomic():
        store.append(stale, [rival], prev_hash=stream[-2]["hash"], at=T0)

    assert list(HandEvent.objects.filter(hand=finished_hand)) == events


# -- tampering past the triggers is still found --------------------------------------------------


def _tamper_payload(event: HandEvent, **changes: Any) -> None:
    with _triggers_suspended("games_handevent") as cursor:
        cursor.execute("UPDATE games_handevent SET payload = %s WHERE id = %s",
                       [json.dumps({**event.payload, **changes}), event.id])


@pytest.mark.parametrize("how", ["payload", "by", "rechained"])
def test_an_event_altered_past_the_triggers_fails_verification(how):
    partie = _bot_partie(hands=2)
    victim, witness = partie.hands.order_by("number")
    pay = HandEvent.objects.filter(hand=victim, type="pay", payload__amount__gt=0).last()
    move = HandEvent.objects.filter(hand=victim, by__in=["player", "forced"]).first()

    if how == "payload":
        _tamper_payload(pay, amount=pay.payload["amount"] + 1)
    elif how == "by":
        with _triggers_suspended("games_handevent") as cursor:
            cursor.execute("UPDATE games_handevent SET by = %s WHERE id = %s",
                           ["timeout" if move.by != "timeout" else "player", move.id])
    else:
        # A careful forger who knows the seed: every hash after the change is recomputed over
        # its sealed form, the chain is whole; the rules still catch the change.
        events = store.events(victim)
        seed = victim.secret.seed
        i = next(k for k, e in enumerate(events) if e["seq"] == pay.seq)
        events[i]["amount"] += 1
        with _triggers_suspended("games_handevent") as cursor:
            for k in range(i, len(events)):
                events[k]["prev"] = events[k - 1]["hash"]
                events[k]["hash"] = hash_v3(events[k], seals_of(events[k], seed))
                payload = {key: v for key, v in events[k].items()
                           if key not in ("seq", "type", "at", "by", "prev", "hash")}
                cursor.execute("UPDATE games_handevent SET payload = %s, prev = %s, hash = %s "
                               "WHERE hand_id = %s AND seq = %s",
                               [json.dumps(payload), events[k]["prev"], events[k]["hash"],
                                _db_uuid(victim.pk),
                                events[k]["seq"]])
        assert store.events(victim)[-1]["hash"] == events[-1]["hash"]

    with pytest.raises(Discrepancy):
        verify_record(hand_record(hand=victim))
    out, error = _verify_hands()
    assert error is not None and "1 hand(s) failed" in str(error)
    assert f"FAIL hand {victim.id}" in out
    assert f"hand {witness.id}" in out and f"FAIL hand {witness.id}" not in out
    if connection.vendor == "postgresql":  # the triggers are back in force afterwards
        with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
            HandEvent.objects.filter(pk=pay.pk).update(by="player")


def test_a_seed_swapped_past_the_triggers_fails_verification(finished_hand):
    with _triggers_suspended("games_handseed") as cursor:
        cursor.execute("UPDATE games_handseed SET seed = %s WHERE hand_id = %s",
                       ["ab" * 32, _db_uuid(finished_hand.pk)])
    finished_hand = Hand.objects.select_related("secret", "partie").get(pk=finished_hand.pk)

    with pytest.raises(Discrepancy, match="commitment|seed|deck"):
        verify_record(hand_record(hand=finished_hand))
    out, error = _verify_hands()
    assert error is not None
    assert f"FAIL hand {finished_hand.id}" in out


def test_a_clean_store_verifies_and_reconciles():
    partie = _bot_partie(game="commere", seats=5, hands=3)

    out, error = _verify_hands()

    assert error is None, out
    hands = list(partie.hands.all())
    for hand in hands:
        assert f"OK {hand_record(hand=hand)['digest']} hand {hand.id}" in out
        assert chips.reconcile_hand(hand=hand) == []
    assert "3 finished hand(s) checked, 0 with discrepancies" in out


# -- the ledger against the events ---------------------------------------------------------------


def _payment_entries(hand: Hand) -> list[JournalEntry]:
    """The hand's payment entries, in the order their payments came."""
    entries = JournalEntry.objects.filter(source__startswith=f"hand:{hand.pk}/")
    return sorted(entries, key=lambda e: int(e.idempotency_key.rsplit(":", 1)[1]))


def _pays(hand: Hand) -> list[HandEvent]:
    return list(HandEvent.objects.filter(hand=hand, type="pay", payload__amount__gt=0)
                .order_by("seq"))


def _remove(*entries: JournalEntry) -> None:
    with _triggers_suspended("ledger_posting", "ledger_journalentry") as cursor:
        for entry in entries:
            cursor.execute("DELETE FROM ledger_posting WHERE entry_id = %s", [entry.pk])
            cursor.execute("DELETE FROM ledger_journalentry WHERE id = %s", [entry.pk])
        # Each account back to what its latest remaining posting left, so that later postings
        # chain on (PostgreSQL checks each posting against the one before it).
        cursor.execute(
            "UPDATE ledger_account SET balance = coalesce((SELECT p.balance_after"
            " FROM ledger_posting p WHERE p.account_id = ledger_account.id"
            " ORDER BY p.at DESC, p.id DESC LIMIT 1), 0)")


def test_each_payment_is_one_entry_keyed_by_the_hand_and_its_seq(finished_hand):
    entries, pays = _payment_entries(finished_hand), _pays(finished_hand)
    assert [e.idempotency_key for e in entries] == [
        f"hand:{finished_hand.pk}:{p.seq}" for p in pays]
    assert chips.reconcile_hand(hand=finished_hand) == []
    partie = finished_hand.partie
    accounts = chips.Accounts(partie, list(partie.seats.select_related("player")))
    for entry, pay in zip(entries, pays, strict=True):
        p = pay.payload
        assert entry.source == f"hand:{finished_hand.pk}/event:{pay.seq}"
        assert {(x.account_id, x.amount) for x in entry.postings.all()} == {
            (accounts[p["from"]].pk, -p["amount"]), (accounts[p["to"]].pk, p["amount"])}
        payer, payee = (f"seat {s}" if s != "pot" else "the pot" for s in (p["from"], p["to"]))
        assert entry.memo == (f"Hand 1 of {partie.table_label}: "
                              f"{p['reason']} {payer} to {payee} {p['amount']}"
                              + (f" (owed {p['amount'] + p['short']}, paid {p['amount']},"
                                 f" shortfall {p['short']})" if p["short"] else ""))


def test_a_payment_entry_keeps_its_shortfall(finished_hand):
    partie = finished_hand.partie
    accounts = chips.Accounts(partie, list(partie.seats.select_related("player")))
    _remove(*_payment_entries(finished_hand))  # room in the books for this hand's keys
    pays = [
        {"type": "pay", "seq": 80, "from": 0, "to": "pot", "amount": 2, "reason": "ante",
         "short": 1},
        {"type": "pay", "seq": 81, "from": 1, "to": "pot", "amount": 1, "reason": "ante",
         "short": 2},
    ]
    chips.post_payments(accounts=accounts, hand=finished_hand, sealed=pays)

    first = JournalEntry.objects.get(idempotency_key=f"hand:{finished_hand.pk}:80")
    second = JournalEntry.objects.get(idempotency_key=f"hand:{finished_hand.pk}:81")
    assert (first.shortfall, second.shortfall) == (1, 2)
    assert second.memo.endswith("(owed 3, paid 1, shortfall 2)")


def test_posting_a_hands_payments_again_writes_nothing(finished_hand):
    partie = finished_hand.partie
    accounts = chips.Accounts(partie, list(partie.seats.select_related("player")))
    before = JournalEntry.objects.count()
    sealed = [{"type": "pay", "seq": p.seq, **p.payload} for p in _pays(finished_hand)]
    chips.post_payments(accounts=accounts, hand=finished_hand, sealed=sealed)
    assert JournalEntry.objects.count() == before
    assert chips.reconcile_hand(hand=finished_hand) == []


def test_a_ledger_entry_without_its_payment_event_is_reported(finished_hand):
    partie = finished_hand.partie
    seat = partie.seats.get(number=0)
    key = f"hand:{finished_hand.pk}:999"
    ledger.transfer(payer=chips.seat_wallet(partie, seat), payee=chips.pot(partie), amount=1,
                    memo="smuggled", source=f"hand:{finished_hand.pk}/event:999",
                    idempotency_key=key)

    assert chips.reconcile_hand(hand=finished_hand) == [
        f"ledger: entry {key} has no payment event"]
    out, error = _verify_hands()
    assert error is not None
    assert f"FAIL hand {finished_hand.id}" in out and key in out


def test_payments_missing_from_the_ledger_are_reported(finished_hand):
    entries, pays = _payment_entries(finished_hand), _pays(finished_hand)
    missing: list[int] = []
    for gone, pay in ((entries[0], pays[0]), (entries[-1], pays[-1])):
        _remove(gone)
        missing.append(pay.seq)
        seqs = ", ".join(map(str, sorted(missing)))
        assert chips.reconcile_hand(hand=finished_hand) == [
            f"ledger: no entry for payment(s) hand:{finished_hand.pk}:{seqs}"]
    out, error = _verify_hands()
    assert error is not None and f"FAIL hand {finished_hand.id}" in out


def test_a_ledger_entry_that_moves_other_chips_than_its_events_is_reported(finished_hand):
    entry = _payment_entries(finished_hand)[-1]
    with _triggers_suspended("ledger_posting", "ledger_journalentry") as cursor:
        cursor.execute("UPDATE ledger_posting SET amount = -amount WHERE entry_id = %s",
                       [entry.pk])

    problems = chips.reconcile_hand(hand=finished_hand)

    assert len(problems) == 1
    assert problems[0].startswith(f"ledger: entry {entry.idempotency_key} moves ")
    out, error = _verify_hands()
    assert error is not None and f"FAIL hand {finished_hand.id}" in out
