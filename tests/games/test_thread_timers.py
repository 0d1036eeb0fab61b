"""The embedded default's timers fire for real, from one thread, in due-time order."""

import threading
import time
from datetime import timedelta

from django.utils import timezone

from games.tasks import ThreadTimers


def test_thread_timers_fire_each_task_once_in_due_order_from_one_thread() -> None:
    timers = ThreadTimers()
    fired: list[tuple[str, str]] = []
    done = threading.Event()

    def task(name: str) -> None:
        fired.append((name, threading.current_thread().name))
        if len(fired) == 3:
            done.set()

    task.__name__ = "task"
    now = timezone.now()
    timers.schedule(now + timedelta(milliseconds=300), task, "late")
    timers.schedule(now + timedelta(milliseconds=100), task, "early")
    timers.schedule(now - timedelta(seconds=1), task, "overdue")
    assert done.wait(5), f"only {fired} fired"
    assert [name for name, _ in fired] == ["overdue", "early", "late"]
    assert {thread for _, thread in fired} == {"academie-timers"}
    assert threading.active_count() < 50


def test_an_earlier_timer_wakes_the_sleeping_thread_and_a_later_one_does_not_delay_it() -> None:
    timers = ThreadTimers()
    fired: dict[str, float] = {}
    early = threading.Event()

    def task(name: str) -> None:
        fired[name] = time.monotonic()
        if name == "early":
            early.set()

    task.__name__ = "task"
    now = timezone.now()
    timers.schedule(now + timedelta(hours=1), task, "far")  # the thread sleeps for an hour
    time.sleep(0.05)
    for k in range(200):  # later timers, as every move sets one: the thread stays asleep
        timers.schedule(now + timedelta(hours=2, seconds=k), task, "later")
    began = time.monotonic()
    timers.schedule(timezone.now() + timedelta(milliseconds=100), task, "early")

    assert early.wait(2), "the earlier timer did not wake the thread"
    assert 0.05 <= fired["early"] - began < 1.0
    assert set(fired) == {"early"}
