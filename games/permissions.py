"""Who may see a partie and its hands.

A club's parties (``club_key`` is the club's slug) are seen by the club's members, staff and
superusers; a casual partie by its creator, its invited and seated players (and staff). Games
knows no club: which club keys a user belongs to is asked of a hook named in settings
(``ACADEMIE_PARTIE_VIEWERS``, a dotted path to ``f(user) -> iterable of club keys``), so
that games imports no other app.
A seated player always sees his own partie, whatever the hook says.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from django.conf import settings
from django.db.models import Q, QuerySet
from django.utils.module_loading import import_string

from games.models import Invitation, Partie, Seat


def _club_keys_hook() -> Callable[[Any], Iterable[str]]:
    path = getattr(settings, "ACADEMIE_PARTIE_VIEWERS", "")
    if not path:
        return lambda user: ()
    hook: Callable[[Any], Iterable[str]] = import_string(path)
    return hook


def sees_all(user: Any) -> bool:
    return bool(user.is_authenticated and (user.is_staff or user.is_superuser))


def visible_parties(user: Any, parties: QuerySet[Partie] | None = None) -> QuerySet[Partie]:
    """``parties`` (all by default) narrowed to those ``user`` may see."""
    qs = Partie.objects.all() if parties is None else parties
    if sees_all(user):
        return qs
    if not user.is_authenticated:
        return qs.none()
    keys = [k for k in _club_keys_hook()(user) if k != "casual"]
    seated = Seat.objects.filter(player_id=user.pk).values("partie_id")
    invited = Invitation.objects.filter(player_id=user.pk).values("partie_id")
    return qs.filter(Q(club_key__in=keys) | Q(pk__in=seated) | Q(pk__in=invited)
                     | Q(created_by_id=user.pk))


def may_view(user: Any, partie: Partie) -> bool:
    if sees_all(user):
        return True
    if not user.is_authenticated:
        return False
    if (partie.created_by_id == user.pk
            or Seat.objects.filter(partie_id=partie.pk, player_id=user.pk).exists()
            or Invitation.objects.filter(partie_id=partie.pk, player_id=user.pk).exists()):
        return True
    return partie.club_key != "casual" and partie.club_key in set(_club_keys_hook()(user))
