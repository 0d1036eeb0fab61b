"""The web pages: lobby, soirée (live tables and standings), table (play), audit replay.

Pages are thin: they render a shell and read everything through the same API as any client,
so that a page can never show more than the API lets the viewer see.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils import timezone

from games.engine.registry import get_game
from games.models import Game, Hand
from games.permissions import may_view
from games.selectors import invitations_pending, seat_of
from games.services.invitations import casual_max_buy_in
from tournaments.models import Membership, Soiree
from tournaments.selectors import has_role

from . import selectors as lobby_reads


@login_required
def lobby(request: HttpRequest) -> HttpResponse:
    """Where the user sits now, the casual tables waiting for his answer, the day's soirées of
    his clubs, the casual tables he may watch, and the form that makes one (its script posts
    to the API, as any client would)."""
    user, now = request.user, timezone.now()
    return render(request, "frontend/lobby.html", {
        "tables_now": lobby_reads.tables_now(user=user),
        "invitations": invitations_pending(user=user),
        "soirees": lobby_reads.soirees_of_the_day(user=user, at=now),
        "other_soirees": lobby_reads.other_soirees(user=user, at=now),
        "casual_tables": lobby_reads.casual_tables(user=user),
        "games": Game.choices,
        "max_bots": max(get_game(game).MAX_SEATS for game in Game.values) - 1,
        "max_buy_in": casual_max_buy_in(),
        "time_zone": settings.TIME_ZONE,
    })


@login_required
def soiree_page(request: HttpRequest, soiree_id: int) -> HttpResponse:
    soiree = get_object_or_404(Soiree, pk=soiree_id)
    if not (request.user.is_staff or request.user.is_superuser
            or has_role(request.user, soiree.club_id, *Membership.Role.values)):
        raise PermissionDenied("only the club's members may see this soirée")
    return render(request, "frontend/soiree.html", {"soiree": soiree})


@login_required
def table_page(request: HttpRequest, hand_id: str) -> HttpResponse:
    hand = get_object_or_404(Hand.objects.select_related("partie"), pk=hand_id)
    if not may_view(request.user, hand.partie):
        raise PermissionDenied("only the club's members, or a casual table's players, may "
                               "see this hand")
    # A seated viewer follows his seat's frames (his cards), anyone else the public ones.
    seat = seat_of(hand, request.user)
    live_path = (f"/ws/parties/{hand.partie_id}/" if seat is None
                 else f"/ws/parties/{hand.partie_id}/seats/{seat}/")
    return render(request, "frontend/table.html", {"hand": hand, "live_path": live_path})


@login_required
def audit_page(request: HttpRequest, hand_id: str) -> HttpResponse:
    hand = get_object_or_404(Hand.objects.select_related("partie"), pk=hand_id)
    if not may_view(request.user, hand.partie):
        raise PermissionDenied("only the club's members, or a casual table's players, may "
                               "see this hand")
    return render(request, "frontend/audit.html", {"hand": hand})
