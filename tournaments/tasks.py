"""The soirée clock: open soirées at their start time, keep their tables going, close them.

Run by Celery beat every ``ACADEMIE_CLOCK_SECONDS`` (config/celery.py), or by the embedded
clock thread (``manage.py serve``). Each step re-reads the soirée under a row lock, so a late or
duplicated tick does nothing twice.
"""

from __future__ import annotations

import logging

from celery import shared_task
from django.utils import timezone

from config.errors import DomainError

from .errors import SoireeState
from .models import Soiree
from .services import soiree_open, soiree_tick

logger = logging.getLogger(__name__)


@shared_task(acks_late=True, ignore_result=True)
def soiree_clock() -> int:
    now = timezone.now()
    steps = 0
    # A soirée nobody has arrived at waits (its manage page says so) rather than open with
    # bots alone; the tick after its first check-in opens it.
    for soiree in Soiree.objects.filter(
            status=Soiree.Status.SCHEDULED, starts_at__lte=now,
            registrations__checked_in_at__isnull=False).distinct():
        try:
            soiree_open(soiree=soiree, at=timezone.now())
            steps += 1
        except SoireeState:
            pass  # another clock opened it first
        except DomainError as exc:  # a rule of the soirée, a seat, a buy-in
            logger.warning("soirée %s cannot open: %s", soiree.pk, exc)
    for soiree in Soiree.objects.filter(status=Soiree.Status.OPEN):
        try:
            soiree_tick(soiree=soiree, at=timezone.now())
            steps += 1
        except Exception:  # one soirée's trouble must not stop the others' clock
            logger.exception("tick of soirée %s failed", soiree.pk)
    return steps
