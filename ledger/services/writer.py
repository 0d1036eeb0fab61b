"""How an entry is written; internal to ledger.services (its docstring gives the steps)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from ledger.exceptions import (
    BackdatedEntry,
    IdempotencyConflict,
    InsufficientChips,
    InvalidEntry,
    UnbalancedEntry,
)
from ledger.models import Account, AccountKind, JournalEntry

# Far above any stake, far below bigint: sums of postings can never overflow.
MAX_AMOUNT = 10**15

Line = tuple[Account, int]


@dataclass(frozen=True)
class Plan:
    """What to write, decided once the accounts are locked; no lines means write nothing."""

    lines: tuple[Line, ...]
    memo: str
    shortfall: int = 0
    reverses: JournalEntry | None = None


@dataclass(frozen=True)
class EntryRequest:
    """One entry of a batch for ``entries_post``."""

    postings: Sequence[Line]
    memo: str
    source: str
    idempotency_key: str


@dataclass(frozen=True)
class _Draft:
    entry_id: int
    plan: Plan
    source: str
    idempotency_key: str


def write(
    *,
    accounts: Sequence[Account],
    plan: Callable[[Mapping[int, Account]], Plan],
    same: Callable[[JournalEntry], bool],
    idempotency_key: str,
    source: str,
    at: datetime | None,
) -> JournalEntry | None:
    check_text(idempotency_key, "idempotency_key")
    check_text(source, "source")
    try:
        with transaction.atomic():
            lock_keys([idempotency_key])
            locked = lock(accounts)
            next_id, existing_id = claim(idempotency_key)
            if existing_id is not None:
                return replayed(existing_id, same, idempotency_key)
            decided = plan(locked)
            if not decided.lines:
                return None
            [entry] = insert(
                drafts=[_Draft(next_id, decided, source, idempotency_key)],
                at=entry_time(at, locked.values()),
            )
    except IntegrityError:
        # A concurrent transaction wrote this key first: the unique index made this one wait
        # for it and then refused it. Our savepoint is rolled back; answer like a retry.
        existing_id = (
            JournalEntry.objects.filter(idempotency_key=idempotency_key)
            .values_list("pk", flat=True)
            .first()
        )
        if existing_id is None:
            raise
        return replayed(existing_id, same, idempotency_key)
    # Only now that the savepoint is released do the instances passed in take the new balances.
    for account, amount in decided.lines:
        account.balance += amount
        account.last_posted_at = entry.at
    return entry


def post(
    *,
    lines: Sequence[Line],
    memo: str,
    source: str,
    idempotency_key: str,
    at: datetime | None,
    same: Callable[[JournalEntry], bool],
) -> JournalEntry:
    """Write one entry whose lines are known in advance (``validated`` already): entry_post.

    On PostgreSQL this is one statement, ``ledger_post`` (migration 0003), and no savepoint: a
    refusal is the function's answer, not a failed statement, so it is raised here, outside any
    atomic block, and the caller's transaction stays usable. Called alone (autocommit), the
    statement is its own transaction: one round trip in all. SQLite takes the Python path.
    """
    check_text(idempotency_key, "idempotency_key")
    check_text(source, "source")
    if connection.vendor != "postgresql":

        def plan(locked: Mapping[int, Account]) -> Plan:
            fixed = tuple((locked[account.pk], amount) for account, amount in lines)
            check_funds(fixed)
            return Plan(lines=fixed, memo=memo)

        entry = write(
            accounts=[account for account, _ in lines],
            plan=plan,
            same=same,
            idempotency_key=idempotency_key,
            source=source,
            at=at,
        )
        assert entry is not None  # a plan with lines always writes
        return entry
    if at is not None and timezone.is_naive(at):
        raise InvalidEntry("An entry's time must be timezone-aware.")
    club_key = lines[0][0].club_key
    try:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT * FROM ledger_post(%s, %s, %s, %s, %s::bigint[], %s::bigint[],"
                " %s::timestamptz, %s::timestamptz, 0, NULL)",
                [
                    idempotency_key,
                    source,
                    memo,
                    club_key,
                    [account.pk for account, _ in lines],
                    [amount for _, amount in lines],
                    at,
                    timezone.now() if at is None else None,
                ],
            )
            outcome, entry_id, entry_at, balances, short_index, missing = cursor.fetchone()
    except IntegrityError:
        # Only a writer that skipped the key's lock can race us onto the unique index. Alone
        # (autocommit), our statement was rolled back by itself: answer like a retry. Inside
        # the caller's transaction, that transaction is aborted: let the error end it.
        if connection.in_atomic_block:
            raise
        existing_id = (
            JournalEntry.objects.filter(idempotency_key=idempotency_key)
            .values_list("pk", flat=True)
            .first()
        )
        if existing_id is None:
            raise
        return replayed(existing_id, same, idempotency_key)
    if outcome == "missing":
        raise InvalidEntry(f"No such account: {sorted(missing)}.")
    for (account, _), held in zip(lines, balances, strict=True):
        account.balance = held
    if outcome == "replay":
        return replayed(entry_id, same, idempotency_key)
    if outcome == "short":
        account, amount = lines[short_index - 1]
        raise insufficient(account, account.balance, amount)
    if outcome == "backdated":
        assert at is not None
        raise backdated(at, entry_at)
    assert outcome == "written", outcome
    for account, _ in lines:
        account.last_posted_at = entry_at
    entry = JournalEntry(
        id=entry_id,
        idempotency_key=idempotency_key,
        club_key=club_key,
        at=entry_at,
        memo=memo,
        source=source,
    )
    entry._state.adding = False
    entry._state.db = connection.alias
    return entry


def lock_keys(keys: Sequence[str]) -> None:
    """Take the keys' locks (PostgreSQL), as ``ledger_post`` does, before the accounts' locks:
    writers of one key then queue up, and the later ones find the first one's entry."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT ledger_lock_keys(%s::text[])", [list(keys)])


def lock(accounts: Sequence[Account]) -> dict[int, Account]:
    """Lock the accounts' rows until the end of the transaction and refresh their balances.

    Plain SQL, like the inserts below: this is the hot path, and the ORM's query building costs
    more than the database's work here. ORDER BY id: PostgreSQL locks the rows in that order,
    so no two writers deadlock.
    """
    by_id = {account.pk: account for account in accounts}
    ids = sorted(by_id)
    placeholders = ", ".join(["%s"] * len(ids))
    # NO KEY UPDATE (PostgreSQL): it queues balance writers as FOR UPDATE does, without
    # blocking the foreign-key checks of rows that merely point at the account.
    for_update = " FOR NO KEY UPDATE" if connection.features.has_select_for_no_key_update else ""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id, balance, last_posted_at FROM ledger_account"
            f" WHERE id IN ({placeholders}) ORDER BY id{for_update}",
            ids,
        )
        rows = cursor.fetchall()
    for pk, balance, last_posted_at in rows:
        by_id[pk].balance = balance
        by_id[pk].last_posted_at = _aware(last_posted_at)
    missing = set(ids) - {row[0] for row in rows}
    if missing:
        raise InvalidEntry(f"No such account: {sorted(missing)}.")
    return by_id


def claim(idempotency_key: str) -> tuple[int, int | None]:
    """The id the new entry will take, and the id of an entry already holding the key.

    Entries get their id before their postings are written (postings come first, the entry
    seals them). One round trip for both; a replay burns an id, which is harmless.
    """
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "SELECT nextval(pg_get_serial_sequence('ledger_journalentry', 'id')),"
                " (SELECT id FROM ledger_journalentry WHERE idempotency_key = %s)",
                [idempotency_key],
            )
        else:
            # SQLite has one writer at a time; the entry's primary key guards the rest.
            cursor.execute(
                "SELECT coalesce(max(id), 0) + 1,"
                " (SELECT id FROM ledger_journalentry WHERE idempotency_key = %s)"
                " FROM ledger_journalentry",
                [idempotency_key],
            )
        next_id, existing_id = cursor.fetchone()
    return int(next_id), existing_id


def write_many(*, requests: Sequence[EntryRequest], at: datetime | None) -> list[JournalEntry]:
    """Write a batch of entries in one transaction and a handful of statements, in order.

    Keys already written return their entries (or raise IdempotencyConflict); funds are checked
    entry after entry on the balances the earlier ones leave. A key taken meanwhile by a
    concurrent transaction raises IntegrityError, the batch rolled back (entries_post then
    posts it one entry at a time).
    """
    batch = [(validated(r.postings), r) for r in requests]
    for r in requests:
        check_text(r.idempotency_key, "idempotency_key")
        check_text(r.source, "source")
    keys = [r.idempotency_key for r in requests]
    if len(set(keys)) != len(keys):
        raise InvalidEntry("Each entry of a batch needs its own idempotency key.")
    if not batch:
        return []
    with transaction.atomic():
        lock_keys(keys)
        locked = lock([account for lines, _ in batch for account, _ in lines])
        existing = dict(
            JournalEntry.objects.filter(idempotency_key__in=keys).values_list(
                "idempotency_key", "pk"
            )
        )
        fresh = [(lines, r) for lines, r in batch if r.idempotency_key not in existing]
        running = {pk: account.balance for pk, account in locked.items()}
        drafts = []
        for entry_id, (lines, r) in zip(allocate_ids(len(fresh)), fresh, strict=True):
            fixed = tuple((locked[account.pk], amount) for account, amount in lines)
            check_funds(fixed, running)
            for account, amount in fixed:
                running[account.pk] += amount
            drafts.append(_Draft(entry_id, Plan(fixed, r.memo), r.source, r.idempotency_key))
        found = {
            r.idempotency_key: replayed(
                existing[r.idempotency_key],
                same_postings(lines),
                r.idempotency_key,
            )
            for lines, r in batch
            if r.idempotency_key in existing
        }
        if drafts:
            when = entry_time(at, locked.values())
            found.update((entry.idempotency_key, entry) for entry in insert(drafts=drafts, at=when))
    # Only now that the savepoint is released do the instances passed in take the new balances.
    for draft in drafts:
        for account, _ in draft.plan.lines:
            account.balance = running[account.pk]
            account.last_posted_at = when
    return [found[key] for key in keys]


def allocate_ids(count: int) -> list[int]:
    """Ids for new entries, taken before their postings are written."""
    if not count:
        return []
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "SELECT nextval(pg_get_serial_sequence('ledger_journalentry', 'id'))"
                " FROM generate_series(1, %s)",
                [count],
            )
            return [int(row[0]) for row in cursor.fetchall()]
        cursor.execute("SELECT coalesce(max(id), 0) FROM ledger_journalentry")
        [(top,)] = cursor.fetchall()
    return list(range(int(top) + 1, int(top) + 1 + count))


# Rows per INSERT statement: far below both databases' limits on bound parameters.
_CHUNK = 1000


def insert(*, drafts: Sequence[_Draft], at: datetime) -> list[JournalEntry]:
    """Write the drafts' postings, then the entries that seal them (see migration 0002).

    Each posting states the balance it leaves, running on from one draft to the next in order,
    which is the order in which the database applies them.
    """
    at_value = connection.ops.adapt_datetimefield_value(at)
    balances: dict[int, int] = {}
    postings: list[tuple[object, ...]] = []
    entries: list[JournalEntry] = []
    for draft in drafts:
        for account, amount in draft.plan.lines:
            after = balances.get(account.pk, account.balance) + amount
            balances[account.pk] = after
            postings.append((draft.entry_id, account.pk, amount, after, at_value))
        entries.append(
            JournalEntry(
                id=draft.entry_id,
                idempotency_key=draft.idempotency_key,
                club_key=draft.plan.lines[0][0].club_key,
                at=at,
                memo=draft.plan.memo,
                source=draft.source,
                shortfall=draft.plan.shortfall,
                reverses=draft.plan.reverses,
            )
        )
    rows = [
        (
            e.pk,
            e.idempotency_key,
            e.club_key,
            at_value,
            e.memo,
            e.source,
            e.shortfall,
            e.reverses_id,
        )
        for e in entries
    ]
    with connection.cursor() as cursor:
        _insert_rows(
            cursor, "ledger_posting (entry_id, account_id, amount, balance_after, at)", postings
        )
        _insert_rows(
            cursor,
            "ledger_journalentry"
            " (id, idempotency_key, club_key, at, memo, source, shortfall, reverses_id)",
            rows,
        )
    for entry in entries:
        entry._state.adding = False
        entry._state.db = connection.alias
    return entries


def _insert_rows(cursor: Any, into: str, rows: Sequence[tuple[object, ...]]) -> None:
    for start in range(0, len(rows), _CHUNK):
        chunk = rows[start : start + _CHUNK]
        one = "(" + ", ".join(["%s"] * len(chunk[0])) + ")"
        cursor.execute(
            f"INSERT INTO {into} VALUES " + ", ".join([one] * len(chunk)),
            [value for row in chunk for value in row],
        )


def _aware(value: datetime | str | None) -> datetime | None:
    """A datetime read by plain SQL: SQLite gives it naive (UTC) or as text."""
    if isinstance(value, str):
        value = parse_datetime(value)
    if value is not None and timezone.is_naive(value):
        value = value.replace(tzinfo=UTC)
    return value


def replayed(entry_id: int, same: Callable[[JournalEntry], bool], key: str) -> JournalEntry:
    entry = JournalEntry.objects.get(pk=entry_id)
    if not same(entry):
        raise IdempotencyConflict(
            f"Idempotency key {key!r} was already used by entry #{entry.pk} "
            f"({entry.memo!r}) with other postings."
        )
    return entry


def entry_time(at: datetime | None, accounts: Iterable[Account]) -> datetime:
    latest = max((a.last_posted_at for a in accounts if a.last_posted_at), default=None)
    if at is None:
        now = timezone.now()
        # Never before an account's last posting, even if this server's clock is behind
        # another's: running balances and "balance as of" rely on each account's time order.
        return max(now, latest) if latest else now
    if timezone.is_naive(at):
        raise InvalidEntry("An entry's time must be timezone-aware.")
    if latest and at < latest:
        raise backdated(at, latest)
    return at


def backdated(at: datetime, latest: datetime) -> BackdatedEntry:
    return BackdatedEntry(
        f"An entry at {at.isoformat()} would come before its accounts' last posting "
        f"({latest.isoformat()}); post it now, or reverse and re-post later entries."
    )


# -- checks ----------------------------------------------------------------------------------


def validated(postings: Sequence[Line]) -> tuple[Line, ...]:
    lines = tuple(postings)
    if len(lines) < 2:
        raise InvalidEntry("An entry needs two or more postings.")
    seen: set[int] = set()
    for account, amount in lines:
        if account.pk is None:
            raise InvalidEntry(f"Account {account} is not saved.")
        if account.pk in seen:
            raise InvalidEntry(f"Account {account} appears twice; give it one posting.")
        seen.add(account.pk)
        check_amount(amount, positive=False)
    clubs = {account.club_key for account, _ in lines}
    if len(clubs) > 1:
        raise InvalidEntry(
            f"An entry stays within one club; these accounts belong to {sorted(clubs)}."
        )
    total = sum(amount for _, amount in lines)
    if total != 0:
        raise UnbalancedEntry(f"The postings sum to {total:+d}; they must sum to zero.")
    return lines


def check_funds(lines: Iterable[Line], balances: Mapping[int, int] | None = None) -> None:
    """Refuse lines that would take a wallet or pot below zero (``balances``: as they stand
    part-way through a batch, else the accounts' own)."""
    for account, amount in lines:
        held = account.balance if balances is None else balances[account.pk]
        if not account.may_go_negative and held + amount < 0:
            raise insufficient(account, held, amount)


def insufficient(account: Account, held: int, amount: int) -> InsufficientChips:
    return InsufficientChips(
        f"Not enough chips: {account.name} holds {held}, this entry takes {-amount}.",
        account_id=account.pk,
        balance=held,
        needed=-amount,
    )


def check_amount(amount: int, *, positive: bool) -> None:
    if isinstance(amount, bool) or not isinstance(amount, int):
        raise InvalidEntry(f"Chips are whole numbers, not {amount!r}.")
    if amount == 0 or (positive and amount < 0):
        raise InvalidEntry(f"An amount of {amount} chips moves nothing; give a positive amount.")
    if abs(amount) > MAX_AMOUNT:
        raise InvalidEntry(f"{amount} chips is more than the ledger accepts ({MAX_AMOUNT}).")


def check_kind(account: Account, kind: AccountKind) -> None:
    if account.kind != kind:
        raise InvalidEntry(f"{account.name} is a {account.kind}, not a {kind.value}.")


def check_text(value: str, name: str) -> None:
    if not value or len(value) > 200:
        raise InvalidEntry(f"{name} must be 1 to 200 characters long.")


def signature(lines: Iterable[Line]) -> frozenset[tuple[int, int]]:
    return frozenset((account.pk, amount) for account, amount in lines)


def same_postings(lines: Iterable[Line]) -> Callable[[JournalEntry], bool]:
    wanted = signature(lines)
    return lambda entry: entry_signature(entry) == wanted


def entry_signature(entry: JournalEntry) -> frozenset[tuple[int, int]]:
    return frozenset(entry.postings.values_list("account_id", "amount"))
