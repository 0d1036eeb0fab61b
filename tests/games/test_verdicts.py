"""The clock verifies each finished hand's record once and keeps the verdict on its row; a sheet
reads the kept verdicts, and verifies on the spot any hand without one or whose chain moved."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from games.models import Hand, HandEvent
from games.selectors import hand_verdict, hand_verification
from games.services import partie_start, verdicts
from games.tasks import verify_ended_hands

from .factories import play_bots_partie
from .test_event_store import _tamper_payload

pytestmark = pytest.mark.django_db

T0 = datetime(2030, 5, 4, 20, 0, tzinfo=UTC)


def test_each_finished_hand_is_verified_once_and_its_verdict_kept(django_user_model: Any):
    hands = list(play_bots_partie("comet", ["heuristic"] * 3, 3, at=T0).hands.all())
    person = django_user_model.objects.create_user("pia")
    playing = partie_start(game="comet", players=[person], bots=["heuristic"] * 2, at=T0,
                           move_timeout=timedelta(hours=1)).hands.get()
    assert playing.status == Hand.Status.PLAYING

    assert verify_ended_hands() == 3
    assert verify_ended_hands() == 0  # once each

    for hand in hands:
        hand.refresh_from_db()
        now = hand_verification(hand=hand)
        assert hand.verdict["ok"] is True and now["ok"] is True
        assert hand.verdict["digest"] == now["digest"] and hand.verdict["discrepancy"] is None
        assert hand.verdict["head"] == hand.last_hash and hand.verdict["at"]
    playing.refresh_from_db()
    assert playing.verdict is None  # a hand in play has no record yet


def test_a_batch_takes_the_longest_finished_first_and_the_next_run_the_rest():
    play_bots_partie("comet", ["heuristic"] * 3, 3, at=T0)

    assert verdicts.verify_ended_hands(limit=2) == 2
    first = set(Hand.objects.filter(verdict__isnull=False).values_list("number", flat=True))
    assert first == {1, 2}
    assert verdicts.verify_ended_hands(limit=2) == 1


def test_a_record_broken_before_the_clock_reads_it_is_kept_as_failed():
    victim = play_bots_partie("comet", ["heuristic"] * 3, 1, at=T0).hands.get()
    pay = HandEvent.objects.filter(hand=victim, type="pay", payload__amount__gt=0).last()
    _tamper_payload(pay, amount=pay.payload["amount"] + 1)

    verify_ended_hands()

    victim.refresh_from_db()
    assert victim.verdict["ok"] is False and victim.verdict["discrepancy"]


def test_a_sheet_reads_the_kept_verdict_and_verifies_again_where_the_chain_moved(
        monkeypatch: pytest.MonkeyPatch):
    hand = play_bots_partie("comet", ["heuristic"] * 3, 1, at=T0).hands.get()
    assert hand_verdict(hand=hand)["ok"] is True  # none kept yet: verified on the spot
    verify_ended_hands()
    hand.refresh_from_db()
    kept = hand.verdict
    made: list[Hand] = []
    real = verdicts.verification_of
    monkeypatch.setattr(verdicts, "verification_of", lambda h: made.append(h) or real(h))

    assert hand_verdict(hand=hand) == kept and made == []

    # A verdict made on another chain head than the row's says nothing of this record.
    Hand.objects.filter(pk=hand.pk).update(verdict={**kept, "head": "0" * 64, "ok": False})
    hand.refresh_from_db()
    again = hand_verdict(hand=hand)
    assert again["ok"] is True and again["head"] == hand.last_hash and made == [hand]
