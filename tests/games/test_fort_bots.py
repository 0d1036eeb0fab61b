"""The bots' levels at the service: a casual table and a soirée choose débutant, habile or fort,
a fort bot plays its hands through the same service path as every bot, and its decisions are
the same when a hand is played again from the same deal."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from games.models import Hand, HandEvent, Partie

from .factories import play_bots_partie

pytestmark = pytest.mark.django_db

T0 = datetime(2030, 5, 4, 20, 0, tzinfo=UTC)


def _play(game: str, bots: list[str]) -> Partie:
    return play_bots_partie(game, bots, at=T0)


def _moves(partie: Partie) -> list[tuple[Any, ...]]:
    return [(e.seq, e.type, e.payload.get("seat"), e.payload.get("card"), e.payload.get("suit"))
            for e in HandEvent.objects.filter(hand__partie=partie).order_by("hand__number", "seq")]


@pytest.mark.parametrize(("game", "bots"), [
    ("comet", ["ismcts", "heuristic", "random"]),
    ("commere", ["ismcts", "heuristic", "ismcts", "random"]),
])
def test_a_fort_bot_plays_its_hands_at_the_service(game: str, bots: list[str]) -> None:
    partie = _play(game, bots)
    assert partie.status == Partie.Status.OVER
    hand = Hand.objects.get(partie=partie)
    assert hand.events.filter(type="hand_over").exists()
    assert list(partie.seats.order_by("number").values_list("bot", flat=True)) == bots


def test_a_fort_bot_decides_alike_when_the_hand_is_played_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.seeding import seed_stream

    monkeypatch.setattr("games.services.parties.new_seed", seed_stream("fort-again"))
    first = _moves(_play("comet", ["ismcts", "ismcts", "heuristic"]))
    monkeypatch.setattr("games.services.parties.new_seed", seed_stream("fort-again"))
    second = _moves(_play("comet", ["ismcts", "ismcts", "heuristic"]))
    assert first == second and len(first) > 20


def test_a_casual_table_takes_a_level_for_its_bots(organiser: Any, player: Any,
                                                   api_as: Any) -> None:
    answer = api_as(organiser).post("/api/parties/", {
        "game": "comet", "players": ["olga"], "bots": ["fort", "habile", "debutant"],
    }, format="json")
    assert answer.status_code == 201, answer.content
    partie = Partie.objects.get(pk=answer.json()["id"])
    assert list(partie.seats.order_by("number").values_list("bot", flat=True)) == [
        "", "ismcts", "heuristic", "random"]


@pytest.mark.parametrize("level", ["expert", "FORT", 3])
def test_a_level_that_does_not_exist_is_refused_and_nothing_is_made(
        organiser: Any, api_as: Any, level: Any) -> None:
    answer = api_as(organiser).post("/api/parties/", {
        "game": "comet", "players": ["olga"], "bots": [level],
    }, format="json")
    assert answer.status_code == 400
    assert "bots" in answer.json()
    text = str(answer.json()["bots"])
    assert "fort" in text and ("unknown bot level" in text or "string" in text)
    assert not Partie.objects.exists()


def test_an_unknown_bot_level_is_refused_in_the_readers_language() -> None:
    from django.utils import translation

    from games.services import bot_for

    with translation.override("fr"), pytest.raises(ValueError) as refused:
        bot_for("génie")
    assert str(refused.value).startswith("niveau de robot inconnu 'génie' : choisissez parmi ")
    with translation.override("en"), pytest.raises(ValueError) as refused:
        bot_for("génie")
    assert str(refused.value).startswith("unknown bot level 'génie': choose among ")
