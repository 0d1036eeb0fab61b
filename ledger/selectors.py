"""Reads of the ledger: balances (now and as of any time), statements, trial balance, settlement.

Time windows are half-open, [since, until); "as of" a time includes what was posted at it.
Every read is an index lookup or a scan of the rows it returns:
- balance now: the account row's ``balance``, moved by ledger.services with its postings;
- balance as of a time: the account's last posting at or before it (index account, at, id),
  whose ``balance_after`` is the balance it left;
- a statement: the account's postings in time order from the same index, each with its
  running balance.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Exists, OuterRef, Q, QuerySet, Subquery, Sum
from django.db.models.functions import Coalesce

from ledger.models import Account, AccountKind, Posting
from ledger.netting import minimal_transfers


def account_balance(*, account: Account, at: datetime | None = None) -> int:
    """The account's balance now, or as of ``at`` (after everything posted at or before it)."""
    if at is None:
        return Account.objects.values_list("balance", flat=True).get(pk=account.pk)
    after = (
        Posting.objects.filter(account_id=account.pk, at__lte=at)
        .order_by("-at", "-id")
        .values_list("balance_after", flat=True)
        .first()
    )
    return 0 if after is None else after


def account_statement(
    *, account: Account, since: datetime | None = None, until: datetime | None = None
) -> QuerySet[Posting]:
    """Every movement of the account in time order, with its entry (memo, source) and the
    running balance it left (``balance_after``). The balance before the first line is
    ``first.balance_after - first.amount``."""
    postings = Posting.objects.filter(account_id=account.pk)
    if since is not None:
        postings = postings.filter(at__gte=since)
    if until is not None:
        postings = postings.filter(at__lt=until)
    return postings.select_related("entry").order_by("at", "id")


def wallet_of(*, user: AbstractBaseUser | AnonymousUser, club_key: str) -> Account | None:
    if not user.is_authenticated:
        return None
    return Account.objects.filter(
        kind=AccountKind.WALLET, club_key=club_key, owner_id=user.pk
    ).first()


def player_wallets(*, user: AbstractBaseUser | AnonymousUser) -> QuerySet[Account]:
    if not user.is_authenticated:
        return Account.objects.none()
    return Account.objects.filter(kind=AccountKind.WALLET, owner_id=user.pk).order_by("club_key")


def club_accounts(*, club_key: str, kind: str | None = None) -> QuerySet[Account]:
    accounts = Account.objects.filter(club_key=club_key).select_related("owner")
    if kind:
        accounts = accounts.filter(kind=kind)
    return accounts.order_by("kind", "name", "id")


@dataclass(frozen=True)
class TrialBalance:
    """Every account's balance; ``total`` is zero when the books balance."""

    club_key: str | None
    at: datetime | None
    accounts: tuple[Account, ...]  # each with ``balance`` as of ``at``
    total: int


def trial_balance(*, club_key: str | None = None, at: datetime | None = None) -> TrialBalance:
    """The balances of all accounts (of one club, or all), now or as of ``at``."""
    accounts = Account.objects.select_related("owner").order_by("club_key", "kind", "name", "id")
    if club_key is not None:
        accounts = accounts.filter(club_key=club_key)
    rows = list(accounts)
    if at is not None:
        before = (
            Posting.objects.filter(account_id=OuterRef("pk"), at__lte=at)
            .order_by("-at", "-id")
            .values("balance_after")[:1]
        )
        as_of = dict(
            accounts.annotate(as_of=Coalesce(Subquery(before), 0)).values_list("pk", "as_of")
        )
        for account in rows:
            account.balance = as_of[account.pk]
    return TrialBalance(
        club_key=club_key,
        at=at,
        accounts=tuple(rows),
        total=sum(account.balance for account in rows),
    )


@dataclass(frozen=True)
class SettlementNet:
    account: Account
    net: int


@dataclass(frozen=True)
class SettlementTransfer:
    payer: Account
    payee: Account
    amount: int


@dataclass(frozen=True)
class Settlement:
    """Each account's net over a window of play, and who pays whom to settle them."""

    club_key: str
    since: datetime
    until: datetime
    source_prefix: str | None
    nets: tuple[SettlementNet, ...]
    transfers: tuple[SettlementTransfer, ...]


def settlement(
    *, club_key: str, since: datetime, until: datetime, source_prefix: str | None = None
) -> Settlement:
    """Who is up, who is down over [since, until), and the fewest transfers that settle it.

    Only play counts: entries that touch the bank (buy-ins, cash-outs, staff grants) are left
    out, so a net is chips won minus chips lost. ``source_prefix`` narrows to one soirée or
    partie (e.g. "soiree:7/"). Pots are parties like wallets; once every hand is paid out their
    nets are zero. The nets always sum to zero, since every entry counted does. Transfers are
    the fewest possible for up to ledger.netting.EXACT_LIMIT parties (greedy beyond).
    """
    bank_lines = Posting.objects.filter(
        entry_id=OuterRef("entry_id"), account__kind=AccountKind.BANK
    )
    postings = Posting.objects.filter(
        entry__club_key=club_key, entry__at__gte=since, entry__at__lt=until
    ).exclude(Exists(bank_lines))
    if source_prefix:
        postings = postings.filter(entry__source__startswith=source_prefix)
    totals: dict[int, int] = dict(
        postings.order_by()  # no default ordering in the GROUP BY
        .values("account_id")
        .annotate(net=Sum("amount"))
        .exclude(net=0)
        .values_list("account_id", "net")
    )
    accounts = Account.objects.select_related("owner").in_bulk(list(totals))
    order = sorted(totals, key=lambda pk: (-totals[pk], accounts[pk].name, pk))
    nets = tuple(SettlementNet(account=accounts[pk], net=totals[pk]) for pk in order)
    transfers = tuple(
        SettlementTransfer(payer=accounts[payer], payee=accounts[payee], amount=amount)
        for payer, payee, amount in minimal_transfers({pk: totals[pk] for pk in order})
    )
    return Settlement(
        club_key=club_key,
        since=since,
        until=until,
        source_prefix=source_prefix,
        nets=nets,
        transfers=transfers,
    )


#: What ``source_totals`` may group by: the account, its owner (username or id), the entry
#: (id, source or idempotency key).
TOTAL_KEYS = {"account": "account_id", "owner": "account__owner__username",
              "owner_id": "account__owner_id", "source": "entry__source", "entry": "entry_id",
              "key": "entry__idempotency_key"}


def source_totals(
    *, prefixes: Sequence[str] = (), sources: Sequence[str] = (), entries: Sequence[int] = (),
    keys: Sequence[str] = (), club_key: str | None = None, accounts: Sequence[int] = (),
    by: str | tuple[str, ...] = "account", owned_only: bool = False,
    exclude_refs: Sequence[str] = (),
) -> dict[Any, int]:
    """The chips some entries moved, summed in the database per ``by`` (a key of
    ``TOTAL_KEYS``, or a tuple of them: the dict's keys are then tuples). An entry is chosen
    by its source, one of ``prefixes`` (``"hand:<id>/"``) or exactly (``sources``), by its id
    (``entries``) or by its idempotency key (``keys``); the last two are index lookups, where
    a source is a scan of the entries. ``accounts`` keeps the lines of those accounts only,
    ``owned_only`` players' accounts; ``exclude_refs`` leaves accounts of those refs out.
    Totals of 0 are left out."""
    chosen = Q()
    for prefix in prefixes:
        chosen |= Q(entry__source__startswith=prefix)
    if sources:
        chosen |= Q(entry__source__in=list(sources))
    if entries:
        chosen |= Q(entry_id__in=list(entries))
    if keys:
        chosen |= Q(entry__idempotency_key__in=list(keys))
    if not chosen:
        return {}
    lines = Posting.objects.filter(chosen)
    if accounts:
        lines = lines.filter(account_id__in=list(accounts))
    if club_key is not None:
        lines = lines.filter(entry__club_key=club_key)
    if owned_only:
        lines = lines.filter(account__owner__isnull=False)
    if exclude_refs:
        lines = lines.exclude(account__ref__in=list(exclude_refs))
    keys = (by,) if isinstance(by, str) else by
    fields = [TOTAL_KEYS[k] for k in keys]
    totals: dict[Any, int] = {}
    for row in lines.order_by().values(*fields).annotate(total=Sum("amount")):
        if row["total"]:
            key = tuple(row[f] for f in fields)
            totals[key[0] if isinstance(by, str) else key] = int(row["total"])
    return totals
