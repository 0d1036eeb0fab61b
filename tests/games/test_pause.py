"""Leaving a table by pausing it (RULES.md §3, leaving the table): at a casual table a person who
leaves may have the table wait for him. Nothing is played, no deadline fires and no hand is
dealt until every person who paused it is back; then its deadlines start afresh. The others
are told, live. A soirée's table refuses to wait, and the clock gives up a table paused too long.

The clock is stopped and moved by hand (time-machine), and the tests run what beat runs, the
deadline sweeper, at the times they choose (ACADEMIE_TIMERS=off).
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import time_machine
from asgiref.sync import async_to_sync, sync_to_async
from channels.testing import WebsocketCommunicator
from django.db import connection
from django.test import Client
from django.utils import timezone

from config.asgi import application
from games import live
from games.engine.base import Move
from games.errors import TablePaused
from games.models import Hand, HandEvent, Partie, Seat
from games.services import (
    casual_table_create,
    deadline_fire,
    invitation_answer,
    move_play,
    seat_away,
    store,
)
from games.services.moves import PAUSE_LIMIT
from games.tasks import sweep_deadlines
from tests.tournaments.evenings import one_table
from tournaments.models import Membership
from tournaments.services import club_create, membership_add

pytestmark = pytest.mark.django_db

START = datetime(2031, 3, 14, 18, 0, tzinfo=UTC)
TIMINGS = {"move_timeout": timedelta(seconds=20), "forced_move_delay": timedelta(seconds=1),
           "comet_window": timedelta(0), "pause_between_hands": timedelta(seconds=60)}
CARD = re.compile(r'"([A2-9TJQK][CDHS])"')


@pytest.fixture
def clock() -> Iterator[time_machine.Coordinates]:
    """The wall clock stopped at START; ``clock.shift(s)`` moves it."""
    with time_machine.travel(START, tick=False) as traveller:
        yield traveller


@pytest.fixture
def table(people: list[Any]) -> Partie:
    """alice's casual table of Ma commère: alice, bruno (who accepted) and two bots."""
    alice, bruno = people[:2]
    partie = casual_table_create(
        creator=alice, game="commere", players=[alice, bruno], bots=["heuristic"] * 2,
        options={"rounds": 3, "compulsory_announce": False}, at=timezone.now(), **TIMINGS)
    invitation_answer(partie_id=partie.pk, user=bruno, accept=True, at=timezone.now())
    partie.refresh_from_db()
    assert partie.status == Partie.Status.PLAYING
    return partie


def _away(client: Any, partie: Partie, **body: Any) -> Any:
    return client.post(f"/api/parties/{partie.pk}/away", body, format="json")


def _lasts(partie: Partie, kind: str) -> timedelta:
    """How long the table waits for a pending decision of ``kind`` (games/services/advance.py)."""
    return {"timeout": partie.move_timeout, "forced": partie.forced_move_delay,
            "comet": max(partie.comet_window, partie.forced_move_delay),
            "deal": partie.share_window}[kind]


def _awaited(hand: Hand) -> tuple[int, Move]:
    """The seat the hand waits for, and its first legal move."""
    loaded = store.load(hand)
    seat = loaded.game.to_act(loaded.state)[0]
    return seat, loaded.game.legal_moves(loaded.state)[seat][0]


@pytest.fixture
def pushes(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Every message the commands send to the partie's group (live.publish, on commit)."""
    got: list[dict[str, Any]] = []

    class Layer:
        async def group_send(self, group: str, message: dict[str, Any]) -> None:
            got.append({"group": group, **message})

    monkeypatch.setattr(live, "get_channel_layer", lambda: Layer())
    return got


def test_a_paused_table_plays_nothing_however_long_its_clock_runs(
        clock: Any, table: Partie, people: list[Any], api_as: Any) -> None:
    hand = table.hands.get()
    assert hand.deadline is not None
    waited_at, events = hand.last_seq, HandEvent.objects.filter(hand=hand).count()

    answer = _away(api_as(people[0]), table, away=True, how="pause")

    assert answer.status_code == 200, answer.content
    assert answer.json() | {"paused_at": None} == {
        "partie": str(table.pk), "away": True, "how": "pause", "may_pause": True,
        "paused": True, "paused_at": None, "paused_by": [{"seat": 0, "player": "alice"}]}
    hand.refresh_from_db()
    assert (hand.deadline, hand.deadline_kind, hand.last_seq) == (None, "paused", waited_at)
    # Ten minutes: thirty times the move timeout, six hundred times the forced-move delay.
    for _ in range(40):
        clock.shift(15)
        assert sweep_deadlines() == 0
    # The timer queued for the decision before the pause finds nothing to play.
    assert deadline_fire(hand_id=hand.pk, seq=waited_at, at=timezone.now()) is False
    hand.refresh_from_db()
    assert hand.last_seq == waited_at and hand.status == Hand.Status.PLAYING
    assert HandEvent.objects.filter(hand=hand).count() == events
    assert table.hands.count() == 1


def test_the_table_resumes_when_she_is_back_its_deadline_running_from_then(
        clock: Any, table: Partie, people: list[Any], api_as: Any) -> None:
    alice = api_as(people[0])
    _away(alice, table, away=True, how="pause")
    clock.shift(600)
    back_at = timezone.now()

    answer = _away(alice, table, away=False)

    assert answer.status_code == 200
    assert (answer.json()["away"], answer.json()["paused"], answer.json()["paused_by"]) == (
        False, False, [])
    table.refresh_from_db()
    hand = table.hands.get()
    assert table.paused_at is None
    assert hand.deadline_kind in {"timeout", "forced"} and hand.deadline_seq == hand.last_seq
    assert hand.deadline == back_at + _lasts(table, hand.deadline_kind)
    # And the clock runs again: once the fresh deadline has passed, the table moves on.
    before = hand.last_seq
    clock.shift(_lasts(table, hand.deadline_kind).total_seconds())
    assert sweep_deadlines() == 1
    hand.refresh_from_db()
    assert hand.last_seq > before


def test_a_table_paused_between_hands_deals_the_next_only_a_pause_after_it_resumes(
        clock: Any, table: Partie, people: list[Any], api_as: Any) -> None:
    alice, bruno = api_as(people[0]), api_as(people[1])
    # Both leave by the time-out rule: the bots and the rule play the hand to its end.
    _away(alice, table, away=True)
    _away(bruno, table, away=True, how="timeout")
    first = table.hands.get()
    assert first.status == Hand.Status.OVER
    table.refresh_from_db()
    assert table.next_hand_at == timezone.now() + table.pause_between_hands

    _away(alice, table, away=True, how="pause")  # she changes her mind: the table waits

    table.refresh_from_db()
    assert table.paused_at == timezone.now() and table.next_hand_at is None
    for _ in range(20):
        clock.shift(30)
        sweep_deadlines()
    assert table.hands.count() == 1
    _away(alice, table, away=False)
    table.refresh_from_db()
    assert table.next_hand_at == timezone.now() + table.pause_between_hands
    clock.shift(59)
    sweep_deadlines()
    assert table.hands.count() == 1
    clock.shift(1)
    sweep_deadlines()
    assert table.hands.count() == 2


def test_the_others_are_told_live_who_paused_the_table_and_when_it_resumes(
        table: Partie, people: list[Any], api_as: Any, pushes: list[dict[str, Any]],
        django_capture_on_commit_callbacks: Any) -> None:
    alice, bruno = api_as(people[0]), api_as(people[1])
    hand = table.hands.get()
    seen_before = bruno.get(f"/api/hands/{hand.pk}/").json()

    with django_capture_on_commit_callbacks(execute=True):
        _away(alice, table, away=True, how="pause")
    told = bruno.get(f"/api/parties/{table.pk}/away").json()
    seen_paused = bruno.get(f"/api/hands/{hand.pk}/").json()
    caught_up, _follower = live.catch_up(partie_id=table.pk, seat=1)
    with django_capture_on_commit_callbacks(execute=True):
        _away(alice, table, away=False)

    assert [(p["group"], p["partie_status"]) for p in pushes] == [
        (f"partie.{table.pk}", "paused"), (f"partie.{table.pk}", "playing")]
    assert (told["away"], told["paused"], told["paused_by"]) == (
        False, True, [{"seat": 0, "player": "alice"}])
    # A page that (re)connects while the table waits learns it from its catch-up.
    assert caught_up[-1] == {"kind": "partie", "partie": str(table.pk), "partie_status": "paused"}
    # Pausing shows nothing of anyone's cards: the hand is the same but for its deadline.
    assert seen_paused["deadline"] is None and seen_paused["deadline_kind"] == "paused"
    assert {k: v for k, v in seen_paused.items() if not k.startswith("deadline")} == {
        k: v for k, v in seen_before.items() if not k.startswith("deadline")}
    assert not CARD.findall(json.dumps([told, caught_up[-1]]))


def test_nobody_moves_at_a_paused_table_and_the_pausers_move_brings_him_back(
        table: Partie, people: list[Any], api_as: Any) -> None:
    hand = table.hands.get()
    mover, move = _awaited(hand)
    assert mover in (0, 1)  # the bots have played: the table waits for a person
    other = 1 - mover
    users = {0: people[0], 1: people[1]}
    _away(api_as(users[other]), table, away=True, how="pause")
    seq = hand.last_seq

    refused = api_as(users[mover]).post(f"/api/hands/{hand.pk}/moves", {
        "seq": seq, "command_id": str(uuid.uuid4()), "move": move.to_dict()}, format="json")

    assert refused.status_code == 409 and refused.json()["error"] == "table_paused"
    assert users[other].username in refused.json()["detail"]
    hand.refresh_from_db()
    assert hand.last_seq == seq
    # The one the table waits for moves: he is back, the table resumes and his move is played.
    _away(api_as(users[other]), table, away=False)
    _away(api_as(users[mover]), table, away=True, how="pause")
    played = move_play(hand_id=hand.pk, user=users[mover], move=move, seq=seq,
                       command_id=uuid.uuid4(), at=timezone.now())
    assert played.response["applied_from_seq"] == seq + 1
    table.refresh_from_db()
    assert table.paused_at is None
    assert not Seat.objects.get(partie=table, number=mover).away


def test_the_table_resumes_only_when_every_person_who_paused_it_is_back(
        table: Partie, people: list[Any], api_as: Any) -> None:
    hand = table.hands.get()
    mover, move = _awaited(hand)
    other = 1 - mover
    users = {0: people[0], 1: people[1]}
    for user in users.values():
        _away(api_as(user), table, away=True, how="pause")
    seq = hand.last_seq

    # His move brings him back, but the table still waits for the other: refused.
    with pytest.raises(TablePaused, match=users[other].username):
        move_play(hand_id=hand.pk, user=users[mover], move=move, seq=seq,
                  command_id=uuid.uuid4(), at=timezone.now())

    table.refresh_from_db()
    assert table.paused_at is not None
    assert list(table.seats.filter(pauses=True).values_list("number", flat=True)) == [other]
    assert not table.seats.get(number=mover).away
    hand.refresh_from_db()
    assert hand.last_seq == seq and hand.deadline_kind == "paused"
    seat_away(partie_id=table.pk, user=users[other], away=False, at=timezone.now())
    table.refresh_from_db()
    hand.refresh_from_db()
    assert table.paused_at is None and hand.deadline is not None


def test_leaving_by_the_time_out_rule_at_a_casual_table_plays_his_decision_at_once(
        table: Partie, people: list[Any], api_as: Any) -> None:
    hand = table.hands.get()
    mover, _move = _awaited(hand)
    seq = hand.last_seq

    answer = _away(api_as(people[mover]), table, away=True, how="timeout")

    assert (answer.json()["how"], answer.json()["paused"]) == ("timeout", False)
    assert HandEvent.objects.get(hand=hand, seq=seq + 1).payload["seat"] == mover
    table.refresh_from_db()
    assert table.paused_at is None


def test_a_soiree_table_refuses_to_wait_and_changes_nothing(
        organiser: Any, api_as: Any) -> None:
    club = club_create(name="Cercle", slug="cercle", organiser=organiser)
    membership_add(club=club, user=organiser, role=Membership.Role.PLAYER)
    place = one_table(club=club, player=organiser, name="Mardi du Cercle")
    partie = place.partie
    client = api_as(organiser)

    refused = _away(client, partie, away=True, how="pause")
    in_french = client.post(f"/api/parties/{partie.pk}/away", {"away": True, "how": "pause"},
                            format="json", headers={"accept-language": "fr"})

    assert refused.status_code == 409 and refused.json()["error"] == "pause_refused"
    assert "soirée" in refused.json()["detail"] and "time-out rule" in refused.json()["detail"]
    assert in_french.status_code == 409
    assert "soirée" in in_french.json()["detail"] and "temps écoulé" in in_french.json()["detail"]
    seat = partie.seats.get(player=organiser)
    partie.refresh_from_db()
    assert (seat.away, seat.pauses, partie.paused_at) == (False, False, None)
    assert client.get(f"/api/parties/{partie.pk}/away").json()["may_pause"] is False
    # The time-out rule, as always.
    left = _away(client, partie, away=True, how="timeout")
    assert left.status_code == 200 and left.json()["how"] == "timeout"


def test_an_unknown_way_to_leave_is_a_400_that_names_it_and_changes_nothing(
        table: Partie, people: list[Any], api_as: Any) -> None:
    client = api_as(people[0])

    answer = _away(client, table, away=True, how="nap")
    in_french = client.post(f"/api/parties/{table.pk}/away", {"away": True, "how": "nap"},
                            format="json", headers={"accept-language": "fr"})

    assert answer.status_code == 400 and answer.json()["error"] == "invalid"
    detail = answer.json()["detail"]
    assert "how" in detail and "'nap'" in detail and "pause" in detail and "timeout" in detail
    assert in_french.status_code == 400 and "façon de quitter" in in_french.json()["detail"]
    seat = table.seats.get(player=people[0])
    table.refresh_from_db()
    assert (seat.away, seat.pauses, table.paused_at) == (False, False, None)


def test_only_a_seated_player_pauses_and_only_a_table_in_play(
        table: Partie, people: list[Any], api_as: Any, django_user_model: Any,
        outsider: Any) -> None:
    staff = django_user_model.objects.create_user("staff", is_staff=True)

    watcher = _away(api_as(staff), table, away=True, how="pause")  # may watch, has no seat
    stranger = _away(api_as(outsider), table, away=True, how="pause")
    Partie.objects.filter(pk=table.pk).update(status=Partie.Status.OVER)
    late = _away(api_as(people[0]), table, away=True, how="pause")

    assert (watcher.status_code, watcher.json()["error"]) == (403, "not_seated")
    assert (stranger.status_code, stranger.json()["error"]) == (403, "not_viewer")
    assert (late.status_code, late.json()["error"]) == (409, "partie_over")
    assert not table.seats.filter(away=True).exists()
    assert Partie.objects.get(pk=table.pk).paused_at is None


def test_a_table_paused_too_long_is_given_up_by_the_clock(
        clock: Any, table: Partie, people: list[Any], api_as: Any) -> None:
    _away(api_as(people[0]), table, away=True, how="pause")
    clock.shift((PAUSE_LIMIT - timedelta(minutes=1)).total_seconds())
    sweep_deadlines()
    table.refresh_from_db()
    assert table.paused_at is not None

    clock.shift(120)
    sweep_deadlines()

    table.refresh_from_db()
    alice = table.seats.get(player=people[0])
    assert table.paused_at is None and table.deal_until is not None
    assert (alice.away, alice.pauses) == (True, False)  # the time-out rule plays for her now
    # The hand in play is finished (bruno's deadlines, alice played at once), and no other.
    for _ in range(200):
        if Partie.objects.get(pk=table.pk).status == Partie.Status.OVER:
            break
        clock.shift(5)
        sweep_deadlines()
    assert Partie.objects.get(pk=table.pk).status == Partie.Status.OVER
    assert table.hands.count() == 1


def _cookie(user: Any) -> bytes:
    client = Client()
    client.force_login(user)
    return f"sessionid={client.cookies['sessionid'].value}".encode()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql",
                    reason="the sockets read the database from other threads")
def test_the_other_persons_page_is_told_live_by_a_frame(
        table: Partie, people: list[Any], settings: Any) -> None:
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "games.live.InProcessChannelLayer"}}
    path = f"/ws/parties/{table.pk}/seats/1/"
    headers = [(b"host", b"testserver"), (b"origin", b"http://testserver"),
               (b"cookie", _cookie(people[1]))]

    async def frames(socket: WebsocketCommunicator) -> list[dict[str, Any]]:
        got = []
        while not await socket.receive_nothing(timeout=0.5):
            got.append(await socket.receive_json_from())
        return got

    async def scenario() -> list[list[dict[str, Any]]]:
        socket = WebsocketCommunicator(application, path, headers)
        assert (await socket.connect())[0]
        await frames(socket)
        await sync_to_async(seat_away)(partie_id=table.pk, user=people[0], away=True,
                                       at=timezone.now(), how="pause")
        paused = await frames(socket)
        await sync_to_async(seat_away)(partie_id=table.pk, user=people[0], away=False,
                                       at=timezone.now())
        resumed = await frames(socket)
        await socket.disconnect()
        return [paused, resumed]

    paused, resumed = async_to_sync(scenario)()

    assert paused == [{"kind": "partie", "partie": str(table.pk), "partie_status": "paused"}]
    assert resumed[-1] == {"kind": "partie", "partie": str(table.pk),
                           "partie_status": "playing"}
