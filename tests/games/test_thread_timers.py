"""The embedded default's timers fire for real, from one thread, in due-time order."""

import threading
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from games.tasks import ThreadTimers


def test_thread_timers_fire_each_task_once_in_due_order_from_one_thread() -> None:
    threads_before = threading.active_count()
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
    # One thread for the three tasks, not one each (counted against this test's start: other
    # tests' timers may still be running in this process).
    assert threading.active_count() - threads_before <= 1


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


def test_a_hands_later_deadline_replaces_its_earlier_one_which_never_runs() -> None:
    timers = ThreadTimers()
    fired: list[tuple[str, int]] = []
    done = threading.Event()

    def task(name: str, seq: int) -> None:
        fired.append((name, seq))
        if name == "other":
            done.set()

    task.__name__ = "task"
    now = timezone.now()
    soon = now + timedelta(milliseconds=500)
    timers.schedule(soon, task, "hand", 3, key="hand", order=3)
    timers.schedule(soon + timedelta(milliseconds=50), task, "hand", 5, key="hand", order=5)
    timers.schedule(soon, task, "hand", 4, key="hand", order=4)  # older than the one queued
    timers.schedule(soon, task, "hand", 5, key="hand", order=5)  # the same again
    timers.schedule(soon + timedelta(milliseconds=100), task, "other", 1, key="other", order=1)
    assert len(timers) == 2

    assert done.wait(5), f"only {fired} fired"
    assert fired == [("hand", 5), ("other", 1)]
    assert len(timers) == 0 and timers._keyed == {} and timers._replaced == 0
    later = timezone.now() + timedelta(hours=1)
    timers.schedule(later, task, "hand", 5, key="hand", order=5)  # once it has run, a timer
    assert len(timers) == 1  # of that key is queued again
    with pytest.raises(ValueError, match="needs an order"):
        timers.schedule(later, task, "hand", 6, key="hand")


def test_replaced_timers_do_not_pile_up_in_the_heap() -> None:
    timers = ThreadTimers()
    far = timezone.now() + timedelta(hours=1)  # every move sets a deadline an hour away
    for seq in range(10_000):
        timers.schedule(far, print, seq, key=("deadline", seq % 50), order=seq)

    assert len(timers) == 50
    assert len(timers._heap) <= 2 * 50 + 2 * 64
    assert timers._replaced == sum(e[2] is None for e in timers._heap)
    assert sorted(e[3][0] for e in timers._heap if e[2] is not None) == list(range(9950, 10_000))
    assert {key: entry[3][0] for key, (_, entry) in timers._keyed.items()} == {
        ("deadline", k): 9950 + k for k in range(50)}
