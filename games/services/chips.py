"""The game's chips in the ledger: the ``pay`` events become ledger entries in the same
transaction as the move that caused them. The payments of one hand that are posted together
are one entry, netted by account, keyed by the hand and the seq of the first of them, so that a
replayed projection never posts twice (ARCHITECTURE.md, the ledger; the README's design
section says why not one entry per payment)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser

from games.models import Hand, HandEvent, Partie, Seat
from ledger import services as ledger
from ledger.models import Account, AccountKind, JournalEntry
from ledger.services import EntryRequest

from . import store


def bot_user(name: str, index: int, table: str) -> AbstractBaseUser:
    """The user a bot plays as: one per partie and seat, since a wallet must never be shared
    by two tables playing at once (no password: nobody can sign in as a bot)."""
    username = f"bot-{name}-{table}-{index + 1}"
    user, created = get_user_model().objects.get_or_create(username=username)
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    return user


def wallet(partie: Partie, player: Any) -> Account:
    return ledger.wallet_get_or_create(club_key=partie.club_key, owner=player)


def _pot_ref(partie: Partie) -> str:
    return f"{store.POT_REF_PREFIX}{partie.pk}"


def pot(partie: Partie) -> Account:
    return ledger.pot_get_or_create(club_key=partie.club_key, ref=_pot_ref(partie),
                                    name=f"Pot of {partie.table_label} ({partie.pk})")


class Accounts:
    """The accounts one command's payments move chips between, by side as the ``pay`` events
    name them (``"pot"`` or a seat number): the seats' wallets and the partie's pot.

    Read in one query the first time a payment needs them, then kept for the command: a move
    that pays nothing reads none, and one that pays many reads them once. An account that does
    not exist yet is created as ``wallet`` and ``pot`` create it."""

    def __init__(self, partie: Partie, seats: Sequence[Seat],
                 found: Sequence[Account] | None = None) -> None:
        self.partie = partie
        self.seats = {s.number: s for s in seats}
        self._found: dict[str, Account] | None = None
        if found is not None:  # read by the caller (store.lock_hand)
            self._found = self._by_side(found)
        #: ``post_payments`` holds the payments instead of posting them (``hold``).
        self.holding = False
        self._held: list[tuple[Hand, list[dict[str, Any]]]] = []
        self._held_by_side: dict[str, int] = {}

    def __getitem__(self, side: Any) -> Account:
        if self._found is None:
            self._found = self._read()
        key = str(side)
        if key not in self._found:
            self._found[key] = (pot(self.partie) if key == "pot"
                                else wallet(self.partie, self.seats[int(key)].player))
        return self._found[key]

    def balance(self, side: Any) -> int:
        """The side's balance, with the payments held and not posted yet."""
        return self[side].balance + self._held_by_side.get(str(side), 0)

    def hold(self) -> None:
        """Hold the payments of the next ``post_payments`` calls, to post them with the next
        batch that is posted (``post_payments`` once ``holding`` is off, or ``flush``): a
        command played to be written in one statement holds from the start
        (``advance.Table.one_statement``); if it has chips to post, it writes its hand first
        and its chips after it (moves._in_guarded), and a hand's end followed by a deal posts
        the hand's payments and the next hand's antes in one batch. ``balance`` counts what
        is held."""
        self.holding = True

    def _keep(self, hand: Hand, pays: list[dict[str, Any]]) -> None:
        self._held.append((hand, pays))
        _nets(pays, into=self._held_by_side)

    def holds(self) -> bool:
        """Whether payments are held and not posted yet."""
        return bool(self._held)

    def flush(self) -> None:
        """Stop holding, and post what is held (nothing to do if nothing is)."""
        self.holding = False
        _post(self, [])

    def to_read(self) -> store.AccountsOf | None:
        """What ``store.save`` reads with a hand's end when the accounts are still unknown
        (``take`` them from its ``found``), else ``None``."""
        return None if self._found is not None else self._wanted()

    def _wanted(self) -> store.AccountsOf:
        return store.AccountsOf(club_key=self.partie.club_key,
                                owners=[s.player_id for s in self.seats.values()],
                                pot_ref=_pot_ref(self.partie))

    def take(self, found: Sequence[Account]) -> None:
        """The accounts as read by the caller (an account not found yet is created when first
        needed, as ``__getitem__`` creates it)."""
        self._found = self._by_side(found)

    def known(self) -> list[Account]:
        """The accounts read so far (none before the first is needed)."""
        return list(self._found.values()) if self._found is not None else []

    def _read(self) -> dict[str, Account]:
        wanted = self._wanted()
        return self._by_side(store.accounts(club_key=wanted.club_key, owners=wanted.owners,
                                            pot_ref=wanted.pot_ref))

    def _by_side(self, found: Sequence[Account]) -> dict[str, Account]:
        side_of = {s.player_id: str(n) for n, s in self.seats.items()}
        return {("pot" if a.kind == AccountKind.POT else side_of[a.owner_id]): a for a in found}


def wallet_balances(*, partie: Partie, seats: Sequence[Seat],
                    accounts: Accounts | None = None) -> dict[int, int]:
    accounts = accounts or Accounts(partie, seats)
    return {s.number: accounts.balance(s.number) for s in seats}


def pot_balance(*, partie: Partie, accounts: Accounts | None = None) -> int:
    return (accounts or Accounts(partie, [])).balance("pot")


def buy_in(*, partie: Partie, seat: Seat, amount: int, at: datetime) -> None:
    ledger.buy_in(wallet=wallet(partie, seat.player), amount=amount,
                  source=f"partie:{partie.pk}/buy-in",
                  idempotency_key=f"partie:{partie.pk}:buy-in:{seat.number}",
                  memo=f"Buy-in at {partie.table_label}")


def payments(sealed: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The ``pay`` events among ``sealed`` that move chips."""
    return [e for e in sealed if e["type"] == "pay" and e["amount"] > 0]


def post_payments(*, accounts: Accounts, hand: Hand, sealed: Sequence[dict[str, Any]]) -> None:
    """Post the ``pay`` events among ``sealed``, all in one batch with any payments
    ``accounts`` holds (nothing moved, nothing posted: the shortfall of a payer who held
    nothing is kept in the event itself). While ``accounts.holding``, they are held instead."""
    pays = payments(sealed)
    if accounts.holding:
        if pays:
            accounts._keep(hand, pays)
        return
    _post(accounts, [(hand, pays)] if pays else [])


def _post(accounts: Accounts, groups: list[tuple[Hand, list[dict[str, Any]]]]) -> None:
    """The held payments and then ``groups``, in that order, as one batch: each hand's
    payments as ``payment_entries`` makes them, the hands in the order their payments came."""
    groups = accounts._held + groups
    accounts._held, accounts._held_by_side = [], {}
    by_hand: dict[Any, tuple[Hand, list[dict[str, Any]]]] = {}
    for hand, pays in groups:
        by_hand.setdefault(hand.pk, (hand, []))[1].extend(pays)
    requests = [r for hand, pays in by_hand.values() for r in payment_entries(accounts, hand, pays)]
    if requests:
        ledger.entries_post(entries=requests)


def _nets(pays: Sequence[dict[str, Any]], into: dict[str, int] | None = None) -> dict[str, int]:
    """What the payments move, by side (``"pot"`` or a seat number), in order of appearance;
    added to ``into`` when given."""
    nets: dict[str, int] = {} if into is None else into
    for e in pays:
        payer, payee = str(e["from"]), str(e["to"])
        nets[payer] = nets.get(payer, 0) - e["amount"]
        nets[payee] = nets.get(payee, 0) + e["amount"]
    return nets


def payment_entries(accounts: Accounts, hand: Hand,
                    pays: Sequence[dict[str, Any]]) -> list[EntryRequest]:
    """The payments of one hand that are posted together, as ledger entries (README, design):
    one entry with a posting per account, of the net the payments move it, keyed by the hand
    and the seq of its first payment, its source naming the events it covers, its memo every
    payment and its shortfall theirs. Payments that move nothing in total (no such case in
    either game today) are posted one entry each instead, so that every payment is in exactly
    one entry."""
    postings = _postings(accounts, pays)
    if not postings:
        return [_entry(accounts, hand, [e], _postings(accounts, [e])) for e in pays]
    return [_entry(accounts, hand, pays, postings)]


def _postings(accounts: Accounts, pays: Sequence[dict[str, Any]]) -> list[tuple[Account, int]]:
    """A posting per account the payments move, of its net (none for a net of zero)."""
    return [(accounts[side], net) for side, net in _nets(pays).items() if net]


def _entry(accounts: Accounts, hand: Hand, pays: Sequence[dict[str, Any]],
           postings: list[tuple[Account, int]]) -> EntryRequest:
    lines = []
    for e in pays:
        line = f"{e['reason']} {_side_name(e['from'])} to {_side_name(e['to'])} {e['amount']}"
        if e["short"]:
            line += (f" (owed {e['amount'] + e['short']}, paid {e['amount']},"
                     f" shortfall {e['short']})")
        lines.append(line)
    first, last = pays[0]["seq"], pays[-1]["seq"]
    return EntryRequest(
        postings=postings,
        memo=f"Hand {hand.number} of {accounts.partie.table_label}: {'; '.join(lines)}",
        source=f"hand:{hand.pk}/events:{first}-{last}",
        idempotency_key=f"hand:{hand.pk}:{first}",
        shortfall=sum(e["short"] for e in pays),
    )


def _side_name(side: Any) -> str:
    return "the pot" if str(side) == "pot" else f"seat {side}"


def share_pot(*, partie: Partie, seats: Sequence[Seat], last_banker: int, at: datetime) -> None:
    """RULES.md §1: chips left in the pot at the end are shared equally among the seated
    players, the remainder one chip each in speaking order from the last banker's next seat
    (a ledger entry of its own)."""
    the_pot = pot(partie)
    amount = the_pot.balance
    if amount <= 0:
        return
    n = len(seats)
    share, rest = divmod(amount, n)
    gains = [share] * n
    for k in range(rest):
        gains[(last_banker + 1 + k) % n] += 1
    postings = [(the_pot, -amount)] + [
        (wallet(partie, s.player), gains[s.number]) for s in seats if gains[s.number]
    ]
    # Stamped by the ledger's clock like every hand payment (post_payments), not at ``at``: the
    # pot's last payment was stamped "now", which may be later than the service's ``at`` (a bot
    # partie's own clock, a timer's time taken a moment before), and the ledger refuses an entry
    # dated before its accounts' last posting (BackdatedEntry), which would leave the partie
    # unable to close.
    ledger.entry_post(postings=postings, memo=f"Pot shared at the end of {partie.table_label}",
                      source=f"partie:{partie.pk}/pot-shared",
                      idempotency_key=f"partie:{partie.pk}:pot-shared")


#: A payment entry's source: the events it covers (``events:7-11``), or the one payment of an
#: entry written before entries were netted (``event:7``).
_COVERS = re.compile(r"/(?:events:(\d+)-(\d+)|event:(\d+))$")


def _covers(source: str) -> tuple[int, int] | None:
    """The first and last seq of the payments an entry's source names, if it names any."""
    match = _COVERS.search(source)
    if match is None:
        return None
    if match[1]:
        return int(match[1]), int(match[2])
    return int(match[3]), int(match[3])


def reconcile_hand(*, hand: Hand) -> list[str]:
    """Compare the ledger with the hand's ``pay`` events; return every difference found.

    Each of the hand's entries names in its source the payment events it covers, its key the
    first of them (``payment_entries``). Every payment that moves chips must be covered by
    exactly one entry, and each entry must move, account by account, what its payments move
    in total."""
    partie = hand.partie
    accounts = Accounts(partie, partie.seats.select_related("player"))
    pays = {row.seq: row.payload for row in
            HandEvent.objects.filter(hand=hand, type="pay").order_by("seq")
            if row.payload["amount"] > 0}
    prefix = f"hand:{hand.pk}:"
    problems = []
    covered: dict[int, str] = {}
    for entry in (JournalEntry.objects.filter(source__startswith=f"hand:{hand.pk}/")
                  .prefetch_related("postings").order_by("id")):
        key = entry.idempotency_key
        span = _covers(entry.source)
        if span is None or key != f"{prefix}{span[0]}" or span[0] not in pays:
            problems.append(f"ledger: entry {key} has no payment event")
            continue
        first, last = span
        part = [seq for seq in pays if first <= seq <= last]
        for seq in part:
            if seq in covered:
                problems.append(f"ledger: payment {prefix}{seq} is in two entries, "
                                f"{covered[seq]} and {key}")
            covered[seq] = key
        moved = {account.pk: net for account, net in _postings(accounts, [pays[s] for s in part])}
        lines = {p.account_id: p.amount for p in entry.postings.all()}
        if lines != moved:
            problems.append(f"ledger: entry {key} moves {lines}, its payment events "
                            f"{', '.join(map(str, part))} move {moved}")
    missing = [str(seq) for seq in pays if seq not in covered]
    if missing:
        problems.append(f"ledger: no entry for payment(s) {prefix}{', '.join(missing)}")
    return problems
