"""Start a partie, deal its hands, close it."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from games import live
from games.engine.deal import commitment, deal_from_seed, new_seed
from games.engine.registry import get_game
from games.errors import GameError, InvalidPartie, PartieOver
from games.models import Hand, HandSeed, Partie, Seat

from . import chips, recent, store
from .advance import Table, advance, table_for

BOT_NAMES = ("random", "heuristic", "timeout")


def partie_start(
    *,
    game: str,
    players: Sequence[AbstractBaseUser],
    bots: Sequence[str] = (),
    options: dict[str, Any] | None = None,
    club_key: str = "casual",
    table_label: str = "free table",
    buy_in: int = 0,
    buy_in_people: bool = True,
    move_timeout: timedelta = timedelta(seconds=30),
    forced_move_delay: timedelta = timedelta(seconds=1),
    comet_window: timedelta = timedelta(seconds=2),
    pause_between_hands: timedelta = timedelta(seconds=5),
    deal_until: datetime | None = None,
    created_by: AbstractBaseUser | None = None,
    deal_first_hand: bool = True,
    at: datetime,
) -> Partie:
    """Seat the players (people first, then bots), buy them in, and deal the first hand.

    A player may sit at one playing partie of a club at a time: his wallet pays there."""
    try:
        engine = get_game(game)
        opts = engine.normalise_options(options or {})
    except ValueError as exc:
        raise InvalidPartie(str(exc)) from None
    unknown = sorted(set(bots) - set(BOT_NAMES))
    if unknown:
        raise InvalidPartie(f"unknown bot {unknown[0]!r}: choose among {', '.join(BOT_NAMES)}")
    if len({p.pk for p in players}) != len(players):
        raise InvalidPartie("a player can take only one seat")
    n = len(players) + len(bots)
    if not engine.MIN_SEATS <= n <= engine.MAX_SEATS:
        raise InvalidPartie(f"{game} is played by {engine.MIN_SEATS} to {engine.MAX_SEATS} "
                            f"players, not {n}")
    if buy_in < 0:
        raise InvalidPartie("buy_in cannot be negative")
    for name, value in (("move_timeout", move_timeout), ("comet_window", comet_window),
                        ("forced_move_delay", forced_move_delay),
                        ("pause_between_hands", pause_between_hands)):
        if value < timedelta(0):
            raise InvalidPartie(f"{name} cannot be negative")
    busy = Seat.objects.filter(partie__club_key=club_key, partie__status=Partie.Status.PLAYING,
                               player__in=list(players)).select_related("player").first()
    if busy is not None:
        raise InvalidPartie(f"{busy.player.get_username()} is already playing at another table")
    with transaction.atomic():
        partie = Partie.objects.create(
            game=game, options=opts, club_key=club_key, table_label=table_label,
            move_timeout=move_timeout, forced_move_delay=forced_move_delay,
            comet_window=comet_window, pause_between_hands=pause_between_hands,
            deal_until=deal_until, created_by=created_by,
        )
        seated = list(players) + [chips.bot_user(name, i, partie.pk.hex[:8])
                                  for i, name in enumerate(bots)]
        for number, user in enumerate(seated):
            Seat.objects.create(partie=partie, number=number, player=user,
                                bot=bots[number - len(players)] if number >= len(players) else "")
        if buy_in:
            for seat in partie.seats.select_related("player"):
                # At a soirée people buy in at check-in; only the bots get chips here.
                if seat.bot or buy_in_people:
                    chips.buy_in(partie=partie, seat=seat, amount=buy_in, at=at)
        if deal_first_hand:
            hand_deal(partie=partie, at=at)
    return partie


def _end_reason(partie: Partie, last: Hand | None, chips_now: dict[int, int], at: datetime) -> str:
    opts = partie.options
    played = last.number if last else 0
    limit = opts.get("deals") if partie.game == "comet" else opts.get("rounds")
    if limit and played >= limit:
        return f"the agreed {limit} hands have been played"
    if opts.get("until_broke") and min(chips_now.values()) < opts["ante"]:
        return "a player has fewer chips than the ante"
    if partie.deal_until and at >= partie.deal_until:
        return "the closing time has passed"
    return ""


def hand_deal(*, partie: Partie, at: datetime) -> Hand | None:
    """Deal the partie's next hand, or close the partie at its end condition (then ``None``)."""
    with transaction.atomic():
        locked, last = store.lock_partie(partie.pk)
        if locked is None:
            raise Partie.DoesNotExist(f"no partie {partie.pk}")
        partie = locked
        if partie.status == Partie.Status.OVER:
            raise PartieOver("this partie is over")
        if last is not None and last.status != Hand.Status.OVER:
            raise GameError(f"hand {last.number} is still being played", code="hand_in_progress")
        return _deal(partie, last, at)


def partie_tick(*, partie_id: Any, at: datetime) -> Hand | None:
    """The partie's rhythm: deal its next hand once the pause after the last one has passed
    (or close it at its end condition). Does nothing if that is not due yet, so a late or
    duplicated timer is harmless."""
    with transaction.atomic():
        partie, last = store.lock_partie(partie_id)
        if partie is None or partie.status == Partie.Status.OVER:
            return None
        if partie.next_hand_at is None or partie.next_hand_at > at:
            return None
        if last is not None and last.status != Hand.Status.OVER:
            return None
        return _deal(partie, last, at)


def deal_after(*, table: Table, last: Hand, at: datetime, savepoint: bool = True,
               command: dict[str, Any] | None = None) -> Hand | None:
    """``partie_tick`` for the command that has just ended ``last`` (moves._deal_at_once), in
    that command's transaction: its last hand known (the command holds ``last``'s row, so no
    other hand can have been dealt after it) and the seats the command read taken over. On
    PostgreSQL the command's write of ``last`` has locked and read back the partie's row and
    the ledger accounts' balances (``table.partie_locked``, ``table.balances_fresh``:
    store.save), and the first deal takes them as they are; elsewhere, and for the deals that
    follow a hand ended at its deal, the accounts are read again (and the partie locked and
    read, where it was not read back). The balances give the new hand's ``chips_before``: they
    must include what anybody committed to those wallets meanwhile (a buy-in at the desk).

    ``savepoint``: a failure rolls back the deal alone; without, the caller's transaction is
    broken and must be rolled back. ``command``: the ending move's Command row, written with
    the new hand's row, its answer naming that hand (``next_hand``); not written if no hand is
    dealt."""
    if not table.balances_fresh:
        # The accounts are read again below: the payments held (moves._in_guarded) must be in
        # the books first, and posted outside the deal's savepoint, which a failed deal rolls
        # back while the last hand's end stays.
        table.accounts.flush()
    with transaction.atomic(savepoint=savepoint):
        partie = table.partie if table.partie_locked else store.lock_partie_row(table.partie.pk)
        if partie is None or partie.status == Partie.Status.OVER:
            return None
        if partie.next_hand_at is None or partie.next_hand_at > at:
            return None
        dealer = Table(partie=partie, seats=table.seats)
        if table.balances_fresh:  # read back with the partie (store.save): taken once
            # With the payments it holds, if any: then this is a deal without a savepoint
            # (moves._in_guarded), whose failure rolls back the whole command.
            assert not (savepoint and table.accounts.holds()), "payments held in a savepoint"
            dealer.accounts = table.accounts
            table.balances_fresh = False
        return _deal(partie, last, at, dealer, command=command)


def _deal(partie: Partie, last: Hand | None, at: datetime, table: Table | None = None, *,
          command: dict[str, Any] | None = None) -> Hand | None:
    """``hand_deal``'s work, the partie locked and its ``last`` hand over; ``table``: its seats
    (with their users) and accounts, if the caller holds them; ``command``: see
    ``deal_after``."""
    table = table or table_for(partie)
    n = len(table.seats)
    chips_now = chips.wallet_balances(partie=partie, seats=table.seats, accounts=table.accounts)
    if _end_reason(partie, last, chips_now, at):
        table.accounts.flush()  # the pot shared at the close is read from the books
        partie_close(partie=partie, at=at)
        return None
    engine = get_game(partie.game)
    seed = new_seed()
    deck, first_dealer = deal_from_seed(partie.game, seed, n)
    dealer = first_dealer if last is None else (last.dealer + 1) % n
    extra: dict[str, Any] = {}
    if partie.game == "comet":
        partie.comet_payment_due = engine.next_comet_payment_due(  # type: ignore[attr-defined]
            partie.options, partie.comet_payment_due, partie.comet_played_last)
        extra["comet_payment_due"] = partie.comet_payment_due
    partie.next_hand_at = None
    table.partie_fields.update(("comet_payment_due", "next_hand_at"))  # written with the hand
    commit = commitment(seed)
    hand = Hand(partie=partie, number=(last.number + 1) if last else 1, dealer=dealer,
                commitment=commit, last_hash=commit, started_at=at)
    hand.secret = HandSeed(hand=hand, seed=seed)  # both written by store.save, below
    opening = engine.begin(
        deck=deck, dealer=dealer,
        seats=[{"seat": s.number, "player": s.player.get_username()} for s in table.seats],
        options=partie.options, chips_before={str(k): v for k, v in chips_now.items()},
        pot_before=chips.pot_balance(partie=partie, accounts=table.accounts),
        commitment=commit, **extra,
    )
    sealed = store.append(hand, opening, prev_hash=commit, at=at, pending=table.events)
    chips.post_payments(accounts=table.accounts, hand=hand, sealed=sealed)
    loaded = store.Loaded(game=engine, state=engine.replay(deck, opening),
                          last_hash=sealed[-1]["hash"])
    loaded = advance(table, hand, loaded, now=at)
    if command is not None:
        command["response"]["next_hand"] = store.hand_ref(hand.pk, hand.number)
    store.save(hand, loaded, pending=table.events, partie_fields=table.partie_fields,
               command=command)
    if store.writes_in_one_statement():  # its first move need not read it (recent.py)
        transaction.on_commit(lambda: recent.hands.keep(hand, table.seats, loaded))
    return hand


def partie_close(*, partie: Partie, at: datetime) -> None:
    """End the partie; in Ma commère the pot a void last round left is shared (RULES.md §1)."""
    with transaction.atomic():
        partie = Partie.objects.select_for_update().get(pk=partie.pk)
        if partie.status == Partie.Status.OVER:
            return
        last = partie.hands.order_by("-number").first()
        if last is not None and last.status != Hand.Status.OVER:
            raise GameError(f"hand {last.number} is still being played", code="hand_in_progress")
        if partie.game == "commere":
            chips.share_pot(partie=partie, seats=list(partie.seats.order_by("number")),
                            last_banker=last.dealer if last else 0, at=at)
        partie.status = Partie.Status.OVER
        partie.ended_at = at
        partie.next_hand_at = None
        partie.save(update_fields=["status", "ended_at", "next_hand_at"])
        message = live.announcement(partie=partie)
        transaction.on_commit(lambda: live.announce(message))
