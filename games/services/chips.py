"""The game's chips in the ledger: the ``pay`` events of a command become ledger entries in
the same transaction, one per hand they belong to, keyed by the hand and the seq of the first
payment, so that a replayed projection never posts twice (ARCHITECTURE.md, the ledger; the
README's design section says why one entry per command and hand, not per payment)."""

from __future__ import annotations

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
        by_side = self._held_by_side
        for e in pays:
            payer, payee = str(e["from"]), str(e["to"])
            by_side[payer] = by_side.get(payer, 0) - e["amount"]
            by_side[payee] = by_side.get(payee, 0) + e["amount"]

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
    """The held payments and then ``groups``, in that order, as one batch: one entry per hand
    (``payment_entry``), the hands in the order their payments came."""
    groups = accounts._held + groups
    accounts._held, accounts._held_by_side = [], {}
    by_hand: dict[Any, tuple[Hand, list[dict[str, Any]]]] = {}
    for hand, pays in groups:
        by_hand.setdefault(hand.pk, (hand, []))[1].extend(pays)
    requests = [r for hand, pays in by_hand.values()
                if (r := payment_entry(accounts, hand, pays)) is not None]
    if requests:
        ledger.entries_post(entries=requests)


def _nets(pays: Sequence[dict[str, Any]]) -> dict[str, int]:
    """What the payments move, by side (``"pot"`` or a seat number), in order of appearance."""
    nets: dict[str, int] = {}
    for e in pays:
        payer, payee = str(e["from"]), str(e["to"])
        nets[payer] = nets.get(payer, 0) - e["amount"]
        nets[payee] = nets.get(payee, 0) + e["amount"]
    return nets


def payment_entry(accounts: Accounts, hand: Hand,
                  pays: Sequence[dict[str, Any]]) -> EntryRequest | None:
    """One command's payments in one hand as one ledger entry: a posting per account, of the
    net the payments move (README, design: one entry per command and hand), keyed by the
    hand and the seq of its first payment; its memo names every payment. ``None`` when they
    move nothing in total (an entry needs two postings that are not zero)."""
    if not pays:
        return None
    postings = [(accounts[side], net) for side, net in _nets(pays).items() if net]
    if not postings:
        return None
    lines = []
    for e in pays:
        line = f"{e['reason']} {_side_name(e['from'])} to {_side_name(e['to'])} {e['amount']}"
        if e["short"]:
            line += f" (owed {e['amount'] + e['short']}, shortfall {e['short']})"
        lines.append(line)
    first, last = pays[0]["seq"], pays[-1]["seq"]
    return EntryRequest(
        postings=postings,
        memo=f"Hand {hand.number} of {accounts.partie.table_label}: {'; '.join(lines)}",
        source=f"hand:{hand.pk}/events:{first}-{last}",
        idempotency_key=f"hand:{hand.pk}:{first}",
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


def reconcile_hand(*, hand: Hand) -> list[str]:
    """Compare the ledger with the hand's ``pay`` events; return every difference found.

    An entry's key names the first payment it nets (``payment_entry``); it covers that payment
    and the ones after it, up to the first payment of the next entry. So the payments split at
    the entries' keys, and each part must move, account by account, what its entry moves. The
    payments before the first entry must move nothing in total (a command whose payments
    cancel out writes no entry)."""
    partie = hand.partie
    accounts = Accounts(partie, partie.seats.select_related("player"))
    pays = [(row.seq, row.payload) for row in
            HandEvent.objects.filter(hand=hand, type="pay").order_by("seq")
            if row.payload["amount"] > 0]
    prefix = f"hand:{hand.pk}:"
    found = {
        e.idempotency_key: dict(e.postings.values_list("account_id", "amount"))
        for e in JournalEntry.objects.filter(source__startswith=f"hand:{hand.pk}/")
        .prefetch_related("postings")
    }
    starts: dict[int, str] = {}
    problems = []
    paid = {seq for seq, _ in pays}
    for key in found:
        seq = key.removeprefix(prefix)
        if key.startswith(prefix) and seq.isdigit() and int(seq) in paid:
            starts[int(seq)] = key
        else:
            problems.append(f"ledger: entry {key} has no payment event")
    parts: list[tuple[str | None, list[tuple[int, dict[str, Any]]]]] = [(None, [])]
    for seq, payload in pays:
        if seq in starts:
            parts.append((starts[seq], []))
        parts[-1][1].append((seq, payload))
    for key, part in parts:
        moved = {accounts[side].pk: net
                 for side, net in _nets([p for _, p in part]).items() if net}
        seqs = ", ".join(str(seq) for seq, _ in part)
        if key is None:
            if moved:
                problems.append(f"ledger: no entry for payment(s) {prefix}{seqs}")
        elif found[key] != moved:
            problems.append(f"ledger: entry {key} moves {found[key]}, "
                            f"the payment events {seqs} move {moved}")
    return problems
