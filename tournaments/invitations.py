"""Invitations to a club: an organiser makes a link, one person joins the club with it.

The link carries a random secret; the table keeps only its SHA-256 (``Invitation.token_hash``).
A link is good once and until it expires: using it is done under the invitation's row lock,
so two sign-ups racing on one link make one member, and the other is told the link was used.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from .errors import TournamentError
from .models import Club, Invitation, Membership

#: How long a link is good for.
INVITATION_LIFETIME = timedelta(days=7)


class InvitationInvalid(TournamentError):
    """The link is unknown (mistyped or forged), used already, or expired: ``reason`` says
    which (``unknown``, ``used``, ``expired``)."""

    status = 410
    code = "invitation_invalid"

    def __init__(self, reason: str) -> None:
        super().__init__(f"this invitation link is {reason}")
        self.reason = reason


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


def invitation_create(*, club: Club, by: AbstractBaseUser, at: datetime, email: str = "",
                      role: str = Membership.Role.PLAYER) -> tuple[Invitation, str]:
    """A new invitation to ``club`` and its secret, which only the returned value holds."""
    token = secrets.token_urlsafe(32)
    invitation = Invitation.objects.create(
        club=club, role=role, token_hash=_digest(token), email=email, created_by=by,
        created_at=at, expires_at=at + INVITATION_LIFETIME)
    return invitation, token


def invitation_get(*, token: str, at: datetime, lock: bool = False) -> Invitation:
    """The invitation of ``token`` if it may still be used; InvitationInvalid otherwise."""
    rows = Invitation.objects.select_related("club")
    if lock:
        rows = rows.select_for_update(of=("self",), no_key=True)
    invitation = rows.filter(token_hash=_digest(token)).first()
    if invitation is None:
        raise InvitationInvalid("unknown")
    if invitation.used_at is not None:
        raise InvitationInvalid("used")
    if invitation.expires_at <= at:
        raise InvitationInvalid("expired")
    return invitation


def invitation_accept(*, token: str, at: datetime,
                      user: AbstractBaseUser | None = None,
                      make_user: Any = None) -> AbstractBaseUser:
    """Use the link: its person becomes a member of the club, in one transaction.

    Either ``user`` (one signed in already) joins, or ``make_user()`` is called under the lock
    and the account it saves joins (a sign-up: a used link then creates no account). Refused
    with InvitationInvalid, and nothing done, if the link may not be used.
    """
    with transaction.atomic():
        invitation = invitation_get(token=token, at=at, lock=True)
        if user is None:
            user = make_user()
        assert user is not None
        Membership.objects.get_or_create(club=invitation.club, user=user, role=invitation.role)
        invitation.used_at, invitation.used_by = at, user
        invitation.save(update_fields=["used_at", "used_by"])
        return user


def invitations_pending(*, club: Club, at: datetime) -> list[Invitation]:
    """The club's links not used and not expired, newest first."""
    return list(Invitation.objects.filter(club=club, used_at__isnull=True, expires_at__gt=at)
                .select_related("created_by"))
