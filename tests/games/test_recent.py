"""The hands a process wrote last, kept for their next move (games/services/recent.py): the move
then skips its read, and nothing it would not check is trusted.

The moves here commit (``transaction=True``) and run on PostgreSQL only, like
tests/games/test_one_statement.py: elsewhere no move is played in one statement.
"""

from __future__ import annotations

import threading
import uuid
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from games.errors import HandIsOver, IllegalMoveError, StaleSequence
from games.models import Command, Hand, HandEvent, Partie
from games.selectors import hand_view_by_id
from games.services import hand_deal, move_play, partie_start, recent, store
from games.services.recent import RecentHands
from tests.games.test_one_statement import (
    T0,
    _a_move_that_goes_on,
    _first_decision,
    _statements,
)


@pytest.fixture
def people(django_user_model: Any) -> list[Any]:
    return [django_user_model.objects.create_user(f"kept{i}") for i in range(4)]


def _play(hand: Hand, users: dict[int, Any], seat: int, move: Any, seq: int,
          command_id: uuid.UUID | None = None) -> Any:
    return move_play(hand_id=hand.id, user=users[seat], move=move, seq=seq,
                     command_id=command_id or uuid.uuid4(), at=T0 + timedelta(seconds=1))


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_moves_after_this_processs_own_writes_are_one_statement_each(people, monkeypatch):
    hand, users, seat, move = _first_decision(people, monkeypatch)  # dealt here: kept

    with CaptureQueriesContext(connection) as first:
        played = _play(hand, users, seat, move, hand.last_seq)
    hand.refresh_from_db()
    seat, move = _a_move_that_goes_on(hand)
    with CaptureQueriesContext(connection) as second:
        _play(hand, users, seat, move, hand.last_seq)

    assert _statements(first) == ["WITH"] and _statements(second) == ["WITH"]
    hand.refresh_from_db()
    assert hand.status == Hand.Status.PLAYING and hand.last_seq > played.response["seq"]
    # What the kept hand let it write is what a read would have: the stream, its chain and
    # the snapshot agree with a replay of the stored events.
    assert store.load(hand).state == store.replay(hand).state
    assert store.load(hand).last_hash == store.replay(hand).last_hash
    seqs = list(HandEvent.objects.filter(hand=hand).order_by("seq").values_list("seq", flat=True))
    assert seqs == list(range(1, hand.last_seq + 1))


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_kept_hand_another_writer_moved_on_refuses_the_stale_move_with_409(people,
                                                                             monkeypatch):
    hand, users, seat, move = _first_decision(people, monkeypatch)
    seq, first = hand.last_seq, uuid.uuid4()
    with transaction.atomic():  # another writer: the locked path, which keeps nothing here
        _play(hand, users, seat, move, seq, first)
    assert len(recent.hands) == 1  # this process still holds the hand at ``seq``

    with CaptureQueriesContext(connection) as queries, pytest.raises(StaleSequence) as lost:
        _play(hand, users, seat, move, seq)

    # The kept hand's statement collided with the event written since; the locked path then
    # gave the same answer as without the kept hand.
    assert lost.value.status == 409
    assert _statements(queries)[0] == "WITH"
    assert len(recent.hands) == 0  # nothing kept after a refusal
    assert list(Command.objects.values_list("command_id", flat=True)) == [first]
    assert not HandEvent.objects.filter(hand=hand, seq__gt=seq).exclude(command_id=first).exists()
    hand.refresh_from_db()
    assert store.load(hand).state == store.replay(hand).state


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_kept_hand_at_another_seq_is_dropped_and_the_hand_read(people, monkeypatch):
    hand, users, seat, move = _first_decision(people, monkeypatch)
    with transaction.atomic():
        _play(hand, users, seat, move, hand.last_seq)
    hand.refresh_from_db()
    seat, move = _a_move_that_goes_on(hand)

    with CaptureQueriesContext(connection) as queries:
        played = _play(hand, users, seat, move, hand.last_seq)

    assert _statements(queries) == ["SELECT", "WITH"]
    hand.refresh_from_db()
    assert hand.last_seq == played.response["seq"]
    assert store.load(hand).state == store.replay(hand).state


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_kept_hand_whose_row_was_changed_otherwise_writes_nothing(people, monkeypatch):
    """The statement updates the hand row only if it is at the seq the move answers and still
    played: a row changed without an event (a seq ahead of its events, as after a restore
    that lost them, or a hand closed by hand) refuses the kept hand's move, which the
    (hand, seq) constraint alone would have let through."""
    hand, users, seat, move = _first_decision(people, monkeypatch)
    seq = hand.last_seq
    Hand.objects.filter(pk=hand.pk).update(last_seq=seq + 1)

    with pytest.raises(StaleSequence) as stale:
        _play(hand, users, seat, move, seq)

    assert stale.value.status == 409
    assert not HandEvent.objects.filter(hand=hand, seq__gt=seq).exists()
    assert not Command.objects.exists()

    Hand.objects.filter(pk=hand.pk).update(last_seq=seq)
    recent.hands.clear()
    _play(hand, users, seat, move, seq)  # kept again by this move
    hand.refresh_from_db()
    Hand.objects.filter(pk=hand.pk).update(status=Hand.Status.OVER)
    seat, move = _a_move_that_goes_on(hand)

    with pytest.raises(HandIsOver):
        _play(hand, users, seat, move, hand.last_seq)

    assert not HandEvent.objects.filter(hand=hand, seq__gt=hand.last_seq).exists()
    assert Command.objects.count() == 1 and len(recent.hands) == 0


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_an_illegal_move_on_a_kept_hand_is_refused_and_the_next_one_plays(people, monkeypatch):
    hand, users, seat, move = _first_decision(people, monkeypatch)
    seq = hand.last_seq

    with pytest.raises(IllegalMoveError) as refused:
        _play(hand, users, (seat + 1) % 4, move, seq)  # not his turn
    assert len(recent.hands) == 0  # the refused move dropped the hand: the next one reads it
    played = _play(hand, users, seat, move, seq)

    assert refused.value.rule == "turn"
    assert played.response["applied_from_seq"] == seq + 1
    assert HandEvent.objects.filter(hand=hand, seq=seq + 1).get().actor_id == users[seat].pk


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_deal_rolled_back_keeps_nothing(people, monkeypatch):
    partie = partie_start(game="commere", players=people, options={"rounds": 3}, buy_in=50,
                          table_label="kept table", at=T0, move_timeout=timedelta(minutes=5))
    recent.hands.clear()
    partie.hands.all().update(status=Hand.Status.OVER)  # let the next hand be dealt

    with pytest.raises(RuntimeError), transaction.atomic():
        dealt = hand_deal(partie=partie, at=T0 + timedelta(minutes=1))
        assert dealt is not None
        raise RuntimeError("the caller's transaction fails after the deal")

    assert len(recent.hands) == 0
    dealt = hand_deal(partie=partie, at=T0 + timedelta(minutes=2))
    assert dealt is not None and recent.hands.take(dealt.pk, dealt.last_seq) is not None


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_hand_read_by_its_get_lets_the_next_move_skip_its_read(people, monkeypatch):
    hand, users, seat, move = _first_decision(people, monkeypatch)
    recent.hands.clear()  # as in the other process of a two-process server

    view = hand_view_by_id(hand_id=hand.id, user=users[seat])
    with CaptureQueriesContext(connection) as queries:
        played = _play(hand, users, seat, move, view["seq"])

    assert _statements(queries) == ["WITH"]
    hand.refresh_from_db()
    assert hand.last_seq == played.response["seq"] > view["seq"]
    assert store.load(hand).state == store.replay(hand).state
    assert store.load(hand).last_hash == store.replay(hand).last_hash


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_hand_read_then_moved_on_elsewhere_refuses_the_move_as_a_kept_one_would(people,
                                                                                  monkeypatch):
    hand, users, seat, move = _first_decision(people, monkeypatch)
    recent.hands.clear()
    view = hand_view_by_id(hand_id=hand.id, user=users[seat])
    with transaction.atomic():  # another process's move, after the read
        _play(hand, users, seat, move, view["seq"])

    with pytest.raises(StaleSequence):
        _play(hand, users, seat, move, view["seq"])

    assert HandEvent.objects.filter(hand=hand, seq=view["seq"] + 1).count() == 1
    assert Command.objects.count() == 1


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_only_a_committed_snapshot_read_by_a_player_is_offered(people, monkeypatch,
                                                               django_user_model):
    hand, users, seat, _ = _first_decision(people, monkeypatch)
    recent.hands.clear()
    spectator = django_user_model.objects.create_user("looking-on")

    hand_view_by_id(hand_id=hand.id, user=spectator)  # nobody who moves here
    assert len(recent.hands) == 0
    with transaction.atomic():  # a read inside a transaction may not be committed
        hand_view_by_id(hand_id=hand.id, user=users[seat])
    assert len(recent.hands) == 0
    Hand.objects.filter(pk=hand.pk).update(snapshot=None)  # the state now comes from a replay
    view = hand_view_by_id(hand_id=hand.id, user=users[seat])
    assert len(recent.hands) == 0 and view["seq"] == hand.last_seq

    recent.hands.clear()
    Hand.objects.filter(pk=hand.pk).update(snapshot=store.freeze(store.replay(hand).state,
                                                                 hand.last_seq))
    hand_view_by_id(hand_id=hand.id, user=users[seat])
    assert len(recent.hands) == 1


# -- the map itself -----------------------------------------------------------------------------


def _hand(seq: int = 3, status: str = Hand.Status.PLAYING) -> Hand:
    return Hand(id=uuid.uuid4(), partie=Partie(id=uuid.uuid4()), last_seq=seq, status=status)


def _loaded() -> store.Loaded:
    return store.Loaded(game=None, state=("a", "state"), last_hash="h")  # type: ignore[arg-type]


def test_a_kept_hand_is_taken_once_for_its_seq_and_copied():
    kept = RecentHands(size=4)
    hand = _hand(seq=3)
    kept.keep(hand, [], _loaded())
    hand.last_seq = 99  # the command's own hand goes on being used: the kept one is a copy

    found = kept.take(str(hand.pk), 3)  # the id as a string too

    assert found is not None and found.hand.last_seq == 3 and found.hand is not hand
    assert found.hand.partie is not hand.partie and found.hand.partie.pk == hand.partie.pk
    assert kept.take(hand.pk, 3) is None  # taken out while a move uses it


def test_a_kept_hand_asked_for_another_seq_is_dropped():
    kept = RecentHands(size=4)
    hand = _hand(seq=3)
    kept.keep(hand, [], _loaded())

    assert kept.take(hand.pk, 4) is None
    assert len(kept) == 0


def test_the_least_recently_kept_hand_goes_first_and_over_hands_are_not_kept():
    kept = RecentHands(size=2)
    a, b, c = _hand(), _hand(), _hand()
    for hand in (a, b, c):
        kept.keep(hand, [], _loaded())
    kept.keep(_hand(status=Hand.Status.OVER), [], _loaded())

    assert len(kept) == 2
    assert kept.take(a.pk, 3) is None
    assert kept.take(b.pk, 3) is not None and kept.take(c.pk, 3) is not None


def test_an_id_that_is_no_uuid_finds_nothing_and_size_zero_keeps_nothing():
    kept = RecentHands(size=0)
    hand = _hand()
    kept.keep(hand, [], _loaded())

    assert len(kept) == 0
    assert RecentHands().take("not-a-hand", 3) is None


def test_a_read_hand_is_offered_but_never_replaces_one_at_a_later_seq():
    kept = RecentHands(size=4)
    hand = _hand(seq=3)
    kept.keep(_hand_like(hand, seq=5), [], _loaded())  # this process wrote seq 5 meanwhile

    kept.offer(hand, [], _loaded())  # a read that began before that write
    assert kept.take(hand.pk, 3) is None  # dropped, as any other seq would be

    kept.offer(hand, [], _loaded())
    other = store.Loaded(game=None, state=("another", "state"), last_hash="h")  # type: ignore[arg-type]
    kept.offer(_hand_like(hand, seq=3), [], other)  # the same seq: the first is kept as is
    found = kept.take(hand.pk, 3)
    assert found is not None and found.loaded.state == ("a", "state") and found.hand is not hand
    kept.offer(_hand_like(hand, seq=4, status=Hand.Status.OVER), [], _loaded())
    assert len(kept) == 0


def _hand_like(hand: Hand, seq: int, status: str = Hand.Status.PLAYING) -> Hand:
    return Hand(id=hand.id, partie=hand.partie, last_seq=seq, status=status)


def test_two_threads_never_take_the_same_kept_hand():
    kept = RecentHands(size=4)

    def take(start: threading.Barrier, hand: Hand, found: list[Any]) -> None:
        start.wait()
        found.append(kept.take(hand.pk, 3))

    for _ in range(50):
        hand = _hand()
        kept.keep(hand, [], _loaded())
        start, found = threading.Barrier(8), []
        threads = [threading.Thread(target=take, args=(start, hand, found)) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

        assert sum(entry is not None for entry in found) == 1


def _next_of(hand: Hand, number: int, seq: int = 3) -> Hand:
    return Hand(id=uuid.uuid4(), partie=hand.partie, number=number, last_seq=seq,
                status=Hand.Status.PLAYING)


def test_a_parties_next_hand_replaces_its_last_one_and_never_the_reverse():
    kept = RecentHands(size=8)
    first = _hand()
    first.number = 1
    other_table = _hand()
    kept.keep(first, [], _loaded())
    kept.keep(other_table, [], _loaded())
    second = _next_of(first, 2)

    kept.offer(second, [], _loaded())  # another process ended hand 1 and dealt hand 2

    assert len(kept) == 2  # hand 1 is gone: nobody asks a finished hand for a move
    assert kept.take(first.pk, 3) is None
    kept.keep(first, [], _loaded())  # a read of hand 1 made before hand 2 was dealt
    assert len(kept) == 2 and kept.take(first.pk, 3) is None
    assert kept.take(second.pk, 3) is not None and kept.take(other_table.pk, 3) is not None
    kept.keep(first, [], _loaded())  # once hand 2 is taken out, hand 1 is the partie's again
    assert kept.take(first.pk, 3) is not None


def test_the_map_holds_one_hand_per_partie_as_hands_follow_each_other():
    kept = RecentHands(size=1024)
    tables = [_hand() for _ in range(5)]
    for number in range(1, 41):
        for table in tables:
            kept.offer(_next_of(table, number), [], _loaded())

    assert len(kept) == 5 and len(kept._of_partie) == 5
    for _ in range(3):
        kept.keep(_hand(), [], _loaded())
    assert len(kept) == 8 and len(kept._of_partie) == 8
    small = RecentHands(size=2)
    for table in tables:
        small.keep(_next_of(table, 1), [], _loaded())
    assert len(small) == 2 and len(small._of_partie) == 2  # evictions leave no partie behind


def test_a_hand_taken_out_then_offered_late_leaves_the_map_consistent():
    kept = RecentHands(size=8)
    first = _hand()
    first.number = 1
    kept.keep(first, [], _loaded())
    assert kept.take(first.pk, 3) is not None  # a move on hand 1 is being played
    kept.offer(first, [], _loaded())  # a GET's read of hand 1, before that move ends it
    second = _next_of(first, 2)
    kept.keep(second, [], _loaded())  # the move ended hand 1 and dealt hand 2

    assert len(kept) == 1 and kept._of_partie == {first.partie_id: second.pk}
    assert kept.take(first.pk, 3) is None
    assert kept.take(second.pk, 3) is not None
    assert len(kept) == 0 and kept._of_partie == {}
