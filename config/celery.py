"""The Celery app: Redis broker from REDIS_URL, settings prefixed CELERY_ in Django settings.

Beat runs three periodic tasks: the deadline sweeper (overdue decisions and hands nobody dealt),
the soirée clock, and the verifier of the finished hands' records.
"""

import os

from celery import Celery
from celery.signals import task_postrun

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")

app = Celery("academie")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

CLOCK_SECONDS = float(os.environ.get("ACADEMIE_CLOCK_SECONDS", "1"))
#: The hands' verifier has no one waiting on it: every few seconds, a batch at a time.
VERIFY_SECONDS = 5 * CLOCK_SECONDS

# A run that waited a whole period in the queue is dropped (``expires``): the next one is
# already on its way, and a backlog of sweeps would hold every worker while the deadline tasks
# wait behind them. The sweeper leaves a deadline passed less than one period ago to its own
# task (``grace_seconds``).
app.conf.beat_schedule = {
    "sweep-deadlines": {"task": "games.tasks.sweep_deadlines", "schedule": CLOCK_SECONDS,
                        "kwargs": {"grace_seconds": CLOCK_SECONDS},
                        "options": {"expires": CLOCK_SECONDS}},
    "soiree-clock": {"task": "tournaments.tasks.soiree_clock", "schedule": CLOCK_SECONDS,
                     "options": {"expires": CLOCK_SECONDS}},
    "verify-ended-hands": {"task": "games.tasks.verify_ended_hands", "schedule": VERIFY_SECONDS,
                     "options": {"expires": VERIFY_SECONDS}},
}


@task_postrun.connect  # type: ignore[untyped-decorator]
def _close_broken_db_connections(**_: object) -> None:
    """Workers keep their database connection between tasks (CELERY_DB_REUSE_MAX): close one
    that saw a database error, so that the next task opens a fresh one rather than failing on a
    dead connection."""
    from django.db import connections

    for conn in connections.all(initialized_only=True):
        if conn.errors_occurred:
            conn.close()
