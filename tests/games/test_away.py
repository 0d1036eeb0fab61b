"""Leaving the table: a player marked away has his decisions played at once by the time-out
rule, until he comes back or moves."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from games import services
from games.models import Hand, HandEvent, Seat
from games.services import store

pytestmark = pytest.mark.django_db


@pytest.fixture
def table(people: list[Any]) -> dict[str, Any]:
    partie = services.partie_start(
        game="commere", players=people, options={"rounds": 2, "compulsory_announce": False},
        buy_in=50, at=timezone.now(), move_timeout=timedelta(hours=1),
        forced_move_delay=timedelta(0), comet_window=timedelta(0))
    hand = partie.hands.get()
    loaded = store.load(hand)
    awaited = loaded.game.to_act(loaded.state)[0]
    seats = {s.number: s.player for s in partie.seats.all()}
    return {"partie": partie, "hand": hand, "awaited": awaited, "seats": seats}


def test_leaving_plays_the_awaited_decision_at_once_by_the_time_out_rule(
        table: dict[str, Any], api_as: Any) -> None:
    hand, awaited = table["hand"], table["awaited"]
    before = hand.last_seq
    client = api_as(table["seats"][awaited])

    answer = client.post(f"/api/parties/{table['partie'].pk}/away", {"away": True},
                         format="json")

    assert answer.status_code == 200 and answer.json()["away"] is True
    hand.refresh_from_db()
    assert hand.last_seq > before
    played = HandEvent.objects.get(hand=hand, seq=before + 1)
    assert (played.payload["seat"], played.by) == (awaited, "timeout")
    assert Seat.objects.get(partie=table["partie"], number=awaited).away is True


def test_an_away_player_is_played_for_until_he_comes_back(
        table: dict[str, Any], api_as: Any) -> None:
    partie, hand = table["partie"], table["hand"]
    everyone_away = [api_as(user).post(f"/api/parties/{partie.pk}/away", {"away": True},
                                       format="json") for user in table["seats"].values()]

    assert [a.status_code for a in everyone_away] == [200] * 4
    # With every seat away the round plays itself out by the time-out rule.
    hand.refresh_from_db()
    assert hand.status == Hand.Status.OVER
    moves = HandEvent.objects.filter(hand=hand, type__in=["offer", "give_back", "return"])
    assert moves.exists() and set(moves.values_list("by", flat=True)) <= {"timeout", "forced"}

    back = api_as(table["seats"][0]).post(f"/api/parties/{partie.pk}/away", {"away": False},
                                          format="json")
    assert back.json()["away"] is False
    assert list(Seat.objects.filter(partie=partie, away=True).values_list("number", flat=True)
                ) == [1, 2, 3]


def test_a_move_brings_the_player_back(table: dict[str, Any]) -> None:
    partie, hand, awaited = table["partie"], table["hand"], table["awaited"]
    Seat.objects.filter(partie=partie).exclude(number=awaited).update(away=True)
    loaded = store.load(hand)
    move = loaded.game.legal_moves(loaded.state)[awaited][0]
    Seat.objects.filter(partie=partie, number=awaited).update(away=True)

    services.move_play(hand_id=hand.pk, user=table["seats"][awaited], move=move,
                       seq=hand.last_seq, command_id=uuid.uuid4(), at=timezone.now())

    assert Seat.objects.get(partie=partie, number=awaited).away is False


def test_only_a_seated_player_leaves_and_only_a_partie_in_play(
        table: dict[str, Any], api_as: Any, django_user_model: Any) -> None:
    partie = table["partie"]
    staff = django_user_model.objects.create_user("staff", is_staff=True)

    stranger = api_as(staff).post(f"/api/parties/{partie.pk}/away", {"away": True},
                                  format="json")
    partie.status = "over"
    partie.save(update_fields=["status"])
    late = api_as(table["seats"][0]).post(f"/api/parties/{partie.pk}/away", {"away": True},
                                          format="json")

    assert (stranger.status_code, stranger.json()["error"]) == (403, "not_seated")
    assert (late.status_code, late.json()["error"]) == (409, "partie_over")
    assert not Seat.objects.filter(partie=partie, away=True).exists()
