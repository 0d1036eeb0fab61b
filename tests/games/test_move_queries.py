"""The move path's cost: the queries of a move through the API, and the one live message of
a commit, built without a read (docs/ARCHITECTURE.md, one move path)."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

from games import live
from games.models import Hand, Partie
from games.services import move_play, partie_start, store

# A committed command, so that its on-commit push runs as in production.
pytestmark = [pytest.mark.django_db(transaction=True)]


def _table(people: list[Any], **options: Any) -> Partie:
    return partie_start(game="commere", players=people, at=timezone.now(), buy_in=100,
                        share_window=timedelta(0), forced_move_delay=timedelta(0),
                        comet_window=timedelta(0), pause_between_hands=timedelta(0),
                        options={"compulsory_announce": False, **options})


def _awaited(hand: Hand) -> tuple[int, Any]:
    loaded = store.load(hand)
    seat = loaded.game.to_act(loaded.state)[0]
    return seat, loaded.game.legal_moves(loaded.state)[seat]


def _kind(sql: str) -> tuple[str, str, bool]:
    """A statement's verb, its table, and whether it locks rows."""
    verb = sql.split()[0]
    table = sql.split('"')[1]
    return verb, table, "FOR NO KEY UPDATE" in sql  # every lock of the project is of this kind


@pytest.fixture
def pushes(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, list[dict[str, Any]]]]:
    """Each push: the queries it made and the messages it sent."""
    got: list[tuple[int, list[dict[str, Any]]]] = []

    class Layer:
        async def group_send(self, group: str, message: dict[str, Any]) -> None:
            got[-1][1].append({"group": group, **message})

    monkeypatch.setattr(live, "get_channel_layer", lambda: Layer())
    publish = live.publish

    def counted(**kwargs: Any) -> None:
        got.append((0, []))
        with CaptureQueriesContext(connection) as queries:
            publish(**kwargs)
        got[-1] = (len(queries), got[-1][1])

    monkeypatch.setattr(live, "publish", counted)
    return got


@pytest.mark.postgres  # the production database's statements
def test_a_move_that_moves_no_chips_costs_at_most_seven_queries(
        people: list[Any], django_assert_max_num_queries: Any, pushes: Any) -> None:
    partie = _table(people)
    hand = partie.hands.get()
    seat, legal = _awaited(hand)
    offer = next(m for m in legal if m.type == "offer")
    client = APIClient()
    client.force_authenticate(people[seat])
    before = len(pushes)
    # Seven, and the transaction's BEGIN and COMMIT, which psycopg reports among them.
    with django_assert_max_num_queries(7 + 2) as captured:
        answer = client.post(f"/api/hands/{hand.pk}/moves", {
            "seq": hand.last_seq, "command_id": str(uuid.uuid4()), "move": offer.to_dict()},
            format="json")
    assert answer.status_code == 201, answer.content
    statements = [q["sql"] for q in captured.captured_queries]
    assert statements[0] == "BEGIN" and statements[-1] == "COMMIT"
    # The list of docs/ARCHITECTURE.md, in its order.
    assert [_kind(sql) for sql in statements[1:-1]] == [
        ("SELECT", "games_hand", True), ("SELECT", "games_seat", False),
        ("SELECT", "games_handevent", False), ("INSERT", "games_handevent", False),
        ("UPDATE", "games_hand", False), ("INSERT", "games_command", False)]
    assert answer.json()["seq"] == hand.last_seq + 1
    assert len(pushes) == before + 1 and pushes[-1][0] == 0


def test_a_commit_sends_one_message_that_carries_its_events_and_reads_nothing(
        people: list[Any], pushes: Any) -> None:
    """Even the commit that ends a round, deals the next and closes the partie."""
    partie = _table(people, rounds=2)
    hands_seen: list[int] = []
    while Partie.objects.get(pk=partie.pk).status == Partie.Status.PLAYING:
        hand = partie.hands.order_by("-number").first()
        seat, legal = _awaited(hand)
        before = len(pushes)
        move_play(hand_id=hand.pk, user=people[seat], move=legal[-1], seq=hand.last_seq,
                  command_id=uuid.uuid4(), at=timezone.now())
        assert len(pushes) == before + 1
        queries, messages = pushes[-1]
        assert queries == 0 and len(messages) == 1
        message = messages[0]
        assert message["group"] == live.group_of(partie.pk)
        hands_seen.append(len(message["hands"]))
        first = message["hands"][0]
        assert first["head"]["hand"] == str(hand.pk)
        assert [e["seq"] for e in first["events"]][0] == hand.last_seq + 1
        assert len(first["receipts"]) == len(first["events"])
    assert max(hands_seen) == 2  # a round's end and the next round's deal: one message
    assert pushes[-1][1][0]["partie_status"] == "over"
    last = pushes[-1][1][0]["hands"][0]
    assert last["head"]["status"] == "over" and last["head"]["seed"]
