"""Writes to the ledger: accounts, entries, transfers, payments, buy-ins, cash-outs, reversals.

Every function is keyword-only and runs in ``transaction.atomic``: called inside the caller's
transaction (the game service posts in the same transaction as the move), it works in a
savepoint and commits or rolls back with the caller; called alone, it is its own transaction.

How an entry is written (see also migration 0002_books_triggers):
1. the accounts are locked with SELECT ... FOR UPDATE in id order, so two entries touching the
   same accounts never deadlock and each sees the balance the other left;
2. the idempotency key is looked up (after the locks, so that a concurrent retry that waited
   for them sees the first entry and returns it instead of failing on funds);
3. the postings are written, then the entry, which seals them (the database checks that they
   sum to zero, moves the balances and keeps wallets and pots at zero or more).
A concurrent writer of the same key with other accounts is caught by the unique index: its
savepoint is rolled back and it answers like a retry. Under REPEATABLE READ or SERIALIZABLE the
caller must retry on serialization failures; the project runs READ COMMITTED.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.core.validators import validate_slug
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from ledger.exceptions import (
    AlreadyReversed,
    BackdatedEntry,
    IdempotencyConflict,
    InsufficientChips,
    InvalidEntry,
    LedgerError,
    UnbalancedEntry,
)
from ledger.models import Account, AccountKind, JournalEntry, Posting

CASUAL_CLUB = "casual"
# Far above any stake, far below bigint: sums of postings can never overflow.
MAX_AMOUNT = 10**15

Line = tuple[Account, int]


# -- accounts --------------------------------------------------------------------------------


def bank_get_or_create(*, club_key: str) -> Account:
    """The club's bank: buy-ins come from it and cash-outs go back to it."""
    _check_club_key(club_key)
    account, _ = Account.objects.get_or_create(
        kind=AccountKind.BANK, club_key=club_key, defaults={"name": f"Bank of {club_key}"}
    )
    return account


def wallet_get_or_create(*, club_key: str, owner: User) -> Account:
    """A player's chip wallet in a club (one per player and club)."""
    _check_club_key(club_key)
    account, _ = Account.objects.get_or_create(
        kind=AccountKind.WALLET,
        club_key=club_key,
        owner=owner,
        defaults={"name": f"{owner.get_username()} @ {club_key}"},
    )
    return account


def pot_get_or_create(*, club_key: str, ref: str, name: str = "") -> Account:
    """The pot of a table or partie, named by ``ref`` (e.g. "partie:12")."""
    _check_club_key(club_key)
    if not ref:
        raise InvalidEntry("A pot needs a ref naming what it belongs to, e.g. 'partie:12'.")
    account, _ = Account.objects.get_or_create(
        kind=AccountKind.POT,
        club_key=club_key,
        ref=ref,
        defaults={"name": name or f"Pot {ref} @ {club_key}"},
    )
    return account


# -- entries ---------------------------------------------------------------------------------


def entry_post(
    *,
    postings: Sequence[Line],
    memo: str,
    source: str,
    idempotency_key: str,
    at: datetime | None = None,
) -> JournalEntry:
    """Write one entry moving chips between accounts; the postings must sum to zero.

    Posting the same key again with the same postings returns the first entry and writes
    nothing; the same key with other postings raises IdempotencyConflict. Raises
    InsufficientChips if a wallet or pot would go below zero, and changes nothing then.
    ``at`` defaults to now; it may not be earlier than the accounts' last postings. The
    Account instances passed in get their new balances.
    """
    lines = _validated(postings)
    wanted = _signature(lines)

    def plan(locked: Mapping[int, Account]) -> _Plan:
        fixed = tuple((locked[account.pk], amount) for account, amount in lines)
        _check_funds(fixed)
        return _Plan(lines=fixed, memo=memo)

    entry = _write(
        accounts=[account for account, _ in lines],
        plan=plan,
        same=lambda entry: _entry_signature(entry) == wanted,
        idempotency_key=idempotency_key,
        source=source,
        at=at,
    )
    assert entry is not None  # a plan with lines always writes
    return entry


def transfer(
    *,
    payer: Account,
    payee: Account,
    amount: int,
    memo: str,
    source: str,
    idempotency_key: str,
    at: datetime | None = None,
) -> JournalEntry:
    """Move exactly ``amount`` chips from ``payer`` to ``payee``, or refuse (InsufficientChips)."""
    _check_amount(amount, positive=True)
    return entry_post(
        postings=[(payer, -amount), (payee, amount)],
        memo=memo,
        source=source,
        idempotency_key=idempotency_key,
        at=at,
    )


def pay_what_you_have(
    *,
    payer: Account,
    payee: Account,
    amount: int,
    memo: str,
    source: str,
    idempotency_key: str,
    at: datetime | None = None,
) -> tuple[JournalEntry | None, int]:
    """Pay up to ``amount``: all of it if the payer holds it, else all he holds.

    RULES.md §3: "A player who owes more than he holds pays all he has; the shortfall is
    recorded in the hand record and in the ledger entry's memo. Nothing is ever owed on
    credit." Returns the entry and the shortfall (0 when paid in full). A payer who holds
    nothing pays nothing: no entry is written and ``(None, amount)`` is returned, so the
    caller's own record (the hand's event) is where that shortfall is kept.
    """
    _check_amount(amount, positive=True)
    _validated([(payer, -amount), (payee, amount)])

    def plan(locked: Mapping[int, Account]) -> _Plan:
        holder, receiver = locked[payer.pk], locked[payee.pk]
        paid = amount if holder.may_go_negative else min(amount, max(holder.balance, 0))
        shortfall = amount - paid
        note = (
            memo if not shortfall else f"{memo} (owed {amount}, paid {paid}, shortfall {shortfall})"
        )
        if not paid:
            return _Plan(lines=(), memo=note, shortfall=shortfall)
        return _Plan(lines=((holder, -paid), (receiver, paid)), memo=note, shortfall=shortfall)

    def same(entry: JournalEntry) -> bool:
        moved = dict(entry.postings.values_list("account_id", "amount"))
        return (
            moved.keys() == {payer.pk, payee.pk}
            and moved[payee.pk] > 0
            and moved[payee.pk] + entry.shortfall == amount
        )

    entry = _write(
        accounts=[payer, payee],
        plan=plan,
        same=same,
        idempotency_key=idempotency_key,
        source=source,
        at=at,
    )
    return entry, (amount if entry is None else entry.shortfall)


def buy_in(
    *,
    wallet: Account,
    amount: int,
    source: str,
    idempotency_key: str,
    memo: str = "Buy-in",
    at: datetime | None = None,
) -> JournalEntry:
    """Issue ``amount`` chips from the club bank to a player's wallet."""
    _check_kind(wallet, AccountKind.WALLET)
    return transfer(
        payer=bank_get_or_create(club_key=wallet.club_key),
        payee=wallet,
        amount=amount,
        memo=memo,
        source=source,
        idempotency_key=idempotency_key,
        at=at,
    )


def cash_out(
    *,
    wallet: Account,
    source: str,
    idempotency_key: str,
    amount: int | None = None,
    memo: str = "Cash-out",
    at: datetime | None = None,
) -> JournalEntry | None:
    """Return a player's chips to the club bank: ``amount`` of them, or all he holds if None.

    Cashing out everything from an empty wallet writes nothing and returns None.
    """
    _check_kind(wallet, AccountKind.WALLET)
    bank = bank_get_or_create(club_key=wallet.club_key)
    if amount is not None:
        return transfer(
            payer=wallet,
            payee=bank,
            amount=amount,
            memo=memo,
            source=source,
            idempotency_key=idempotency_key,
            at=at,
        )

    def plan(locked: Mapping[int, Account]) -> _Plan:
        holder = locked[wallet.pk]
        if holder.balance <= 0:
            return _Plan(lines=(), memo=memo)
        return _Plan(
            lines=((holder, -holder.balance), (locked[bank.pk], holder.balance)), memo=memo
        )

    def same(entry: JournalEntry) -> bool:
        moved = dict(entry.postings.values_list("account_id", "amount"))
        return moved.keys() == {wallet.pk, bank.pk} and moved[wallet.pk] < 0

    return _write(
        accounts=[wallet, bank],
        plan=plan,
        same=same,
        idempotency_key=idempotency_key,
        source=source,
        at=at,
    )


def chips_grant(
    *, wallet: Account, amount: int, reason: str, by: User, idempotency_key: str
) -> JournalEntry:
    """A staff member grants (amount > 0) or withdraws (amount < 0) a player's chips.

    The bank is the other side, as for a buy-in; the memo keeps the reason and the staff
    member's name. A withdrawal takes no more than the player holds (InsufficientChips).
    """
    _check_kind(wallet, AccountKind.WALLET)
    _check_amount(amount, positive=False)
    if not reason.strip():
        raise InvalidEntry("Say why the chips are granted or withdrawn.")
    verb = "Grant" if amount > 0 else "Withdrawal"
    bank = bank_get_or_create(club_key=wallet.club_key)
    return entry_post(
        postings=[(bank, -amount), (wallet, amount)],
        memo=f"{verb} of {abs(amount)} chips by {by.get_username()}: {reason.strip()}",
        source=f"admin:{verb.lower()}",
        idempotency_key=idempotency_key,
    )


def entry_reverse(
    *,
    entry: JournalEntry,
    reason: str,
    idempotency_key: str | None = None,
    source: str | None = None,
    at: datetime | None = None,
) -> JournalEntry:
    """Cancel an entry with its mirror image: the only way to correct a mistake.

    The reversal keeps the original's source (so a soirée's settlement sees both) unless told
    otherwise. An entry is reversed at most once (AlreadyReversed); a reversal that would take
    a wallet below zero is refused (InsufficientChips), since its chips are gone.
    """
    key = idempotency_key or f"reversal-of:{entry.pk}"
    originals = list(entry.postings.select_related("account"))
    lines = _validated([(posting.account, -posting.amount) for posting in originals])
    wanted = _signature(lines)

    def plan(locked: Mapping[int, Account]) -> _Plan:
        already = JournalEntry.objects.filter(reverses_id=entry.pk).values_list("pk", flat=True)
        if already:
            raise AlreadyReversed(f"Entry #{entry.pk} was already reversed by entry #{already[0]}.")
        fixed = tuple((locked[account.pk], amount) for account, amount in lines)
        _check_funds(fixed)
        return _Plan(lines=fixed, memo=f"Reversal of entry #{entry.pk}: {reason}", reverses=entry)

    try:
        reversal = _write(
            accounts=[account for account, _ in lines],
            plan=plan,
            same=lambda found: found.reverses_id == entry.pk and _entry_signature(found) == wanted,
            idempotency_key=key,
            source=source or entry.source,
            at=at,
        )
    except IntegrityError as error:
        # Two reversals of one entry raced with different keys: the unique "reverses" kept one.
        winner = JournalEntry.objects.filter(reverses_id=entry.pk).values_list("pk", flat=True)
        if winner:
            raise AlreadyReversed(
                f"Entry #{entry.pk} was already reversed by entry #{winner[0]}."
            ) from error
        raise
    assert reversal is not None
    return reversal


# -- the writer ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Plan:
    """What to write, decided once the accounts are locked; no lines means write nothing."""

    lines: tuple[Line, ...]
    memo: str
    shortfall: int = 0
    reverses: JournalEntry | None = None


def _write(
    *,
    accounts: Sequence[Account],
    plan: Callable[[Mapping[int, Account]], _Plan],
    same: Callable[[JournalEntry], bool],
    idempotency_key: str,
    source: str,
    at: datetime | None,
) -> JournalEntry | None:
    _check_text(idempotency_key, "idempotency_key")
    _check_text(source, "source")
    try:
        with transaction.atomic():
            locked = _lock(accounts)
            next_id, existing_id = _claim(idempotency_key)
            result: JournalEntry | None
            if existing_id is not None:
                result = _replayed(existing_id, same, idempotency_key)
            else:
                decided = plan(locked)
                result = (
                    _insert(
                        entry_id=next_id,
                        plan=decided,
                        at=_entry_time(at, locked.values()),
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
        return _replayed(existing_id, same, idempotency_key)
    for account in accounts:
        account.balance = locked[account.pk].balance
        account.last_posted_at = locked[account.pk].last_posted_at
    return result


def _lock(accounts: Iterable[Account]) -> dict[int, Account]:
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


def _claim(idempotency_key: str) -> tuple[int, int | None]:
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


def _insert(
    *, entry_id: int, plan: _Plan, at: datetime, source: str, idempotency_key: str
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


def _replayed(entry_id: int, same: Callable[[JournalEntry], bool], key: str) -> JournalEntry:
    entry = JournalEntry.objects.get(pk=entry_id)
    if not same(entry):
        raise IdempotencyConflict(
            f"Idempotency key {key!r} was already used by entry #{entry.pk} "
            f"({entry.memo!r}) with other postings."
        )
    return entry


def _entry_time(at: datetime | None, accounts: Iterable[Account]) -> datetime:
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


def _validated(postings: Sequence[Line]) -> tuple[Line, ...]:
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
        _check_amount(amount, positive=False)
    clubs = {account.club_key for account, _ in lines}
    if len(clubs) > 1:
        raise InvalidEntry(
            f"An entry stays within one club; these accounts belong to {sorted(clubs)}."
        )
    total = sum(amount for _, amount in lines)
    if total != 0:
        raise UnbalancedEntry(f"The postings sum to {total:+d}; they must sum to zero.")
    return lines


def _check_funds(lines: Iterable[Line]) -> None:
    for account, amount in lines:
        if not account.may_go_negative and account.balance + amount < 0:
            raise InsufficientChips(
                f"Not enough chips: {account.name} holds {account.balance}, "
                f"this entry takes {-amount}.",
                account_id=account.pk,
                balance=account.balance,
                needed=-amount,
            )


def _check_amount(amount: int, *, positive: bool) -> None:
    if isinstance(amount, bool) or not isinstance(amount, int):
        raise InvalidEntry(f"Chips are whole numbers, not {amount!r}.")
    if amount == 0 or (positive and amount < 0):
        raise InvalidEntry(f"An amount of {amount} chips moves nothing; give a positive amount.")
    if abs(amount) > MAX_AMOUNT:
        raise InvalidEntry(f"{amount} chips is more than the ledger accepts ({MAX_AMOUNT}).")


def _check_kind(account: Account, kind: AccountKind) -> None:
    if account.kind != kind:
        raise InvalidEntry(f"{account.name} is a {account.kind}, not a {kind.value}.")


def _check_text(value: str, name: str) -> None:
    if not value or len(value) > 200:
        raise LedgerError(f"{name} must be 1 to 200 characters long.")


def _check_club_key(club_key: str) -> None:
    try:
        validate_slug(club_key)
    except ValidationError as error:
        raise LedgerError(f"Club key {club_key!r} is not a slug.") from error
    if len(club_key) > 64:
        raise LedgerError(f"Club key {club_key!r} is longer than 64 characters.")


def _signature(lines: Iterable[Line]) -> frozenset[tuple[int, int]]:
    return frozenset((account.pk, amount) for account, amount in lines)


def _entry_signature(entry: JournalEntry) -> frozenset[tuple[int, int]]:
    return frozenset(entry.postings.values_list("account_id", "amount"))
