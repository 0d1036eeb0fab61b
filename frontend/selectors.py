"""Reads of the lobby: where the user sits now, the casual tables open to him, and the day's
soirées of his clubs (the invitations waiting for his answer are games.selectors'). Each
narrows games' and tournaments' own selectors; none shows the user a partie that
``games.permissions`` hides from him."""

from __future__ import annotations

from datetime import datetime, time, timedelta
from typing import Any

from django.db.models import OuterRef, Q, QuerySet, Subquery
from django.utils import timezone

from games.models import Hand, Partie
from games.permissions import visible_parties
from games.selectors import partie_list
from games.services import CASUAL
from tournaments.models import Season, Soiree, SoireeTable
from tournaments.selectors import soiree_list

#: The casual tables the lobby lists, newest first.
CASUAL_TABLES_SHOWN = 20


def _with_latest_hand(parties: QuerySet[Partie]) -> QuerySet[Partie]:
    """``parties`` each with its latest hand's id and number (``latest_hand_id``,
    ``latest_hand_number``; ``None`` before the first deal): the hand its table page shows."""
    latest = Hand.objects.filter(partie=OuterRef("pk")).order_by("-number")
    return parties.annotate(latest_hand_id=Subquery(latest.values("pk")[:1]),
                            latest_hand_number=Subquery(latest.values("number")[:1]))


def tables_now(*, user: Any) -> QuerySet[Partie]:
    """The parties in play where ``user`` has a seat, at a soirée or a casual table (one per
    club at most: a player sits at one table of a club at a time)."""
    table = SoireeTable.objects.filter(partie=OuterRef("pk"))
    parties = (partie_list().filter(status=Partie.Status.PLAYING, seats__player_id=user.pk)
               .annotate(soiree_id=Subquery(table.values("soiree_id")[:1]),
                         soiree_name=Subquery(table.values("soiree__name")[:1]),
                         table_number=Subquery(table.values("number")[:1])))
    return _with_latest_hand(parties.prefetch_related(None).prefetch_related("seats__player"))


def casual_tables(*, user: Any) -> QuerySet[Partie]:
    """The casual tables still inviting or in play that ``user`` may watch (his own, and all
    of them for staff), newest first, with their latest hand."""
    parties = (visible_parties(user, partie_list())
               .filter(club_key=CASUAL, status__in=[Partie.Status.INVITING,
                                                    Partie.Status.PLAYING])
               .prefetch_related(None).prefetch_related("seats__player", "invitations__player"))
    return _with_latest_hand(parties.order_by("-created_at", "-pk"))[:CASUAL_TABLES_SHOWN]


def day_bounds(day: datetime) -> tuple[datetime, datetime]:
    """The start and end of ``day``'s date in the current time zone (the club's)."""
    zone = timezone.get_current_timezone()
    start = datetime.combine(timezone.localtime(day, zone).date(), time(), tzinfo=zone)
    return start, start + timedelta(days=1)


def soirees_of_the_day(*, user: Any, at: datetime) -> QuerySet[Soiree]:
    """The soirées of ``user``'s clubs that take place on ``at``'s date (one that began the
    evening before and runs past midnight too), or are open still, earliest first."""
    start, end = day_bounds(at)
    return (soiree_list(user=user)
            .filter(Q(starts_at__lt=end, ends_at__gt=start) | Q(status=Soiree.Status.OPEN))
            .order_by("starts_at", "pk"))


def other_soirees(*, user: Any, at: datetime, limit: int = 20) -> QuerySet[Soiree]:
    """The other soirées of ``user``'s clubs, latest start first: those to come, then the
    past ones (their standings and settlement)."""
    day = soirees_of_the_day(user=user, at=at).values("pk")
    return soiree_list(user=user).exclude(pk__in=day)[:limit]


def seasons_of(*, user: Any, at: datetime) -> QuerySet[Season]:
    """The seasons of the user's clubs that have begun, the latest first."""
    today = timezone.localdate(at)
    return (Season.objects.filter(club__memberships__user=user, starts_on__lte=today)
            .select_related("club").distinct().order_by("-starts_on", "pk"))


def hands_found(*, user: Any, soiree: int | None = None, player: str = "", game: str = "",
                day: datetime | None = None, table: int | None = None,
                disputed: bool = False) -> QuerySet[Hand]:
    """The finished hands ``user`` may see, every hand of every partie, newest first, narrowed
    by soirée, table, a player's name, game, day, and whether it is disputed (the arbiter's
    search)."""
    hands = (Hand.objects.filter(status=Hand.Status.OVER,
                                 partie__in=visible_parties(user, Partie.objects.all()))
             .select_related("partie", "partie__created_by")
             .annotate(soiree_name=Subquery(SoireeTable.objects.filter(partie=OuterRef(
                 "partie")).values("soiree__name")[:1]),
                       table_number=Subquery(SoireeTable.objects.filter(partie=OuterRef(
                           "partie")).values("number")[:1]))
             .order_by("-ended_at", "-number"))
    if soiree is not None:
        hands = hands.filter(partie__soiree_table__soiree_id=soiree)
    if table is not None:
        hands = hands.filter(partie__soiree_table__number=table)
    if disputed:
        hands = hands.filter(disputes__isnull=False).distinct()
    if player:
        hands = hands.filter(partie__seats__player__username__iexact=player)
    if game:
        hands = hands.filter(partie__game=game)
    if day is not None:
        start, end = day_bounds(day)
        hands = hands.filter(ended_at__gte=start, ended_at__lt=end)
    return hands
