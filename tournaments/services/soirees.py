"""A soirée's life: created and changed before it opens, cancelled, opened (the seating drawn
and every table started), kept going by the clock, closed.

The soirée clock (tournaments/tasks.py) calls ``soiree_open`` at the start time and
``soiree_tick`` for the soirées ``soirees_due`` finds; parties deal their own hands
(games/tasks.py) and stop at the soirée's end time (``deal_until``), the hands in progress
finishing."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Count, F, Q, QuerySet, prefetch_related_objects
from django.utils.translation import gettext as _

from config.errors import DomainError
from games.engine.deal import new_seed
from games.engine.registry import get_game
from games.models import Partie
from games.services import BOT_NAMES, OPTION_MAX, hand_deal, partie_start, partie_stop_dealing

from ..errors import NobodyHere, SoireeError, SoireeState
from ..models import Announcement, Club, Registration, Soiree, SoireeTable
from ..ratings import parties_to_rate, rate_parties
from ..seating import Change, SeatingError, draw, next_seating
from ..selectors import stacks
from ..selectors.projections import standings_read
from ..selectors.standings import settlement_of
from .door import _reverse_buy_in

logger = logging.getLogger(__name__)

BOT_KIND = "heuristic"

def soiree_check(*, starts_at: datetime, ends_at: datetime, game: str,
                 options: dict[str, Any] | None, move_timeout: timedelta, bot_kind: str) -> None:
    """Refuse (SoireeError) a soirée that could not be played as set: on creation, and when
    staff change one in the admin site."""
    if ends_at <= starts_at:
        raise SoireeError(_("A soirée must end after it starts."))
    if not isinstance(options or {}, dict):
        raise SoireeError(_("The options must be an object of the rules' options."))
    try:
        engine = get_game(game)
        engine.normalise_options(options or {})
    except ValueError as exc:
        raise SoireeError(str(exc)) from None
    for key in ("deals", "rounds", "until_broke"):
        if key in (options or {}):
            raise SoireeError(_("Set the end condition with deals_per_partie, not options.%(key)s.")
                              % {"key": key})
    for key, top in OPTION_MAX.items():  # the bounds every partie keeps (games.services)
        value = (options or {}).get(key)
        if value is not None and value > top:
            raise SoireeError(_("The option %(key)s is at most %(top)s, not %(value)s.")
                              % {"key": key, "top": top, "value": value})
    if move_timeout <= timedelta(0):
        raise SoireeError(_("The time to move must be positive."))
    if bot_kind not in BOT_NAMES:
        raise SoireeError(_("Unknown bot %(bot)s: choose among %(bots)s.")
                          % {"bot": bot_kind, "bots": ", ".join(BOT_NAMES)})

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
        raise SoireeError(_("These cannot be changed: %(fields)s.")
                          % {"fields": ", ".join(sorted(unknown))})
    with transaction.atomic():
        soiree = Soiree.objects.select_for_update(no_key=True).get(pk=soiree.pk)
        if soiree.status != Soiree.Status.SCHEDULED:
            raise SoireeState(_("This soirée has opened: only a soirée not yet open can be "
                                "changed."))
        for key, value in changes.items():
            setattr(soiree, key, value)
        soiree_check(starts_at=soiree.starts_at, ends_at=soiree.ends_at, game=soiree.game,
                     options=soiree.options, move_timeout=soiree.move_timeout,
                     bot_kind=soiree.bot_kind)
        soiree.save(update_fields=list(changes))
        return soiree

def soiree_cancel(*, soiree: Soiree, at: datetime) -> Soiree:
    """Cancel a soirée that has not opened: it never opens, and every buy-in it issued goes
    back to the club bank by a reversing entry. An open soirée is closed instead
    (``soiree_close_now``)."""
    with transaction.atomic():
        soiree = (Soiree.objects.select_for_update(of=("self",), no_key=True)
                  .select_related("club").get(pk=soiree.pk))
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
        soiree = Soiree.objects.select_for_update(no_key=True).get(pk=soiree.pk)
        if soiree.status != Soiree.Status.SCHEDULED:
            raise SoireeState(_("This soirée is no longer waiting to open."))
        players = [r.user for r in soiree.registrations.filter(checked_in_at__isnull=False)
                   .select_related("user").order_by("checked_in_at", "pk")]
        # One who cashed his chips out before the opening sits out, as a broke player does.
        ante = int(_partie_options(soiree).get("ante", 1))
        chips = stacks(soiree=soiree)
        players = [p for p in players if chips.get(p.pk, 0) >= ante]
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
        soiree.seated_over = 0  # every table starts in play: nothing to seat until one ends
        soiree.save(update_fields=["seating_seed", "status", "opened_at", "seated_over"])
        return [_start_table(soiree, i + 1, 1, list(plan.players), plan.bots, at)
                for i, plan in enumerate(plans)]

def soirees_due(*, at: datetime) -> tuple[QuerySet[Soiree], QuerySet[Soiree]]:
    """What the clock has to do at ``at``: the soirées to open (started, somebody checked in),
    and the open soirées to tick. An open soirée needs its tick when one of its parties ended
    since its tables were last seated (its count of parties over has grown past
    ``seated_over``: a partie over never plays again, so the count only grows), or when a
    change at the door or the seats emptied that mark. A table in play that nothing changed
    costs nothing here: two queries, whatever the size of the room."""
    # A soirée nobody has arrived at waits (its manage page says so) rather than open with
    # bots alone; the tick after its first check-in opens it.
    to_open = Soiree.objects.filter(
        status=Soiree.Status.SCHEDULED, starts_at__lte=at,
        registrations__checked_in_at__isnull=False).distinct().order_by("starts_at", "pk")
    to_tick = (Soiree.objects.filter(status=Soiree.Status.OPEN)
               .annotate(over=Count("tables", filter=Q(tables__partie__status=Partie.Status.OVER)))
               .filter(Q(seated_over__isnull=True) | Q(over__gt=F("seated_over")))
               .order_by("starts_at", "pk"))
    return to_open, to_tick

@dataclass
class _Room:
    """A soirée's tables as one query read them: the latest of each number, and how many of
    all its tables (every round) had their partie over."""

    latest: dict[int, SoireeTable]
    over: int

def _room(soiree: Soiree) -> _Room:
    tables = list(SoireeTable.objects.filter(soiree=soiree).select_related("partie")
                  .order_by("number", "round"))
    return _Room(latest={t.number: t for t in tables},  # a number's last round comes last
                 over=sum(t.partie.status == Partie.Status.OVER for t in tables))

def _latest_tables(soiree: Soiree) -> dict[int, SoireeTable]:
    return _room(soiree).latest

def soiree_tick(*, soiree: Soiree, at: datetime) -> None:
    """Keep the evening going: a table whose partie is over starts the next one while time
    remains, seated by ``seating.next_seating`` (late arrivals, balancing, the seat changes
    asked), each change announced; when every table is done, close the soirée."""
    with transaction.atomic():
        soiree = Soiree.objects.select_for_update(no_key=True).get(pk=soiree.pk)
        if soiree.status != Soiree.Status.OPEN:
            return
        room = _room(soiree)
        # The mark is the count of the read the seating used, never a later one: a partie
        # that ended after that read counts above the mark, and the next tick seats it.
        seated, failed = room.over, False
        if at < soiree.deals_until:
            # A table stopped between hands to give up a player closes at once: it is seated
            # again in this tick, not taken for the end of the evening.
            for _ in range(2):
                stopped, failed_now = _seat_next_parties(soiree, room.latest, at)
                seated, failed = room.over, failed or failed_now
                room = _room(soiree)
                if not any(room.latest[n].partie.status == Partie.Status.OVER for n in stopped):
                    break
        # After the seating (which may close the tables it stopped) and before the closing
        # below, so that the parties a soirée ends with are rated too.
        rate_parties(parties=parties_to_rate(soiree=soiree))
        if all(t.partie.status == Partie.Status.OVER for t in room.latest.values()):
            soiree_finish(soiree=soiree, at=at)
            return
        # A table that failed to start is tried again at the next tick, as after a change.
        soiree.seated_over = None if failed else seated
        soiree.save(update_fields=["seated_over"])

def _seat_next_parties(soiree: Soiree, latest: dict[int, SoireeTable],
                       at: datetime) -> tuple[list[int], bool]:
    """Start the next parties the seating plans, and stop the tables it takes players from
    after their hand; returns the tables stopped, and whether a table failed to start."""
    ante = int(_partie_options(soiree).get("ante", 1))
    present = {r.user_id: r.user for r in soiree.registrations.filter(
        checked_in_at__isnull=False, left_at__isnull=True).select_related("user")
        .order_by("checked_in_at", "pk")}
    prefetch_related_objects([t.partie for t in latest.values()], "seats__player")

    def people_of(table: SoireeTable) -> list[Any]:
        return [s.player for s in sorted(table.partie.seats.all(), key=lambda s: s.number)
                if not s.bot]

    playing = {n: people_of(t) for n, t in latest.items()
               if t.partie.status == Partie.Status.PLAYING}
    over = {n: t for n, t in latest.items() if t.partie.status == Partie.Status.OVER}
    # A broke player sits out (he would end the next partie before its first hand), and one
    # the organiser removed is not seated again. Read, never opened: a stack is made for one
    # who is seated (his partie's wallet), not for one merely looked at.
    chips = stacks(soiree=soiree)
    able = {pk for pk in present if chips.get(pk, 0) >= ante}
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
    failed = False
    for number, (people, bots) in sorted(plan.start.items()):
        try:
            # One table's failure must not roll back the others' next parties.
            with transaction.atomic():
                _start_table(soiree, number, latest[number].round + 1, people, bots, at)
        except DomainError as exc:  # the game's refusal, or the ledger's
            failed = True
            logger.warning("soirée %s: table %s cannot start its next partie (%s): %s",
                           soiree.pk, number, [u.get_username() for u in people], exc)
    return list(plan.stop), failed

def soiree_close_now(*, soiree: Soiree, at: datetime) -> None:
    """The organiser ends the evening now: no new hand is dealt, hands in progress finish."""
    with transaction.atomic():
        soiree = Soiree.objects.select_for_update(no_key=True).get(pk=soiree.pk)
        if soiree.status == Soiree.Status.CLOSED:
            raise SoireeState(_("This soirée is already over."))
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
    # The read models hold every hand and ruling already (tournaments/projections.py): read,
    # not recomputed, under the soirée's lock.
    soiree.standings = {**standings_read(soiree=soiree), "computed_at": at.isoformat()}
    soiree.settlement = settlement_of(soiree.standings)
    soiree.status = Soiree.Status.CLOSED
    soiree.closed_at = at
    soiree.save(update_fields=["standings", "settlement", "status", "closed_at"])
