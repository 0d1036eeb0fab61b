"""When a command sets a deadline or a partie's pause, its timer is queued here, on commit.

``settings.ACADEMIE_TIMERS`` chooses how: ``celery`` (a Celery task with an ETA, queued by its
name so that the services need not import ``games.tasks``), ``thread`` (the embedded default:
one timer thread in the serving process runs the same tasks, so timers fire for real without
Redis), or ``off`` (tests drive the clock themselves). Whatever runs a timer, the task checks
that its work is still due (games/tasks.py), so a late, duplicated or lost timer is harmless:
the beat sweeper, or the clock's sweep in the embedded default, plays what nobody played.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
from datetime import datetime
from typing import Any

from celery import current_app
from django.conf import settings
from django.db import close_old_connections
from django.utils import timezone
from django.utils.module_loading import import_string

logger = logging.getLogger(__name__)

FIRE_DEADLINE = "games.tasks.fire_deadline"
DEAL_NEXT_HAND = "games.tasks.deal_next_hand"


def deadline_due(*, hand_id: Any, seq: int, at: datetime) -> None:
    """The decision the hand waits for at ``seq`` is due at ``at``."""
    _queue(FIRE_DEADLINE, [str(hand_id), seq], at)


def next_hand_due(*, partie_id: Any, at: datetime) -> None:
    """The partie's next hand is due at ``at`` (its pause after the last one)."""
    _queue(DEAL_NEXT_HAND, [str(partie_id)], at)


def _queue(task: str, args: list[Any], at: datetime) -> None:
    mode = settings.ACADEMIE_TIMERS
    if mode == "celery":
        current_app.send_task(task, args=args, eta=at)
    elif mode == "thread":
        timers.schedule(at, task, args)


class ThreadTimers:
    """The embedded default's timers: one thread and a heap of due times, not a thread per
    deadline. A timer that fails is logged; the sweeper plays whatever it left overdue."""

    def __init__(self) -> None:
        self._heap: list[tuple[datetime, int, str, list[Any]]] = []
        self._wake = threading.Condition()
        self._count = itertools.count()
        self._thread: threading.Thread | None = None

    def schedule(self, at: datetime, task: str, args: list[Any]) -> None:
        with self._wake:
            heapq.heappush(self._heap, (at, next(self._count), task, args))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="academie-timers",
                                                daemon=True)
                self._thread.start()
            self._wake.notify()

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._heap or self._heap[0][0] > timezone.now():
                    wait = ((self._heap[0][0] - timezone.now()).total_seconds()
                            if self._heap else None)
                    self._wake.wait(timeout=wait)
                _, _, task, args = heapq.heappop(self._heap)
            _run_task(task, args)

    def __len__(self) -> int:
        with self._wake:
            return len(self._heap)


def _run_task(task: str, args: list[Any]) -> None:
    close_old_connections()
    try:
        import_string(task)(*args)  # the Celery task, run in this thread
    except Exception:  # a timer has nobody to report to: log; the sweeper will retry
        logger.exception("timer %s%r failed", task, args)
    finally:
        close_old_connections()


timers = ThreadTimers()
