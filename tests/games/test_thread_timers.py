"""The embedded default's timers fire for real, from one thread, in due-time order."""

import threading
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
