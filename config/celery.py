"""The Celery app: Redis broker from REDIS_URL, settings prefixed CELERY_ in Django settings."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

app = Celery("academie")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
