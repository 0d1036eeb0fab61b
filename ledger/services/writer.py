"""How entries are written; internal to ledger.services (its docstring gives the steps)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from django.db import IntegrityError, transaction
from django.db.models import BigIntegerField, Case, F, Value, When
from django.utils import timezone
from django.utils.translation import gettext

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
class Draft:
    """One entry to write: ``plan`` decides its lines on the locked accounts (their balances as
    the earlier drafts of the batch leave them); ``same`` tells whether an entry already written
    under the key is this one (a retry) or another (a conflict)."""

    accounts: Sequence[Account]
    plan: Callable[[Mapping[int, Account]], Plan]
    same: Callable[[JournalEntry], bool]
    idempotency_key: str
    source: str


def write(*, drafts: Sequence[Draft], at: datetime | None) -> list[JournalEntry | None]:
    """Write the drafts in order, all or nothing; return each one's entry (``None`` for a plan
    that moves nothing).

    In one ``transaction.atomic()`` (a savepoint inside the caller's transaction, so a refusal
    leaves that transaction usable):
    1. lock the accounts (``select_for_update(no_key=True)``) in id order, so that two writers
       touching the same accounts queue up instead of deadlocking, and each sees the balances
       the other left;
    2. look the keys up (after the lock: a retry that waited finds the first writer's entry);
       a taken key returns its entry and posts nothing, or raises IdempotencyConflict;
    3. plan each new entry on the running balances and check its funds;
    4. ``bulk_create`` the entries, then their postings, each stating the balance it leaves;
    5. move each account's balance by the batch's total for it (an F() expression), in one
       UPDATE.
    A writer that did not lock these accounts may still take one of the keys first: the unique
    index then refuses ours, and the batch is written again, that key answered like a retry.
    """
    keys = [draft.idempotency_key for draft in drafts]
    for draft in drafts:
        check_text(draft.idempotency_key, "idempotency_key")
        check_text(draft.source, "source")
    if len(set(keys)) != len(keys):
        raise InvalidEntry(gettext("Each entry of a batch needs its own idempotency key."))
    if not drafts:
        return []
    if at is not None and timezone.is_naive(at):
        raise InvalidEntry(gettext("An entry's time must be timezone-aware."))
    try:
        with transaction.atomic():
            locked, written = _write(drafts, at)
    except IntegrityError:
        # A writer that did not lock these accounts took one of the keys first: the unique
        # index refused ours, and the batch was rolled back. Once more, and the keys it took
        # answer as retries; a refusal about anything else is raised as it is.
        if not JournalEntry.objects.filter(idempotency_key__in=keys).exists():
            raise
        with transaction.atomic():
            locked, written = _write(drafts, at)
    # The instances passed in take the balances the transaction left.
    for draft in drafts:
        for account in draft.accounts:
            fresh = locked[account.pk]
            account.balance, account.last_posted_at = fresh.balance, fresh.last_posted_at
    return written


def _write(
    drafts: Sequence[Draft], at: datetime | None
) -> tuple[dict[int, Account], list[JournalEntry | None]]:
    ids = sorted({account.pk for draft in drafts for account in draft.accounts})
    locked = {
        account.pk: account
        for account in Account.objects.select_for_update(no_key=True).filter(pk__in=ids)
        .order_by("pk")
    }
    missing = set(ids) - locked.keys()
    if missing:
        raise InvalidEntry(gettext("No such account: %(ids)s.") % {"ids": sorted(missing)})
    keys = [draft.idempotency_key for draft in drafts]
    existing = {e.idempotency_key: e for e in JournalEntry.objects.filter(idempotency_key__in=keys)}
    results: list[JournalEntry | None] = []
    new: list[tuple[JournalEntry, Plan]] = []
    moved: dict[int, int] = defaultdict(int)
    for draft in drafts:
        found = existing.get(draft.idempotency_key)
        if found is not None:
            results.append(same_or_conflict(found, draft.same, draft.idempotency_key))
            continue
        plan = draft.plan(locked)
        if not plan.lines:
            results.append(None)
            continue
        # The plan's lines name the locked accounts: the next draft plans on these balances.
        for account, amount in plan.lines:
            account.balance += amount
            moved[account.pk] += amount
        entry = JournalEntry(
            idempotency_key=draft.idempotency_key,
            club_key=plan.lines[0][0].club_key,
            memo=plan.memo,
            source=draft.source,
            shortfall=plan.shortfall,
            reverses=plan.reverses,
        )
        new.append((entry, plan))
        results.append(entry)
    if not new:
        return locked, results
    when = entry_time(at, locked.values())
    for entry, _ in new:
        entry.at = when
    JournalEntry.objects.bulk_create([entry for entry, _ in new])
    # Each posting states the balance it leaves, running on from one entry to the next.
    running = {pk: account.balance - moved[pk] for pk, account in locked.items()}
    postings = []
    for entry, plan in new:
        for account, amount in plan.lines:
            running[account.pk] += amount
            postings.append(
                Posting(entry=entry, account=account, amount=amount,
                        balance_after=running[account.pk], at=when)
            )
    Posting.objects.bulk_create(postings)
    # One UPDATE for every account the batch moved: each by its own total.
    Account.objects.filter(pk__in=moved).update(
        balance=F("balance")
        + Case(*(When(pk=pk, then=Value(delta)) for pk, delta in moved.items()),
               output_field=BigIntegerField()),
        last_posted_at=when,
    )
    for pk in moved:
        locked[pk].last_posted_at = when
    return locked, results


def same_or_conflict(
    entry: JournalEntry, same: Callable[[JournalEntry], bool], key: str
) -> JournalEntry:
    if not same(entry):
        raise IdempotencyConflict(
            gettext("Idempotency key %(key)r was already used by entry #%(entry)s (%(memo)r) "
                    "with other postings.") % {"key": key, "entry": entry.pk, "memo": entry.memo}
        )
    return entry


def entry_time(at: datetime | None, accounts: Iterable[Account]) -> datetime:
    latest = max((a.last_posted_at for a in accounts if a.last_posted_at), default=None)
    if at is None:
        now = timezone.now()
        # Never before an account's last posting, even if this server's clock is behind
        # another's: running balances and "balance as of" rely on each account's time order.
        return max(now, latest) if latest else now
    if latest and at < latest:
        raise BackdatedEntry(
            gettext("An entry at %(at)s would come before its accounts' last posting "
                    "(%(latest)s); post it now, or reverse and re-post later entries.")
            % {"at": at.isoformat(), "latest": latest.isoformat()}
        )
    return at


# -- checks ----------------------------------------------------------------------------------


def validated(postings: Sequence[Line]) -> tuple[Line, ...]:
    lines = tuple(postings)
    if len(lines) < 2:
        raise InvalidEntry(gettext("An entry needs two or more postings."))
    seen: set[int] = set()
    for account, amount in lines:
        if account.pk is None:
            raise InvalidEntry(gettext("Account %(account)s is not saved.") % {"account": account})
        if account.pk in seen:
            raise InvalidEntry(gettext("Account %(account)s appears twice; give it one posting.")
                               % {"account": account})
        seen.add(account.pk)
        check_amount(amount, positive=False)
    clubs = {account.club_key for account, _ in lines}
    if len(clubs) > 1:
        raise InvalidEntry(
            gettext("An entry stays within one club; these accounts belong to %(clubs)s.")
            % {"clubs": sorted(clubs)}
        )
    total = sum(amount for _, amount in lines)
    if total != 0:
        raise UnbalancedEntry(gettext("The postings sum to %(total)+d; they must sum to zero.")
                              % {"total": total})
    return lines


def fixed(lines: Iterable[Line], locked: Mapping[int, Account]) -> tuple[Line, ...]:
    """The lines on the locked accounts, refused if one would take a wallet or pot below zero."""
    result = tuple((locked[account.pk], amount) for account, amount in lines)
    for account, amount in result:
        if not account.may_go_negative and account.balance + amount < 0:
            raise InsufficientChips(
                gettext("Not enough chips: %(account)s holds %(balance)s, this entry takes "
                        "%(amount)s.") % {"account": account.name, "balance": account.balance,
                                          "amount": -amount},
                account_id=account.pk,
                balance=account.balance,
                needed=-amount,
            )
    return result


def check_amount(amount: int, *, positive: bool) -> None:
    if isinstance(amount, bool) or not isinstance(amount, int):
        raise InvalidEntry(gettext("Chips are whole numbers, not %(amount)r.") % {"amount": amount})
    if amount == 0 or (positive and amount < 0):
        raise InvalidEntry(gettext("An amount of %(amount)s chips moves nothing; give a positive "
                             "amount.") % {"amount": amount})
    if abs(amount) > MAX_AMOUNT:
        raise InvalidEntry(gettext("%(amount)s chips is more than the ledger accepts (%(most)s).")
                           % {"amount": amount, "most": MAX_AMOUNT})


def check_kind(account: Account, kind: AccountKind) -> None:
    if account.kind != kind:
        raise InvalidEntry(gettext("%(name)s is a %(kind)s, not a %(wanted)s.")
                           % {"name": account.name, "kind": account.kind, "wanted": kind.value})


def check_text(value: str, name: str) -> None:
    if not value or len(value) > 200:
        raise InvalidEntry(gettext("%(name)s must be 1 to 200 characters long.") % {"name": name})


def same_postings(lines: Iterable[Line]) -> Callable[[JournalEntry], bool]:
    wanted = frozenset((account.pk, amount) for account, amount in lines)
    return lambda entry: entry_signature(entry) == wanted


def entry_signature(entry: JournalEntry) -> frozenset[tuple[int, int]]:
    return frozenset(entry.postings.values_list("account_id", "amount"))
