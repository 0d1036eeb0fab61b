"""The next hand: dealt in the command that ends the last one when a partie has no pause between
hands, and named to the players (the move's answer, the finished hand's view) once dealt."""

from __future__ import annotations

import hashlib
import random
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from games.engine.base import BY_FORCED, Move
from games.engine.commere import ANNOUNCE
from games.engine.deal import commitment
from games.engine.registry import get_game
from games.engine.shares import deck_v3, first_dealer_v2
from games.errors import CommandConflict
from games.models import Command, Hand, HandEvent, Partie
from games.selectors import hand_view, hand_view_by_id
from games.services import (
    MovePlayed,
    chips,
    deadline_fire,
    move_play,
    moves,
    partie_start,
    partie_tick,
    store,
)
from games.services import advance as advancing
from ledger import services as ledger
from ledger.models import Account, JournalEntry
from ledger.selectors import trial_balance

pytestmark = pytest.mark.django_db

T0 = datetime(2030, 5, 4, 20, 0, tzinfo=UTC)


def _partie(people: list[Any], *, pause: int, rounds: int = 3) -> tuple[Partie, dict[int, Any]]:
    # Announcing is not compulsory: a hand dealt to a combination would otherwise end at its
    # deal (the forced announcement), and these tests need the next hand in play.
    partie = partie_start(
        game="commere", players=people, options={"rounds": rounds, "compulsory_announce": False},
        buy_in=100, at=T0,
        forced_move_delay=timedelta(0), comet_window=timedelta(0),
        pause_between_hands=timedelta(seconds=pause), move_timeout=timedelta(seconds=30))
    return partie, {s.number: s.player for s in partie.seats.all()}


def _play_to_end(hand: Hand, users: dict[int, Any], rng: random.Random) -> MovePlayed:
    """People's random legal moves until one ends the hand; that move's answer."""
    for _ in range(500):
        loaded = store.load(hand)
        seat = loaded.game.to_act(loaded.state)[0]
        move = rng.choice(loaded.game.legal_moves(loaded.state)[seat])
        played = move_play(hand_id=hand.id, user=users[seat], move=move, seq=hand.last_seq,
                           command_id=uuid.uuid4(), at=T0 + timedelta(seconds=1))
        hand = played.hand
        if hand.status == Hand.Status.OVER:
            return played
    raise AssertionError("the hand did not end")


def test_without_a_pause_the_move_that_ends_a_hand_deals_the_next_and_names_it(people):
    partie, users = _partie(people, pause=0)
    first = partie.hands.get()

    played = _play_to_end(first, users, random.Random(1))

    second = partie.hands.get(number=2)
    assert played.response["next_hand"] == {"id": str(second.id), "number": 2}
    assert second.status == Hand.Status.PLAYING and second.last_seq > 0  # dealt, antes posted
    stored = Command.objects.filter(hand=first).latest("created_at")
    assert stored.response["next_hand"] == played.response["next_hand"]  # a retry gets it too
    partie.refresh_from_db()
    assert partie.next_hand_at is None  # nothing left for the timer to deal
    assert trial_balance(club_key=partie.club_key).total == 0


def test_a_retried_ending_move_answers_the_same_next_hand(people):
    partie, users = _partie(people, pause=0)
    first = partie.hands.get()
    played = _play_to_end(first, users, random.Random(2))
    command = Command.objects.filter(hand=first).latest("created_at")
    request = command.request

    again = move_play(hand_id=first.id, user=command.user,
                      move=Move(**request["move"]), seq=request["seq"],
                      command_id=command.command_id, at=T0 + timedelta(seconds=9))

    assert again.retried and again.response == played.response
    assert partie.hands.count() == 2  # the retry dealt nothing more


def test_with_a_pause_the_timer_deals_and_the_finished_hand_then_names_the_next(people):
    partie, users = _partie(people, pause=5)
    first = partie.hands.get()

    played = _play_to_end(first, users, random.Random(3))

    assert played.response["next_hand"] is None
    assert partie.hands.count() == 1
    assert hand_view_by_id(hand_id=first.id, user=people[0])["next_hand"] is None
    ended = played.hand.ended_at
    assert partie_tick(partie_id=partie.pk, at=ended + timedelta(seconds=4)) is None  # too soon
    second = partie_tick(partie_id=partie.pk, at=ended + timedelta(seconds=5))
    assert second is not None and second.number == 2
    named = {"id": str(second.id), "number": 2}
    assert hand_view_by_id(hand_id=first.id, user=people[0])["next_hand"] == named
    first.refresh_from_db()
    assert hand_view(hand=first, user=people[1])["next_hand"] == named
    # A hand in play names no next hand, even a spectator's view.
    assert hand_view_by_id(hand_id=second.id, user=people[0])["next_hand"] is None


def test_without_a_pause_the_move_that_ends_the_last_hand_closes_the_partie(people):
    partie, users = _partie(people, pause=0, rounds=1)

    played = _play_to_end(partie.hands.get(), users, random.Random(4))

    assert played.response["next_hand"] is None
    partie.refresh_from_db()
    assert partie.status == Partie.Status.OVER and partie.hands.count() == 1


def test_without_a_pause_a_time_out_that_ends_a_hand_deals_the_next(people):
    partie, _ = _partie(people, pause=0)
    hand = partie.hands.get()
    clock = T0
    while hand.status == Hand.Status.PLAYING:
        clock = max(clock, hand.deadline) + timedelta(seconds=1)
        assert deadline_fire(hand_id=hand.id, seq=hand.last_seq, at=clock)
        hand.refresh_from_db()

    second = partie.hands.get(number=2)
    assert second.status == Hand.Status.PLAYING
    assert hand_view_by_id(hand_id=hand.id, user=people[0])["next_hand"] == {
        "id": str(second.id), "number": 2}


def test_the_api_answers_the_next_hand_with_the_ending_move_and_the_finished_hand(people):
    partie, users = _partie(people, pause=0)
    hand = partie.hands.get()
    clients = {}
    for seat, user in users.items():
        clients[seat] = APIClient()
        clients[seat].force_authenticate(user)
    rng = random.Random(5)
    answer: dict[str, Any] = {}
    for _ in range(500):
        view = None
        for client in clients.values():
            got = client.get(f"/api/hands/{hand.id}/").json()
            if got["legal_moves"]:
                view = got
                break
        assert view is not None, "nobody may move in a hand in play"
        assert view["next_hand"] is None
        response = clients[view["your_seat"]].post(
            f"/api/hands/{hand.id}/moves",
            {"command_id": str(uuid.uuid4()), "seq": view["seq"],
             "move": rng.choice(view["legal_moves"])}, format="json")
        assert response.status_code == 201, response.content
        answer = response.json()
        if answer["status"] == "over":
            break

    second = partie.hands.get(number=2)
    named = {"id": str(second.id), "number": 2}
    assert answer["next_hand"] == named and answer["command"]["next_hand"] == named
    assert clients[0].get(f"/api/hands/{hand.id}/").json()["next_hand"] == named


def test_a_hand_of_bots_played_out_at_its_deal_starts_and_ends_at_the_deal_time():
    partie = partie_start(game="commere", players=[], bots=["random"] * 4, options={"rounds": 1},
                          buy_in=100, at=T0, forced_move_delay=timedelta(0),
                          comet_window=timedelta(0), pause_between_hands=timedelta(0))

    hand = partie.hands.get()

    assert hand.status == Hand.Status.OVER  # bots without delays play at once
    assert hand.started_at == T0 == hand.ended_at


def test_a_failed_deal_leaves_the_hand_ended_and_the_next_deal_to_the_timer(people, monkeypatch):
    partie, users = _partie(people, pause=0)
    first = partie.hands.get()

    def broken(**kwargs: Any) -> None:
        raise RuntimeError("the deal broke")

    monkeypatch.setattr("games.services.moves.deal_after", broken)
    played = _play_to_end(first, users, random.Random(6))

    assert played.response["next_hand"] is None
    first.refresh_from_db()
    assert first.status == Hand.Status.OVER and partie.hands.count() == 1
    monkeypatch.undo()
    second = partie_tick(partie_id=partie.pk, at=T0 + timedelta(seconds=2))  # the timer
    assert second is not None and second.number == 2


def test_a_retried_move_answers_the_hand_as_it_is_now_with_its_next_hand(people):
    partie, users = _partie(people, pause=0)
    hand = partie.hands.get()
    client = {seat: APIClient() for seat in users}
    for seat, user in users.items():
        client[seat].force_authenticate(user)
    view = next(v for v in (client[s].get(f"/api/hands/{hand.id}/").json() for s in users)
                if v["legal_moves"])
    # Not an announcement: it would end the hand, and this move must leave it in play.
    move = next(m for m in view["legal_moves"] if m["type"] != "announce")
    body = {"command_id": str(uuid.uuid4()), "seq": view["seq"], "move": move}
    first = client[view["your_seat"]].post(f"/api/hands/{hand.id}/moves", body, format="json")
    assert first.status_code == 201 and first.json()["status"] == "playing"
    hand.refresh_from_db()
    _play_to_end(hand, users, random.Random(7))  # the hand ends; the next one is dealt

    again = client[view["your_seat"]].post(f"/api/hands/{hand.id}/moves", body, format="json")

    second = partie.hands.get(number=2)
    assert again.status_code == 201
    assert again.json()["command"] == first.json()["command"]  # the stored first answer
    assert again.json()["status"] == "over"
    assert again.json()["next_hand"] == {"id": str(second.id), "number": 2}


def _next_hand_timers(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    queued: list[Any] = []
    monkeypatch.setattr("games.scheduling.next_hand_due",
                        lambda *, partie_id, at: queued.append(partie_id))
    return queued


def test_a_next_hand_dealt_by_the_ending_move_leaves_its_timer_nothing_to_do(
        people, monkeypatch, django_capture_on_commit_callbacks):
    partie, users = _partie(people, pause=0)
    queued = _next_hand_timers(monkeypatch)

    with django_capture_on_commit_callbacks(execute=True):
        played = _play_to_end(partie.hands.get(), users, random.Random(1))

    assert played.response["next_hand"] is not None
    assert queued == [partie.pk]  # queued with the hand's end, whatever the deal did...
    assert partie_tick(partie_id=partie.pk, at=T0 + timedelta(seconds=2)) is None  # ...idle
    assert partie.hands.count() == 2


def test_a_deal_that_fails_after_posting_the_antes_is_rolled_back_alone(people, monkeypatch):
    # The deal runs in a savepoint of the ending move's transaction: a failure there rolls
    # back the deal (its hand, its events, its antes) and the move stands. Nothing may be
    # lost or written twice: not an event, not a chip, not the command.
    partie, users = _partie(people, pause=0)
    first = partie.hands.get()
    failures = []

    def broken_advance(*args: Any, **kwargs: Any) -> None:
        failures.append(args[1].number)  # the hand being dealt: its antes are posted by now
        raise RuntimeError("the deal broke after the antes")

    monkeypatch.setattr(advancing, "advance", broken_advance)
    played = _play_to_end(first, users, random.Random(6))

    assert failures == [2] and played.response["next_hand"] is None
    assert partie.hands.count() == 1 and not played.retried
    first.refresh_from_db()
    seqs = list(first.events.order_by("seq").values_list("seq", flat=True))
    assert seqs == list(range(1, first.last_seq + 1))  # no gap, no event written twice
    ending = Command.objects.filter(hand=first, response__seq=played.response["seq"])
    assert [c.response for c in ending] == [played.response]  # written once, as answered
    assert chips.reconcile_hand(hand=first) == []  # the hand's payments posted, no antes
    assert JournalEntry.objects.filter(memo__startswith="Hand 1 of").exists()
    assert not JournalEntry.objects.filter(memo__startswith="Hand 2 of").exists()
    assert trial_balance(club_key=partie.club_key).total == 0
    monkeypatch.undo()
    second = partie_tick(partie_id=partie.pk, at=T0 + timedelta(seconds=2))  # the timer
    assert second is not None and second.number == 2


def test_the_deal_after_an_ending_move_sees_the_partie_as_it_is_now(people, monkeypatch):
    # The move read its partie unlocked, with its hand; a soirée closed early in the meantime
    # (deal_until moved into the past). The deal must see that and close the partie.
    partie, users = _partie(people, pause=0)
    first = partie.hands.get()
    save = moves.save

    def close_the_soiree_then_save(table: Any, hand: Hand) -> None:
        if hand.pk == first.pk and hand.status == Hand.Status.OVER:  # the ending move's write
            Partie.objects.filter(pk=partie.pk).update(deal_until=T0 - timedelta(hours=1))
        save(table, hand)

    monkeypatch.setattr(moves, "save", close_the_soiree_then_save)
    played = _play_to_end(first, users, random.Random(1))

    assert played.response["next_hand"] is None
    partie.refresh_from_db()
    assert partie.status == Partie.Status.OVER and partie.hands.count() == 1


def test_the_deal_after_an_ending_move_sees_chips_bought_while_the_move_was_played(
        people, monkeypatch):
    # The move read the wallets with its hand; a player bought chips at the desk before the
    # move wrote the hand's end. The next hand's chips_before must count them (found by the
    # session-6 review: the deal took the balances the move had read).
    partie, users = _partie(people, pause=0)
    first = partie.hands.get()
    save = moves.save
    bought: list[int] = []

    def buy_then_save(table: Any, hand: Hand) -> None:
        if hand.pk == first.pk and hand.status == Hand.Status.OVER and not bought:
            wallet = ledger.wallet_get_or_create(club_key=partie.club_key, owner=users[0])
            ledger.buy_in(wallet=wallet, amount=1000, source="desk", idempotency_key="desk-1")
            bought.append(Account.objects.get(pk=wallet.pk).balance)
        save(table, hand)

    monkeypatch.setattr(moves, "save", buy_then_save)
    played = _play_to_end(first, users, random.Random(1))

    assert played.response["next_hand"] is not None and bought
    second = partie.hands.get(number=2)
    started = second.events.get(type="hand_started").payload
    assert started["chips_before"]["0"] == bought[0]
    assert trial_balance(club_key=partie.club_key).total == 0


class _Trial(Exception):
    def __init__(self, ends: bool) -> None:
        self.ends = ends


def test_an_ending_move_with_a_used_command_id_is_refused_and_changes_nothing(people, caplog):
    # The ending move's command row is written with the new hand's: the id already taken is
    # the move's refusal (409), not a failed deal, and nothing of the move or the deal stays.
    partie, users = _partie(people, pause=0)
    hand = partie.hands.get()
    rng = random.Random(1)
    used = None
    for _ in range(500):
        loaded = store.load(hand)
        seat = loaded.game.to_act(loaded.state)[0]
        move = rng.choice(loaded.game.legal_moves(loaded.state)[seat])
        kwargs = dict(hand_id=hand.id, user=users[seat], move=move, seq=hand.last_seq,
                      at=T0 + timedelta(seconds=1))
        try:
            with transaction.atomic():  # a trial, rolled back: does this move end the hand?
                trial = move_play(command_id=uuid.uuid4(), **kwargs)
                raise _Trial(ends=trial.hand.status == Hand.Status.OVER)
        except _Trial as outcome:
            if outcome.ends:
                break
        used = uuid.uuid4()
        hand = move_play(command_id=used, **kwargs).hand
    assert used is not None

    with pytest.raises(CommandConflict):
        move_play(command_id=used, **kwargs)

    hand.refresh_from_db()
    assert hand.status == Hand.Status.PLAYING and hand.last_seq == kwargs["seq"]
    assert partie.hands.count() == 1
    assert "dealing the next hand" not in caplog.text
    assert move_play(command_id=uuid.uuid4(), **kwargs).response["next_hand"] is not None


def test_a_failed_deal_still_queues_the_next_hand_timer(
        people, monkeypatch, django_capture_on_commit_callbacks):
    partie, users = _partie(people, pause=0)
    queued = _next_hand_timers(monkeypatch)

    def broken(**kwargs: Any) -> None:
        raise RuntimeError("the deal broke")

    monkeypatch.setattr("games.services.moves.deal_after", broken)
    with django_capture_on_commit_callbacks(execute=True):
        played = _play_to_end(partie.hands.get(), users, random.Random(6))

    assert played.response["next_hand"] is None
    assert queued == [partie.pk]


def test_with_a_pause_the_hand_end_queues_the_next_hand_timer(
        people, monkeypatch, django_capture_on_commit_callbacks):
    partie, users = _partie(people, pause=5)
    queued = _next_hand_timers(monkeypatch)

    with django_capture_on_commit_callbacks(execute=True):
        _play_to_end(partie.hands.get(), users, random.Random(2))

    assert queued == [partie.pk]


def _plays_out_at_its_deal(seed: str, dealer: int, n: int = 4) -> bool:
    """Whether a Ma commère hand dealt from ``seed`` ends at its deal: every decision up to its
    end is a forced one (a compulsory announcement)."""
    game = get_game("commere")
    deck = deck_v3("commere", seed, {})  # nobody's share: the service's window is 0 here
    events = game.begin(deck=deck, dealer=dealer,
                        seats=[{"seat": s, "player": f"p{s}"} for s in range(n)],
                        options=game.normalise_options({}), pot_before=0,
                        chips_before={str(s): 100 for s in range(n)},
                        commitment=commitment(seed))
    state = game.replay(deck, events)
    for _ in range(50):
        if game.is_over(state):
            return True
        seat = game.to_act(state)[0]
        legal = game.legal_moves(state)[seat]
        if len(legal) != 1:
            return False
        for event in game.decide(state, seat, legal[0], BY_FORCED):
            state = game.apply(state, event)
    return False


def _seeds(pattern: list[bool]) -> list[str]:
    """One seed per hand, the dealer moving on by one: True for a hand that ends at its deal."""
    candidates = (hashlib.sha256(f"chain-{i}".encode()).hexdigest() for i in range(100_000))
    chosen: list[str] = []
    dealer: int | None = None
    for at_deal in pattern:
        for seed in candidates:
            d = first_dealer_v2(seed, 4) if dealer is None else (dealer + 1) % 4
            if _plays_out_at_its_deal(seed, d) == at_deal:
                chosen.append(seed)
                dealer = d
                break
    return chosen


def _chained_partie(people: list[Any], monkeypatch: pytest.MonkeyPatch,
                    pattern: list[bool]) -> tuple[Partie, dict[int, Any]]:
    chosen = iter(_seeds(pattern))
    monkeypatch.setattr("games.services.parties.new_seed", lambda: next(chosen))
    partie = partie_start(game="commere", players=people, options={"rounds": 10}, buy_in=100,
                          at=T0, forced_move_delay=timedelta(0), comet_window=timedelta(0),
                          pause_between_hands=timedelta(0), move_timeout=timedelta(seconds=30))
    return partie, {s.number: s.player for s in partie.seats.all()}


def _books_balance(partie: Partie) -> None:
    assert trial_balance(club_key=partie.club_key).total == 0
    for hand in partie.hands.all():
        assert chips.reconcile_hand(hand=hand) == []  # every payment once, none left over


def test_a_next_hand_that_ends_at_its_deal_is_followed_at_once_by_the_one_after(
        people, monkeypatch, django_capture_on_commit_callbacks):
    partie, users = _chained_partie(people, monkeypatch, [False, True, False])
    queued = _next_hand_timers(monkeypatch)

    with django_capture_on_commit_callbacks(execute=True):
        played = _play_to_end(partie.hands.get(number=1), users, random.Random(3))

    hands = {h.number: h for h in partie.hands.all()}
    assert played.response["next_hand"] == {"id": str(hands[2].id), "number": 2}
    assert hands[2].status == Hand.Status.OVER  # it ended at its deal...
    assert hands[3].status == Hand.Status.PLAYING  # ...and the same command dealt the next
    assert hand_view(hand=hands[2], user=users[0])["next_hand"] == {
        "id": str(hands[3].id), "number": 3}
    _books_balance(partie)
    # Each hand's end queued its timer; they find hand 3 dealt and do nothing.
    assert queued == [partie.pk, partie.pk]


def test_a_chain_of_hands_ending_at_their_deal_stops_at_its_bound_and_the_timer_deals_on(
        people, monkeypatch, django_capture_on_commit_callbacks):
    partie, users = _chained_partie(people, monkeypatch, [False, True, True, True, True, False])
    queued = _next_hand_timers(monkeypatch)

    with django_capture_on_commit_callbacks(execute=True):
        played = _play_to_end(partie.hands.get(number=1), users, random.Random(3))

    hands = {h.number: h for h in partie.hands.all()}
    assert sorted(hands) == [1, 2, 3, 4, 5]  # CHAINED_DEALS hands after the first
    assert all(hands[n].status == Hand.Status.OVER for n in (2, 3, 4, 5))
    assert played.response["next_hand"]["number"] == 2
    assert len(queued) == 5  # one per hand's end: the last one's deals hand 6
    _books_balance(partie)
    sixth = partie_tick(partie_id=partie.pk, at=T0 + timedelta(seconds=2))  # that timer
    assert sixth is not None and sixth.number == 6 and sixth.status == Hand.Status.PLAYING


def test_a_chained_deal_that_fails_is_rolled_back_alone_and_the_timer_deals_it(
        people, monkeypatch, django_capture_on_commit_callbacks):
    # A fourth seed: the failed deal of hand 3 drew one.
    partie, users = _chained_partie(people, monkeypatch, [False, True, False, False])
    queued = _next_hand_timers(monkeypatch)
    real_advance = advancing.advance
    deals = []

    def second_deal_breaks(*args: Any, **kwargs: Any) -> Any:
        deals.append(1)
        if len(deals) == 2:  # hand 3's deal, after its antes were posted
            raise RuntimeError("the deal broke")
        return real_advance(*args, **kwargs)

    monkeypatch.setattr(advancing, "advance", second_deal_breaks)
    with django_capture_on_commit_callbacks(execute=True):
        played = _play_to_end(partie.hands.get(number=1), users, random.Random(3))

    hands = {h.number: h for h in partie.hands.all()}
    assert sorted(hands) == [1, 2] and hands[2].status == Hand.Status.OVER
    assert played.response["next_hand"]["number"] == 2
    assert queued == [partie.pk, partie.pk]  # hand 2's is the one that deals hand 3
    _books_balance(partie)  # hand 3's antes went with its deal
    monkeypatch.setattr(advancing, "advance", real_advance)
    third = partie_tick(partie_id=partie.pk, at=T0 + timedelta(seconds=2))
    assert third is not None and third.number == 3


def test_a_timer_that_finds_its_hand_moved_on_reads_one_row_and_locks_nothing(people):
    partie, users = _partie(people, pause=0)
    rng = random.Random(7)
    for _ in range(200):  # a move that leaves its hand waiting for the next decision
        hand = partie.hands.order_by("-number").first()
        assert hand is not None and hand.status == Hand.Status.PLAYING
        stale = hand.last_seq
        seat = hand_view(hand=hand, user=users[0])["to_act"][0]
        loaded = store.load(hand)
        move_play(hand_id=hand.id, user=users[seat],
                  move=rng.choice(loaded.game.legal_moves(loaded.state)[seat]), seq=stale,
                  command_id=uuid.uuid4(), at=T0 + timedelta(seconds=1))
        hand.refresh_from_db()
        if hand.status == Hand.Status.PLAYING:
            break
    assert hand.last_seq > stale and hand.deadline is not None

    late = max(hand.deadline, T0) + timedelta(minutes=5)  # every deadline long past
    with CaptureQueriesContext(connection) as queries:
        assert not deadline_fire(hand_id=hand.id, seq=stale, at=late)
        assert not deadline_fire(hand_id=uuid.uuid4(), seq=1, at=late)  # no such hand

    assert len(queries.captured_queries) == 2
    assert all("FOR UPDATE" not in q["sql"] and "FOR NO KEY UPDATE" not in q["sql"]
               and not q["sql"].startswith(("SAVEPOINT", "BEGIN"))
               for q in queries.captured_queries)
    before = hand.last_seq
    assert deadline_fire(hand_id=hand.id, seq=hand.last_seq, at=late)  # the current one plays
    hand.refresh_from_db()
    assert hand.last_seq > before


def test_a_timer_plays_only_while_its_hand_waits_at_its_seq(people):
    # Compare and set: a timer for a seq the hand has left refuses, under the lock, even
    # when its deadline has long passed; the timer of the current seq plays.
    partie, users = _partie(people, pause=0)
    hand = partie.hands.get()
    seq = hand.last_seq
    late = T0 + timedelta(hours=1)
    seat = hand_view(hand=hand, user=users[0])["to_act"][0]
    loaded = store.load(hand)
    # An exchange, not an announcement: a speaker dealt a combination may announce, which
    # ends the hand, and this test needs it still waiting after one move.
    move = next(m for m in loaded.game.legal_moves(loaded.state)[seat] if m != ANNOUNCE)
    move_play(hand_id=hand.id, user=users[seat], move=move, seq=seq, command_id=uuid.uuid4(),
              at=T0 + timedelta(seconds=1))
    hand.refresh_from_db()
    assert hand.last_seq > seq
    assert not deadline_fire(hand_id=hand.id, seq=seq, at=late)
    assert HandEvent.objects.filter(hand=hand, by="timeout").count() == 0
    assert hand.status == Hand.Status.PLAYING  # one move does not end a hand of Ma commère
    before = hand.last_seq
    assert deadline_fire(hand_id=hand.id, seq=before, at=late)
    hand.refresh_from_db()
    assert hand.last_seq > before
    assert HandEvent.objects.filter(hand=hand, by="timeout").exists()
    assert not deadline_fire(hand_id=hand.id, seq=before, at=late)  # a duplicate: nothing


def test_a_timer_for_a_finished_hand_does_nothing(people):
    partie, users = _partie(people, pause=0)
    hand = partie.hands.get()
    _play_to_end(hand, users, random.Random(2))
    hand.refresh_from_db()
    assert hand.status == Hand.Status.OVER

    assert not deadline_fire(hand_id=hand.id, seq=hand.last_seq, at=T0 + timedelta(hours=1))
    hand.refresh_from_db()
    assert hand.status == Hand.Status.OVER
