"""The organiser's pages: create and change a soirée, and run it at the door (registrations,
check-in, late arrivals, open and close, the seating to print).

Like the other pages they only read: every action is the page's script calling the soirée API
(tournaments/api/views.py), which checks the organiser's role again and answers its refusals
with a ``detail`` the page shows beside the action.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils import timezone
from django.utils.translation import gettext as _

from games.models import Game
from games.services import MAX_BUY_IN, MAX_HANDS
from tournaments.models import Season, Soiree
from tournaments.permissions import clubs_organised, may_create_soirees, may_organise
from tournaments.selectors import (
    announcements,
    opening_problems,
    registration_list,
    soiree_tables,
    stacks,
)

from .words import bot_levels


def tables_now(tables: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each table's latest partie, from ``soiree_tables``' rows (ordered by table, round)."""
    latest = {t["table"]: t for t in tables}
    return [latest[n] for n in sorted(latest)]

#: The new soirée's defaults: it starts at the next full hour and lasts this long.
DEFAULT_LENGTH = timedelta(hours=3)
#: The format of an ``<input type="datetime-local">``'s value.
LOCAL_INPUT = "%Y-%m-%dT%H:%M"


def _next_full_hour(at: datetime) -> datetime:
    local = timezone.localtime(at, timezone.get_current_timezone())
    return local.replace(minute=0, second=0, microsecond=0) + timedelta(hours=1)


@login_required
def soiree_new(request: HttpRequest) -> HttpResponse:
    """The form that creates a soirée in one of the clubs the user organises. Its times are
    the club's (its time_zone): the script sends them without an offset, and the API reads
    such a time in that zone."""
    if not may_create_soirees(request.user):
        raise PermissionDenied(_("only a club's organisers may create its soirées"))
    starts = _next_full_hour(timezone.now())
    clubs = clubs_organised(user=request.user)
    return render(request, "frontend/soiree_new.html", {
        "clubs": clubs,
        "seasons": Season.objects.filter(club__in=clubs).select_related("club"),
        "games": Game.choices,
        "starts": starts.strftime(LOCAL_INPUT),
        "ends": (starts + DEFAULT_LENGTH).strftime(LOCAL_INPUT),
        "move_timeout": 30, "buy_in": 50, "deals": "", "bots_allowed": True,
        "bot_kind": "heuristic", "bot_levels": bot_levels(),
        "max_buy_in": MAX_BUY_IN,
        "max_hands": MAX_HANDS,
        "time_zone": settings.TIME_ZONE,
    })


@login_required
def soiree_edit(request: HttpRequest, soiree_id: int) -> HttpResponse:
    """The same form, filled with a soirée not yet open; the script sends only a PATCH of it."""
    soiree = get_object_or_404(Soiree.objects.select_related("club"), pk=soiree_id)
    if not may_organise(request.user, soiree.club_id):
        raise PermissionDenied(_("only the club's organisers may change this soirée"))
    zone = soiree.club.zone()
    return render(request, "frontend/soiree_new.html", {
        "soiree": soiree,
        "editable": soiree.status == Soiree.Status.SCHEDULED,
        "seasons": Season.objects.filter(club=soiree.club).select_related("club"),
        "games": Game.choices,
        "starts": timezone.localtime(soiree.starts_at, zone).strftime(LOCAL_INPUT),
        "ends": timezone.localtime(soiree.ends_at, zone).strftime(LOCAL_INPUT),
        "move_timeout": f"{soiree.move_timeout.total_seconds():g}",
        "buy_in": soiree.buy_in, "deals": soiree.deals_per_partie or "",
        "bots_allowed": soiree.bots_allowed,
        "bot_kind": soiree.bot_kind, "bot_levels": bot_levels(),
        "max_buy_in": MAX_BUY_IN,
        "max_hands": MAX_HANDS,
        "time_zone": soiree.club.time_zone,
    })


@login_required
def soiree_manage(request: HttpRequest, soiree_id: int) -> HttpResponse:
    """The soirée at the door: its facts, who registered and who is checked in, the actions,
    and once open the seating with the seed it was drawn from."""
    soiree = get_object_or_404(Soiree.objects.select_related("club"), pk=soiree_id)
    if not may_organise(request.user, soiree.club_id):
        raise PermissionDenied(_("only the club's organisers may run this soirée"))
    registrations = list(registration_list(soiree=soiree))
    chips = stacks(soiree=soiree)
    for r in registrations:
        r.chips = chips.get(r.user_id)  # type: ignore[attr-defined]
    tables = soiree_tables(soiree=soiree)
    checked_in = sum(1 for r in registrations if r.checked_in_at)
    scheduled = soiree.status == Soiree.Status.SCHEDULED
    return render(request, "frontend/soiree_manage.html", {
        "soiree": soiree,
        "registrations": registrations,
        "checked_in": checked_in,
        # Not cancelled nor closed: people may still be checked in, and chips move.
        "live": soiree.status in (Soiree.Status.SCHEDULED, Soiree.Status.OPEN),
        # It does not open while nobody is checked in (services.soiree_open): say so.
        "waiting": scheduled and not checked_in,
        # Checked in, but it would not open as it stands: why, for whom, and the fix.
        "problems": opening_problems(soiree=soiree),
        "started": soiree.starts_at <= timezone.now(),
        "move_timeout": soiree.move_timeout.total_seconds(),
        "tables": tables if soiree.status != Soiree.Status.SCHEDULED else [],
        "tables_now": [t for t in tables_now(tables) if t["status"] == "playing"],
        "announcements": announcements(soiree=soiree),
        "time_zone": soiree.club.time_zone,
    })
