"""The embedded default's timers fire for real, from one thread, in due-time order.

The waits are hang guards (HANG seconds), not figures: the order and the thread are what is
asserted, so that the tests pass on a loaded machine."""

import threading
import time
from datetime import timedelta

from django.utils import timezone

from games.scheduling import ThreadTimers

FIRED: list[tuple[str, str, float]] = []
DONE = threading.Event()
TASK = "tests.games.test_thread_timers.record"
HANG = 60


def record(name: str, expected: int) -> None:
    """The task the timers run, found by its dotted path as the real tasks are."""
    FIRED.append((name, threading.current_thread().name, time.monotonic()))
    if len(FIRED) == expected:
        DONE.set()


def _reset() -> None:
    FIRED.clear()
    DONE.clear()


def test_thread_timers_fire_each_task_once_in_due_order_from_one_thread() -> None:
    _reset()
    threads_before = threading.active_count()
    timers = ThreadTimers()
    now = timezone.now()
    timers.schedule(now + timedelta(milliseconds=300), TASK, ["late", 3])
    timers.schedule(now + timedelta(milliseconds=100), TASK, ["early", 3])
    timers.schedule(now - timedelta(seconds=1), TASK, ["overdue", 3])
    assert DONE.wait(HANG), f"only {FIRED} fired"
    time.sleep(0.1)  # nothing runs twice
    assert [name for name, _, _ in FIRED] == ["overdue", "early", "late"]
    assert {thread for _, thread, _ in FIRED} == {"academie-timers"}
    assert threading.active_count() - threads_before <= 1  # one thread, not one per timer
    assert len(timers) == 0


def test_an_earlier_timer_wakes_the_sleeping_thread() -> None:
    _reset()
    timers = ThreadTimers()
    timers.schedule(timezone.now() + timedelta(hours=1), TASK, ["far", 1])
    time.sleep(0.05)  # the thread now sleeps for an hour
    began = time.monotonic()
    timers.schedule(timezone.now() + timedelta(milliseconds=100), TASK, ["early", 1])
    assert DONE.wait(HANG), "the earlier timer did not wake the thread"
    assert [name for name, _, _ in FIRED] == ["early"]
    # Not before it was due, and long before the hour the thread had gone to sleep for.
    assert 0.05 <= FIRED[0][2] - began < HANG
    assert len(timers) == 1  # the far one still waits


def test_a_failing_timer_is_logged_and_the_next_one_still_runs(caplog) -> None:
    _reset()
    timers = ThreadTimers()
    now = timezone.now()
    timers.schedule(now, "tests.games.test_thread_timers.no_such_task", [])
    timers.schedule(now + timedelta(milliseconds=50), TASK, ["after", 1])
    assert DONE.wait(HANG)
    assert "timer tests.games.test_thread_timers.no_such_task" in caplog.text
