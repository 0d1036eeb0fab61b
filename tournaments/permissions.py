"""Who may do what in a club: the one place the API, the pages, the admin and the services
ask. Staff and superusers see and run every club (``sees_all``, the same rule as who sees every
partie in ``games.permissions``); otherwise a member's role in the club decides."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import QuerySet

from games.permissions import sees_all

from .models import Club, Membership

User = AbstractBaseUser | AnonymousUser

__all__ = ["sees_all", "has_role", "is_member", "may_organise", "may_audit",
           "is_club_organiser", "clubs_organised", "may_create_soirees"]


def has_role(user: User, club_id: Any, *roles: str) -> bool:
    """Whether ``user`` is a member of the club in one of ``roles`` (any role if none)."""
    if not user.is_authenticated:
        return False
    memberships = Membership.objects.filter(club_id=club_id, user_id=user.pk)
    return (memberships.filter(role__in=roles) if roles else memberships).exists()


def is_member(user: User, club_id: Any) -> bool:
    """Who sees a club's soirées, seasons and hands: its members in any role, and staff."""
    return sees_all(user) or has_role(user, club_id)


def may_organise(user: User, club_id: Any) -> bool:
    """Who runs the club's soirées: its organisers, and staff."""
    return sees_all(user) or has_role(user, club_id, Membership.Role.ORGANISER)


def may_audit(user: User, club_id: Any) -> bool:
    """Who rules on the club's disputes (on hands he did not play): its auditors, and staff."""
    return sees_all(user) or has_role(user, club_id, Membership.Role.AUDITOR)


def is_club_organiser(user: AbstractBaseUser, club_key: str) -> bool:
    """The ledger's question (``ledger.permissions``), by the club's slug: an organiser's role."""
    return Membership.objects.filter(club__slug=club_key, user_id=user.pk,
                                     role=Membership.Role.ORGANISER).exists()


def clubs_organised(*, user: User) -> QuerySet[Club]:
    """The clubs whose soirées ``user`` may create and run (every club for staff), by name."""
    clubs = Club.objects.order_by("name", "pk")
    if sees_all(user):
        return clubs
    return clubs.filter(memberships__user_id=user.pk,
                        memberships__role=Membership.Role.ORGANISER).distinct()


def may_create_soirees(user: User) -> bool:
    """Staff, and the organisers of a club (the lobby links the form for them)."""
    return sees_all(user) or clubs_organised(user=user).exists()
