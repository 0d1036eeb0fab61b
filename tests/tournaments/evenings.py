"""A room of open soirées, built through the services, for the clock's tests and its bench.

``open_evenings(soirees=100, tables=5)`` leaves that many soirées open, each with that many
tables in play: one person checked in and bots of kind "timeout" (they never move, so nothing
changes until the deadlines pass). Nothing of it is faked: each soirée is opened by
``soiree_open`` as the clock opens it, so a tick reads what it would read in a real room.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.utils import timezone

from tournaments import services
from tournaments.models import Club, Soiree, SoireeTable


def open_evenings(*, soirees: int, tables: int, club: Club | None = None,
                  at: datetime | None = None, prefix: str = "room") -> list[Soiree]:
    """``soirees`` open soirées of ``tables`` Comet tables each, opened at ``at`` (now by
    default), started a minute before it and ending two hours after it."""
    at = at or timezone.now()
    users = get_user_model().objects
    if club is None:
        owner = users.create_user(f"{prefix}-owner")
        club = services.club_create(name=f"Cercle {prefix}", slug=f"{prefix}-club",
                                    organiser=owner)
    out = []
    for i in range(soirees):
        soiree = services.soiree_create(
            club=club, name=f"{prefix} {i + 1}", starts_at=at - timedelta(minutes=1),
            ends_at=at + timedelta(hours=2), game="comet", bot_kind="timeout",
            min_tables=tables, move_timeout=timedelta(minutes=5))
        person = users.create_user(f"{prefix}-{i + 1}")
        services.membership_add(club=club, user=person, role="player")
        services.checkin(soiree=soiree, user=person, at=at)
        services.soiree_open(soiree=soiree, at=at)
        out.append(soiree)
    return out


def one_table(*, club: Club, player: Any, name: str, at: datetime | None = None) -> SoireeTable:
    """A Comet soirée of ``club`` opened at ``at`` (now by default) for two hours, with
    ``player`` checked in and seated at its one table (bots fill it; 5 min a decision)."""
    at = at or timezone.now()
    soiree = services.soiree_create(club=club, name=name, starts_at=at,
                                    ends_at=at + timedelta(hours=2), game="comet",
                                    move_timeout=timedelta(minutes=5))
    services.checkin(soiree=soiree, user=player, at=at)
    (place,) = services.soiree_open(soiree=soiree, at=at)
    return place
