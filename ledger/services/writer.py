"""How an entry is written; internal to ledger.services (its docstring gives the steps)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from ledger.exceptions import (
    BackdatedEntry,
    IdempotencyConflict,
    InsufficientChips,
    InvalidEntry,
    UnbalancedEntry,
)
from ledger.models import Account, AccountKind, JournalEntry, Posting

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
            locked = lock(accounts)
            next_id, existing_id = claim(idempotency_key)
            result: JournalEntry | None
            if existing_id is not None:
                result = replayed(existing_id, same, idempotency_key)
            else:
                decided = plan(locked)
                result = (
                    insert(
                        entry_id=next_id,
                        plan=decided,
                        at=entry_time(at, locked.values()),
                        source=source,
                        idempotency_key=idempotency_key,
                    )
                    if decided.lines
                    else None
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
    for account in accounts:
        account.balance = locked[account.pk].balance
        account.last_posted_at = locked[account.pk].last_posted_at
    return result


def lock(accounts: Iterable[Account]) -> dict[int, Account]:
    ids = sorted({account.pk for account in accounts})
    # ORDER BY id: PostgreSQL locks the rows in that order, so no two writers deadlock.
    locked = {
        account.pk: account
        for account in Account.objects.select_for_update().filter(pk__in=ids).order_by("pk")
    }
    missing = set(ids) - locked.keys()
    if missing:
        raise InvalidEntry(f"No such account: {sorted(missing)}.")
    return locked


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


def insert(
    *, entry_id: int, plan: Plan, at: datetime, source: str, idempotency_key: str
) -> JournalEntry:
    club_key = plan.lines[0][0].club_key
    Posting.objects.bulk_create(
        Posting(
            entry_id=entry_id,
            account=account,
            amount=amount,
            balance_after=account.balance + amount,
            at=at,
        )
        for account, amount in plan.lines
    )
    entry = JournalEntry.objects.create(
        id=entry_id,
        idempotency_key=idempotency_key,
        club_key=club_key,
        at=at,
        memo=plan.memo,
        source=source,
        shortfall=plan.shortfall,
        reverses=plan.reverses,
    )
    for account, amount in plan.lines:
        account.balance += amount
        account.last_posted_at = at
    return entry


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
        raise BackdatedEntry(
            f"An entry at {at.isoformat()} would come before its accounts' last posting "
            f"({latest.isoformat()}); post it now, or reverse and re-post later entries."
        )
    return at


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


def check_funds(lines: Iterable[Line]) -> None:
    for account, amount in lines:
        if not account.may_go_negative and account.balance + amount < 0:
            raise InsufficientChips(
                f"Not enough chips: {account.name} holds {account.balance}, "
                f"this entry takes {-amount}.",
                account_id=account.pk,
                balance=account.balance,
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


def entry_signature(entry: JournalEntry) -> frozenset[tuple[int, int]]:
    return frozenset(entry.postings.values_list("account_id", "amount"))
