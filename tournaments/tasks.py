"""The soirée clock: open soirées at their start time, keep their tables going, close them.

Run by Celery beat every ``ACADEMIE_CLOCK_SECONDS`` (config/celery.py), or by the embedded
clock thread (``manage.py serve``). A tick reads which soirées have work (``soirees_due``) and
touches only those; each step re-reads its soirée under a row lock, so a late or duplicated
tick does nothing twice.
"""

from __future__ import annotations

import logging

from celery import shared_task
from django.utils import timezone

from config.errors import DomainError

from .errors import SoireeState
from .services import soiree_open, soiree_tick
from .services.soirees import soirees_due

logger = logging.getLogger(__name__)


@shared_task(acks_late=True, ignore_result=True)
def soiree_clock() -> int:
    to_open, to_tick = soirees_due(at=timezone.now())
    steps = 0
    for soiree in to_open:
        try:
            soiree_open(soiree=soiree, at=timezone.now())
            steps += 1
        except SoireeState:
            pass  # another clock opened it first
        except DomainError as exc:  # a rule of the soirée, a seat, a buy-in
            logger.warning("soirée %s cannot open: %s", soiree.pk, exc)
    for soiree in to_tick:
        try:
            soiree_tick(soiree=soiree, at=timezone.now())
            steps += 1
        except Exception:  # one soirée's trouble must not stop the others' clock
            logger.exception("tick of soirée %s failed", soiree.pk)
    return steps
