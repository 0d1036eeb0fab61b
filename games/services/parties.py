"""Start a partie, deal its hands, close it."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils.translation import gettext as _

from games import signals
from games.engine.bots import LEVELS
from games.engine.deal import commitment, new_seed
from games.engine.registry import get_game
from games.engine.shares import SharedDeal, first_dealer_v2
from games.errors import GameError, InvalidPartie, PartieOver
from games.models import Game, Hand, HandSeed, Partie, Seat, default_share_window

from . import chips, store
from .advance import Outbox, Table, append_events, deal_hand, save, table_for, wait_for_shares

#: The HAND_RECORD.md version of every hand dealt now (hands in play finish in their own).
RECORD_FORMAT = 3
BOT_NAMES = ("random", "heuristic", "ismcts", "timeout")
#: The levels clubs choose among (débutant, habile, fort), by the bot that plays each.
BOT_LEVELS = LEVELS
#: What a client may name a bot by: a level, or a bot's own name.
BOT_CHOICES = (*BOT_LEVELS, *BOT_NAMES)


def bot_for(value: str) -> str:
    """The bot of a level (``fort``) or of its own name (``ismcts``); ValueError otherwise."""
    if value in BOT_NAMES:
        return value
    if value in BOT_LEVELS:
        return BOT_LEVELS[value]
    raise ValueError(_("unknown bot level %(level)s: choose among %(levels)s (or the bots "
                       "%(bots)s)") % {"level": repr(value), "levels": ", ".join(BOT_LEVELS),
                                      "bots": ", ".join(BOT_NAMES)})

#: Every partie ends: one that names no number of hands plays DEFAULT_HANDS (or, when it ends
#: on its own terms, until_broke or a closing time, at most max_hands), and none plays more
#: than max_hands (a club may choose fewer).
LENGTH_OPTION = {"comet": "deals", "commere": "rounds"}
DEFAULT_HANDS = 10
MAX_HANDS = 100
#: The largest amount an option may name, and the number of turns of a Ma commère round: far
#: beyond any club's, and well inside the columns and the chips in play.
COMET_WINDOW_MAX = timedelta(seconds=15)
OPTION_MAX = {"ante": 1_000, "per_card": 1_000, "comet_payment": 1_000, "max_turns": 100}
MAX_BUY_IN = 1_000_000


def partie_start(
    *,
    game: str,
    players: Sequence[AbstractBaseUser],
    bots: Sequence[str] = (),
    options: dict[str, Any] | None = None,
    club_key: str = "casual",
    table_label: str = "free table",
    wallet_ref: str = "",
    buy_in: int = 0,
    buy_in_people: bool = True,
    move_timeout: timedelta = timedelta(seconds=30),
    forced_move_delay: timedelta = timedelta(seconds=1),
    comet_window: timedelta = timedelta(seconds=2),
    pause_between_hands: timedelta = timedelta(seconds=5),
    share_window: timedelta | None = None,
    deal_until: datetime | None = None,
    created_by: AbstractBaseUser | None = None,
    deal_first_hand: bool = True,
    max_hands: int = MAX_HANDS,
    at: datetime,
) -> Partie:
    """Seat the players (people first, then bots), buy them in, and deal the first hand: a
    club's table, whose players the club has already seated (a soirée's check-in). A casual
    table seats nobody who has not accepted (``casual_table_create``).

    A player may sit at one playing partie of a club at a time: his wallet pays there. The
    people play from their wallets of the club under ``wallet_ref`` (a soirée's stacks: see
    ``chips.seat_wallet``)."""
    opts = partie_check(game=game, people=len(players), bots=bots, options=options,
                        buy_in=buy_in, deal_until=deal_until, max_hands=max_hands,
                        timeouts={"move_timeout": move_timeout, "comet_window": comet_window,
                                  "forced_move_delay": forced_move_delay,
                                  "pause_between_hands": pause_between_hands,
                                  "share_window": share_window or timedelta(0)})
    if len({p.pk for p in players}) != len(players):
        raise InvalidPartie(_("a player can take only one seat"))
    busy = Seat.objects.filter(partie__club_key=club_key, partie__status=Partie.Status.PLAYING,
                               player__in=list(players)).select_related("player").first()
    if busy is not None:
        raise InvalidPartie(_("%(name)s is already playing at another table")
                            % {"name": busy.player.get_username()})
    with transaction.atomic():
        partie = Partie.objects.create(
            game=game, options=opts, club_key=club_key, table_label=table_label,
            wallet_ref=wallet_ref, move_timeout=move_timeout, forced_move_delay=forced_move_delay,
            comet_window=comet_window, pause_between_hands=pause_between_hands,
            share_window=default_share_window() if share_window is None else share_window,
            deal_until=deal_until, created_by=created_by, buy_in=buy_in,
        )
        seat_and_deal(partie=partie, players=players, bots=bots, buy_in_people=buy_in_people,
                      deal_first_hand=deal_first_hand, at=at)
    return partie


def partie_check(*, game: str, people: int, bots: Sequence[str], options: dict[str, Any] | None,
                 buy_in: int, deal_until: datetime | None, max_hands: int,
                 timeouts: dict[str, timedelta]) -> dict[str, Any]:
    """Every check of a partie's terms before anyone sits; returns its options, filled in."""
    try:
        engine = get_game(game)
        opts = engine.normalise_options(options or {})
    except ValueError as exc:
        raise InvalidPartie(str(exc)) from None
    _bound(game, opts, ends_by_itself=bool(opts.get("until_broke") or deal_until),
           max_hands=max_hands)
    unknown = sorted(set(bots) - set(BOT_NAMES))
    if unknown:
        raise InvalidPartie(_("unknown bot %(bot)s: choose among %(bots)s (the levels %(levels)s)")
                            % {"bot": repr(unknown[0]), "bots": ", ".join(BOT_NAMES),
                               "levels": ", ".join(BOT_LEVELS)})
    n = people + len(bots)
    if not engine.MIN_SEATS <= n <= engine.MAX_SEATS:
        raise InvalidPartie(_("%(game)s is played by %(least)s to %(most)s players, not %(n)s")
                            % {"game": Game(game).label, "least": engine.MIN_SEATS,
                               "most": engine.MAX_SEATS, "n": n})
    if not 0 <= buy_in <= MAX_BUY_IN:
        raise InvalidPartie(_("buy_in must be between 0 and %(most)s chips")
                            % {"most": MAX_BUY_IN})
    for name, value in timeouts.items():
        if value < timedelta(0):
            raise InvalidPartie(_("%(name)s cannot be negative") % {"name": name})
    if timeouts.get("comet_window", timedelta(0)) > COMET_WINDOW_MAX:
        # Long enough for "ask me" to be a decision, short enough for a hand to end.
        raise InvalidPartie(_("comet_window cannot exceed %(most)s s")
                            % {"most": int(COMET_WINDOW_MAX.total_seconds())})
    return opts


def seat_and_deal(*, partie: Partie, players: Sequence[AbstractBaseUser], bots: Sequence[str],
                  buy_in_people: bool, deal_first_hand: bool, at: datetime,
                  bot_stake: int | None = None) -> None:
    """Seat the people, then the bots, in the partie's transaction; issue the buy-in (to the
    bots only, or to everyone: a bot gets ``bot_stake`` if given) and deal the first hand."""
    seated = list(players) + [chips.bot_user(i) for i in range(len(bots))]
    for number, user in enumerate(seated):
        Seat.objects.create(partie=partie, number=number, player=user,
                            bot=bots[number - len(players)] if number >= len(players) else "")
    for seat in partie.seats.select_related("player"):
        # At a soirée people buy in at check-in, at a casual table they bring their own
        # chips; only the bots get chips here.
        amount = bot_stake if seat.bot and bot_stake is not None else partie.buy_in
        if amount and (seat.bot or buy_in_people):
            chips.buy_in(partie=partie, seat=seat, amount=amount)
    if partie.status != Partie.Status.PLAYING:
        partie.status = Partie.Status.PLAYING
        partie.save(update_fields=["status"])
    if deal_first_hand:
        hand_deal(partie=partie, at=at)


def _bound(game: str, opts: dict[str, Any], *, ends_by_itself: bool, max_hands: int) -> None:
    """Fill in the partie's length and check every integer option against its bound."""
    for name, top in OPTION_MAX.items():
        value = opts.get(name)
        if value is not None and value > top:
            raise InvalidPartie(_("option %(name)s is at most %(top)s, not %(value)s")
                                % {"name": repr(name), "top": top, "value": value})
    key = LENGTH_OPTION[game]
    if opts[key] is None:
        opts[key] = max_hands if ends_by_itself else min(DEFAULT_HANDS, max_hands)
    elif opts[key] > max_hands:
        raise InvalidPartie(_("option %(name)s is at most %(top)s, not %(value)s")
                            % {"name": repr(key), "top": max_hands, "value": opts[key]})


def _end_reason(partie: Partie, last: Hand | None, chips_now: dict[int, int],
                at: datetime) -> str:
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
        partie, last = _locked_partie(partie.pk)
        if partie.status == Partie.Status.OVER:
            raise PartieOver(_("this partie is over"))
        if last is not None and last.status != Hand.Status.OVER:
            raise GameError(_("hand %(n)s is still being played") % {"n": last.number},
                            code="hand_in_progress")
        return _deal(table_for(partie), last, at)


def partie_tick(*, partie_id: Any, at: datetime) -> Hand | None:
    """The partie's rhythm: deal its next hand once the pause after the last one has passed
    (or close it at its end condition). Does nothing if that is not due yet, so a late or
    duplicated timer is harmless."""
    with transaction.atomic():
        try:
            partie, last = _locked_partie(partie_id)
        except Partie.DoesNotExist:
            return None
        if not _next_hand_due(partie, at) or (last is not None
                                              and last.status != Hand.Status.OVER):
            return None
        return _deal(table_for(partie), last, at)


def deal_after(*, table: Table, last: Hand, at: datetime) -> Hand | None:
    """``partie_tick`` in the transaction of the command that has just ended ``last``: that
    command holds ``last``'s row, so no other hand can have been dealt after it."""
    partie = Partie.objects.select_for_update(no_key=True).get(pk=table.partie.pk)
    if not _next_hand_due(partie, at):
        return None
    dealer = Table(partie=partie, seats=table.seats, outbox=table.outbox)
    return _deal(dealer, last, at)


def partie_stop_dealing(*, partie_id: Any, until: datetime, at: datetime) -> None:
    """Deal no hand after ``until`` (a soirée closed early): the hand in play finishes, and a
    partie waiting between hands closes now."""
    with transaction.atomic():
        partie, last = _locked_partie(partie_id)
        if partie.status == Partie.Status.OVER:
            return
        partie.deal_until = until if partie.deal_until is None else min(partie.deal_until, until)
        partie.save(update_fields=["deal_until"])
        if last is None or last.status == Hand.Status.OVER:
            _deal(table_for(partie), last, at)  # past its closing time: closes the partie


def _locked_partie(partie_id: Any) -> tuple[Partie, Hand | None]:
    """The partie, its row locked (the dealer's lock), and its last hand, read after the lock
    so that one who waited for a concurrent dealer sees the hand that one dealt."""
    partie = Partie.objects.select_for_update(no_key=True).get(pk=partie_id)
    return partie, partie.hands.order_by("-number").first()


def _next_hand_due(partie: Partie, at: datetime) -> bool:
    return (partie.status == Partie.Status.PLAYING and partie.next_hand_at is not None
            and partie.next_hand_at <= at)


def _deal(table: Table, last: Hand | None, at: datetime) -> Hand | None:
    """``hand_deal``'s work, the partie locked and its ``last`` hand over."""
    partie = table.partie
    n = len(table.seats)
    balances = table.accounts.balances()
    chips_now = {s: balances[str(s)] for s in table.accounts.seats}
    if _end_reason(partie, last, chips_now, at):
        partie_close(partie=partie, at=at, outbox=table.outbox)
        return None
    # Version 3 (HAND_RECORD.md): the service commits to its seed, the seated people add their
    # shares, and the deck is shuffled under a key that mixes them in at the deal, keyed by the
    # seed so that no deck follows from the commitment; hidden values are sealed in the chain.
    seed = new_seed()
    engine = SharedDeal(get_game(partie.game), seed, version=RECORD_FORMAT)
    dealer = first_dealer_v2(seed, n) if last is None else (last.dealer + 1) % n
    extra: dict[str, Any] = {}
    if partie.game == "comet":
        partie.comet_payment_due = engine.next_comet_payment_due(
            partie.options, partie.comet_payment_due, partie.comet_played_last)
        extra["comet_payment_due"] = partie.comet_payment_due
    partie.next_hand_at = None
    partie.save(update_fields=["comet_payment_due", "next_hand_at"])
    commit = commitment(seed)
    hand = Hand.objects.create(partie=partie, number=(last.number + 1) if last else 1,
                               dealer=dealer, commitment=commit, last_hash=commit,
                               started_at=at, record_format=RECORD_FORMAT)
    HandSeed.objects.create(hand=hand, seed=seed)
    started = engine.start(
        dealer=dealer,
        seats=[{"seat": s.number, "player": s.player.get_username()} for s in table.seats],
        options=partie.options, chips_before={str(k): v for k, v in chips_now.items()},
        pot_before=balances["pot"], commitment=commit, **extra,
    )
    loaded = store.Loaded(game=engine, state=engine.initial_state(), last_hash=commit)
    loaded = append_events(table, hand, loaded, [started], now=at)
    if table.people and partie.share_window:
        wait_for_shares(hand, at + partie.share_window)
    else:  # nobody to wait for: a table of bots is dealt at once
        deal_hand(table, hand, loaded, now=at)
    save(table, hand)
    return hand


def partie_close(*, partie: Partie, at: datetime, outbox: Outbox | None = None) -> None:
    """End the partie; in Ma commère the pot a void last round left is shared (RULES.md §1).
    ``outbox``: the one of the command that closes it, if it dealt or played in it."""
    with transaction.atomic():
        partie = Partie.objects.select_for_update(no_key=True).get(pk=partie.pk)
        if partie.status == Partie.Status.OVER:
            return
        last = partie.hands.order_by("-number").first()
        if last is not None and last.status != Hand.Status.OVER:
            raise GameError(_("hand %(n)s is still being played") % {"n": last.number},
                            code="hand_in_progress")
        if partie.game == "commere":
            chips.share_pot(partie=partie, seats=list(partie.seats.order_by("number")),
                            last_banker=last.dealer if last else 0)
        partie.status = Partie.Status.OVER
        partie.ended_at = at
        partie.next_hand_at = None
        partie.save(update_fields=["status", "ended_at", "next_hand_at"])
        signals.partie_ended.send(sender=Partie, partie=partie)
        (outbox or Outbox(partie)).close()
