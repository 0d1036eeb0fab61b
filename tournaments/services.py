"""Running a club evening: register, check in, open (seat and deal), keep tables going, close.

The soirée clock (tournaments/tasks.py) calls ``soiree_open`` at the start time and
``soiree_tick`` every few seconds; parties deal their own hands (games/tasks.py) and stop at the
soirée's end time (``deal_until``), the hands in progress finishing.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Q
from django.utils.translation import gettext as _

from config.errors import DomainError
from games import selectors as game_selectors
from games.engine.deal import new_seed
from games.engine.registry import get_game
from games.models import Partie
from games.services import BOT_NAMES, OPTION_MAX, hand_deal, partie_start, partie_stop_dealing
from ledger import selectors as ledger_selectors
from ledger import services as ledger
from ledger.exceptions import InsufficientChips
from ledger.models import JournalEntry
from ledger.netting import minimal_transfers

from .errors import NobodyHere, NotMember, SoireeError, SoireeState
from .models import Announcement, Club, Membership, Registration, Soiree, SoireeTable
from .ratings import parties_to_rate, rate_parties
from .seating import Change, SeatingError, draw, next_seating
from .selectors import rulings_net, voided_hands

BOT_KIND = "heuristic"

logger = logging.getLogger(__name__)


def club_create(*, name: str, slug: str, organiser: AbstractBaseUser) -> Club:
    with transaction.atomic():
        club = Club.objects.create(name=name, slug=slug)
        Membership.objects.create(club=club, user=organiser, role=Membership.Role.ORGANISER)
        return club


def membership_add(*, club: Club, user: AbstractBaseUser, role: str) -> Membership:
    if role not in Membership.Role.values:
        raise SoireeError(f"unknown role {role!r}: one of {', '.join(Membership.Role.values)}")
    membership, _ = Membership.objects.get_or_create(club=club, user=user, role=role)
    return membership


def soiree_check(*, starts_at: datetime, ends_at: datetime, game: str,
                 options: dict[str, Any] | None, move_timeout: timedelta, bot_kind: str) -> None:
    """Refuse (SoireeError) a soirée that could not be played as set: on creation, and when
    staff change one in the admin site."""
    if ends_at <= starts_at:
        raise SoireeError("a soirée must end after it starts")
    if not isinstance(options or {}, dict):
        raise SoireeError("options must be an object of RULES.md's options")
    try:
        engine = get_game(game)
        engine.normalise_options(options or {})
    except ValueError as exc:
        raise SoireeError(str(exc)) from None
    for key in ("deals", "rounds", "until_broke"):
        if key in (options or {}):
            raise SoireeError(f"set the end condition with deals_per_partie, not options.{key}")
    for key, top in OPTION_MAX.items():  # the bounds every partie keeps (games.services)
        value = (options or {}).get(key)
        if value is not None and value > top:
            raise SoireeError(f"option {key!r} is at most {top}, not {value}")
    if move_timeout <= timedelta(0):
        raise SoireeError("move_timeout must be positive")
    if bot_kind not in BOT_NAMES:
        raise SoireeError(f"unknown bot {bot_kind!r}: choose among {', '.join(BOT_NAMES)}")


def soiree_create(
    *, club: Club, name: str, starts_at: datetime, ends_at: datetime, game: str,
    options: dict[str, Any] | None = None, buy_in: int = 50,
    move_timeout: timedelta = timedelta(seconds=30),
    pause_between_hands: timedelta = timedelta(seconds=5),
    forced_move_delay: timedelta = timedelta(seconds=1),
    comet_window: timedelta = timedelta(seconds=2), share_window: timedelta | None = None,
    deals_per_partie: int | None = None, bots_allowed: bool = True, min_tables: int = 1,
    season: Any = None, created_by: AbstractBaseUser | None = None, bot_kind: str = BOT_KIND,
) -> Soiree:
    soiree_check(starts_at=starts_at, ends_at=ends_at, game=game, options=options,
                 move_timeout=move_timeout, bot_kind=bot_kind)
    return Soiree.objects.create(
        club=club, name=name, starts_at=starts_at, ends_at=ends_at, game=game,
        options=options or {}, buy_in=buy_in, move_timeout=move_timeout,
        pause_between_hands=pause_between_hands, forced_move_delay=forced_move_delay,
        comet_window=comet_window, deals_per_partie=deals_per_partie,
        bots_allowed=bots_allowed, min_tables=min_tables, season=season, created_by=created_by,
        bot_kind=bot_kind, **({} if share_window is None else {"share_window": share_window}),
    )


#: What an organiser may change before the soirée opens (``soiree_update``).
EDITABLE = ("name", "starts_at", "ends_at", "game", "options", "buy_in", "move_timeout",
            "pause_between_hands", "forced_move_delay", "comet_window", "share_window",
            "deals_per_partie",
            "bots_allowed", "bot_kind", "min_tables", "season")


def soiree_update(*, soiree: Soiree, **changes: Any) -> Soiree:
    """Change a soirée that has not opened yet. Once its tables are seated its rules and times
    are those its parties were started with, so an open or closed one is refused."""
    unknown = set(changes) - set(EDITABLE)
    if unknown:
        raise SoireeError(f"these cannot be changed: {', '.join(sorted(unknown))}")
    with transaction.atomic():
        soiree = Soiree.objects.select_for_update().get(pk=soiree.pk)
        if soiree.status != Soiree.Status.SCHEDULED:
            raise SoireeState(f"this soirée is {soiree.status}: only a soirée not yet open can "
                              f"be changed")
        for key, value in changes.items():
            setattr(soiree, key, value)
        soiree_check(starts_at=soiree.starts_at, ends_at=soiree.ends_at, game=soiree.game,
                     options=soiree.options, move_timeout=soiree.move_timeout,
                     bot_kind=soiree.bot_kind)
        soiree.save(update_fields=list(changes))
        return soiree


def registration_add(*, soiree: Soiree, user: AbstractBaseUser) -> Registration:
    if not Membership.objects.filter(club=soiree.club, user=user).exists():
        raise NotMember(f"{user.get_username()} is not a member of {soiree.club}")
    if soiree.status == Soiree.Status.CLOSED:
        raise SoireeState("this soirée is closed")
    if soiree.status == Soiree.Status.CANCELLED:
        raise SoireeState(_("This soirée was cancelled."))
    registration, _created = Registration.objects.get_or_create(soiree=soiree, user=user)
    return registration


def registration_remove(*, soiree: Soiree, user: AbstractBaseUser) -> None:
    """A member takes his name off a soirée that has not opened. One checked in already holds
    its buy-in: the organiser undoes his check-in first (``checkin_undo``)."""
    with transaction.atomic():
        soiree = Soiree.objects.select_for_update().get(pk=soiree.pk)
        if soiree.status != Soiree.Status.SCHEDULED:
            raise SoireeState(_("This soirée is no longer waiting to open: it is too late to "
                                "unregister."))
        registration = Registration.objects.filter(soiree=soiree, user=user).first()
        if registration is None:
            raise SoireeState(_("%(name)s is not registered for this soirée.")
                              % {"name": user.get_username()})
        if registration.checked_in_at is not None:
            raise SoireeState(_("%(name)s is already checked in: the organiser undoes the "
                                "check-in first.") % {"name": user.get_username()})
        registration.delete()


def _elsewhere(soiree: Soiree, user: AbstractBaseUser) -> Soiree | None:
    """Another soirée at which ``user`` is checked in and may be playing: one open, or one
    whose times overlap ``soiree``'s and which is not over (closed or cancelled), unless the
    organiser removed him from its tables."""
    overlapping = Q(starts_at__lt=soiree.ends_at, ends_at__gt=soiree.starts_at)
    return (Soiree.objects.select_related("club")
            .filter(registrations__user=user, registrations__checked_in_at__isnull=False,
                    registrations__left_at__isnull=True)
            .exclude(pk=soiree.pk)
            .filter(Q(status=Soiree.Status.OPEN)
                    | (Q(status=Soiree.Status.SCHEDULED) & overlapping))
            .order_by("starts_at", "pk").first())


def checkin(*, soiree: Soiree, user: AbstractBaseUser, at: datetime) -> Registration:
    """Check a player in and issue his buy-in; after the opening he joins the next partie."""
    with transaction.atomic():
        # One player, one soirée at a time: two check-ins of the same player at two soirées
        # take turns on his user row, so that neither misses the other.
        get_user_model().objects.select_for_update().filter(pk=user.pk).first()
        # Under the soirée's lock, as its cancel and its opening are.
        soiree = Soiree.objects.select_for_update(of=("self",)).select_related("club").get(
            pk=soiree.pk)
        other = _elsewhere(soiree, user)
        if other is not None:
            raise SoireeState(
                _("%(name)s is already checked in at another soirée, %(other)s (%(club)s): a "
                  "player is checked in at one soirée at a time. Undo that check-in, or wait "
                  "until that soirée is over.")
                % {"name": user.get_username(), "other": other.name, "club": other.club.name})
        registration = registration_add(soiree=soiree, user=user)
        registration = Registration.objects.select_for_update().get(pk=registration.pk)
        if registration.left_at is not None:  # removed from the tables, he is back
            registration.left_at = None
            registration.save(update_fields=["left_at"])
        if registration.checked_in_at is None:
            registration.checked_in_at = at
            registration.save(update_fields=["checked_in_at"])
            if soiree.buy_in:
                ledger.buy_in(wallet=stack(soiree, user), amount=soiree.buy_in,
                              source=f"soiree:{soiree.pk}/buy-in",
                              idempotency_key=_buy_in_key(soiree, user),
                              memo=f"Buy-in at {soiree.name}")
        return registration


def stack(soiree: Soiree, user: Any) -> Any:
    """The player's stack at ``soiree``: his buy-in and rebuys come into it, his tables there
    play from it, his cash-out and the soirée's rulings move it; nothing of another soirée or
    of a casual table touches it."""
    return ledger.wallet_get_or_create(club_key=soiree.club.slug, owner=user,
                                       ref=soiree.stack_ref)


def _buy_in_key(soiree: Soiree, user: AbstractBaseUser) -> str:
    """The idempotency key of the player's next buy-in at ``soiree``. A check-in undone had
    its buy-in reversed; checked in again, he is issued a new one under the next key."""
    base = f"soiree:{soiree.pk}:buy-in:{user.pk}"
    undone = JournalEntry.objects.filter(
        Q(idempotency_key=base) | Q(idempotency_key__startswith=f"{base}:"),
        reversed_by__isnull=False).count()
    return base if not undone else f"{base}:{undone + 1}"


def _buy_in_now(soiree: Soiree, user: AbstractBaseUser) -> JournalEntry | None:
    """The player's buy-in at ``soiree`` not reversed yet (None when the soirée has none)."""
    base = f"soiree:{soiree.pk}:buy-in:{user.pk}"
    return (JournalEntry.objects.filter(
        Q(idempotency_key=base) | Q(idempotency_key__startswith=f"{base}:"),
        reversed_by__isnull=True).order_by("-pk").first())


def _reverse_buy_in(soiree: Soiree, user: AbstractBaseUser, key: str, why: str) -> None:
    entry = _buy_in_now(soiree, user)
    if entry is None:
        return
    try:
        ledger.entry_reverse(entry=entry, reason=why, idempotency_key=key,
                             source=f"soiree:{soiree.pk}/buy-in")
    except InsufficientChips:
        raise SoireeState(
            _("%(name)s no longer holds the %(chips)s chips of his buy-in, so it cannot be "
              "taken back.") % {"name": user.get_username(), "chips": soiree.buy_in}) from None


def checkin_undo(*, soiree: Soiree, user: AbstractBaseUser, request_id: Any) -> Registration:
    """Undo a check-in made by mistake, before the seating: the player stays registered, and
    his buy-in goes back to the club bank by an entry reversing it (the ledger is never
    edited). ``request_id`` makes a repeated request (a double click) undo once."""
    key = f"soiree:{soiree.pk}:checkin-undo:{request_id}"
    with transaction.atomic():
        soiree = Soiree.objects.select_for_update(of=("self",)).select_related("club").get(
            pk=soiree.pk)
        registration = Registration.objects.select_for_update().filter(
            soiree=soiree, user=user).first()
        if registration is not None and registration.checked_in_at is None \
                and JournalEntry.objects.filter(idempotency_key=key).exists():
            return registration  # the same request again
        if soiree.status != Soiree.Status.SCHEDULED:
            raise SoireeState(_("This soirée has opened: its players may be seated, so a "
                                "check-in can no longer be undone. Cash the player out, or "
                                "remove him from his table."))
        if registration is None or registration.checked_in_at is None:
            raise SoireeState(_("%(name)s is not checked in at this soirée.")
                              % {"name": user.get_username()})
        _reverse_buy_in(soiree, user, key, f"check-in at {soiree.name} undone")
        registration.checked_in_at = None
        registration.save(update_fields=["checked_in_at"])
        return registration


def soiree_cancel(*, soiree: Soiree, at: datetime) -> Soiree:
    """Cancel a soirée that has not opened: it never opens, and every buy-in it issued goes
    back to the club bank by a reversing entry. An open soirée is closed instead
    (``soiree_close_now``)."""
    with transaction.atomic():
        soiree = Soiree.objects.select_for_update(of=("self",)).select_related("club").get(
            pk=soiree.pk)
        if soiree.status == Soiree.Status.CANCELLED:
            return soiree  # the same request again
        if soiree.status != Soiree.Status.SCHEDULED:
            raise SoireeState(_("This soirée has opened: it can no longer be cancelled. Close "
                                "it now instead."))
        for registration in soiree.registrations.filter(
                checked_in_at__isnull=False).select_related("user"):
            _reverse_buy_in(soiree, registration.user,
                            f"soiree:{soiree.pk}:cancel:{registration.user_id}",
                            f"{soiree.name} cancelled")
        soiree.status = Soiree.Status.CANCELLED
        soiree.cancelled_at = at
        soiree.save(update_fields=["status", "cancelled_at"])
        return soiree


def _checked_in(soiree: Soiree, user: AbstractBaseUser, what: str) -> Any:
    if soiree.status == Soiree.Status.CLOSED:
        raise SoireeState(f"this soirée is closed: no {what} now")
    if soiree.status == Soiree.Status.CANCELLED:
        raise SoireeState(_("This soirée was cancelled."))
    if not Registration.objects.filter(soiree=soiree, user=user,
                                       checked_in_at__isnull=False).exists():
        raise SoireeError(f"{user.get_username()} is not checked in at this soirée: check him "
                          f"in first")
    return stack(soiree, user)


def rebuy(*, soiree: Soiree, user: AbstractBaseUser, request_id: Any,
          amount: int | None = None) -> int:
    """A recave: the club bank issues ``amount`` more chips (the buy-in by default) to a
    checked-in player. ``request_id`` makes a repeated request (a double click) post once.
    Returns the player's chips."""
    with transaction.atomic():
        wallet = _checked_in(soiree, user, "rebuy")
        ledger.buy_in(wallet=wallet, amount=amount or soiree.buy_in,
                      source=f"soiree:{soiree.pk}/rebuy",
                      idempotency_key=f"soiree:{soiree.pk}:rebuy:{request_id}",
                      memo=f"Rebuy at {soiree.name}")
        wallet.refresh_from_db(fields=["balance"])
        return int(wallet.balance)


def cash_out(*, soiree: Soiree, user: AbstractBaseUser, request_id: Any,
             amount: int | None = None) -> int:
    """A player leaves the evening with ``amount`` of his chips (all of them by default),
    returned to the club bank; not while he sits at a table in play, whose hands draw on his
    wallet. Returns the chips he still holds."""
    with transaction.atomic():
        wallet = _checked_in(soiree, user, "cash-out")
        playing = SoireeTable.objects.filter(
            soiree=soiree, partie__status=Partie.Status.PLAYING,
            partie__seats__player=user).exists()
        if playing:
            raise SoireeState(f"{user.get_username()} is seated at a table in play: he cashes "
                              f"out once its partie is over")
        if amount is not None and amount > wallet.balance:
            raise SoireeError(f"{user.get_username()} holds {wallet.balance} chips, fewer "
                              f"than {amount}")
        ledger.cash_out(wallet=wallet, amount=amount, source=f"soiree:{soiree.pk}/cash-out",
                        idempotency_key=f"soiree:{soiree.pk}:cash-out:{request_id}",
                        memo=f"Cash-out at {soiree.name}")
        wallet.refresh_from_db(fields=["balance"])
        return int(wallet.balance)


def seat_change(*, soiree: Soiree, user: AbstractBaseUser, kind: str, at: datetime,
                to_table: int | None = None) -> Announcement:
    """The organiser asks that a seated player move to ``to_table``, be replaced by a bot, or
    be removed (one away or absent). It is carried out between hands: the tables concerned
    deal no hand after the one in play, and start their next partie with the change
    (``soiree_tick``). Asking the same again is answered with the change already asked."""
    kinds = (Announcement.Kind.MOVE, Announcement.Kind.REPLACE, Announcement.Kind.REMOVE)
    if kind not in kinds:
        raise SoireeError(f"unknown change {kind!r}: one of {', '.join(kinds)}")
    with transaction.atomic():
        soiree = Soiree.objects.select_for_update().get(pk=soiree.pk)
        if soiree.status != Soiree.Status.OPEN or soiree.close_asked_at:
            raise SoireeState("the soirée is not in play: seats change only while it is")
        name = user.get_username()
        latest = _latest_tables(soiree)
        here = next((n for n, t in latest.items() if t.partie.status == Partie.Status.PLAYING
                     and t.partie.seats.filter(player=user, bot="").exists()), None)
        if here is None:
            raise SoireeError(f"{name} is not seated at a table in play")
        pending = Announcement.objects.filter(soiree=soiree, player=user,
                                              done_at__isnull=True).first()
        if pending is not None:
            if (pending.kind, pending.to_table) == (kind, to_table):
                return pending  # the same request again (a double click)
            raise SoireeState(f"a change is already asked for {name} ({pending.kind}); it is "
                              f"carried out after the hand in play")
        lo, hi = get_game(soiree.game).MIN_SEATS, get_game(soiree.game).MAX_SEATS
        stop = [here]
        if kind == Announcement.Kind.MOVE:
            if to_table not in latest or to_table == here:
                raise SoireeError(f"choose another table of this soirée than table {here}: "
                                  f"{', '.join(str(n) for n in sorted(latest) if n != here)}")
            target = latest[to_table].partie.seats.count()
            if target + 1 > hi:
                raise SoireeError(f"table {to_table} has {target} seats taken: {hi} at most at "
                                  f"{soiree.get_game_display()}")
            left = latest[here].partie.seats.count() - 1
            src, dst = (latest[n].partie.seats.filter(bot="").count() for n in (here, to_table))
            if abs((dst + 1) - (src - 1)) > 1:
                raise SoireeError(f"table {to_table} would have {dst + 1} players and table "
                                  f"{here} {src - 1}: tables stay within one player of each "
                                  f"other")
            if left < lo and not soiree.bots_allowed:
                raise SoireeError(f"table {here} would keep {left} player(s), fewer than the "
                                  f"{lo} {soiree.get_game_display()} needs, and this soirée "
                                  f"allows no bots")
            if latest[to_table].partie.status == Partie.Status.PLAYING:
                stop.append(to_table)
        elif to_table is not None:
            raise SoireeError("only a move names a table")
        change = Announcement.objects.create(
            soiree=soiree, at=at, kind=kind, player=user, from_table=here, to_table=to_table,
            reason=Announcement.Reason.ORGANISER)
        for number in stop:
            partie_stop_dealing(partie_id=latest[number].partie_id, until=at, at=at)
        return change


def announce(*, soiree: Soiree, text: str, at: datetime) -> Announcement:
    """The organiser's words to the room screen and the tables."""
    text = text.strip()
    if not text:
        raise SoireeError("an announcement needs a text")
    if len(text) > 200:
        raise SoireeError(f"an announcement is at most 200 characters, not {len(text)}")
    if soiree.status == Soiree.Status.CLOSED:
        raise SoireeState("this soirée is closed")
    return Announcement.objects.create(soiree=soiree, at=at, kind=Announcement.Kind.MESSAGE,
                                       text=text, done_at=at)


def _partie_options(soiree: Soiree) -> dict[str, Any]:
    options = dict(soiree.options)
    key = "deals" if soiree.game == "comet" else "rounds"
    if soiree.deals_per_partie:
        options[key] = soiree.deals_per_partie
    else:
        options["until_broke"] = True
    return options


def _start_table(soiree: Soiree, number: int, round_: int, players: list[Any], bots: int,
                 at: datetime) -> SoireeTable:
    partie = partie_start(
        game=soiree.game, players=players, bots=[soiree.bot_kind or BOT_KIND] * bots,
        options=_partie_options(soiree), club_key=soiree.club.slug,
        wallet_ref=soiree.stack_ref,
        table_label=f"{soiree.name} · table {number}", buy_in=soiree.buy_in,
        buy_in_people=False, move_timeout=soiree.move_timeout,
        forced_move_delay=soiree.forced_move_delay, comet_window=soiree.comet_window,
        share_window=soiree.share_window, pause_between_hands=soiree.pause_between_hands,
        deal_until=soiree.ends_at,
        created_by=soiree.created_by, deal_first_hand=False, at=at,
    )
    table = SoireeTable.objects.create(soiree=soiree, number=number, round=round_,
                                       partie=partie)
    hand_deal(partie=partie, at=at)
    return table


def soiree_open(*, soiree: Soiree, at: datetime) -> list[SoireeTable]:
    """Draw the seating from a new seed recorded with the soirée, and start every table."""
    with transaction.atomic():
        soiree = Soiree.objects.select_for_update().get(pk=soiree.pk)
        if soiree.status != Soiree.Status.SCHEDULED:
            raise SoireeState(f"this soirée is already {soiree.status}")
        players = [r.user for r in soiree.registrations.filter(checked_in_at__isnull=False)
                   .select_related("user").order_by("checked_in_at", "pk")]
        # One who cashed his chips out before the opening sits out, as a broke player does.
        ante = int(_partie_options(soiree).get("ante", 1))
        players = [p for p in players if _wallet(soiree, p) >= ante]
        if not players:
            # An evening of bots alone is nobody's evening: it waits for its first arrival.
            raise NobodyHere(_("Nobody has arrived yet: check the players in at the door, "
                               "then the soirée opens."))
        soiree.seating_seed = new_seed()
        try:
            plans = draw(soiree.game, players, seed=soiree.seating_seed,
                         bots_allowed=soiree.bots_allowed, min_tables=soiree.min_tables)
        except SeatingError as exc:
            raise SoireeError(str(exc)) from None
        soiree.status = Soiree.Status.OPEN
        soiree.opened_at = at
        soiree.save(update_fields=["seating_seed", "status", "opened_at"])
        return [_start_table(soiree, i + 1, 1, list(plan.players), plan.bots, at)
                for i, plan in enumerate(plans)]


def _latest_tables(soiree: Soiree) -> dict[int, SoireeTable]:
    latest: dict[int, SoireeTable] = {}
    for t in SoireeTable.objects.filter(soiree=soiree).select_related("partie").order_by(
            "number", "round"):
        latest[t.number] = t
    return latest


def soiree_tick(*, soiree: Soiree, at: datetime) -> None:
    """Keep the evening going: a table whose partie is over starts the next one while time
    remains, seated by ``seating.next_seating`` (late arrivals, balancing, the seat changes
    asked), each change announced; when every table is done, close the soirée."""
    with transaction.atomic():
        soiree = Soiree.objects.select_for_update().get(pk=soiree.pk)
        if soiree.status != Soiree.Status.OPEN:
            return
        latest = _latest_tables(soiree)
        if at < soiree.deals_until:
            # A table stopped between hands to give up a player closes at once: it is seated
            # again in this tick, not taken for the end of the evening.
            for _ in range(2):
                stopped = _seat_next_parties(soiree, latest, at)
                latest = _latest_tables(soiree)
                if not any(latest[n].partie.status == Partie.Status.OVER for n in stopped):
                    break
        # After the seating (which may close the tables it stopped) and before the closing
        # below, so that the parties a soirée ends with are rated too.
        rate_parties(parties=parties_to_rate(soiree=soiree))
        if all(t.partie.status == Partie.Status.OVER for t in latest.values()):
            soiree_finish(soiree=soiree, at=at)


def _seat_next_parties(soiree: Soiree, latest: dict[int, SoireeTable],
                       at: datetime) -> list[int]:
    """Start the next parties the seating plans, and stop the tables it takes players from
    after their hand; returns the tables stopped."""
    ante = int(_partie_options(soiree).get("ante", 1))
    present = {r.user_id: r.user for r in soiree.registrations.filter(
        checked_in_at__isnull=False, left_at__isnull=True).select_related("user")
        .order_by("checked_in_at", "pk")}

    def people_of(table: SoireeTable) -> list[Any]:
        return [s.player for s in table.partie.seats.select_related("player").order_by("number")
                if not s.bot]

    playing = {n: people_of(t) for n, t in latest.items()
               if t.partie.status == Partie.Status.PLAYING}
    over = {n: t for n, t in latest.items() if t.partie.status == Partie.Status.OVER}
    # A broke player sits out (he would end the next partie before its first hand), and one
    # the organiser removed is not seated again.
    able = {pk for pk, user in present.items() if _wallet(soiree, user) >= ante}
    placed = {u.pk for people in playing.values() for u in people}
    ended: dict[int, list[Any]] = {}
    bot_tables = set()
    # A person whose table closed sat at another since: he belongs to his latest table.
    for n, t in sorted(over.items(), key=lambda item: item[1].partie.created_at, reverse=True):
        people = people_of(t)
        if not people:
            bot_tables.add(n)
        ended[n] = [u for u in people if u.pk in able and u.pk not in placed]
        placed |= {u.pk for u in people}
    pool = [u for pk, u in present.items() if pk in able and pk not in placed]
    asked = list(Announcement.objects.filter(soiree=soiree, done_at__isnull=True)
                 .exclude(kind=Announcement.Kind.MESSAGE).select_related("player"))
    plan = next_seating(
        soiree.game, ended=ended, playing=playing, pool=pool, bots_allowed=soiree.bots_allowed,
        bot_tables=bot_tables,
        changes=[Change(a.kind, a.player, a.from_table, a.to_table, id=a.pk) for a in asked])
    done = Announcement.objects.filter(pk__in=plan.done)
    Registration.objects.filter(
        soiree=soiree, user__in=done.filter(kind__in=[Announcement.Kind.REPLACE,
                                                      Announcement.Kind.REMOVE])
        .values("player")).update(left_at=at)
    done.update(done_at=at)
    for change, now in plan.made:
        Announcement.objects.create(
            soiree=soiree, at=at, kind=change.kind, reason=change.reason, player=change.player,
            from_table=change.from_table, to_table=change.to_table, done_at=at if now else None)
    for number in plan.stop:
        partie_stop_dealing(partie_id=latest[number].partie_id, until=at, at=at)
    for number, (people, bots) in sorted(plan.start.items()):
        try:
            # One table's failure must not roll back the others' next parties.
            with transaction.atomic():
                _start_table(soiree, number, latest[number].round + 1, people, bots, at)
        except DomainError as exc:  # the game's refusal, or the ledger's
            logger.warning("soirée %s: table %s cannot start its next partie (%s): %s",
                           soiree.pk, number, [u.get_username() for u in people], exc)
    return list(plan.stop)


def _wallet(soiree: Soiree, user: Any) -> int:
    return int(stack(soiree, user).balance)


def soiree_close_now(*, soiree: Soiree, at: datetime) -> None:
    """The organiser ends the evening now: no new hand is dealt, hands in progress finish."""
    with transaction.atomic():
        soiree = Soiree.objects.select_for_update().get(pk=soiree.pk)
        if soiree.status == Soiree.Status.CLOSED:
            raise SoireeState("this soirée is already closed")
        if soiree.status == Soiree.Status.SCHEDULED:
            soiree.status = Soiree.Status.CLOSED
            soiree.close_asked_at = soiree.closed_at = at
            soiree.standings = {"players": [], "computed_at": at.isoformat()}  # its schema's
            soiree.settlement = settlement_of(soiree.standings)
            soiree.save(update_fields=["status", "close_asked_at", "closed_at", "standings",
                                       "settlement"])
            return
        # The planned times stay as they were; the close is recorded beside them.
        soiree.close_asked_at = at
        soiree.save(update_fields=["close_asked_at"])
        for partie_id in SoireeTable.objects.filter(soiree=soiree).values_list("partie_id",
                                                                               flat=True):
            partie_stop_dealing(partie_id=partie_id, until=at, at=at)
    soiree_tick(soiree=soiree, at=at)


def soiree_finish(*, soiree: Soiree, at: datetime) -> None:
    """Every table is done: compute the standings and the settlement, close the soirée. A seat
    change still waiting for a table's next partie never happened: its announcement goes."""
    Announcement.objects.filter(soiree=soiree, done_at__isnull=True).delete()
    soiree.standings = standings_compute(soiree=soiree, at=at)
    soiree.settlement = settlement_of(soiree.standings)
    soiree.status = Soiree.Status.CLOSED
    soiree.closed_at = at
    soiree.save(update_fields=["standings", "settlement", "status", "closed_at"])


#: The club as a party of a settlement: the bots play the club's chips, so their nets are
#: the club's to take or to pay. No username can be it (Django's allow no "#").
CLUB = "#club"


def party_nets(standings: dict[str, Any]) -> dict[str, int]:
    """Each party's net: every person's own, and the club's, the sum of its bots' nets."""
    nets: dict[str, int] = defaultdict(int)
    for row in standings.get("players", []):
        nets[row["player"]] += row["net"]
    for row in standings.get("bots", []):
        nets[CLUB] += row["net"]
    return {party: net for party, net in nets.items() if net}


def settlement_of(standings: dict[str, Any]) -> dict[str, Any]:
    """Who pays whom, in the fewest transfers, to settle the soirée's own nets: those of its
    hands, its tables' pots and its rulings, so that a soirée overlapping another in time never
    enters it. Every transfer is between two of its people, or one of them and the club
    (``CLUB``), and they sum to each party's net. Rulings after the close add ``corrections``
    (``settlement_corrected``); the transfers once shown stay as they were."""
    nets = party_nets(standings)
    return {
        "nets": [{"account": party, "player": party, "net": net} for party, net in nets.items()],
        "transfers": [{"from": payer, "to": payee, "amount": amount}
                      for payer, payee, amount in minimal_transfers(nets)],
        "corrections": [],
    }


def settlement_corrected(settlement: dict[str, Any], standings: dict[str, Any],
                         at: datetime) -> dict[str, Any]:
    """The settlement after a ruling: the transfers and corrections already shown, plus the
    fewest transfers that bring every party to its net in ``standings``."""
    settled: dict[str, int] = defaultdict(int)
    for t in [*settlement.get("transfers", []), *settlement.get("corrections", [])]:
        settled[t["from"]] -= t["amount"]
        settled[t["to"]] += t["amount"]
    nets = party_nets(standings)
    missing = {p: nets.get(p, 0) - settled.get(p, 0) for p in {*nets, *settled}}
    return {
        **settlement,
        "nets": [{"account": party, "player": party, "net": net} for party, net in nets.items()],
        "corrections": [
            *settlement.get("corrections", []),
            *({"from": payer, "to": payee, "amount": amount, "at": at.isoformat()}
              for payer, payee, amount in minimal_transfers(
                  {p: n for p, n in missing.items() if n}))],
    }


def standings_compute(*, soiree: Soiree, at: datetime) -> dict[str, Any]:
    """Per player: net chips (from the hands' results, pot shares and rulings), hands dealt
    and won, Comets played, tricons won; people in ``players``, ordered by net then hands won,
    and the club's bots apart in ``bots``. A hand a ruling voided counts neither as dealt nor
    as won (its chips went back by the ruling)."""
    rows: dict[str, dict[str, Any]] = defaultdict(
        lambda: {"net": 0, "hands_won": 0, "comets": 0, "tricons": 0, "hands": 0})
    bots: set[str] = set()
    names: dict[str, str] = {}
    voided = voided_hands(soiree=soiree)
    parties = Partie.objects.filter(soiree_table__soiree=soiree).prefetch_related(
        "seats__player")
    for partie in parties:
        seats = {s.number: s for s in partie.seats.all()}
        for s in seats.values():
            names[s.player.get_username()] = (s.player.get_full_name()  # type: ignore[attr-defined]
                                              or s.player.get_username())
            if s.bot:
                bots.add(s.player.get_username())
        by_seat = {n: s.player.get_username() for n, s in seats.items()}
        # Every hand's chips as the ledger moved them (a void's ruling sends them back below).
        for kind, payload in game_selectors.partie_results(partie=partie):
            if kind == "hand_over":
                for seat, net in payload["result"]["net"].items():
                    rows[by_seat[int(seat)]]["net"] += net
        for kind, payload in game_selectors.partie_results(partie=partie, without=voided):
            if kind == "comet":
                rows[by_seat[payload["seat"]]]["comets"] += 1
                continue
            result = payload["result"]
            for seat in result["net"]:
                rows[by_seat[int(seat)]]["hands"] += 1
            if result.get("winner") is not None:
                winner = rows[by_seat[result["winner"]]]
                winner["hands_won"] += 1
                if result.get("combination") == "tricon":
                    winner["tricons"] += 1
        shared = ledger_selectors.settlement(
            club_key=soiree.club.slug, since=soiree.opened_at or soiree.starts_at,
            until=at + timedelta(seconds=1), source_prefix=f"partie:{partie.pk}/pot-shared")
        for n in shared.nets:
            if n.account.owner_id:
                rows[n.account.owner.get_username()]["net"] += n.net
    # The rulings: the chips a void sent back, an adjustment's.
    for name, net in rulings_net(soiree=soiree).items():
        rows[name]["net"] += net
    table = [{"player": name, "name": names.get(name, name), **row}
             for name, row in rows.items()]
    table.sort(key=lambda r: (-r["net"], -r["hands_won"], r["player"]))
    return {"players": [r for r in table if r["player"] not in bots],
            "bots": [r for r in table if r["player"] in bots],
            "computed_at": at.isoformat()}


def season_standings(*, season: Any) -> list[dict[str, Any]]:
    totals: dict[str, dict[str, int]] = defaultdict(
        lambda: {"net": 0, "hands_won": 0, "comets": 0, "tricons": 0, "soirees": 0})
    for soiree in season.soirees.filter(status=Soiree.Status.CLOSED):
        for row in (soiree.standings or {}).get("players", []):
            t = totals[row["player"]]
            for key in ("net", "hands_won", "comets", "tricons"):
                t[key] += row[key]
            t["soirees"] += 1
    out = [{"player": name, **row} for name, row in totals.items()]
    out.sort(key=lambda r: (-r["net"], -r["hands_won"], r["player"]))
    return out
