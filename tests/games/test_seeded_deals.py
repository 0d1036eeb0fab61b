"""Every hand a test deals takes its seed from the test's name (tests/conftest.py's
``seeded_deals``), so that a test's deals are the same on every run."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from games.models import HandSeed
from games.services import partie_start
from tests.seeding import seed_stream

pytestmark = pytest.mark.django_db


def test_a_dealt_hand_takes_the_first_seed_of_this_tests_stream(
        request: pytest.FixtureRequest, django_user_model: Any) -> None:
    alice = django_user_model.objects.create_user("alice")
    partie = partie_start(game="commere", players=[alice], bots=["random"] * 3,
                          buy_in=50,
                          at=datetime(2030, 5, 4, 20, 0, tzinfo=UTC))
    expected = seed_stream(f"{request.node.nodeid}/deal")
    first = HandSeed.objects.get(hand__partie=partie, hand__number=1)
    assert first.seed == expected()


def test_two_tests_draw_different_streams() -> None:
    assert seed_stream("a::x/deal")() != seed_stream("a::y/deal")()
    stream = seed_stream("a::x/deal")
    assert stream() != stream()
