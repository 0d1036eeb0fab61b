"""Live table updates (games/live.py, games/consumers.py) through the ASGI application as
deployed (config/asgi.py: origin check, session auth, the routes), on the in-process channel
layer of the embedded default and on channels-redis.

Each test drives its sockets from one ``async_to_sync`` scenario: the consumers' database reads
and the services run from it (``sync_to_async``) come back to the test's thread, and a command's
on-commit push runs on the scenario's event loop, as a request's does under daphne.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest
import redis
from asgiref.sync import async_to_sync, sync_to_async
from channels.testing import WebsocketCommunicator
from django.test import Client
from django.utils import timezone

from config.asgi import application
from games import signing
from games.engine.cards import COMET, FULL_DECK, is_card
from games.engine.seals import shown_hash
from games.live import InProcessChannelLayer
from games.models import Hand, Partie
from games.services import move_play, partie_close, store

from ..receipts import receipt_verifies
from .factories import PartieFactory, UserFactory

# The sockets' reads run on the test's thread between its commands, which commit: transactional
# tests, which the append-only triggers let only PostgreSQL's test set-up empty (tests/conftest.py).
pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

REDIS_URL = "redis://127.0.0.1:6379/11"
PRIVATE_TYPES = {"offer", "give_back", "return", "draw"}  # RULES.md §3: seen by some seats


@pytest.fixture(autouse=True)
def seeded_deals(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every deal of the test from a seed derived from the test's name."""
    counter = iter(range(1_000_000))
    monkeypatch.setattr("games.services.parties.new_seed", lambda: hashlib.sha256(
        f"{request.node.nodeid}:{next(counter)}".encode()).hexdigest())


@pytest.fixture(params=["in-process", pytest.param("redis", marks=pytest.mark.redis)])
def layer(request: pytest.FixtureRequest, settings: Any) -> Iterator[str]:
    if request.param == "in-process":
        settings.CHANNEL_LAYERS = {"default": {"BACKEND": "games.live.InProcessChannelLayer"}}
        yield request.param
        return
    prefix = f"academie-test:{uuid.uuid4().hex}"
    settings.CHANNEL_LAYERS = {"default": {
        "BACKEND": "channels_redis.core.RedisChannelLayer",
        "CONFIG": {"hosts": [REDIS_URL], "prefix": prefix}}}
    yield request.param
    client = redis.Redis.from_url(REDIS_URL)
    for key in client.scan_iter(f"{prefix}*"):
        client.delete(key)


def _cookie(user: Any) -> bytes:
    client = Client()
    client.force_login(user)
    return f"sessionid={client.cookies['sessionid'].value}".encode()


def _socket(path: str, cookie: bytes | None = None, *,
            origin: bytes = b"http://testserver") -> WebsocketCommunicator:
    headers = [(b"host", b"testserver"), (b"origin", origin)]
    if cookie is not None:
        headers.append((b"cookie", cookie))
    return WebsocketCommunicator(application, path, headers)


async def _drain(socket: WebsocketCommunicator, wait: float = 0.5) -> list[dict[str, Any]]:
    """Every frame the socket has received, once none has come for ``wait`` seconds."""
    frames = []
    while not await socket.receive_nothing(timeout=wait):
        frames.append(await socket.receive_json_from())
    return frames


def _reached(frames: list[dict[str, Any]], hand_id: str, seq: int) -> bool:
    return any(f.get("kind") == "hand" and f.get("hand") == hand_id and f["seq"] >= seq
               for f in frames)


async def _drain_until(socket: WebsocketCommunicator, hand_id: str, seq: int,
                       seen: list[dict[str, Any]], within: float = 60) -> list[dict[str, Any]]:
    """Every frame the socket receives until the one of ``hand_id`` at ``seq`` (the last the
    test made), unless it is among the frames already ``seen``, however long a loaded machine
    takes to pass it on, up to ``within`` s."""
    frames: list[dict[str, Any]] = []
    if _reached(seen, hand_id, seq):
        return await _drain(socket, 0.05)
    end = time.monotonic() + within
    while time.monotonic() < end:
        if await socket.receive_nothing(timeout=0.1):
            continue
        frames.append(await socket.receive_json_from())
        last = frames[-1]
        if last.get("kind") == "hand" and last.get("hand") == hand_id and last["seq"] >= seq:
            break
    return frames


async def _closed_with(socket: WebsocketCommunicator) -> int:
    connected, _ = await socket.connect()
    assert connected  # accepted, then closed with a code the page can read
    message = await socket.receive_output(timeout=2)
    assert message["type"] == "websocket.close"
    return int(message["code"])


def _commere(people: list[Any]) -> Partie:
    # Announcing is optional, so that a hand is not over at its deal.
    return PartieFactory(game="commere", players=people, buy_in=100,
                         options={"rounds": 3, "compulsory_announce": False},
                         pause_between_hands=timedelta(seconds=30))


def _users(partie: Partie) -> dict[int, Any]:
    return {s.number: s.player for s in partie.seats.all()}


def _play_one(hand_id: Any, users: dict[int, Any], rng: random.Random) -> Hand:
    """The awaited seat's move (a random legal one), as its own browser would post it."""
    hand = Hand.objects.select_related("partie", "secret").get(pk=hand_id)
    loaded = store.load(hand)
    seat = loaded.game.to_act(loaded.state)[0]
    move = rng.choice(loaded.game.legal_moves(loaded.state)[seat])
    return move_play(hand_id=hand.pk, user=users[seat], move=move, seq=hand.last_seq,
                     command_id=uuid.uuid4(), at=timezone.now()).hand


def test_a_move_reaches_the_public_and_the_seat_groups_with_its_seq(layer, people) -> None:
    partie = _commere(people)
    hand = partie.hands.get()
    users = _users(partie)
    cookies = {seat: _cookie(user) for seat, user in users.items()}
    watcher = _cookie(people[0])

    async def scenario() -> None:
        public = _socket(f"/ws/parties/{partie.pk}/", watcher)
        seats = {n: _socket(f"/ws/parties/{partie.pk}/seats/{n}/", c) for n, c in cookies.items()}
        for socket in (public, *seats.values()):
            assert (await socket.connect())[0]
            [first] = await _drain(socket, 0.2)  # the hand as it is now
            assert (first["hand"], first["seq"]) == (str(hand.pk), hand.last_seq)

        moved = await sync_to_async(_play_one)(hand.pk, users, random.Random(3))

        new_seqs = list(range(hand.last_seq + 1, moved.last_seq + 1))
        public_frames = await _drain(public)
        assert [f["seq"] for f in public_frames] == new_seqs
        assert {(f["kind"], f["hand"], f["partie"]) for f in public_frames} == {
            ("hand", str(hand.pk), str(partie.pk))}
        assert public_frames[-1]["your_seat"] is None and public_frames[-1]["view"]["hand"] is None
        for n, socket in seats.items():
            frames = await _drain(socket, 0.1)
            assert [f["seq"] for f in frames] == new_seqs
            assert frames[-1]["your_seat"] == n
            assert len(frames[-1]["view"]["hand"]) == 3  # his own three cards
            assert [f["event"]["seq"] for f in frames] == new_seqs
        for socket in (public, *seats.values()):
            await socket.disconnect()

    async_to_sync(scenario)()


def _make_staff(user: Any) -> None:
    user.is_staff = True
    user.save(update_fields=["is_staff"])


def test_only_the_seated_person_may_join_a_seat_and_strangers_none(
        layer, people, outsider) -> None:
    partie = _commere(people)
    bot_table = PartieFactory(game="comet", players=[UserFactory()],
                              bots=["heuristic", "heuristic"], buy_in=20)
    seat1 = next(s.number for s in partie.seats.all() if s.player_id == people[1].pk)
    bot_seat = next(s.number for s in bot_table.seats.all() if s.bot)
    alice, bruno, oscar = _cookie(people[0]), _cookie(people[1]), _cookie(outsider)
    path = f"/ws/parties/{partie.pk}/seats/{seat1}/"

    async def scenario() -> None:
        assert await _closed_with(_socket(path, alice)) == 4403
        assert await _closed_with(_socket(path, oscar)) == 4403
        assert await _closed_with(_socket(path)) == 4401  # nobody signed in
        assert await _closed_with(_socket(f"/ws/parties/{partie.pk}/")) == 4401
        assert await _closed_with(_socket(
            f"/ws/parties/{bot_table.pk}/seats/{bot_seat}/", alice)) == 4403
        assert await _closed_with(_socket(f"/ws/parties/{partie.pk}/seats/9/", bruno)) == 4404
        assert await _closed_with(_socket(f"/ws/parties/{uuid.uuid4()}/", bruno)) == 4404
        assert await _closed_with(_socket(f"{path}?hand=nope&after=1", bruno)) == 4400
        assert await _closed_with(_socket(f"{path}?after=-1&hand={uuid.uuid4()}", bruno)) == 4400
        # Another site's page cannot open the socket with the person's cookie.
        connected, _ = await _socket(path, bruno, origin=b"http://evil.example").connect()
        assert not connected
        # The seated person may: his own cards come first.
        mine = _socket(path, bruno)
        assert (await mine.connect())[0]
        [frame] = await _drain(mine, 0.2)
        assert frame["your_seat"] == seat1 and len(frame["view"]["hand"]) == 3
        await mine.disconnect()
        # A casual table is watched by its players and staff only (games/permissions.py).
        assert await _closed_with(_socket(f"/ws/parties/{partie.pk}/", oscar)) == 4403
        await sync_to_async(_make_staff)(outsider)
        public = _socket(f"/ws/parties/{partie.pk}/", oscar)
        assert (await public.connect())[0]
        [frame] = await _drain(public, 0.2)
        assert frame["your_seat"] is None and frame["view"]["hand"] is None
        await public.disconnect()

    async_to_sync(scenario)()


def test_a_client_that_reconnects_after_a_seq_gets_what_it_missed(layer, people) -> None:
    partie = _commere(people)
    hand = partie.hands.get()
    users = _users(partie)
    seat = next(n for n, u in users.items() if u.pk == people[2].pk)
    cookie = _cookie(people[2])
    rng = random.Random(5)

    async def scenario() -> None:
        first = _socket(f"/ws/parties/{partie.pk}/seats/{seat}/", cookie)
        assert (await first.connect())[0]
        [now] = await _drain(first, 0.2)
        moved = await sync_to_async(_play_one)(hand.pk, users, rng)
        live = await _drain(first)
        await first.disconnect()
        seen = now["seq"]
        assert live and live[-1]["seq"] == moved.last_seq

        # While away: two more moves.
        for _ in range(2):
            moved = await sync_to_async(_play_one)(hand.pk, users, rng)

        again = _socket(f"/ws/parties/{partie.pk}/seats/{seat}/?hand={hand.pk}&after={seen}",
                        cookie)
        assert (await again.connect())[0]
        missed = await _drain(again, 0.3)
        assert [f["seq"] for f in missed] == list(range(seen + 1, moved.last_seq + 1))
        # The same events and views as the push sent, built again from the event store (only
        # the deadline the hand then waited on is gone: it has moved on).
        def kept(frames: list[dict[str, Any]]) -> list[Any]:
            return [(f["seq"], f["event"], f["view"]) for f in frames]

        assert kept(missed[:len(live)]) == kept(live)
        # A first message asks the same of an open socket.
        await again.send_json_to({"hand": str(hand.pk), "after": moved.last_seq - 1})
        [last] = await _drain(again, 0.3)
        assert last == missed[-1]
        await again.send_json_to({"after": "soon"})
        assert (await again.receive_json_from())["kind"] == "error"
        await again.disconnect()

    async_to_sync(scenario)()


def test_the_in_process_layer_hands_a_send_from_another_thread_to_the_receiving_loop() -> None:
    """The embedded default's timer threads push through the server's event loop: without the
    hand-over the waiting loop would not wake for it until its next timer."""
    layer = InProcessChannelLayer()

    async def scenario() -> tuple[Any, float]:
        channel = await layer.new_channel()
        await layer.group_add("table", channel)
        receiving = asyncio.ensure_future(layer.receive(channel))
        await asyncio.sleep(0.05)  # waiting on this loop
        began = time.monotonic()
        timer = threading.Thread(target=async_to_sync(layer.group_send),
                                 args=("table", {"type": "live.frames", "frames": []}))
        timer.start()
        message = await asyncio.wait_for(receiving, 5)
        await asyncio.to_thread(timer.join, 5)  # its send completes on this loop
        return message, time.monotonic() - began

    message, took = async_to_sync(scenario)()
    assert message == {"type": "live.frames", "frames": []}
    assert took < 1


def test_a_partie_that_closes_is_announced_to_its_watchers(layer, people) -> None:
    partie = PartieFactory(game="comet", players=[people[0]], bots=["heuristic", "heuristic"],
                           buy_in=20)
    hand = partie.hands.get()
    _make_staff(people[1])  # a casual table's watcher who does not sit at it
    watcher = _cookie(people[1])

    async def scenario() -> None:
        public = _socket(f"/ws/parties/{partie.pk}/", watcher)
        assert (await public.connect())[0]
        await _drain(public, 0.2)
        # The bots and the person's time-outs end the hand, then the partie closes.
        await sync_to_async(_finish_and_close)(hand.pk, partie.pk)
        frames = await _drain(public)
        assert frames[-1] == {"kind": "partie", "partie": str(partie.pk), "partie_status": "over"}
        await public.disconnect()

    async_to_sync(scenario)()


def _finish_and_close(hand_id: Any, partie_id: Any) -> None:
    from games.services import deadline_fire

    hand = Hand.objects.get(pk=hand_id)
    while hand.status != Hand.Status.OVER:
        # Each decision when it is due: a deadline counts from the decision before it.
        assert hand.deadline is not None
        assert deadline_fire(hand_id=hand.pk, seq=hand.last_seq, at=hand.deadline)
        hand.refresh_from_db()
    partie_close(partie=Partie.objects.get(pk=partie_id), at=timezone.now())


# -- hidden information ---------------------------------------------------------------------


def _held(state: Any, seat: int) -> set[str]:
    if not hasattr(state, "hands"):  # a version-2 hand before its deal: nobody holds a card
        return set()
    hand = state.hands[seat]
    if isinstance(hand, int):  # Comet: a mask of canonical card indices
        return {card for i, card in enumerate(FULL_DECK) if hand >> i & 1}
    return set(hand)


#: Fields that name a card nobody is shown holding: the card Comet's run needs next, or cannot
#: get, follows from the cards played.
NAMED_ONLY = {"next_card", "blocked"}


def _cards(value: Any) -> set[str]:
    """Every card shown anywhere in ``value`` (a frame)."""
    if isinstance(value, dict):
        return set().union(*(_cards(v) for k, v in value.items() if k not in NAMED_ONLY))
    if isinstance(value, list):
        return set().union(*map(_cards, value))
    return {value} if is_card(value) else set()


def _allowed(hand: Hand, n_seats: int) -> Callable[[int | None, int], set[str] | None]:
    """What each audience may have seen by each seq, worked out from the hand's full stream and
    the engine's states, not from the views: the cards of public events, and for a seat the
    cards it has held and those offered to it. ``None`` once the hand is over: everything."""
    stream = store.events(hand)
    from games.engine.base import Event

    game, state = store.start(hand)
    public: set[str] = set()
    known: dict[int, set[str]] = {s: set() for s in range(n_seats)}
    by_seq: dict[int, tuple[set[str], dict[int, set[str]]]] = {}
    for event in stream:
        state = game.apply(state, Event.from_dict(event))
        payload = {k: v for k, v in event.items() if k not in ("hash", "prev")}
        if event["type"] not in PRIVATE_TYPES:
            public |= _cards(payload) | ({COMET} if event["type"] == "comet" else set())
        elif event["type"] == "offer":
            known[(event["seat"] + 1) % n_seats].add(event["card"])
        for s in range(n_seats):
            known[s] |= _held(state, s)
        by_seq[event["seq"]] = (set(public), {s: set(c) for s, c in known.items()})
    last = stream[-1]["seq"]

    def allowed(audience: int | None, seq: int) -> set[str] | None:
        if seq == last and hand.status == Hand.Status.OVER:
            return None
        seen, mine = by_seq[seq]
        return seen if audience is None else seen | mine[audience]

    return allowed


@pytest.mark.parametrize("game", ["commere", "comet"])
def test_no_frame_to_a_seat_or_a_spectator_holds_a_hidden_card(layer, game, people) -> None:
    if game == "commere":
        partie = _commere(people)
    else:
        partie = PartieFactory(game="comet", players=people[:3], buy_in=50)
    hand = partie.hands.get()
    users = _users(partie)
    cookies = {seat: _cookie(user) for seat, user in users.items()}
    _make_staff(people[3])  # a casual table's watcher who does not sit at it
    watcher = _cookie(people[3])
    rng = random.Random(f"{game}-hidden")
    moves = 0

    async def scenario() -> dict[int | None, list[dict[str, Any]]]:
        nonlocal moves
        sockets: dict[int | None, WebsocketCommunicator] = {
            None: _socket(f"/ws/parties/{partie.pk}/", watcher),
            **{n: _socket(f"/ws/parties/{partie.pk}/seats/{n}/", c) for n, c in cookies.items()}}
        got: dict[int | None, list[dict[str, Any]]] = {a: [] for a in sockets}
        for socket in sockets.values():
            assert (await socket.connect())[0]
        current = hand
        while current.status != Hand.Status.OVER:
            current = await sync_to_async(_play_one)(hand.pk, users, rng)
            moves += 1
            for audience, socket in sockets.items():
                got[audience] += await _drain(socket, 0.05)
        # Every frame up to the hand's last, however slow a loaded machine passes them on.
        for audience, socket in sockets.items():
            got[audience] += await _drain_until(socket, str(hand.pk), current.last_seq,
                                                seen=got[audience])
            await socket.disconnect()
        return got

    got = async_to_sync(scenario)()
    hand.refresh_from_db()
    assert hand.status == Hand.Status.OVER and moves >= 2
    allowed = _allowed(hand, len(users))
    seed = hand.secret.seed
    keys = signing.published_keys()
    for audience, frames in got.items():
        frames = [f for f in frames if f["kind"] == "hand" and f["hand"] == str(hand.pk)]
        # Every event reached every audience, in order (the first frame: the hand as the socket
        # joined). A socket that joins while a command commits may get a frame again, from its
        # catch-up and from the push; it skips a seq it has seen, as the pages do.
        seqs: list[int] = []
        for frame in frames:
            if not seqs or frame["seq"] > seqs[-1]:
                seqs.append(frame["seq"])
        assert seqs == list(range(seqs[0], hand.last_seq + 1))
        for frame in frames:
            may_see = allowed(audience, frame["seq"])
            if may_see is None:
                assert frame["status"] == "over" and frame["seed"] == seed
                continue
            shown = _cards(frame)
            assert shown <= may_see, (audience, frame["seq"], shown - may_see)
            assert frame["seed"] is None and seed not in json.dumps(frame)
            # Version 3: the hash is over the seals, and recomputes from what the frame holds;
            # the frame's receipt is the service's signature on that very hash.
            event = frame["event"]
            assert shown_hash(event) == event["hash"]
            assert frame["receipt"]["seq"] == event["seq"] == frame["seq"]
            assert frame["receipt"]["hash"] == event["hash"]
            assert receipt_verifies(frame["receipt"], keys)
            assert frame["your_seat"] == audience
        if audience is not None:  # not vacuous: a seat is shown its own cards
            own = _cards(frames[0]["view"]["hand"])  # beside it, perhaps a card offered to it
            assert own and own <= _cards(frames[0]) - allowed(None, seqs[0])
