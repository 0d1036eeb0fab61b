"""The Celery app: Redis broker from REDIS_URL, settings prefixed CELERY_ in Django settings.

Beat runs two periodic tasks: the deadline sweeper (overdue decisions and hands nobody dealt)
and the soirée clock.
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

app = Celery("academie")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

CLOCK_SECONDS = float(os.environ.get("ACADEMIE_CLOCK_SECONDS", "1"))

app.conf.beat_schedule = {
    "sweep-deadlines": {"task": "games.tasks.sweep_deadlines", "schedule": CLOCK_SECONDS},
    "soiree-clock": {"task": "tournaments.tasks.soiree_clock", "schedule": CLOCK_SECONDS},
}
