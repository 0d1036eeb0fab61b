"""The game's chips in the ledger: every ``pay`` event that moves chips becomes one ledger
entry, in the same transaction as the move that caused it, keyed by the hand and the event's
seq (ARCHITECTURE.md, the ledger), so that a replayed projection never posts twice. The game
writes nothing in the ledger's tables itself: it goes through ``ledger.services``."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser

from games.models import Hand, HandEvent, Partie, Seat
from ledger import services as ledger
from ledger.models import Account, AccountKind, JournalEntry
from ledger.services import EntryRequest

#: A partie's pot in the ledger: the account of kind pot whose ref is this and the partie's id.
POT_REF_PREFIX = "partie:"


#: The club's bots: a few players of the century of Comet and Ma commère, the same users at
#: every table (at most 12 seats: a table seats each at most once).
BOT_PLAYERS = ("Voltaire", "Diderot", "Rousseau", "Montesquieu", "Condorcet", "Buffon",
               "Marivaux", "Beaumarchais", "Casanova", "Châtelet", "Deffand", "Lespinasse")


def bot_user(index: int) -> AbstractBaseUser:
    """The user the ``index``-th bot of a table plays as (no password: nobody signs in as a
    bot). Its chips at each table are a wallet of that table's (``bot_wallet_ref``)."""
    user, created = get_user_model().objects.get_or_create(username=BOT_PLAYERS[index])
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    return user


def bot_wallet_ref(partie: Partie) -> str:
    return f"{POT_REF_PREFIX}{partie.pk}"


def seat_wallet(partie: Partie, seat: Seat) -> Account:
    """The account a seat plays from: a person's wallet of the club under the partie's
    ``wallet_ref`` (his stack at a soirée, his club wallet elsewhere), or the bot's wallet of
    this table."""
    ref = bot_wallet_ref(partie) if seat.bot else partie.wallet_ref
    return ledger.wallet_get_or_create(club_key=partie.club_key, owner=seat.player, ref=ref)


def casual_welcome_chips() -> int:
    return int(getattr(settings, "ACADEMIE_CASUAL_WELCOME_CHIPS", 1_000))


def casual_wallet(player: Any) -> Account:
    """A person's casual wallet, opened once with the welcome chips (a bank entry keyed by the
    player, so never twice): casual tables play from it, and never issue chips to a person."""
    account = ledger.wallet_get_or_create(club_key=ledger.CASUAL_CLUB, owner=player)
    welcome = casual_welcome_chips()
    if welcome:
        ledger.buy_in(wallet=account, amount=welcome, source=f"casual:welcome/{player.pk}",
                      idempotency_key=f"casual:welcome:{player.pk}",
                      memo="Welcome chips of the casual tables")
        account.refresh_from_db(fields=["balance"])
    return account


def pot(partie: Partie) -> Account:
    return ledger.pot_get_or_create(club_key=partie.club_key, ref=f"{POT_REF_PREFIX}{partie.pk}",
                                    name=f"Pot of {partie.table_label} ({partie.pk})")


class Accounts:
    """The accounts a partie's payments move chips between, by side as the ``pay`` events
    name them (``"pot"`` or a seat number): the seats' wallets and the partie's pot. Each is
    got (or created) the first time a command needs it, then kept for that command."""

    def __init__(self, partie: Partie, seats: Sequence[Seat]) -> None:
        self.partie = partie
        self.seats = {s.number: s for s in seats}
        self._found: dict[str, Account] = {}

    def __getitem__(self, side: Any) -> Account:
        key = str(side)
        if key not in self._found:
            self._found[key] = (pot(self.partie) if key == "pot"
                                else seat_wallet(self.partie, self.seats[int(key)]))
        return self._found[key]

    def balances(self) -> dict[str, int]:
        """Every side's balance as the books hold it now (read again: the ledger's writes
        move the balances in the database, not in the instances kept here)."""
        sides = ["pot", *(str(n) for n in self.seats)]
        by_id = {self[side].pk: side for side in sides}
        found = Account.objects.filter(pk__in=by_id).values_list("pk", "balance")
        return {by_id[pk]: balance for pk, balance in found}


def seats_balances(*, seats: Sequence[Seat]) -> dict[int, int]:
    """Each seat's chips (by the seat's pk), for seats of many parties, in one query: the
    wallet each plays from (``seat_wallet``). A seat without a wallet holds 0."""
    clubs = {s.partie.club_key for s in seats}
    found = {(a["club_key"], a["owner_id"], a["ref"]): a["balance"] for a in
             Account.objects.filter(kind=AccountKind.WALLET, club_key__in=clubs,
                                    owner_id__in={s.player_id for s in seats})
             .values("club_key", "owner_id", "ref", "balance")}
    return {s.pk: found.get((s.partie.club_key, s.player_id,
                             bot_wallet_ref(s.partie) if s.bot else s.partie.wallet_ref), 0)
            for s in seats}


def wallet_balances(*, partie: Partie, seats: Sequence[Seat]) -> dict[int, int]:
    balances = Accounts(partie, seats).balances()
    return {s.number: balances[str(s.number)] for s in seats}


def pot_balance(*, partie: Partie) -> int:
    return Accounts(partie, []).balances()["pot"]


def buy_in(*, partie: Partie, seat: Seat, amount: int) -> None:
    ledger.buy_in(wallet=seat_wallet(partie, seat), amount=amount,
                  source=f"partie:{partie.pk}/buy-in",
                  idempotency_key=f"partie:{partie.pk}:buy-in:{seat.number}",
                  memo=f"Buy-in at {partie.table_label}")


def post_payments(*, accounts: Accounts, hand: Hand, sealed: Sequence[dict[str, Any]]) -> None:
    """Post the ``pay`` events among ``sealed`` that move chips, one entry each, in one batch
    (a payer who held nothing moved nothing: the shortfall is kept in the event itself)."""
    requests = [payment_entry(accounts, hand, e) for e in sealed
                if e["type"] == "pay" and e["amount"] > 0]
    if requests:
        ledger.entries_post(entries=requests)


def payment_entry(accounts: Accounts, hand: Hand, pay: dict[str, Any]) -> EntryRequest:
    """The ledger entry of one ``pay`` event: from the payer's account to the payee's."""
    memo = (f"Hand {hand.number} of {accounts.partie.table_label}: {pay['reason']} "
            f"{_side_name(pay['from'])} to {_side_name(pay['to'])} {pay['amount']}")
    if pay["short"]:
        memo += (f" (owed {pay['amount'] + pay['short']}, paid {pay['amount']},"
                 f" shortfall {pay['short']})")
    return EntryRequest(
        postings=[(accounts[pay["from"]], -pay["amount"]), (accounts[pay["to"]], pay["amount"])],
        memo=memo,
        source=f"hand:{hand.pk}/event:{pay['seq']}",
        idempotency_key=f"hand:{hand.pk}:{pay['seq']}",
        shortfall=pay["short"],
    )


def _side_name(side: Any) -> str:
    return "the pot" if str(side) == "pot" else f"seat {side}"


def share_pot(*, partie: Partie, seats: Sequence[Seat], last_banker: int) -> None:
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
        (seat_wallet(partie, s), gains[s.number]) for s in seats if gains[s.number]
    ]
    # Stamped by the ledger's clock like every hand payment, not by the service's time: the
    # ledger refuses an entry dated before its accounts' last posting (BackdatedEntry).
    ledger.entry_post(postings=postings, memo=f"Pot shared at the end of {partie.table_label}",
                      source=f"partie:{partie.pk}/pot-shared",
                      idempotency_key=f"partie:{partie.pk}:pot-shared")


_EVENT_SOURCE = re.compile(r"/event:(\d+)$")


def reconcile_hand(*, hand: Hand) -> list[str]:
    """Compare the ledger with the hand's ``pay`` events; return every difference found.

    Every payment that moves chips must have exactly one entry, keyed by the hand and its seq,
    moving its amount from its payer's account to its payee's; and every entry of the hand
    must be such a payment's."""
    partie = hand.partie
    accounts = Accounts(partie, list(partie.seats.select_related("player")))
    pays = {row.seq: {**row.payload, "seq": row.seq} for row in
            HandEvent.objects.filter(hand=hand, type="pay").order_by("seq")
            if row.payload["amount"] > 0}
    prefix = f"hand:{hand.pk}:"
    problems = []
    seen: set[int] = set()
    for entry in (JournalEntry.objects.filter(source__startswith=f"hand:{hand.pk}/")
                  .prefetch_related("postings").order_by("id")):
        key = entry.idempotency_key
        match = _EVENT_SOURCE.search(entry.source)
        seq = int(match[1]) if match else None
        if seq is None or key != f"{prefix}{seq}" or seq not in pays:
            problems.append(f"ledger: entry {key} has no payment event")
            continue
        seen.add(seq)
        wanted = {a.pk: amount for a, amount in payment_entry(accounts, hand, pays[seq]).postings}
        lines = {p.account_id: p.amount for p in entry.postings.all()}
        if lines != wanted:
            problems.append(f"ledger: entry {key} moves {lines}, its payment event moves "
                            f"{wanted}")
    missing = [str(seq) for seq in pays if seq not in seen]
    if missing:
        problems.append(f"ledger: no entry for payment(s) {prefix}{', '.join(missing)}")
    return problems

