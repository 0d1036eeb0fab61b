"""Live table updates (games/live.py): what a command announces once it commits, and the stream
of server-sent events pages watch (GET /api/parties/{id}/live), served by a thread (the embedded
server), by an event loop (the live server, ASGI) and, with Redis, across processes."""

from __future__ import annotations

import base64
import json
import random
import socket
import threading
import time
import uuid
from contextlib import nullcontext
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.test import AsyncClient
from rest_framework.test import APIClient

from games import live
from games.errors import StaleSequence
from games.models import Hand, Partie
from games.services import move_play, partie_close, store

from .factories import PartieFactory

pytestmark = pytest.mark.django_db

T0 = datetime(2030, 5, 4, 20, 0, tzinfo=UTC)
KEYS = {"partie", "partie_status", "hand", "number", "seq", "status"}
STREAM = "text/event-stream"


def _partie(people: list[Any], *, pause: int = 30) -> Partie:
    # Announcing is optional, so that a hand is not over at its deal.
    return PartieFactory(game="commere", players=people, buy_in=100, at=T0,
                         options={"rounds": 3, "compulsory_announce": False},
                         pause_between_hands=timedelta(seconds=pause))


def _move(hand: Hand, rng: random.Random) -> tuple[int, Any]:
    loaded = store.load(hand)
    seat = loaded.game.to_act(loaded.state)[0]
    return seat, rng.choice(loaded.game.legal_moves(loaded.state)[seat])


def _play(hand: Hand, users: dict[int, Any], rng: random.Random, capture: Any) -> Hand:
    seat, move = _move(hand, rng)
    with capture(execute=True):
        played = move_play(hand_id=hand.id, user=users[seat], move=move, seq=hand.last_seq,
                           command_id=uuid.uuid4(), at=T0 + timedelta(seconds=1))
    return played.hand


def _drain(watcher: live.Watcher) -> list[dict[str, Any]]:
    got = []
    while (message := watcher.get(0)) is not None:
        got.append(message)
    return got


def _users(partie: Partie) -> dict[int, Any]:
    return {s.number: s.player for s in partie.seats.all()}


def test_a_committed_move_announces_its_hand_and_nothing_a_spectator_may_not_see(
        people, live_hub, django_capture_on_commit_callbacks):
    partie = _partie(people)
    hand = partie.hands.get()
    watcher = live_hub.watch([partie.pk])

    moved = _play(hand, _users(partie), random.Random(3), django_capture_on_commit_callbacks)

    [message] = _drain(watcher)
    assert set(message) == KEYS
    assert message == {"partie": str(partie.pk), "partie_status": "playing",
                       "hand": str(hand.pk), "number": 1, "seq": moved.last_seq,
                       "status": moved.status}
    assert moved.last_seq > hand.last_seq


def test_a_refused_move_announces_nothing_and_a_move_only_once_it_commits(
        people, live_hub, django_capture_on_commit_callbacks):
    partie = _partie(people)
    hand = partie.hands.get()
    users = _users(partie)
    seat, move = _move(hand, random.Random(4))
    watcher = live_hub.watch([partie.pk])

    with django_capture_on_commit_callbacks(execute=True), pytest.raises(StaleSequence):
        move_play(hand_id=hand.id, user=users[seat], move=move, seq=hand.last_seq - 1,
                  command_id=uuid.uuid4(), at=T0)
    assert _drain(watcher) == []
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        played = move_play(hand_id=hand.id, user=users[seat], move=move, seq=hand.last_seq,
                           command_id=uuid.uuid4(), at=T0)
    assert _drain(watcher) == []  # not committed yet
    for callback in callbacks:  # what the commit runs
        callback()
    assert [m["seq"] for m in _drain(watcher)] == [played.hand.last_seq]


def test_the_move_that_ends_a_hand_announces_its_end_then_the_next_deal(
        people, live_hub, django_capture_on_commit_callbacks):
    partie = _partie(people, pause=0)
    hand = partie.hands.get()
    users, rng = _users(partie), random.Random(5)
    watcher = live_hub.watch([partie.pk])

    commands = 0
    while hand.status != Hand.Status.OVER:
        hand = _play(hand, users, rng, django_capture_on_commit_callbacks)
        commands += 1

    heard = _drain(watcher)
    assert len(heard) == commands + 1  # one per command, and the next hand's deal
    second = partie.hands.get(number=2)
    assert heard[-2:] == [
        {"partie": str(partie.pk), "partie_status": "playing", "hand": str(hand.pk),
         "number": 1, "seq": hand.last_seq, "status": "over"},
        {"partie": str(partie.pk), "partie_status": "playing", "hand": str(second.pk),
         "number": 2, "seq": second.last_seq, "status": second.status},
    ]
    assert [m["seq"] for m in heard[:-1]] == sorted(m["seq"] for m in heard[:-1])


def test_a_partie_that_closes_is_announced(people, live_hub, django_capture_on_commit_callbacks):
    partie = _partie(people)
    hand = partie.hands.get()
    Hand.objects.filter(pk=hand.pk).update(status=Hand.Status.OVER)  # as if it had ended
    watcher = live_hub.watch([partie.pk])

    with django_capture_on_commit_callbacks(execute=True):
        partie_close(partie=partie, at=T0 + timedelta(hours=1))

    assert _drain(watcher) == [{"partie": str(partie.pk), "partie_status": "over", "hand": None,
                                "number": None, "seq": None, "status": None}]


# -- the stream --------------------------------------------------------------------------------


def _events(chunks: list[bytes]) -> list[dict[str, Any]]:
    return [json.loads(c[len(b"data: "):]) for c in chunks if c.startswith(b"data: ")]


def test_the_stream_sends_the_current_hand_then_each_announcement_then_ends(
        people, settings, django_capture_on_commit_callbacks):
    settings.ACADEMIE_LIVE_SECONDS = 1.0
    settings.ACADEMIE_LIVE_KEEPALIVE_SECONDS = 0.2
    partie = _partie(people)
    hand = partie.hands.get()
    client = APIClient()
    client.force_authenticate(people[0])

    response = client.get(f"/api/parties/{partie.pk}/live", HTTP_ACCEPT=STREAM,
                          **{"wsgi.multithread": True})
    assert response.status_code == 200
    assert response["Content-Type"] == STREAM
    assert response["Cache-Control"] == "no-cache"
    chunks = iter(response.streaming_content)
    assert next(chunks) == b"retry: 2000\n\n"
    [first] = _events([next(chunks)])
    assert first == {"partie": str(partie.pk), "partie_status": "playing", "hand": str(hand.pk),
                     "number": 1, "seq": hand.last_seq, "status": "playing"}

    moved = _play(hand, _users(partie), random.Random(6), django_capture_on_commit_callbacks)
    began = time.monotonic()
    rest = list(chunks)  # the announcement, keep-alives, then the stream ends

    assert _events(rest) == [{**first, "seq": moved.last_seq, "status": moved.status}]
    assert b": keep-alive\n\n" in rest
    assert time.monotonic() - began < 2.0


def test_a_worker_that_serves_one_request_at_a_time_gets_one_event_and_the_stream_ends(
        people, live_hub):
    partie = _partie(people)
    client = APIClient()
    client.force_authenticate(people[0])

    response = client.get(f"/api/parties/{partie.pk}/live", HTTP_ACCEPT=STREAM)

    chunks = list(response.streaming_content)  # wsgi.multithread False: no waiting
    assert chunks[0] == b"retry: 2000\n\n"
    assert [e["hand"] for e in _events(chunks)] == [str(partie.hands.get().pk)]
    assert live_hub.watching(partie.pk) == 0  # its watcher is released


def test_the_stream_refuses_strangers_and_unknown_parties_with_the_usual_errors(people):
    partie = _partie(people)
    client = APIClient()

    anonymous = client.get(f"/api/parties/{partie.pk}/live", HTTP_ACCEPT=STREAM)
    client.force_authenticate(people[0])
    nobody = uuid.uuid4()
    unknown = client.get(f"/api/parties/{nobody}/live", HTTP_ACCEPT=STREAM)
    as_json = client.get(f"/api/parties/{nobody}/live", HTTP_ACCEPT="application/json")

    assert anonymous.status_code == 401
    assert anonymous.content.startswith(b"event: error\ndata: ")
    assert "credentials" in json.loads(anonymous.content.split(b"data: ", 1)[1])["detail"]
    assert unknown.status_code == 404
    assert json.loads(unknown.content.split(b"data: ", 1)[1])["detail"] == \
        f"no such partie: {nobody}"
    assert as_json.status_code == 404
    assert as_json.json()["detail"] == f"no such partie: {nobody}"


@pytest.mark.parametrize(("path", "asked"), [
    ("/api/parties/{pk}/live?format=json", {}),
    ("/api/parties/{pk}/live", {"HTTP_ACCEPT": "application/json"}),
    ("/api/live?partie={pk}&format=json", {}),
])
def test_a_stream_asked_for_as_json_is_refused_with_406_naming_its_format(
        people, live_hub, path, asked):
    partie = _partie(people)
    client = APIClient()
    client.force_authenticate(people[0])

    answer = client.get(path.format(pk=partie.pk), **asked)

    assert answer.status_code == 406
    assert answer["Content-Type"] == "application/json"
    assert answer.json()["error"] == "not_acceptable"
    assert "served only as text/event-stream" in answer.json()["detail"]
    assert live_hub.watching(partie.pk) == 0  # no stream was opened


def test_one_stream_watches_several_parties_a_soiree_page_s_tables(
        people, django_user_model, settings, django_capture_on_commit_callbacks):
    settings.ACADEMIE_LIVE_SECONDS = 1.0
    settings.ACADEMIE_LIVE_KEEPALIVE_SECONDS = 0.2
    first = _partie(people)
    others = [django_user_model.objects.create_user(n, password="pw-for-tests")
              for n in ("emile", "fanny", "gaston", "helene")]
    second = _partie(others)
    client = APIClient()
    client.force_authenticate(people[0])

    response = client.get(f"/api/live?partie={second.pk}&partie={first.pk}&partie={second.pk}",
                          HTTP_ACCEPT=STREAM, **{"wsgi.multithread": True})
    chunks = iter(response.streaming_content)
    assert next(chunks) == b"retry: 2000\n\n"
    opening = _events([next(chunks), next(chunks)])  # each partie once, in the order asked
    hand = second.hands.get()
    moved = _play(hand, _users(second), random.Random(9), django_capture_on_commit_callbacks)
    rest = _events(list(chunks))

    assert [(m["partie"], m["hand"]) for m in opening] == [
        (str(second.pk), str(hand.pk)), (str(first.pk), str(first.hands.get().pk))]
    assert rest == [{**opening[0], "seq": moved.last_seq, "status": moved.status}]


@pytest.mark.parametrize(("query", "status", "detail"), [
    ("", 400, "name at least one partie to watch"),
    ("?partie=7", 400, "not a partie id: '7'"),
    ("?" + "&".join(f"partie={uuid.UUID(int=i)}" for i in range(51)), 400,
     "at most 50 parties at once"),
    (f"?partie={uuid.UUID(int=7)}", 404, f"no such partie: {uuid.UUID(int=7)}"),
])
def test_watching_several_parties_refuses_a_wrong_list_and_names_the_problem(
        people, query, status, detail):
    client = APIClient()
    client.force_authenticate(people[0])

    answer = client.get(f"/api/live{query}", HTTP_ACCEPT="application/json")

    assert answer.status_code == status
    assert detail in answer.json()["detail"]


def test_the_live_server_asgi_streams_from_its_event_loop(people, settings, live_hub):
    settings.ACADEMIE_LIVE_SECONDS = 2.0
    settings.ACADEMIE_LIVE_KEEPALIVE_SECONDS = 0.2
    settings.ACADEMIE_LIVE_ORIGINS = ["http://pages.example"]
    partie = _partie(people)
    hand = partie.hands.get()
    later = {**live.announcement(partie=partie, hand=hand), "seq": hand.last_seq + 1}

    async def watch() -> tuple[Any, list[bytes]]:
        client = AsyncClient()
        await client.aforce_login(people[0])
        response = await client.get(f"/api/parties/{partie.pk}/live", headers={
            "Accept": STREAM, "Origin": "http://pages.example"})
        chunks: list[bytes] = []
        async for chunk in response.streaming_content:
            chunks.append(chunk)
            if len(chunks) == 2:  # subscribed and sent the current hand: a command commits
                threading.Thread(target=live.announce, args=(later,)).start()
            if len(_events(chunks)) == 2:
                break
        return response, chunks

    response, chunks = async_to_sync(watch)()

    assert response.status_code == 200
    assert response["Access-Control-Allow-Origin"] == "http://pages.example"
    assert response["Access-Control-Allow-Credentials"] == "true"
    assert [e["seq"] for e in _events(chunks)] == [hand.last_seq, hand.last_seq + 1]


def test_a_command_commits_and_answers_even_when_redis_is_down(
        people, django_capture_on_commit_callbacks):
    partie = _partie(people)
    hand = partie.hands.get()
    live.use_hub(live.RedisHub("redis://127.0.0.1:1/0"))  # nothing listens there

    moved = _play(hand, _users(partie), random.Random(7), django_capture_on_commit_callbacks)

    assert Hand.objects.get(pk=hand.pk).last_seq == moved.last_seq > hand.last_seq


# -- the deployment: the live server (uvicorn, ASGI) and the commands' processes, on Redis ----


def _read_event(sock_file: Any, deadline: float) -> dict[str, Any]:
    """The next data event of a raw chunked HTTP stream (keep-alives skipped)."""
    while time.monotonic() < deadline:
        line = sock_file.readline()
        if line.startswith(b"data: "):
            return json.loads(line[len(b"data: "):])
    raise AssertionError("no event in time")


@pytest.mark.postgres
@pytest.mark.redis
def test_the_live_server_streams_what_another_process_commits(asgi_server, people):
    partie = _partie(people)
    hand = partie.hands.get()
    sock = socket.create_connection(("127.0.0.1", asgi_server.port), timeout=10)
    auth = base64.b64encode(b"alice:pw-for-tests").decode()
    sock.sendall(f"GET /api/parties/{partie.pk}/live HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                 f"Accept: {STREAM}\r\nAuthorization: Basic {auth}\r\n\r\n".encode())
    stream = sock.makefile("rb")
    status = stream.readline()
    assert b" 200 " in status, status + stream.read(2000)
    first = _read_event(stream, time.monotonic() + 10)
    assert (first["hand"], first["seq"]) == (str(hand.pk), hand.last_seq)

    moved = _play(hand, _users(partie), random.Random(8), lambda execute: nullcontext())

    heard = _read_event(stream, time.monotonic() + 10)
    assert heard == {**first, "seq": moved.last_seq, "status": moved.status}
    sock.close()
