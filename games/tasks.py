"""Deadline timers: a task per pending decision, a task per partie's pause, and a sweeper for
the ones nobody handled.

ARCHITECTURE.md: the deadline lives in the database; when a command sets one, a task is queued
for it on commit (games/scheduling.py). The task re-checks, under the hand's lock, that the
hand still waits at the same seq and is past its deadline (``services.deadline_fire``), so a
late or duplicated task does nothing. Beat runs the sweeper, which plays whatever is overdue
and nobody played (a worker died, the broker lost a task), and gives up the casual tables left
paused too long. A paused table has no deadline and no next hand due: the sweeper finds
nothing of it to play.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from celery import shared_task
from django.utils import timezone

logger = logging.getLogger(__name__)

#: The most overdue hands (and parties) one sweep plays: the next sweep takes the rest.
SWEEP_BATCH = 500


@shared_task(acks_late=True, ignore_result=True)
def deal_next_hand(partie_id: str) -> bool:
    from games.services import partie_tick

    return partie_tick(partie_id=partie_id, at=timezone.now()) is not None


@shared_task(acks_late=True, ignore_result=True)
def fire_deadline(hand_id: str, seq: int) -> bool:
    """The deadline of the decision the hand waited for at ``seq``. True if it played."""
    from games.services import deadline_fire

    return deadline_fire(hand_id=hand_id, seq=seq, at=timezone.now())


@shared_task(acks_late=True, ignore_result=True)
def sweep_deadlines(grace_seconds: float = 0.0) -> int:
    """Play every overdue deadline and deal every overdue hand that no task handled; give up
    every casual table paused for longer than ``moves.PAUSE_LIMIT``.

    Beat passes ``grace_seconds`` (its period, config/celery.py): a deadline only just passed
    is left to its own task, which is about to play it, rather than raced by the sweeper."""
    from games.models import Hand, Partie
    from games.services import deadline_fire, partie_tick
    from games.services.moves import PAUSE_LIMIT, partie_pause_expire

    cutoff = timezone.now() - timedelta(seconds=grace_seconds)
    fired = 0
    overdue = (Hand.objects.filter(status=Hand.Status.PLAYING, deadline__lte=cutoff)
               .order_by("deadline").values_list("id", "deadline_seq")[:SWEEP_BATCH])
    for hand_id, seq in overdue:
        try:
            if seq is not None and deadline_fire(hand_id=hand_id, seq=seq, at=timezone.now()):
                fired += 1
        except Exception:  # one broken hand must not stop the sweep of the others
            logger.exception("sweeping hand %s failed", hand_id)
    due = Partie.objects.filter(status=Partie.Status.PLAYING, next_hand_at__lte=cutoff)
    for partie_id in due.values_list("id", flat=True)[:SWEEP_BATCH]:
        try:
            if partie_tick(partie_id=partie_id, at=timezone.now()) is not None:
                fired += 1
        except Exception:
            logger.exception("dealing the next hand of partie %s failed", partie_id)
    left = Partie.objects.filter(status=Partie.Status.PLAYING,
                                 paused_at__lte=timezone.now() - PAUSE_LIMIT)
    for partie_id in left.values_list("id", flat=True)[:SWEEP_BATCH]:
        try:
            if partie_pause_expire(partie_id=partie_id, at=timezone.now()):
                fired += 1
        except Exception:
            logger.exception("giving up the paused partie %s failed", partie_id)
    return fired


@shared_task(acks_late=True, ignore_result=True)
def verify_ended_hands() -> int:
    """Verify the records of the hands that ended since the last run, once each, and keep the
    verdicts (``games.services.verdicts``): the evening's results sheet reads them."""
    from games.services import verdicts

    return verdicts.verify_ended_hands()
