"""A late or duplicated timer task does nothing.

Each timer re-checks, in a transaction under the hand's (or partie's, or soirée's) row lock,
that what it was scheduled for is still pending and due; a task that comes early, twice, late
for a decision already played, or for a finished hand changes nothing. The first tests call the
tasks directly on a stopped clock (both databases); the last one sends duplicated and stale
deadline tasks through Redis to a real worker whose two processes race for them, and asserts
what they did (one played, the others nothing), never how fast: it passes on a loaded machine.
"""

from __future__ import annotations

import re
import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from games.models import Hand, HandEvent, Partie
from games.services import partie_close, partie_start
from games.tasks import deal_next_hand, fire_deadline, sweep_deadlines
from tournaments import services
from tournaments.errors import SoireeState
from tournaments.models import Soiree, SoireeTable
from tournaments.tasks import soiree_clock

from .conftest import START, timeline, wait_for

TIMEOUT = timedelta(seconds=1)
PAUSE = timedelta(seconds=5)


def _bots_partie(*, deals: int = 2) -> Partie:
    """Three time-out bots at Comet: every hand waits for eleven or more deadlines."""
    return partie_start(game="comet", players=[], bots=["timeout"] * 3,
                        options={"deals": deals}, buy_in=50, move_timeout=TIMEOUT,
                        forced_move_delay=timedelta(0), comet_window=timedelta(0),
                        pause_between_hands=PAUSE, at=timezone.now())


def _hand(partie: Partie) -> Hand:
    return partie.hands.order_by("-number").first()


def _events(hand: Hand) -> int:
    return HandEvent.objects.filter(hand=hand).count()


@pytest.mark.django_db
def test_a_deadline_task_early_twice_late_or_for_nothing_does_nothing(clock):
    hand = _hand(_bots_partie())
    seq, deadline = hand.deadline_seq, hand.deadline
    assert seq == hand.last_seq and deadline == START + TIMEOUT
    before = _events(hand)

    clock.move_to(deadline - timedelta(milliseconds=1))
    assert fire_deadline(str(hand.id), seq) is False  # early: the player still has time
    assert _events(hand) == before

    clock.move_to(deadline)
    assert fire_deadline(str(hand.id), seq) is True
    hand.refresh_from_db()
    after = _events(hand)
    assert after > before and hand.last_seq > seq
    assert HandEvent.objects.filter(hand=hand, seq=seq + 1, by="timeout").exists()

    assert fire_deadline(str(hand.id), seq) is False  # the same task delivered twice
    # Late: the next decision is overdue too, but a task for the old one must not play it.
    clock.shift(10)
    assert hand.deadline < timezone.now()
    assert fire_deadline(str(hand.id), seq) is False
    assert fire_deadline(str(uuid.uuid4()), seq) is False  # a hand that does not exist
    assert _events(hand) == after
    # Only the task for the pending decision plays it.
    assert fire_deadline(str(hand.id), hand.deadline_seq) is True


@pytest.mark.django_db
def test_the_timers_of_a_finished_hand_or_partie_do_nothing(clock):
    partie = _bots_partie(deals=1)
    hand = _hand(partie)
    seqs = []
    while hand.status == Hand.Status.PLAYING:
        clock.move_to(hand.deadline)
        seqs.append(hand.deadline_seq)
        assert fire_deadline(str(hand.id), hand.deadline_seq) is True
        hand.refresh_from_db()
    events = _events(hand)
    clock.shift(60)
    assert not any(fire_deadline(str(hand.id), s) for s in seqs + [hand.last_seq])
    assert _events(hand) == events
    assert deal_next_hand(str(partie.pk)) is False  # the agreed hand was played: it closes
    partie.refresh_from_db()
    assert partie.status == Partie.Status.OVER and partie.hands.count() == 1
    assert deal_next_hand(str(partie.pk)) is False
    partie_close(partie=partie, at=timezone.now())  # closing twice is harmless too


@pytest.mark.django_db
def test_the_next_hand_task_early_or_twice_deals_once(clock):
    partie = _bots_partie()
    hand = _hand(partie)
    while hand.status == Hand.Status.PLAYING:
        clock.move_to(hand.deadline)
        fire_deadline(str(hand.id), hand.deadline_seq)
        hand.refresh_from_db()
    partie.refresh_from_db()
    assert partie.next_hand_at == hand.ended_at + PAUSE

    clock.move_to(partie.next_hand_at - timedelta(milliseconds=1))
    assert deal_next_hand(str(partie.pk)) is False  # the pause is not over
    clock.move_to(partie.next_hand_at)
    assert deal_next_hand(str(partie.pk)) is True
    assert deal_next_hand(str(partie.pk)) is False
    assert sweep_deadlines() == 0
    assert list(partie.hands.values_list("number", flat=True)) == [1, 2]


@pytest.mark.django_db
def test_the_sweeper_and_the_deadline_task_play_a_decision_once(clock):
    hand = _hand(_bots_partie())
    seq = hand.deadline_seq
    clock.move_to(hand.deadline + timedelta(seconds=0.2))
    # Beat's sweeper leaves a deadline passed less than its grace ago to the deadline's task...
    assert sweep_deadlines(grace_seconds=0.5) == 0
    clock.shift(0.5)
    # ... and plays it once that grace has passed (the task was lost).
    assert sweep_deadlines(grace_seconds=0.5) == 1
    assert fire_deadline(str(hand.id), seq) is False  # the task comes after all: nothing
    assert sweep_deadlines(grace_seconds=0.5) == 0
    line = timeline([hand.partie_id])
    assert line.problems(timeout=TIMEOUT) == [] and len(line.answers) == 1


@pytest.mark.django_db
def test_the_soiree_clock_twice_at_the_start_time_opens_the_soiree_once(clock, club, members):
    soiree = services.soiree_create(
        club=club, name="Double horloge", starts_at=START + timedelta(minutes=5),
        ends_at=START + timedelta(hours=2), game="comet", move_timeout=TIMEOUT,
        min_tables=2, bot_kind="timeout")
    for user in members(3):
        services.checkin(soiree=soiree, user=user, at=timezone.now())
    clock.move_to(soiree.starts_at)
    assert soiree_clock() >= 1
    tables = list(SoireeTable.objects.filter(soiree=soiree).values_list("pk", "partie_id"))
    hands = Hand.objects.filter(partie__soiree_table__soiree=soiree).count()
    soiree_clock()
    soiree_clock()
    assert list(SoireeTable.objects.filter(soiree=soiree).values_list("pk", "partie_id")) \
        == tables
    assert Hand.objects.filter(partie__soiree_table__soiree=soiree).count() == hands
    with pytest.raises(SoireeState):
        services.soiree_open(soiree=soiree, at=timezone.now())
    soiree.refresh_from_db()
    assert soiree.status == Soiree.Status.OPEN and soiree.opened_at == START + timedelta(minutes=5)


def _results(log: str, task_id: str) -> list[str]:
    return re.findall(rf"fire_deadline\[{task_id}\] succeeded in \S+: (\w+)", log)


@pytest.mark.postgres
@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_duplicated_and_stale_deadline_tasks_on_a_real_worker_play_each_decision_once(
        celery_rig):
    # Two worker processes, so that duplicates run at the same time; no beat: no sweeper.
    celery_rig.start_worker(pool="prefork", concurrency=2)
    partie = _bots_partie()  # its first deadline task goes to Redis when this commits
    hand = _hand(partie)
    seq, deadline = hand.deadline_seq, hand.deadline
    # The same task three more times, due at the same time as the service's own.
    twins = [fire_deadline.apply_async(args=[str(hand.id), seq], eta=deadline).id
             for _ in range(3)]

    def done(tasks: list[str]) -> bool:
        log = celery_rig.logs()
        return all(_results(log, t) for t in tasks)

    wait_for(lambda: done(twins), timeout=120, what="the duplicated tasks run",
             explain=celery_rig.tails)
    # Once more, after the decision was played (whoever played it): stale, and due at once.
    wait_for(lambda: timeline([partie.pk]).answers, timeout=120, what="the first time-out",
             explain=celery_rig.tails)
    stale = fire_deadline.apply_async(args=[str(hand.id), seq]).id
    wait_for(lambda: done([stale]), timeout=120, what="the stale task runs",
             explain=celery_rig.tails)
    wait_for(lambda: len(timeline([partie.pk]).answers) >= 3, timeout=120,
             what="three time-outs", explain=celery_rig.tails)
    log = celery_rig.logs()
    assert _results(log, stale) == ["False"]
    assert sum(_results(log, t) == ["True"] for t in twins) <= 1  # one of four may win
    # Each decision played once, never before its deadline (how long after is the machine's
    # speed), the first one by a task for it.
    line = timeline([partie.pk])
    assert line.problems(timeout=TIMEOUT) == []
    assert [a.seq for a in line.answers][:1] == [seq + 1]
    assert all(a.lag >= 0 for a in line.answers), line.answers
    assert "Traceback" not in log, celery_rig.tails()
