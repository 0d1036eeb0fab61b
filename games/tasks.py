"""Deadline timers: a task per pending decision, and a sweeper for the ones nobody handled.

ARCHITECTURE.md: the deadline lives in the database; when it is set a task is scheduled for it
on commit; the task re-checks in a transaction that the hand still waits at the same seq and is
past its deadline (``services.deadline_fire``), so a late or duplicated task does nothing.

With Celery, a hand has one armed task at a time rather than one per move: queuing a task cost
the web worker 0.6–0.76 ms of CPU per move, and the worker ran every one of them later, nearly
all to find the hand moved on (bench/api_bench.md, ninth round). ``Hand.timer_at`` is when the
armed task is due. A command whose new deadline comes at or after it queues nothing
(advance._set_deadline); the task, when it runs (``services.timer_fire``), plays the decision
if its deadline has passed, and otherwise is armed again for the deadline the hand has then
(compare-and-set on ``timer_at`` under the hand's lock, the task queued before that commits). A
task whose ``timer_at`` has moved on was replaced by a later command's and does nothing. The
sweeper still plays whatever is overdue. Workers must be upgraded before the web servers: an
older worker refuses the ``armed`` argument.

``settings.ACADEMIE_TIMERS`` chooses how a deadline is scheduled: ``celery`` (a Celery task with
an ETA on the Redis broker), ``thread`` (the embedded default: one timer thread in the
serving process, so timers fire for real without Redis), or ``off`` (tests drive the clock
themselves).
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
from datetime import datetime, timedelta
from typing import Any

from celery import shared_task
from django.conf import settings
from django.db import close_old_connections
from django.utils import timezone

logger = logging.getLogger(__name__)


def schedule_deadline(*, hand_id: Any, seq: int, at: datetime) -> None:
    """The decision at ``seq``'s timer, for the timers other than Celery's (which arm one task
    per hand instead: ``arm_deadline``)."""
    if getattr(settings, "ACADEMIE_TIMERS", "off") == "thread":
        # A hand's deadline replaces the one this process set before it: that one waits at
        # an earlier seq, which the hand has left for good.
        hand = str(hand_id)
        _timers.schedule(at, fire_deadline, hand, seq, key=("deadline", hand), order=seq)


def one_timer_per_hand() -> bool:
    """Whether deadlines are armed one task per hand (``Hand.timer_at``): Celery timers."""
    return getattr(settings, "ACADEMIE_TIMERS", "off") == "celery"


def arm_deadline(*, hand_id: Any, at: datetime) -> None:
    """Queue the hand's armed task, due at ``at`` (the command wrote ``timer_at = at``)."""
    fire_deadline.apply_async(args=[str(hand_id), None], kwargs={"armed": at.isoformat()},
                              eta=at)


def schedule_next_hand(*, partie_id: Any, at: datetime) -> None:
    mode = getattr(settings, "ACADEMIE_TIMERS", "off")
    if mode == "celery":
        deal_next_hand.apply_async(args=[str(partie_id)], eta=at)
    elif mode == "thread":
        _timers.schedule(at, deal_next_hand, str(partie_id))


class ThreadTimers:
    """The embedded default's timers: one thread and a heap of due times, not a thread per
    deadline (a busy server would otherwise hold thousands of sleeping threads). A timer that
    fails is logged; the clock's sweeper plays whatever it left overdue.

    A timer scheduled with a ``key`` replaces the one of that key scheduled before it with a
    lower ``order`` (a hand's deadline at a later seq replaces the one at an earlier seq, which
    could only find the hand moved on), and is dropped if one of a higher or equal order is
    already queued. A replaced timer never runs; the heap is rebuilt without them once they are
    half of it. Without this every move left a timer in the heap until its deadline (an hour
    at a table with a long move time-out): hundreds of thousands of entries an hour at a busy
    server, all of them traversed by every full garbage collection of the process."""

    def __init__(self) -> None:
        # [due, count, task or None once replaced, args, key]: compared by (due, count) only.
        self._heap: list[list[Any]] = []
        self._keyed: dict[Any, tuple[Any, list[Any]]] = {}  # key -> (order, its entry)
        self._replaced = 0
        self._wake = threading.Condition()
        self._count = itertools.count()
        self._thread: threading.Thread | None = None

    def schedule(self, at: datetime, task: Any, *args: Any, key: Any = None,
                 order: Any = None) -> None:
        if key is not None and order is None:
            raise ValueError("a keyed timer needs an order")
        with self._wake:
            entry = [at, next(self._count), task, args, key]
            if key is not None:
                queued = self._keyed.get(key)
                if queued is not None:
                    if queued[0] >= order:  # an equal order is the same deadline: a hand
                        return  # has one per seq (a deadline moved within a seq would need more)
                    queued[1][2], queued[1][3] = None, ()
                    self._replaced += 1
                self._keyed[key] = (order, entry)
            heapq.heappush(self._heap, entry)
            if self._replaced > 64 and 2 * self._replaced > len(self._heap):
                self._heap = [e for e in self._heap if e[2] is not None]
                heapq.heapify(self._heap)
                self._replaced = 0
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="academie-timers",
                                                daemon=True)
                self._thread.start()
            elif self._heap[0] is entry:
                # Only a new earliest time changes how long the thread sleeps: waking it for
                # every later one took the interpreter's lock from the requests (a move sets a
                # deadline every time).
                self._wake.notify()

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._heap or self._heap[0][0] > timezone.now():
                    wait = ((self._heap[0][0] - timezone.now()).total_seconds()
                            if self._heap else None)
                    self._wake.wait(timeout=wait)
                _, _, task, args, key = heapq.heappop(self._heap)
                if task is None:
                    self._replaced -= 1
                    continue
                if key is not None:
                    del self._keyed[key]
            _in_thread(task, *args)

    def __len__(self) -> int:
        """The timers queued that will run (replaced ones left out)."""
        with self._wake:
            return len(self._heap) - self._replaced


_timers = ThreadTimers()


def _in_thread(task: Any, *args: Any) -> None:
    close_old_connections()
    try:
        task(*args)
    except Exception:  # a timer has nobody to report to: log; the sweeper will retry
        logger.exception("timer %s%r failed", task.__name__, args)
    finally:
        close_old_connections()


@shared_task(acks_late=True, ignore_result=True)
def deal_next_hand(partie_id: str) -> bool:
    from games.services import partie_tick

    return partie_tick(partie_id=partie_id, at=timezone.now()) is not None


@shared_task(acks_late=True, ignore_result=True)
def fire_deadline(hand_id: str, seq: int | None, armed: str | None = None) -> bool:
    """A deadline's timer: the decision at ``seq`` (thread timers, and tasks queued before
    ``armed`` existed), or the hand's armed task (``armed``: its ``timer_at``). True if it
    played a move."""
    from games.services import deadline_fire, timer_fire

    if armed is None:
        return seq is not None and deadline_fire(hand_id=hand_id, seq=seq, at=timezone.now())
    played, _ = timer_fire(hand_id=hand_id, armed=datetime.fromisoformat(armed),
                           at=timezone.now(), arm=lambda due: arm_deadline(hand_id=hand_id, at=due))
    return played


@shared_task(acks_late=True, ignore_result=True)
def sweep_deadlines(grace_seconds: float = 0.0) -> int:
    """Play every overdue deadline that no task handled (a worker died, the broker lost it).

    Beat passes ``grace_seconds`` (its period, config/celery.py): a deadline only just passed
    is left to its own task, which is about to play it. Without the grace the sweeper played
    them one after another in a single task, racing the tasks and holding a worker for seconds
    while the tasks queued behind it, a spiral that made most time-outs a second or more late
    with 100 tables (bench/timer_lag_bench.py)."""
    from games.models import Hand
    from games.services import deadline_fire

    now = timezone.now()
    fired = 0
    overdue = Hand.objects.filter(
        status=Hand.Status.PLAYING, deadline__lte=now - timedelta(seconds=grace_seconds),
    ).order_by("deadline").values_list("id", "deadline_seq", "last_seq")[:500]
    for hand_id, seq, last_seq in overdue:
        try:
            if seq is not None and deadline_fire(hand_id=hand_id, seq=seq, at=timezone.now(),
                                                 last_seq=last_seq):
                fired += 1
        except Exception:  # one broken hand must not stop the sweep of the others
            logger.exception("sweeping hand %s failed", hand_id)
    # Parties whose pause has passed but whose next hand nobody dealt.
    from games.models import Partie
    from games.services import partie_tick

    due = Partie.objects.filter(status=Partie.Status.PLAYING,
                                next_hand_at__lte=now - timedelta(seconds=grace_seconds))
    for partie_id in due.values_list("id", flat=True)[:500]:
        try:
            if partie_tick(partie_id=partie_id, at=timezone.now()) is not None:
                fired += 1
        except Exception:
            logger.exception("dealing the next hand of partie %s failed", partie_id)
    return fired
