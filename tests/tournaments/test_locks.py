"""The clock's lock on a soirée lets the other commands of that soirée commit.

Every row lock of the project is ``FOR NO KEY UPDATE`` (docs/ARCHITECTURE.md, the command
flow): a ``FOR UPDATE`` lock also blocks the foreign-key checks PostgreSQL runs when another
transaction commits. The soirée clock, holding its soirée's row while it started a table, and
a hand ending at another of its tables (its standings row inserted, which names the soirée, and
the standings' read model locked) each waited for the other, and PostgreSQL broke the deadlock
by failing one of them. Here the clock is held inside its tick, and a transaction of that
soirée inserts a row that names it and commits: it must not wait for the clock.
"""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection, transaction
from django.utils import timezone

from tournaments import services
from tournaments.models import Soiree, SoireeStanding
from tournaments.services import soirees

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def test_a_command_of_the_soiree_commits_while_the_clock_holds_the_soiree(
        club: Any, members: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    now = timezone.now()
    soiree = services.soiree_create(club=club, name="Jeudi", game="comet", starts_at=now,
                                    ends_at=now + timedelta(hours=2), bot_kind="heuristic")
    (alice, bruno) = members(2)
    services.checkin(soiree=soiree, user=alice, at=now)
    services.soiree_open(soiree=soiree, at=now)
    holding, release = threading.Event(), threading.Event()

    def seat_slowly(*args: Any, **kwargs: Any) -> Any:
        holding.set()  # the tick holds the soirée's row from here
        assert release.wait(30)
        return ([], False)

    monkeypatch.setattr(soirees, "_seat_next_parties", seat_slowly)

    def tick() -> None:
        try:
            soirees.soiree_tick(soiree=Soiree.objects.get(pk=soiree.pk), at=now)
        finally:
            connection.close()

    clock = threading.Thread(target=tick)
    clock.start()
    try:
        assert holding.wait(30)
        committed = threading.Event()

        def insert() -> None:
            try:
                with transaction.atomic():
                    with connection.cursor() as cursor:
                        cursor.execute("SET LOCAL lock_timeout = '5s'")
                    SoireeStanding.objects.create(soiree_id=soiree.pk, player=bruno)
                committed.set()
            finally:
                connection.close()

        other = threading.Thread(target=insert)
        other.start()
        other.join(30)
        assert committed.is_set(), "the commit waited for the clock's lock on the soirée"
    finally:
        release.set()
        clock.join(30)
