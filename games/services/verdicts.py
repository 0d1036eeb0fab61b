"""Each finished hand's record verified once, by the clock, and the verdict kept on its row.

The results sheet of an evening lists every hand with the service's verdict on its record.
Replaying a record costs milliseconds (its events read, the deal and every move checked); a
sheet of 5,000 hands read that way took over 20 seconds. So the clock verifies each hand once,
soon after it ends (``verify_ended_hands``, run by Celery beat or the embedded clock), and a
sheet reads the verdicts. A verdict is trusted only for the chain head it was made on: a hand
whose row no longer ends with that hash, or that has no verdict yet, is verified on the spot
(``hand_verdict``). The events themselves cannot change (their table refuses updates and
deletes: games/models.py).
"""

from __future__ import annotations

from typing import Any

from django.utils import timezone
from django.utils.translation import gettext as _

from games.engine.record import build_record
from games.engine.verify import Discrepancy, verify_record
from games.errors import HandNotOver
from games.models import Hand
from games.services import store

#: The most hands one run of the verifier checks: the next run takes the rest.
VERIFY_BATCH = 200


def record_of(hand: Hand) -> dict[str, Any]:
    """The HAND_RECORD.md document of a finished hand."""
    if hand.status != Hand.Status.OVER:
        raise HandNotOver(_("the record is published once the hand is over"))
    return build_record(
        game=hand.partie.game, hand=str(hand.id), table=hand.partie.table_label,
        partie=str(hand.partie_id), number=hand.number, seed=hand.secret.seed,
        deck=store.hand_deck(hand), events=store.events(hand), version=hand.record_format,
    )


def verification_of(hand: Hand) -> dict[str, Any]:
    """The record verified now, as any verifier of HAND_RECORD.md would."""
    record = record_of(hand)
    try:
        return {"ok": True, "digest": verify_record(record), "discrepancy": None}
    except Discrepancy as exc:
        return {"ok": False, "digest": record.get("digest"), "discrepancy": str(exc)}


def _verified(hand: Hand) -> dict[str, Any]:
    return {**verification_of(hand), "head": hand.last_hash, "at": timezone.now().isoformat()}


def verify_ended_hands(*, limit: int = VERIFY_BATCH) -> int:
    """Verify the finished hands that have no verdict yet, the longest finished first, and
    keep each verdict; returns how many were verified. A verdict is written only where none
    is, so two clocks running at once write one each, the same."""
    hands = (Hand.objects.filter(status=Hand.Status.OVER, verdict__isnull=True)
             .select_related("partie", "secret").order_by("ended_at")[:limit])
    done = 0
    for hand in hands:
        done += Hand.objects.filter(pk=hand.pk, verdict__isnull=True).update(
            verdict=_verified(hand))
    return done


def still_holds(verdict: dict[str, Any] | None, last_hash: str) -> bool:
    """Whether a kept verdict speaks of the record as it stands: made on the chain head the
    hand ends with now."""
    return verdict is not None and verdict.get("head") == last_hash


def hand_verdict(hand: Hand) -> dict[str, Any]:
    """The verdict on a finished hand's record: the kept one if it still holds, otherwise one
    made now (not kept: a read writes nothing)."""
    if hand.verdict is not None and still_holds(hand.verdict, hand.last_hash):
        return hand.verdict
    return _verified(hand)
