"""A soirée runs by itself on the real timers: PostgreSQL, Redis, a Celery worker and beat.

Nobody at these tables ever moves in time (bots of kind "timeout", and checked-in people who
never play), so every decision waits for its deadline, one second, and the Celery task (or the
beat's sweeper) plays its time-out move. The beat's soirée clock opens the evening at its start
time, starts the next partie of a table while time remains, and closes the soirée once every
table is done.

What these tests assert is order and cause (opened by a tick after its start, no time-out before
its deadline nor twice, the sweeper playing what a dead worker left), never how fast this
machine is: they pass on a loaded machine. Their waits are hang guards, generous on purpose.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from django.core.management import call_command
from django.utils import timezone

from games.models import Hand, Partie
from ledger import selectors as ledger_selectors
from ledger.models import Account
from tournaments import selectors, services
from tournaments.models import Soiree, SoireeTable

from .conftest import (
    nets_by_player,
    playing_hands,
    soiree_parties,
    timeline,
    wait_for,
)

pytestmark = [pytest.mark.postgres, pytest.mark.redis,
              pytest.mark.django_db(transaction=True)]

TIMEOUT = timedelta(seconds=1)
#: How long any one wait may last before the test calls it a hang (seconds of machine time).
HANG = 180


def _evening(club: Any, *, starts_in: float, lasts: float, deals: int | None) -> Soiree:
    starts_at = timezone.now() + timedelta(seconds=starts_in)
    return services.soiree_create(
        club=club, name="Soirée des automates", starts_at=starts_at,
        ends_at=starts_at + timedelta(seconds=lasts), game="commere",
        options={"max_turns": 1},  # a hand of seven time-outs lasts 0 to 14 s
        buy_in=50, move_timeout=TIMEOUT, pause_between_hands=timedelta(seconds=0.3),
        forced_move_delay=timedelta(0), comet_window=timedelta(0), deals_per_partie=deals,
        bots_allowed=True, min_tables=2, bot_kind="timeout",
    )


def _ticks(log: str) -> list[int]:
    """What each soirée clock task that ran returned: the steps it took."""
    return [int(n) for n in re.findall(
        r"tournaments\.tasks\.soiree_clock\[[^\]]+\] succeeded in \S+: (\d+)", log)]


def _clock_running(rig: Any) -> None:
    """Wait until the beat's soirée clock has run on a worker: an evening created after that
    opens on one of the next ticks, however long the processes took to start."""
    wait_for(lambda: _ticks(rig.logs()), timeout=HANG, what="the soirée clock's first tick",
             explain=rig.tails)


def _closed(soiree: Soiree) -> bool:
    soiree.refresh_from_db()
    return soiree.status == Soiree.Status.CLOSED


def _state(soiree: Soiree) -> str:
    soiree.refresh_from_db()
    hands = Hand.objects.filter(partie__soiree_table__soiree=soiree)
    now = timezone.now()
    return (f"soirée {soiree.status}, now {now:%H:%M:%S.%f}, ends {soiree.ends_at:%H:%M:%S.%f}; "
            f"{hands.count()} hand(s), playing: "
            + ", ".join(f"#{h.number} seq {h.last_seq} deadline {h.deadline:%H:%M:%S.%f}"
                        for h in hands.filter(status=Hand.Status.PLAYING) if h.deadline))


def _assert_books_and_standings(soiree: Soiree) -> None:
    """The standings and settlement stored with the soirée are what the ledger says; every
    hand record verifies and the books balance."""
    settle = ledger_selectors.settlement(club_key=soiree.club.slug, since=soiree.opened_at,
                                         until=soiree.closed_at + timedelta(seconds=1))
    ledger_nets = nets_by_player(settle)
    assert [n for n in settle.nets if not n.account.owner_id] == [], "a pot was not shared out"
    assert ledger_nets, "no chips changed hands all evening"
    everyone = soiree.standings["players"] + soiree.standings["bots"]
    standings = {row["player"]: row["net"] for row in everyone}
    assert {p: n for p, n in standings.items() if n} == ledger_nets
    assert sum(standings.values()) == 0
    # The settlement's parties: the people, and the club for its bots.
    stored = {row["player"]: row["net"] for row in soiree.settlement["nets"]}
    assert stored == selectors.party_nets(soiree.standings)
    assert set(stored) <= {r["player"] for r in soiree.standings["players"]} | {selectors.CLUB}
    # Every player's wallets hold his buy-ins plus his net for the evening: a person's one
    # wallet his check-in's, a bot's wallet at each table the buy-in it was staked there.
    for row in everyone:
        wallets = Account.objects.filter(club_key=soiree.club.slug, kind="wallet",
                                         owner__username=row["player"])
        held = sum(w.balance for w in wallets)
        assert held == soiree.buy_in * len(wallets) + row["net"], row
    call_command("verify_hands", "--quiet")
    call_command("check_books")


def test_an_evening_of_time_outs_runs_from_opening_to_closing_by_itself(
        celery_rig, club, members):
    celery_rig.start_worker(pool="prefork", concurrency=2)
    celery_rig.start_beat()
    _clock_running(celery_rig)
    soiree = _evening(club, starts_in=1.5, lasts=8, deals=1)
    people = members(2, prefix="absent")
    for user in people:  # checked in, never at the table: the service plays for them
        services.checkin(soiree=soiree, user=user, at=timezone.now())

    wait_for(lambda: _closed(soiree), timeout=HANG, what="the soirée closing by itself",
             explain=lambda: _state(soiree) + "\n" + celery_rig.tails())

    # Opened by a tick of the clock (a task that took a step), never before its start time,
    # and while the evening still ran. How soon after the start is the machine's speed (one
    # period when idle, seconds when loaded), not what this test is about.
    assert soiree.starts_at <= soiree.opened_at < soiree.ends_at
    assert any(_ticks(celery_rig.logs())), celery_rig.tails()
    tables = SoireeTable.objects.filter(soiree=soiree)
    assert {t.number for t in tables} == {1, 2}
    parties = soiree_parties(soiree)
    assert not Partie.objects.filter(pk__in=parties, status=Partie.Status.PLAYING).exists()
    assert not playing_hands(soiree).exists()
    hands = Hand.objects.filter(partie__in=parties)
    seated = {s.player.username for t in tables for s in t.partie.seats.all()}
    assert {u.username for u in people} <= seated

    # Every time-out fired once, never before its deadline (``problems``); how long after it is
    # the machine's speed. The evening closed with no hand left waiting (above).
    line = timeline(parties)
    assert line.problems(timeout=TIMEOUT) == []
    assert line.answers, "no decision ever timed out"
    # No hand was dealt after the closing time; the hands in progress then finished.
    for hand_id, batches in line.batches.items():
        assert batches[0].at < soiree.ends_at, f"hand {hand_id} dealt after the closing time"
    assert hands.count() == len(line.batches) >= 2
    assert soiree.closed_at >= max(h.ended_at for h in hands)

    _assert_books_and_standings(soiree)
    assert "Traceback" not in celery_rig.logs(), celery_rig.tails()


def _sweeps_that_fired(log: str) -> int:
    return sum(int(n) for n in re.findall(r"sweep_deadlines\[[^\]]+\] succeeded in \S+: (\d+)",
                                          log))


def test_a_worker_killed_mid_evening_is_replaced_and_the_sweeper_recovers_its_deadlines(
        celery_rig, club, members):
    celery_rig.start_worker("worker-1")
    celery_rig.start_beat()
    _clock_running(celery_rig)
    soiree = _evening(club, starts_in=1.0, lasts=12, deals=None)
    # Somebody has arrived: a soirée nobody is checked in at does not open.
    services.checkin(soiree=soiree, user=members(1)[0], at=timezone.now())

    # The evening is under way on the first worker, both tables in the middle of a hand...
    parties = wait_for(lambda: soiree_parties(soiree), timeout=HANG, what="the soirée opening",
                       explain=celery_rig.tails)
    wait_for(lambda: len(timeline(parties).answers) >= 4
             and playing_hands(soiree).filter(deadline__isnull=False).count() == 2,
             timeout=HANG, what="four time-outs on the first worker, two hands in progress",
             interval=0.05, explain=lambda: _state(soiree) + "\n" + celery_rig.tails())
    # ... when it dies without a word: the deadline tasks it had taken die with it (acks late,
    # but Redis gives unacknowledged messages back only after its visibility timeout, an hour).
    celery_rig.kill("worker-1")
    killed = timezone.now()
    wait_for(lambda: playing_hands(soiree).filter(
        deadline__lt=timezone.now() - 2 * TIMEOUT).exists(), timeout=HANG,
        what="a hand waiting two time-outs past its deadline while no worker runs",
        explain=lambda: _state(soiree))
    before_restart = timezone.now()
    celery_rig.start_worker("worker-2")

    wait_for(lambda: _closed(soiree), timeout=HANG, what="the soirée closing after the restart",
             explain=lambda: _state(soiree) + "\n" + celery_rig.tails())

    parties = soiree_parties(soiree)
    line = timeline(parties)
    assert line.problems(timeout=TIMEOUT) == []  # none before its deadline, none twice
    assert not playing_hands(soiree).exists()
    # Deadlines fell while no worker ran, and were played once one did: by the new worker,
    # whose sweeper found them overdue (the dead worker's tasks died with it). How soon after
    # its start is the machine's speed, not what this test is about.
    recovered = [a for a in line.answers if killed <= a.at and a.deadline < before_restart]
    assert recovered, "no deadline fell while the worker was dead"
    assert all(a.at >= before_restart for a in recovered), recovered
    assert _sweeps_that_fired(celery_rig.log("worker-2")) >= 1, celery_rig.tails()
    _assert_books_and_standings(soiree)
