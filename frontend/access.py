"""Who may open a page: one check per kind of thing shown, shared by the pages. A hand is seen
as games.permissions says; a soirée and a season by its club's members and staff."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext as _

from games.models import Hand
from games.permissions import may_view
from tournaments.models import Season, Soiree
from tournaments.permissions import is_member


def viewable_hand(request: HttpRequest, hand_id: Any, *related: str) -> Hand:
    """The hand, with its partie (and ``related``), if the requester may see it."""
    hand = get_object_or_404(Hand.objects.select_related("partie", *related), pk=hand_id)
    if not may_view(request.user, hand.partie):
        raise PermissionDenied(_("only the club's members, or a casual table's players, may "
                                 "see this hand"))
    return hand


def viewable_soiree(request: HttpRequest, soiree_id: int) -> Soiree:
    """The soirée, with its club, if the requester is one of the club's members (or staff)."""
    soiree = get_object_or_404(Soiree.objects.select_related("club"), pk=soiree_id)
    if not is_member(request.user, soiree.club_id):
        raise PermissionDenied(_("only the club's members may see this soirée"))
    return soiree


def viewable_season(request: HttpRequest, season_id: int) -> Season:
    """The season, with its club, if the requester is one of the club's members (or staff)."""
    season = get_object_or_404(Season.objects.select_related("club"), pk=season_id)
    if not is_member(request.user, season.club_id):
        raise PermissionDenied(_("only the club's members may see this season"))
    return season
