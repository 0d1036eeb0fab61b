"""The club calendar: each member's private iCal feed of his club's soirées.

A calendar app cannot sign in, so the feed's address carries a secret of its own, one per
member and club. It lives on the member's first membership row of the club (the lowest pk: a
member may hold several roles, and the feed must not change with the role he is shown as);
revoking it puts a new secret there, and the old address then finds no row.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from datetime import datetime, timedelta

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import QuerySet
from django.utils.translation import gettext as _
from icalendar import Calendar, Event, Timezone

from .errors import NotMember
from .models import Club, Membership, Soiree

PRODID = "-//Académie//Club calendar//FR"
#: How often a calendar app is asked to fetch the feed again.
REFRESH = timedelta(hours=1)


def _memberships(*, club: Club, user: AbstractBaseUser) -> QuerySet[Membership]:
    """The member's rows in the club, the first (the one holding the secret) first."""
    return Membership.objects.filter(club=club, user_id=user.pk).order_by("pk")


def calendar_token_get(*, club: Club, user: AbstractBaseUser) -> str:
    """The member's feed secret for ``club``, made on first use. NotMember if he is none."""
    row = _memberships(club=club, user=user).first()
    if row is None:
        raise NotMember(_("%(user)s is not a member of %(club)s")
                        % {"user": user, "club": club})
    if row.calendar_token:
        return row.calendar_token
    with transaction.atomic():
        # Locked and read again: two first requests at once (the lobby open in two tabs) must
        # hand out the same secret, not each one of their own with the later one winning.
        row = _memberships(club=club, user=user).select_for_update(no_key=True).first()
        if row is None:
            raise NotMember(_("%(user)s is not a member of %(club)s")
                        % {"user": user, "club": club})
        if not row.calendar_token:
            row.calendar_token = secrets.token_urlsafe(32)
            row.save(update_fields=["calendar_token"])
        return row.calendar_token


def calendar_token_revoke(*, club: Club, user: AbstractBaseUser) -> str:
    """Replace the member's feed secret for ``club``: the old address answers 404 from now on.
    Returns the new one."""
    with transaction.atomic():
        row = _memberships(club=club, user=user).select_for_update(no_key=True).first()
        if row is None:
            raise NotMember(_("%(user)s is not a member of %(club)s")
                        % {"user": user, "club": club})
        row.calendar_token = secrets.token_urlsafe(32)
        row.save(update_fields=["calendar_token"])
        return row.calendar_token


def calendar_club(*, token: str) -> Club | None:
    """The club whose feed ``token`` opens, or None (unknown, revoked, or its member's account
    is deactivated: a member who is shut out loses his feed with his sign-in)."""
    row = (Membership.objects.filter(calendar_token=token, user__is_active=True)
           .select_related("club").first())
    return row.club if row is not None else None


def calendar_clubs(*, user: AbstractBaseUser) -> QuerySet[Club]:
    """The clubs ``user`` is a member of, in any role, by name: one feed each."""
    return Club.objects.filter(memberships__user_id=user.pk).distinct().order_by("name", "pk")


def calendar_feed(*, club: Club, soiree_url: Callable[[Soiree], str], at: datetime) -> bytes:
    """The club's soirées as an iCalendar file, their times in the club's time zone (with its
    VTIMEZONE, for the apps that do not know the zone by name). ``soiree_url`` gives each
    soirée's page; ``at`` is the feed's DTSTAMP."""
    zone = club.zone()
    soirees = list(club.soirees.order_by("starts_at", "pk"))
    calendar = Calendar.new(prodid=PRODID, uid=f"club-{club.pk}@academie", name=club.name,
                            refresh_interval=REFRESH)
    calendar.add("X-WR-TIMEZONE", club.time_zone)
    calendar.add("X-PUBLISHED-TTL", REFRESH)
    first = min((s.starts_at for s in soirees), default=at).astimezone(zone).date()
    last = max((s.ends_at for s in soirees), default=at).astimezone(zone).date()
    calendar.add_component(Timezone.from_tzid(club.time_zone, first_date=first - timedelta(
        days=1), last_date=last + timedelta(days=1)))
    for soiree in soirees:
        calendar.add_component(Event.new(
            uid=f"soiree-{soiree.pk}@academie",
            start=soiree.starts_at.astimezone(zone), end=soiree.ends_at.astimezone(zone),
            summary=f"{soiree.name} · {soiree.get_game_display()}",
            url=soiree_url(soiree), stamp=at))
    ical: bytes = calendar.to_ical()
    return ical
