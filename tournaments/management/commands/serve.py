"""Serve the embedded default: the web server plus the clock, with no Redis and no worker.

One process: daphne's runserver serves the pages, the API and the live tables' WebSockets
(config/asgi.py), and the in-process channel layer carries the live frames of every command,
whether a request, a timer or the clock played it. Deadlines fire on timer threads in this
process (ACADEMIE_TIMERS=thread); a clock thread runs the deadline sweeper and the soirée clock
every second, and the verifier of finished hands every five, as Celery beat does in a
deployment.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser
from django.db import close_old_connections

logger = logging.getLogger(__name__)


def clock_loop(interval: float, stop: threading.Event) -> None:
    from games.tasks import sweep_deadlines, verify_ended_hands
    from tournaments.tasks import soiree_clock

    ticks = 0
    while not stop.wait(interval):
        close_old_connections()
        ticks += 1
        tasks = [sweep_deadlines, soiree_clock] + ([verify_ended_hands] if ticks % 5 == 0 else [])
        for task in tasks:
            try:
                task()
            except Exception:
                logger.exception("clock task %s failed", task.__name__)
        close_old_connections()


class Command(BaseCommand):
    help = ("Run the web server (HTTP and WebSocket) with the embedded clock (timers and soirée "
            "clock in-process).")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("addrport", nargs="?", default="127.0.0.1:8000")
        parser.add_argument("--interval", type=float, default=1.0)

    def handle(self, *args: Any, **opts: Any) -> None:
        from django.conf import settings

        if settings.ACADEMIE_TIMERS == "thread":
            stop = threading.Event()
            threading.Thread(target=clock_loop, args=(opts["interval"], stop), daemon=True,
                             name="academie-clock").start()
            self.stdout.write("Embedded clock running: deadlines, next hands and soirées "
                              "fire in this process.")
        else:
            self.stdout.write(f"Timers run on {settings.ACADEMIE_TIMERS}: start a Celery "
                              "worker and beat (see README).")
        time.sleep(0)
        call_command("runserver", opts["addrport"], use_reloader=False)
