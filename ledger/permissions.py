"""Who may read a club's books: the one place that decides it, so that it can be swapped.

For now a user is an organiser of a club if he is an active staff member, or belongs to the
Django auth group named ``organisers:<club_key>`` (``organiser_group_name``). The tournaments
app, which knows clubs and memberships, adds its own rule with ``register_organiser_check``
(from its AppConfig.ready), so that the ledger never imports it.
"""

from __future__ import annotations

from collections.abc import Callable

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

OrganiserCheck = Callable[[AbstractBaseUser, str], bool]

_extra_checks: list[OrganiserCheck] = []


def organiser_group_name(club_key: str) -> str:
    return f"organisers:{club_key}"


def register_organiser_check(check: OrganiserCheck) -> None:
    """Add a rule that may make a user an organiser of a club (e.g. a membership role)."""
    if check not in _extra_checks:
        _extra_checks.append(check)


def is_organiser(user: AbstractBaseUser | AnonymousUser, club_key: str) -> bool:
    if not user.is_authenticated or not user.is_active:
        return False
    if getattr(user, "is_staff", False):
        return True
    groups = getattr(user, "groups", None)
    if groups is not None and groups.filter(name=organiser_group_name(club_key)).exists():
        return True
    return any(check(user, club_key) for check in _extra_checks)
