"""The snapshot on the hand row is only an optimisation of the replay (ARCHITECTURE.md).

Every command stores the state it reached (``Hand.snapshot``) and the chain's last hash
(``Hand.last_hash``). These tests check, after bot hands and hands played through the API, that
the stored snapshot is what a full replay of the hand's events gives, after every command and for
every prefix of the stream; that a missing or stale snapshot falls back to the replay; and that a
snapshot naming anything but an engine state class is refused (never run) and replayed around.
"""

from __future__ import annotations

import logging
import pickle
import random
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from games import services
from games.engine import commere
from games.engine.base import Event, Move
from games.engine.registry import get_game
from games.errors import StaleSequence
from games.models import Hand, HandEvent, Partie
from games.services import store
from ledger.models import Account

from .factories import UserFactory

pytestmark = pytest.mark.django_db

T0 = datetime(2030, 5, 4, 20, 0, tzinfo=UTC)


def assert_snapshot_is_the_replay(hand: Hand) -> None:
    """The stored snapshot is current and equals a full replay of the hand's events."""
    hand = Hand.objects.select_related("partie", "secret").get(pk=hand.pk)
    game = get_game(hand.partie.game)
    stream = store.events(hand)
    replayed = store.replay(hand)
    assert hand.last_seq == len(stream)
    assert hand.last_hash == replayed.last_hash == (stream[-1]["hash"] if stream
                                                    else hand.commitment)
    assert store.thaw(hand, game) == replayed.state, f"hand {hand.number}: snapshot is stale"
    assert store.load(hand) == replayed


def assert_every_prefix_survives_a_snapshot(hand: Hand) -> None:
    """Every state of the hand, event by event, comes back from its snapshot unchanged."""
    game = get_game(hand.partie.game)
    stream = store.events(hand)
    deck = store.hand_deck(hand)
    state = game.initial_state(deck)
    for k, event in enumerate(stream, start=1):
        state = game.apply(state, Event.from_dict(event))
        assert state == game.replay(deck, [Event.from_dict(e) for e in stream[:k]])
        seq, thawed = store.unfreeze(store.freeze(state, k))
        assert (seq, thawed) == (k, state), f"hand {hand.number}, seq {k}"


def _bot_partie(game: str, seats: int, hands: int) -> Partie:
    key = "deals" if game == "comet" else "rounds"
    partie = services.partie_start(game=game, players=[], bots=["heuristic", "random"] * seats,
                                   options={key: hands}, buy_in=100, at=T0)
    clock = T0
    while partie.status == Partie.Status.PLAYING:
        clock += timedelta(seconds=1)
        services.hand_deal(partie=partie, at=clock)
        partie.refresh_from_db()
    return partie


@pytest.mark.parametrize(("game", "seats"), [("comet", 2), ("commere", 2)])
def test_bot_hands_keep_the_snapshot_of_their_replay(game: str, seats: int) -> None:
    partie = _bot_partie(game, seats, hands=3)

    hands = list(partie.hands.order_by("number"))
    assert len(hands) == 3
    for hand in hands:
        assert hand.status == Hand.Status.OVER
        assert_snapshot_is_the_replay(hand)
        assert_every_prefix_survives_a_snapshot(hand)


# -- hands played through the API, checked after every command ----------------------------------


def _people_partie(game: str, n: int) -> tuple[Partie, dict[int, Any]]:
    people = [UserFactory() for _ in range(n)]
    options = ({"deals": 3} if game == "comet"
               else {"rounds": 2, "max_turns": 3, "compulsory_announce": False})
    partie = services.partie_start(game=game, players=people, options=options, buy_in=80,
                                   forced_move_delay=timedelta(0), comet_window=timedelta(0),
                                   pause_between_hands=timedelta(0), at=T0)
    return partie, dict(enumerate(people))


@pytest.mark.parametrize(("game", "n"), [("comet", 3), ("commere", 4)])
def test_hands_played_through_the_api_keep_the_snapshot_of_their_replay(
        game: str, n: int, api_as: Any) -> None:
    partie, people = _people_partie(game, n)
    clients = {seat: api_as(user) for seat, user in people.items()}
    rng = random.Random(7)
    clock = T0
    checked = 0
    for _ in range(400):
        partie.refresh_from_db()
        if partie.status == Partie.Status.OVER:
            break
        hand = partie.hands.order_by("-number").first()
        if hand.status == Hand.Status.OVER:
            clock += timedelta(seconds=1)
            services.partie_tick(partie_id=partie.pk, at=clock)
            assert_snapshot_is_the_replay(partie.hands.order_by("-number").first())
            continue
        if rng.random() < 0.2:  # now and then a time-out plays the move
            clock = max(clock, hand.deadline) + timedelta(seconds=1)
            assert services.deadline_fire(hand_id=hand.id, seq=hand.last_seq, at=clock)
        else:
            loaded = store.replay(hand)
            seat = loaded.game.to_act(loaded.state)[0]
            view = clients[seat].get(f"/api/hands/{hand.id}/").json()
            assert view["legal_moves"], view
            # Mostly play on rather than announce at once, so that hands last a few turns.
            legal = [m for m in view["legal_moves"] if m["type"] != "announce" or rng.random()
                     < 0.1] or view["legal_moves"]
            answer = clients[seat].post(f"/api/hands/{hand.id}/moves", {
                "command_id": str(uuid.uuid4()), "seq": view["seq"],
                "move": rng.choice(legal)}, format="json")
            assert answer.status_code == 201, answer.content
            # The answer, built from the command's own state, is the view a reader gets.
            again = clients[seat].get(f"/api/hands/{hand.id}/").json()
            assert {**answer.json(), "command": None} == {**again, "command": None}
        assert_snapshot_is_the_replay(hand)
        checked += 1
    else:
        raise AssertionError("the partie did not end")
    # Commands checked one by one (a hand's forced moves and time-outs play within them): at
    # least one per hand. Not two: the deal's seed is drawn afresh on every run, and now and
    # then a hand is won on its first command (an announcement): this failed once so.
    assert checked >= partie.hands.count() >= 2
    for hand in partie.hands.all():
        assert_every_prefix_survives_a_snapshot(hand)


# -- the move path reads the snapshot, not the stream --------------------------------------------


def _waiting_hand() -> tuple[Hand, dict[int, Any]]:
    partie, people = _people_partie("commere", 4)
    return Hand.objects.select_related("partie", "secret").get(partie=partie), people


def _play_one(hand: Hand, people: dict[int, Any]) -> services.MovePlayed:
    loaded = store.load(hand)
    seat = loaded.game.to_act(loaded.state)[0]
    move = loaded.game.legal_moves(loaded.state)[seat][0]
    return services.move_play(hand_id=hand.id, user=people[seat], move=move, seq=hand.last_seq,
                              command_id=uuid.uuid4(), at=T0 + timedelta(seconds=1))


def _reads_of_events(queries: list[dict[str, Any]]) -> list[str]:
    return [q["sql"] for q in queries
            if q["sql"].lstrip().upper().startswith("SELECT") and "games_handevent" in q["sql"]]


def test_a_move_and_a_read_do_not_read_the_events(api_as: Any) -> None:
    hand, people = _waiting_hand()
    loaded = store.replay(hand)
    seat = loaded.game.to_act(loaded.state)[0]

    with CaptureQueriesContext(connection) as read:
        api_as(people[seat]).get(f"/api/hands/{hand.id}/")
    with CaptureQueriesContext(connection) as moved:
        _play_one(hand, people)

    assert _reads_of_events(read.captured_queries) == []
    assert _reads_of_events(moved.captured_queries) == []


def test_the_move_paths_statements_are_logged_with_their_text_once_prepared() -> None:
    hand, _ = _waiting_hand()
    with CaptureQueriesContext(connection) as reads:
        for _ in range(4):  # prepared from the second run on (PostgreSQL)
            store.read_hand(hand.id)

    logged = [q["sql"] for q in reads.captured_queries]
    assert len(logged) == 4
    assert all(isinstance(sql, str) and "FROM \"games_hand\" h" in sql for sql in logged)


def _set_snapshot(hand: Hand, blob: bytes | None) -> Hand:
    Hand.objects.filter(pk=hand.pk).update(snapshot=blob)
    return Hand.objects.select_related("partie", "secret").get(pk=hand.pk)


def test_a_missing_snapshot_falls_back_to_the_replay_and_the_next_move_writes_it() -> None:
    hand, people = _waiting_hand()
    expected = store.replay(hand)
    hand = _set_snapshot(hand, None)

    with CaptureQueriesContext(connection) as q:
        loaded = store.load(hand)

    assert loaded == expected
    assert _reads_of_events(q.captured_queries), "the state did not come from the events"
    _play_one(hand, people)
    assert Hand.objects.get(pk=hand.pk).snapshot
    assert_snapshot_is_the_replay(hand)


def test_a_stale_snapshot_falls_back_to_the_replay() -> None:
    hand, people = _waiting_hand()
    before = store.load(hand)
    old_blob, old_seq = bytes(hand.snapshot), hand.last_seq
    _play_one(hand, people)
    hand = _set_snapshot(hand, old_blob)  # the snapshot of a seq the hand has left
    assert hand.last_seq > old_seq

    loaded = store.load(hand)

    assert store.thaw(hand, before.game) is None
    assert loaded == store.replay(hand) and loaded.state != before.state
    assert_every_prefix_survives_a_snapshot(hand)


def test_a_snapshot_of_the_other_game_is_ignored() -> None:
    hand, _ = _waiting_hand()
    comet_state = get_game("comet").initial_state(store.hand_deck(hand)[:-1])
    hand = _set_snapshot(hand, store.freeze(comet_state, hand.last_seq))

    assert store.thaw(hand, commere) is None
    assert store.load(hand) == store.replay(hand)


# -- a snapshot holding anything else is refused, never run --------------------------------------

_RAN: list[str] = []


def _payload() -> str:
    _RAN.append("ran")
    return "ran"


class _Evil:
    """Unpickled, this would call ``what`` (a pickle names any callable it likes)."""

    def __init__(self, what: Any, *args: Any) -> None:
        self.what, self.args = what, args

    def __reduce__(self) -> tuple[Any, ...]:
        return self.what, self.args


@pytest.mark.parametrize("inside", [
    _Evil(_payload),                         # a function of another module
    _Evil(random.Random, 3),                 # a class of the standard library
    _Evil(eval, "1 + 1"),                    # a builtin that runs code
    _Evil(getattr, "text", "upper"),         # a builtin that reaches anything
    _Evil(store.freeze, None, 0),            # a function of the service
    _Evil(commere.initial_state, ()),        # a function of an engine module
], ids=["function", "stdlib-class", "eval", "getattr", "service", "engine-function"])
def test_a_snapshot_naming_a_forbidden_global_is_refused_and_replayed_around(
        inside: _Evil, caplog: Any) -> None:
    hand, _ = _waiting_hand()
    expected = store.replay(hand)
    blob = pickle.dumps((hand.last_seq, inside), protocol=store.SNAPSHOT_PROTOCOL)
    hand = _set_snapshot(hand, blob)
    _RAN.clear()

    with pytest.raises(store.ForbiddenSnapshot):
        store.unfreeze(blob)
    with caplog.at_level(logging.WARNING, logger="games.services.store"):
        loaded = store.load(hand)

    assert loaded == expected
    assert _RAN == []
    assert "snapshot refused" in caplog.text and "ForbiddenSnapshot" in caplog.text


def test_an_engine_class_imported_by_an_engine_module_is_refused() -> None:
    # ``commere`` imports Move from ``base``: reached through ``commere`` it is not a class of
    # that module, and only a module's own state classes are taken.
    # (1, Move("announce")) in pickle's text opcodes: the class named by module and name.
    blob = b"(I1\ncgames.engine.base\nMove\n(Vannounce\ntRt."
    forged = blob.replace(b"games.engine.base", b"games.engine.commere")
    assert commere.Move is Move

    with pytest.raises(store.ForbiddenSnapshot):
        store.unfreeze(forged)
    assert store.unfreeze(blob) == (1, Move("announce"))


def test_a_garbled_snapshot_is_replayed_around() -> None:
    hand, _ = _waiting_hand()
    expected = store.replay(hand)
    hand = _set_snapshot(hand, bytes(hand.snapshot)[:-7])

    assert store.load(hand) == expected


def test_the_move_path_survives_a_refused_snapshot_and_overwrites_it() -> None:
    hand, people = _waiting_hand()
    _set_snapshot(hand, pickle.dumps((hand.last_seq, _Evil(_payload))))

    played = _play_one(hand, people)

    assert played.response["applied_from_seq"] == hand.last_seq + 1
    assert_snapshot_is_the_replay(hand)
    assert not HandEvent.objects.filter(hand=hand, seq__gt=played.response["seq"]).exists()


# -- the move path's plain SQL reads and writes what the ORM would ------------------------------


def _fields(instance: Any) -> dict[str, Any]:
    values = {f.attname: getattr(instance, f.attname) for f in instance._meta.concrete_fields}
    return {k: bytes(v) if isinstance(v, memoryview) else v for k, v in values.items()}


@pytest.mark.parametrize("game", ["comet", "commere"])
def test_the_plain_sql_reads_give_the_instances_the_orm_gives(game: str) -> None:
    partie, people = _people_partie(game, 3 if game == "comet" else 4)
    hand = partie.hands.get()

    read, seats = store.read_hand(hand.id)
    locked_partie, last = store.lock_partie(partie.id)

    orm = Hand.objects.select_related("partie", "secret").get(pk=hand.pk)
    assert _fields(read) == _fields(orm)
    assert _fields(read.partie) == _fields(orm.partie) == _fields(locked_partie)
    assert _fields(read.secret) == _fields(orm.secret)
    assert _fields(last) == _fields(orm)
    orm_seats = list(partie.seats.order_by("number"))
    assert [_fields(s) for s in seats] == [_fields(s) for s in orm_seats]
    assert [(s.number, s.player.get_username()) for s in store.seats(partie)] == [
        (s.number, s.player.get_username()) for s in orm_seats]
    wallets = {a.pk: _fields(a) for a in store.accounts(
        club_key=partie.club_key, owners=[s.player_id for s in orm_seats],
        pot_ref=f"partie:{partie.pk}")}
    assert wallets == {a.pk: _fields(a) for a in Account.objects.filter(
        club_key=partie.club_key, owner__in=people.values())} | {
        a.pk: _fields(a) for a in Account.objects.filter(ref=f"partie:{partie.pk}")}
    with pytest.raises(Hand.DoesNotExist):
        store.read_hand(uuid.uuid4())
    assert store.lock_partie(uuid.uuid4()) == (None, None)


def test_a_command_whose_events_lost_their_seq_is_stale_and_writes_nothing() -> None:
    hand, people = _waiting_hand()
    _play_one(hand, people)
    hand.refresh_from_db()
    before = _fields(hand)
    stale = Hand.objects.select_related("partie").get(pk=hand.pk)
    stale.last_seq -= 1  # a writer that read the hand one event ago and skipped its lock
    pending: list[dict[str, Any]] = []
    store.append(stale, [Event("hand_over", "service", {"result": None})],
                 prev_hash="0" * 64, at=T0, pending=pending)

    with pytest.raises(StaleSequence), transaction.atomic():
        store.save(stale, store.load(hand), pending=pending)

    hand.refresh_from_db()
    assert _fields(hand) == before
