"""Entries: post, transfer, pay what you have, buy in, cash out, grant, reverse."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from django.contrib.auth.models import User
from django.db import IntegrityError
from django.utils.translation import gettext

from ledger.exceptions import AlreadyReversed, InvalidEntry
from ledger.models import Account, AccountKind, JournalEntry
from ledger.services.accounts import bank_get_or_create
from ledger.services.writer import (
    Draft,
    EntryRequest,
    Line,
    Plan,
    check_amount,
    check_kind,
    entry_signature,
    fixed,
    same_postings,
    validated,
    write,
)


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
    [entry] = entries_post(
        entries=[EntryRequest(postings, memo, source, idempotency_key)], at=at
    )
    return entry


def entries_post(
    *, entries: Sequence[EntryRequest], at: datetime | None = None
) -> list[JournalEntry]:
    """Post many entries at once, all or nothing, in order: e.g. every payment of a move.

    Each behaves as ``entry_post`` would (idempotent per key, funds checked on the balances the
    earlier entries of the batch leave), but the batch takes its accounts' locks once and writes
    its entries and their postings with one ``bulk_create`` each. Returns the entries in the
    order asked.
    """
    drafts = [_fixed_draft(r) for r in entries]
    return [entry for entry in write(drafts=drafts, at=at) if entry is not None]


def _fixed_draft(request: EntryRequest) -> Draft:
    """A draft whose lines are known in advance: funds checked on the locked balances."""
    lines = validated(request.postings)
    if request.shortfall:
        check_amount(request.shortfall, positive=True)

    def plan(locked: Mapping[int, Account]) -> Plan:
        return Plan(lines=fixed(lines, locked), memo=request.memo, shortfall=request.shortfall)

    return Draft(
        accounts=[account for account, _ in lines],
        plan=plan,
        same=same_postings(lines),
        idempotency_key=request.idempotency_key,
        source=request.source,
    )


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
    check_amount(amount, positive=True)
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
    check_amount(amount, positive=True)
    validated([(payer, -amount), (payee, amount)])

    def plan(locked: Mapping[int, Account]) -> Plan:
        holder, receiver = locked[payer.pk], locked[payee.pk]
        paid = amount if holder.may_go_negative else min(amount, max(holder.balance, 0))
        shortfall = amount - paid
        note = (
            memo if not shortfall else f"{memo} (owed {amount}, paid {paid}, shortfall {shortfall})"
        )
        if not paid:
            return Plan(lines=(), memo=note, shortfall=shortfall)
        return Plan(lines=((holder, -paid), (receiver, paid)), memo=note, shortfall=shortfall)

    def same(entry: JournalEntry) -> bool:
        moved = dict(entry.postings.values_list("account_id", "amount"))
        return (
            moved.keys() == {payer.pk, payee.pk}
            and moved[payee.pk] > 0
            and moved[payee.pk] + entry.shortfall == amount
        )

    [entry] = write(
        drafts=[Draft([payer, payee], plan, same, idempotency_key, source)], at=at
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
    check_kind(wallet, AccountKind.WALLET)
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
    check_kind(wallet, AccountKind.WALLET)
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

    def plan(locked: Mapping[int, Account]) -> Plan:
        holder = locked[wallet.pk]
        if holder.balance <= 0:
            return Plan(lines=(), memo=memo)
        return Plan(lines=((holder, -holder.balance), (locked[bank.pk], holder.balance)), memo=memo)

    def same(entry: JournalEntry) -> bool:
        moved = dict(entry.postings.values_list("account_id", "amount"))
        return moved.keys() == {wallet.pk, bank.pk} and moved[wallet.pk] < 0

    [entry] = write(drafts=[Draft([wallet, bank], plan, same, idempotency_key, source)], at=at)
    return entry


def chips_grant(
    *, wallet: Account, amount: int, reason: str, by: User, idempotency_key: str
) -> JournalEntry:
    """A staff member grants (amount > 0) or withdraws (amount < 0) a player's chips.

    The bank is the other side, as for a buy-in; the memo keeps the reason and the staff
    member's name. A withdrawal takes no more than the player holds (InsufficientChips).
    """
    check_kind(wallet, AccountKind.WALLET)
    check_amount(amount, positive=False)
    if not reason.strip():
        raise InvalidEntry(gettext("Say why the chips are granted or withdrawn."))
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
    lines = validated([(posting.account, -posting.amount) for posting in originals])
    wanted = frozenset((account.pk, amount) for account, amount in lines)

    def plan(locked: Mapping[int, Account]) -> Plan:
        refused = _already_reversed(entry)
        if refused is not None:
            raise refused
        memo = f"Reversal of entry #{entry.pk}: {reason}"
        return Plan(lines=fixed(lines, locked), memo=memo, reverses=entry)

    draft = Draft(
        accounts=[account for account, _ in lines],
        plan=plan,
        same=lambda found: found.reverses_id == entry.pk and entry_signature(found) == wanted,
        idempotency_key=key,
        source=source or entry.source,
    )
    try:
        [reversal] = write(drafts=[draft], at=at)
    except IntegrityError as error:
        # Two reversals of one entry raced with different keys: the unique "reverses" kept one.
        refused = _already_reversed(entry)
        if refused is not None:
            raise refused from error
        raise
    assert reversal is not None
    return reversal


def _already_reversed(entry: JournalEntry) -> AlreadyReversed | None:
    """The refusal to reverse ``entry`` again, naming its reversal; ``None`` if it has none."""
    by = JournalEntry.objects.filter(reverses_id=entry.pk).values_list("pk", flat=True).first()
    if by is None:
        return None
    return AlreadyReversed(f"Entry #{entry.pk} was already reversed by entry #{by}.")
