"""How an entry is written; internal to ledger.services (its docstring gives the steps)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from config.rows import built
from ledger.exceptions import (
    BackdatedEntry,
    IdempotencyConflict,
    InsufficientChips,
    InvalidEntry,
    LedgerError,
    UnbalancedEntry,
)
from ledger.models import Account, AccountKind, JournalEntry

# Far above any stake, far below bigint: sums of postings can never overflow.
MAX_AMOUNT = 10**15

Line = tuple[Account, int]

# JournalEntry's columns in the order ``JournalEntry.from_db`` takes them.
_ENTRY_FIELDS = (
    "id",
    "idempotency_key",
    "club_key",
    "at",
    "memo",
    "source",
    "shortfall",
    "reverses_id",
)


def written_entry(values: Sequence[Any]) -> JournalEntry:
    """The entry just written, as ``JournalEntry.from_db(alias, _ENTRY_FIELDS, values)`` makes
    it (config.rows.built; tests/ledger/test_services.py checks that both give the same)."""
    return built(JournalEntry, connection.alias, _ENTRY_FIELDS, values)


@dataclass(frozen=True)
class Plan:
    """What to write, decided once the accounts are locked; no lines means write nothing."""

    lines: tuple[Line, ...]
    memo: str
    shortfall: int = 0
    reverses: JournalEntry | None = None


@dataclass(frozen=True)
class EntryRequest:
    """One entry of a batch for ``entries_post``; ``shortfall``: what its payers owed and did
    not hold (RULES.md §3), kept on the entry as ``pay_what_you_have`` keeps it."""

    postings: Sequence[Line]
    memo: str
    source: str
    idempotency_key: str
    shortfall: int = 0


@dataclass(frozen=True)
class _Draft:
    entry_id: int
    plan: Plan
    source: str
    idempotency_key: str


@dataclass
class _Locked:
    """What ``lock`` found: the accounts (refreshed), the keys already taken, fresh entry ids."""

    accounts: dict[int, Account]
    taken: dict[str, int]
    new_ids: list[int] = field(default_factory=list)


# -- one entry, lines known in advance (entry_post, transfer, buy_in, ...) ---------------------


def post(
    *,
    lines: Sequence[Line],
    memo: str,
    source: str,
    idempotency_key: str,
    at: datetime | None,
    same: Callable[[JournalEntry], bool],
) -> JournalEntry:
    """Write one entry whose lines are known in advance (``validated`` already).

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
            # Ids and amounts are ints (``validated``), sent as array literals, and times as
            # ISO text: psycopg's array and datetime adapters cost more than the rest here.
            cursor.execute(
                "SELECT * FROM ledger_post(%s, %s, %s, %s, %s::bigint[], %s::bigint[],"
                " %s::timestamptz, %s::timestamptz, 0, NULL)",
                [
                    idempotency_key,
                    source,
                    memo,
                    club_key,
                    _int_array(account.pk for account, _ in lines),
                    _int_array(amount for _, amount in lines),
                    None if at is None else at.isoformat(),
                    timezone.now().isoformat() if at is None else None,
                ],
            )
            outcome, entry_id, entry_at, balances, short_index, missing = cursor.fetchone()
    except IntegrityError:
        # Only a writer that skipped the key's lock could beat us to the unique index. Alone
        # (autocommit), our statement was rolled back by itself: answer like a retry. Inside
        # the caller's transaction, that transaction is aborted: let the error end it.
        if connection.in_atomic_block:
            raise
        raced = raced_entry(idempotency_key, same)
        if raced is None:
            raise
        return raced
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
    return written_entry((entry_id, idempotency_key, club_key, entry_at, memo, source, 0, None))


def _int_array(values: Iterable[int]) -> str:
    return "{" + ",".join(str(int(value)) for value in values) + "}"


def _text_array(values: Iterable[str]) -> str:
    """A ``text[]`` literal: each element double-quoted, its backslashes and double quotes
    escaped (PostgreSQL's array syntax). psycopg's list adapter, which quotes element by
    element, cost a third of a batch's client CPU (keys, sources, memos and clubs)."""
    quoted = (value.replace("\\", "\\\\").replace('"', '\\"') for value in values)
    return "{" + ",".join(f'"{value}"' for value in quoted) + "}"


# -- one entry planned once its accounts are locked (pay what you have, cash out, reverse) ----


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
            locked = lock(accounts, [idempotency_key])
            if idempotency_key in locked.taken:
                return replayed(locked.taken[idempotency_key], same, idempotency_key)
            decided = plan(locked.accounts)
            if not decided.lines:
                return None
            [entry] = insert(
                drafts=[_Draft(locked.new_ids[0], decided, source, idempotency_key)],
                at=entry_time(at, locked.accounts.values()),
            )
    except IntegrityError:
        # A concurrent transaction wrote this key first (a writer that skipped the key's lock):
        # the unique index made this one wait for it and then refused it. Our savepoint is
        # rolled back; answer like a retry.
        raced = raced_entry(idempotency_key, same)
        if raced is None:
            raise
        return raced
    # Only now that the savepoint is released do the instances passed in take the new balances.
    for account, amount in decided.lines:
        account.balance += amount
        account.last_posted_at = entry.at
    return entry


# -- a batch of entries (entries_post) ---------------------------------------------------------


def write_many(*, requests: Sequence[EntryRequest], at: datetime | None) -> list[JournalEntry]:
    """Write a batch of entries in one transaction, in order: on PostgreSQL one statement
    (``_post_many``) unless a key is taken or a check refuses; else three statements.

    Keys already written return their entries (or raise IdempotencyConflict); funds are checked
    entry after entry on the balances the earlier ones leave. Every check is made before the
    first row is written, so a refusal needs no savepoint: it is raised once out of the atomic
    block, which then had written nothing, and the caller's transaction stays usable.
    """
    batch = [(validated(r.postings), r) for r in requests]
    for r in requests:
        check_text(r.idempotency_key, "idempotency_key")
        check_text(r.source, "source")
        if r.shortfall:
            check_amount(r.shortfall, positive=True)
    keys = [r.idempotency_key for r in requests]
    if len(set(keys)) != len(keys):
        raise InvalidEntry("Each entry of a batch needs its own idempotency key.")
    if not batch:
        return []
    if connection.vendor == "postgresql":
        written = _post_many(batch, at)
        if written is not None:
            return written
    refused: LedgerError | None = None
    drafts: list[_Draft] = []
    with transaction.atomic(savepoint=False):
        try:
            locked = lock([account for lines, _ in batch for account, _ in lines], keys)
            fresh = [(lines, r) for lines, r in batch if r.idempotency_key not in locked.taken]
            running = {pk: account.balance for pk, account in locked.accounts.items()}
            for entry_id, (lines, r) in zip(locked.new_ids, fresh, strict=True):
                fixed = tuple((locked.accounts[account.pk], amount) for account, amount in lines)
                check_funds(fixed, running)
                for account, amount in fixed:
                    running[account.pk] += amount
                drafts.append(_Draft(entry_id, Plan(fixed, r.memo, r.shortfall), r.source,
                                     r.idempotency_key))
            found = {
                r.idempotency_key: replayed(
                    locked.taken[r.idempotency_key], same_postings(lines), r.idempotency_key
                )
                for lines, r in batch
                if r.idempotency_key in locked.taken
            }
            when = entry_time(at, locked.accounts.values()) if drafts else None
        except LedgerError as error:
            refused = error
        else:
            if drafts:
                assert when is not None
                written = insert(drafts=drafts, at=when)
                found.update((entry.idempotency_key, entry) for entry in written)
    if refused is not None:
        raise refused
    # Only now that the transaction's block is left do the instances take the new balances.
    for draft in drafts:
        for account, _ in draft.plan.lines:
            account.balance = running[account.pk]
            account.last_posted_at = when
    return [found[key] for key in keys]


def _post_many(
    batch: Sequence[tuple[tuple[Line, ...], EntryRequest]], at: datetime | None
) -> list[JournalEntry] | None:
    """PostgreSQL: the whole batch in one statement, ``ledger_post_many`` (migration 0006), when
    every key is new and every check passes; else ``None``, having written nothing, and the
    Python path below answers (replays of taken keys, or the refusal with its message)."""
    if at is not None and timezone.is_naive(at):
        raise InvalidEntry("An entry's time must be timezone-aware.")
    lines = [(k, account, amount) for k, (posted, _) in enumerate(batch, start=1)
             for account, amount in posted]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT * FROM ledger_post_many(%s::text[], %s::text[], %s::text[], %s::text[],"
            " %s::bigint[], %s::integer[], %s::bigint[], %s::bigint[], %s::timestamptz,"
            " %s::timestamptz)",
            [
                _text_array(r.idempotency_key for _, r in batch),
                _text_array(r.source for _, r in batch),
                _text_array(r.memo for _, r in batch),
                _text_array(posted[0][0].club_key for posted, _ in batch),
                _int_array(r.shortfall for _, r in batch),
                _int_array(k for k, _, _ in lines),
                _int_array(account.pk for _, account, _ in lines),
                _int_array(amount for _, _, amount in lines),
                None if at is None else at.isoformat(),
                timezone.now().isoformat() if at is None else None,
            ],
        )
        outcome, entry_ids, posted_at, after = cursor.fetchone()
    if outcome != "written":
        return None
    # As the Python path does once its block is left: the instances take the new balances.
    for (_, account, _), held in zip(lines, after, strict=True):
        account.balance = held
        account.last_posted_at = posted_at
    return [
        written_entry((entry_id, r.idempotency_key, posted[0][0].club_key, posted_at, r.memo,
                       r.source, r.shortfall, None))
        for entry_id, (posted, r) in zip(entry_ids, batch, strict=True)
    ]


# -- statements ---------------------------------------------------------------------------------


def lock(accounts: Sequence[Account], keys: Sequence[str]) -> _Locked:
    """Lock the keys and the accounts until the end of the transaction; refresh the accounts'
    balances; find the keys already taken; take ids for the entries of the others.

    PostgreSQL: one statement, ``ledger_lock`` (migration 0003): the keys' locks first, as
    ``ledger_post`` takes them, then the accounts' rows in id order, so that no two writers
    deadlock and a retry finds the first writer's entry. SQLite has one writer at a time. Plain
    SQL: this is the hot path, where the ORM's query building costs more than the database.
    """
    by_id = {account.pk: account for account in accounts}
    ids = sorted(by_id)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "SELECT * FROM ledger_lock(%s::text[], %s::bigint[])",
                [_text_array(keys), _int_array(ids)],
            )
            found_ids, balances, last_posted, taken_keys, taken_ids, new_ids = cursor.fetchone()
            rows = list(zip(found_ids or [], balances or [], last_posted or [], strict=True))
            taken = dict(zip(taken_keys or [], taken_ids or [], strict=True))
        else:
            placeholders = ", ".join(["%s"] * len(ids))
            cursor.execute(
                "SELECT id, balance, last_posted_at FROM ledger_account"
                f" WHERE id IN ({placeholders}) ORDER BY id",
                ids,
            )
            rows = cursor.fetchall()
            placeholders = ", ".join(["%s"] * len(keys))
            cursor.execute(
                "SELECT idempotency_key, id FROM ledger_journalentry"
                f" WHERE idempotency_key IN ({placeholders})",
                list(keys),
            )
            taken = dict(cursor.fetchall())
            cursor.execute("SELECT coalesce(max(id), 0) FROM ledger_journalentry")
            [(top,)] = cursor.fetchall()
            new_ids = list(range(int(top) + 1, int(top) + 1 + len(keys) - len(taken)))
    for pk, balance, last_posted_at in rows:
        by_id[pk].balance = balance
        by_id[pk].last_posted_at = _aware(last_posted_at)
    missing = set(ids) - {row[0] for row in rows}
    if missing:
        raise InvalidEntry(f"No such account: {sorted(missing)}.")
    return _Locked(accounts=by_id, taken=taken, new_ids=list(new_ids or []))


# Rows per INSERT statement: far below both databases' limits on bound parameters.
_CHUNK = 1000


def insert(*, drafts: Sequence[_Draft], at: datetime) -> list[JournalEntry]:
    """Write the drafts' postings, then the entries that seal them (see migration 0002).

    Each posting states the balance it leaves, running on from one draft to the next in order,
    which is the order in which the database applies them. PostgreSQL gets both INSERTs in one
    round trip (psycopg's client-side binding sends them as one simple query).
    """
    at_value = connection.ops.adapt_datetimefield_value(at)
    balances: dict[int, int] = {}
    postings: list[tuple[Any, ...]] = []
    rows: list[tuple[Any, ...]] = []
    entries: list[JournalEntry] = []
    for draft in drafts:
        plan = draft.plan
        for account, amount in plan.lines:
            after = balances.get(account.pk, account.balance) + amount
            balances[account.pk] = after
            postings.append((draft.entry_id, account.pk, amount, after, at_value))
        reverses_id = plan.reverses.pk if plan.reverses is not None else None
        values = (
            draft.entry_id,
            draft.idempotency_key,
            plan.lines[0][0].club_key,
            at,
            plan.memo,
            draft.source,
            plan.shortfall,
            reverses_id,
        )
        rows.append((*values[:3], at_value, *values[4:]))
        entries.append(written_entry(values))
    statements = [
        *_inserts("ledger_posting (entry_id, account_id, amount, balance_after, at)", postings),
        *_inserts(
            "ledger_journalentry"
            " (id, idempotency_key, club_key, at, memo, source, shortfall, reverses_id)",
            rows,
        ),
    ]
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "; ".join(sql for sql, _ in statements),
                [value for _, params in statements for value in params],
            )
        else:
            for sql, params in statements:
                cursor.execute(sql, params)
    return entries


def _inserts(into: str, rows: Sequence[tuple[Any, ...]]) -> list[tuple[str, list[Any]]]:
    statements = []
    for start in range(0, len(rows), _CHUNK):
        chunk = rows[start : start + _CHUNK]
        one = "(" + ", ".join(["%s"] * len(chunk[0])) + ")"
        statements.append(
            (
                f"INSERT INTO {into} VALUES " + ", ".join([one] * len(chunk)),
                [value for row in chunk for value in row],
            )
        )
    return statements


def _aware(value: datetime | str | None) -> datetime | None:
    """A datetime read by plain SQL: SQLite gives it naive (UTC) or as text."""
    if isinstance(value, str):
        value = parse_datetime(value)
    if value is not None and timezone.is_naive(value):
        value = value.replace(tzinfo=UTC)
    return value


def replayed(entry_id: int, same: Callable[[JournalEntry], bool], key: str) -> JournalEntry:
    return _same_or_conflict(JournalEntry.objects.get(pk=entry_id), same, key)


def raced_entry(key: str, same: Callable[[JournalEntry], bool]) -> JournalEntry | None:
    """The entry a concurrent writer wrote first under ``key`` (the unique index refused ours),
    answered like a retry; ``None`` if there is none (the refusal was about something else)."""
    entry = JournalEntry.objects.filter(idempotency_key=key).first()
    return None if entry is None else _same_or_conflict(entry, same, key)


def _same_or_conflict(entry: JournalEntry, same: Callable[[JournalEntry], bool],
                      key: str) -> JournalEntry:
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
