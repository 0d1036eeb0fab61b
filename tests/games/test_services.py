"""The game service's commands: start a partie, deal, play, time out, close, pay."""

from __future__ import annotations

import hashlib
import random
import re
import time
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.db.models import F
from django.utils import translation

from games.engine import bots as engine_bots
from games.engine.base import BY_FORCED, BY_PLAYER, BY_TIMEOUT, Move
from games.engine.deal import commitment
from games.engine.play import play_hand
from games.engine.registry import get_game
from games.engine.shares import deck_v3, first_dealer_v2
from games.engine.verify import verify_record
from games.errors import (
    CommandConflict,
    GameError,
    IllegalMoveError,
    InvalidPartie,
    NotSeated,
    PartieOver,
    StaleSequence,
)
from games.models import Command, Hand, HandEvent, HandSeed, Partie
from games.selectors import hand_record, hand_view
from games.services import (
    chips,
    deadline_fire,
    hand_deal,
    move_play,
    partie_close,
    partie_start,
    store,
)
from ledger import services as ledger
from ledger.models import JournalEntry
from ledger.selectors import trial_balance

pytestmark = pytest.mark.django_db

T0 = datetime(2030, 5, 4, 20, 0, tzinfo=UTC)


@pytest.fixture
def people(django_user_model: Any) -> list[Any]:
    return [django_user_model.objects.create_user(name)
            for name in ("alice", "bruno", "chloe", "denis", "emile")]


def _start(game: str, players: Sequence[Any] = (), bots: Sequence[str] = (), *,
           at: datetime = T0, **kwargs: Any) -> Partie:
    kwargs.setdefault("buy_in", 100)
    return partie_start(game=game, players=players, bots=bots, at=at, **kwargs)


def _pending(hand: Hand) -> tuple[int, list[Move], store.Loaded]:
    loaded = store.load(hand)
    seat = loaded.game.to_act(loaded.state)[0]
    return seat, loaded.game.legal_moves(loaded.state)[seat], loaded


def _fire_until_over(hand: Hand, clock: datetime) -> datetime:
    """Let every deadline of the hand pass, as the timers would."""
    while hand.status == Hand.Status.PLAYING:
        clock = max(clock, hand.deadline) + timedelta(seconds=1)
        assert deadline_fire(hand_id=hand.id, seq=hand.last_seq, at=clock)
        hand.refresh_from_db()
    return clock


def _play_out(partie: Partie, clock: datetime = T0) -> datetime:
    """Deal and play the partie to its end, deadlines firing as soon as they are due."""
    for _ in range(500):
        partie.refresh_from_db()
        if partie.status == Partie.Status.OVER:
            return clock
        hand = partie.hands.order_by("-number").first()
        if hand is not None and hand.status == Hand.Status.PLAYING:
            clock = _fire_until_over(hand, clock)
            continue
        clock += timedelta(seconds=10)
        hand_deal(partie=partie, at=clock)
    raise AssertionError("the partie did not end")


def _events(hand: Hand) -> list[dict[str, Any]]:
    return store.events(hand)


# -- partie_start --------------------------------------------------------------------------------


@pytest.mark.parametrize("game, options, extra, length", [
    ("comet", {}, {}, 10),
    ("commere", {}, {}, 10),
    ("comet", {"until_broke": True}, {}, 100),
    ("commere", {}, {"deal_until": T0 + timedelta(hours=1)}, 100),
    ("comet", {}, {"max_hands": 4}, 4),
    ("comet", {"deals": 3}, {}, 3),
])
def test_every_partie_has_a_bounded_length(people, game, options, extra, length):
    key = "deals" if game == "comet" else "rounds"
    partie = _start(game, people[:4], options=options, **extra)
    assert partie.options[key] == length


@pytest.mark.parametrize("game, players, bots, options, extra, message", [
    ("comet", 1, [], {}, {}, "Comet is played by 2 to 6 players, not 1"),
    ("comet", 3, ["heuristic"] * 4, {}, {}, "Comet is played by 2 to 6 players, not 7"),
    ("commere", 3, [], {}, {}, "Ma commère, accommodez-moi is played by 4 to 12 players, not 3"),
    ("commere", 5, ["random"] * 8, {}, {},
     "Ma commère, accommodez-moi is played by 4 to 12 players, not 13"),
    ("comet", 2, ["genius"], {}, {}, "unknown bot 'genius': choose among random, heuristic"),
    ("comet", 2, [], {"jokers": True}, {}, "unknown Comet option 'jokers'"),
    ("commere", 4, [], {"comet_payment": 2}, {}, "unknown option 'comet_payment' for Ma"),
    ("comet", 2, [], {"ante": "two"}, {}, "option 'ante' must be a whole number of chips"),
    ("comet", 2, [], {"per_card": -1}, {}, "option 'per_card' cannot be negative"),
    ("comet", 2, [], {"deals": 0}, {}, "option 'deals' must be at least 1"),
    ("commere", 4, [], {"rounds": 0}, {}, "option 'rounds' must be at least 1, not 0"),
    ("commere", 4, [], {"until_broke": "yes"}, {}, "option 'until_broke' must be true or false"),
    ("belote", 4, [], {}, {}, "unknown game 'belote'"),
    ("comet", 2, [], {}, {"buy_in": -5}, "buy_in must be between 0 and 1000000 chips"),
    ("comet", 2, [], {}, {"buy_in": 10**6 + 1}, "buy_in must be between 0 and 1000000 chips"),
    ("comet", 2, [], {"comet_payment": 10**20}, {}, "option 'comet_payment' is at most 1000"),
    ("comet", 2, [], {"ante": 10**30}, {}, "option 'ante' is at most 1000, not 10000"),
    ("commere", 4, [], {"max_turns": 10**12}, {}, "option 'max_turns' is at most 100, not"),
    ("comet", 2, [], {"deals": 10**30}, {}, "option 'deals' is at most 100, not 1000"),
    ("commere", 4, [], {"rounds": 101}, {}, "option 'rounds' is at most 100, not 101"),
    ("comet", 2, [], {"deals": 9}, {"max_hands": 8}, "option 'deals' is at most 8, not 9"),
    ("comet", 2, [], {}, {"move_timeout": timedelta(seconds=-1)},
     "move_timeout cannot be negative"),
])
def test_partie_start_refuses_a_bad_partie_with_a_clear_message(
        people, game, players, bots, options, extra, message):
    with pytest.raises(InvalidPartie) as refused:
        _start(game, people[:players], bots, options=options, **extra)

    assert message in refused.value.message
    assert refused.value.status == 400 and refused.value.code == "invalid_partie"
    assert not Partie.objects.exists()
    assert not JournalEntry.objects.exists()


def test_partie_start_refuses_one_player_in_two_seats(people):
    with pytest.raises(InvalidPartie, match="a player can take only one seat"):
        _start("comet", [people[0], people[1], people[0]])

    assert not Partie.objects.exists()


def test_partie_start_seats_people_then_bots_buys_them_in_and_deals(people):
    partie = _start("comet", people[:2], ["heuristic", "timeout"], buy_in=40,
                    options={"ante": 2})

    seats = list(partie.seats.order_by("number"))
    assert [s.player for s in seats[:2]] == people[:2]
    assert [s.bot for s in seats] == ["", "", "heuristic", "timeout"]
    assert partie.options["ante"] == 2 and partie.options["per_card"] == 1  # defaults filled
    hand = partie.hands.get()
    started = _events(hand)[0]
    assert started["type"] == "hand_started" and started["chips_before"] == {
        str(s): 40 for s in range(4)}
    assert hand.commitment == started["commitment"]
    antes = [e for e in _events(hand) if e["type"] == "pay" and e["reason"] == "ante"]
    assert [e["from"] for e in antes] == [(hand.dealer + 1 + k) % 4 for k in range(4)]
    assert all(chips.seat_wallet(partie, s).balance == 38 for s in seats)
    assert chips.pot_balance(partie=partie) == 8


# -- hand_deal -----------------------------------------------------------------------------------


def test_hands_are_dealt_in_order_and_the_deal_passes_to_the_next_seat():
    partie = _start("comet", [], ["heuristic", "random", "heuristic"], options={"deals": 5})
    _play_out(partie)

    hands = list(partie.hands.order_by("number"))
    assert [h.number for h in hands] == [1, 2, 3, 4, 5]
    first = hands[0]
    assert first.dealer == first_dealer_v2(first.secret.seed, 3)  # drawn by lot
    assert [h.dealer for h in hands] == [(first.dealer + k) % 3 for k in range(5)]
    for before, after in zip(hands, hands[1:], strict=False):
        # Each hand starts from the wallets the previous one left.
        net = hand_record(hand=before)["result"]["net"]
        was = _events(before)[0]["chips_before"]
        assert _events(after)[0]["chips_before"] == {s: was[s] + net[s] for s in was}
    assert len({h.secret.seed for h in hands}) == 5  # a fresh seed for every hand


def test_the_next_hand_waits_for_the_current_one_and_none_after_the_end(people):
    partie = _start("commere", people[:4], options={"rounds": 1})
    hand = partie.hands.get()

    with pytest.raises(GameError) as busy:
        hand_deal(partie=partie, at=T0 + timedelta(seconds=1))
    assert busy.value.code == "hand_in_progress"

    clock = _fire_until_over(hand, T0)
    assert hand_deal(partie=partie, at=clock + timedelta(seconds=5)) is None  # the end
    partie.refresh_from_db()
    assert partie.status == Partie.Status.OVER
    assert partie.ended_at == clock + timedelta(seconds=5)
    with pytest.raises(PartieOver):
        hand_deal(partie=partie, at=clock + timedelta(seconds=6))
    assert partie.hands.count() == 1


@pytest.mark.parametrize("game, key, n", [("comet", "deals", 3), ("commere", "rounds", 4)])
def test_the_partie_ends_after_the_agreed_number_of_hands(game, key, n):
    partie = _start(game, [], ["heuristic"] * 4, options={key: n})
    _play_out(partie)

    partie.refresh_from_db()
    assert partie.status == Partie.Status.OVER and partie.ended_at is not None
    assert partie.hands.count() == n
    assert not partie.hands.filter(status=Hand.Status.PLAYING).exists()


def test_until_broke_ends_the_partie_when_a_player_cannot_pay_the_ante():
    partie = _start("comet", [], ["heuristic"] * 3, buy_in=4,
                    options={"until_broke": True, "ante": 1, "per_card": 1})
    _play_out(partie)

    partie.refresh_from_db()
    assert partie.status == Partie.Status.OVER
    hands = list(partie.hands.order_by("number"))
    assert len(hands) >= 1
    for hand in hands:  # every hand was dealt to players who could all pay the ante
        assert min(_events(hand)[0]["chips_before"].values()) >= 1
    wallets = chips.wallet_balances(partie=partie, seats=list(partie.seats.all()))
    assert min(wallets.values()) < 1
    assert sum(wallets.values()) + chips.pot_balance(partie=partie) == 12  # chips conserved


def test_the_partie_ends_once_its_closing_time_has_passed():
    partie = _start("comet", [], ["heuristic"] * 2, deal_until=T0 + timedelta(minutes=1))

    assert hand_deal(partie=partie, at=T0 + timedelta(seconds=30)) is not None
    assert hand_deal(partie=partie, at=T0 + timedelta(minutes=1)) is None

    partie.refresh_from_db()
    assert partie.status == Partie.Status.OVER and partie.hands.count() == 2


# -- Ma commère: the pot of a void last round is shared ------------------------------------------


def _void_seed(n: int, ante: int, chips_before: dict[str, int]) -> str:
    """A seed whose round, played by default moves with max_turns 1, is void."""
    game = get_game("commere")
    options = game.normalise_options({"ante": ante, "max_turns": 1, "rounds": 1})
    for i in range(500):
        seed = hashlib.sha256(f"void-{i}".encode()).hexdigest()
        deck, dealer = deck_v3("commere", seed, {}), first_dealer_v2(seed, n)
        players = [engine_bots.TimeoutBot(random.Random(0)) for _ in range(n)]
        _, events = play_hand(game, deck=deck, dealer=dealer,
                              seats=[{"seat": s, "player": f"p{s}"} for s in range(n)],
                              options=options, chips_before=chips_before, pot_before=0,
                              commitment=commitment(seed), bots=players)
        if any(e.type == "void" for e in events):
            return seed
    raise AssertionError("no void round among the seeds tried")


def test_the_pot_of_a_void_last_round_is_shared_through_the_ledger(people, monkeypatch):
    players = people[:4]
    funds = [1, 10, 10, 10]  # alice cannot pay the ante of 2 in full
    for user, amount in zip(players, funds, strict=True):
        ledger.buy_in(wallet=ledger.wallet_get_or_create(club_key="casual", owner=user),
                      amount=amount, source="test", idempotency_key=f"fund:{user.pk}")
    seed = _void_seed(4, 2, {str(s): a for s, a in enumerate(funds)})
    monkeypatch.setattr("games.services.parties.new_seed", lambda: seed)

    partie = _start("commere", players, buy_in=0,
                    options={"ante": 2, "max_turns": 1, "rounds": 1})
    hand = partie.hands.get()
    clock = _fire_until_over(hand, T0)
    assert [e["type"] for e in _events(hand)][-2:] == ["void", "hand_over"]
    assert chips.pot_balance(partie=partie) == 7  # 1 + 2 + 2 + 2

    assert hand_deal(partie=partie, at=clock + timedelta(seconds=5)) is None

    partie.refresh_from_db()
    assert partie.status == Partie.Status.OVER
    assert chips.pot_balance(partie=partie) == 0
    shared = JournalEntry.objects.get(idempotency_key=f"partie:{partie.pk}:pot-shared")
    gains = {p.account.owner_id: p.amount for p in shared.postings.select_related("account")
             if p.amount > 0}
    # 7 chips among 4: one each, the 3 left one each from the last banker's next seat.
    expected = {players[s].pk: 1 + (1 if (s - hand.dealer - 1) % 4 < 3 else 0)
                for s in range(4)}
    assert gains == expected
    wallets = chips.wallet_balances(partie=partie, seats=list(partie.seats.all()))
    assert sum(wallets.values()) == sum(funds)
    assert trial_balance().total == 0

    partie_close(partie=partie, at=clock + timedelta(seconds=9))  # closing again does nothing
    assert JournalEntry.objects.filter(source__startswith=f"partie:{partie.pk}/pot").count() == 1


def test_a_partie_whose_pot_was_won_shares_nothing():
    partie = _start("commere", [], ["heuristic"] * 4, options={"rounds": 2})
    _play_out(partie)

    assert chips.pot_balance(partie=partie) == 0
    assert not JournalEntry.objects.filter(idempotency_key=f"partie:{partie.pk}:pot-shared")


# -- move_play -----------------------------------------------------------------------------------


@pytest.fixture
def waiting_hand(people) -> tuple[Hand, dict[int, Any]]:
    """A Ma commère hand of people, waiting for the first speaker (nobody else may act)."""
    partie = _start("commere", people[:4], options={"rounds": 1, "compulsory_announce": False})
    return partie.hands.get(), {s.number: s.player for s in partie.seats.all()}


def test_a_move_is_recorded_with_its_player_and_command_id(waiting_hand):
    hand, users = waiting_hand
    seat, legal, _ = _pending(hand)
    seq = hand.last_seq
    command_id = uuid.uuid4()

    played = move_play(hand_id=hand.id, user=users[seat], move=legal[-1], seq=seq,
                       command_id=command_id, at=T0 + timedelta(seconds=3))

    hand.refresh_from_db()
    answer = {"hand": str(hand.id), "seq": hand.last_seq, "applied_from_seq": seq + 1,
              "next_hand": None}
    assert played.response == answer
    # The hand and its state after the move come with the answer (the API's view needs them).
    assert played.seat == seat and played.hand.last_seq == hand.last_seq
    assert played.loaded == store.load(hand)
    move = HandEvent.objects.get(hand=hand, seq=seq + 1)
    assert (move.type, move.payload.get("card"), move.by) == (legal[-1].type, legal[-1].card,
                                                             BY_PLAYER)
    assert move.actor == users[seat] and move.command_id == command_id
    assert move.at == "2030-05-04T20:00:03.000000Z"
    assert hand.deadline == T0 + timedelta(seconds=3) + hand.partie.move_timeout


def test_a_retried_command_returns_the_first_answer_and_appends_nothing(waiting_hand):
    hand, users = waiting_hand
    seat, legal, _ = _pending(hand)
    seq = hand.last_seq
    command_id = uuid.uuid4()
    first = move_play(hand_id=hand.id, user=users[seat], move=legal[0], seq=seq,
                      command_id=command_id, at=T0 + timedelta(seconds=1))
    events = list(HandEvent.objects.filter(hand=hand).values_list("seq", "hash"))

    again = move_play(hand_id=hand.id, user=users[seat], move=legal[0], seq=seq,
                      command_id=command_id, at=T0 + timedelta(seconds=9))

    assert again.response == first.response
    assert again.retried and not first.retried
    assert again.loaded == store.load(again.hand)  # the hand as it is now, for the view
    assert list(HandEvent.objects.filter(hand=hand).values_list("seq", "hash")) == events
    assert Command.objects.filter(command_id=command_id).count() == 1


def test_a_command_id_reused_for_another_move_is_refused(waiting_hand):
    hand, users = waiting_hand
    seat, legal, _ = _pending(hand)
    command_id = uuid.uuid4()
    first_seq = hand.last_seq
    # Not an announcement: it would end the hand, and the second move needs a hand in play
    # (the deal is random; an announce-only opening would leave nothing to test).
    first = next(m for m in legal if m.type != "announce")
    move_play(hand_id=hand.id, user=users[seat], move=first, seq=first_seq,
              command_id=command_id, at=T0)
    hand.refresh_from_db()
    assert hand.status == Hand.Status.PLAYING
    seat2, legal2, _ = _pending(hand)
    last = hand.last_seq

    with pytest.raises(CommandConflict) as refused:
        move_play(hand_id=hand.id, user=users[seat2], move=legal2[0], seq=last,
                  command_id=command_id, at=T0)

    assert refused.value.status == 409
    with pytest.raises(CommandConflict):  # nor by another player for the very same move
        move_play(hand_id=hand.id, user=users[(seat + 1) % 4], move=first, seq=first_seq,
                  command_id=command_id, at=T0)
    hand.refresh_from_db()
    assert hand.last_seq == last


def test_a_move_answering_an_old_seq_is_stale(waiting_hand):
    hand, users = waiting_hand
    seat, legal, _ = _pending(hand)

    # In English (outside a request the site's French would be active, as its catalogue has
    # this message).
    with translation.override("en"), pytest.raises(
            StaleSequence, match=f"the hand is at seq {hand.last_seq}") as stale:
        move_play(hand_id=hand.id, user=users[seat], move=legal[0], seq=hand.last_seq - 1,
                  command_id=uuid.uuid4(), at=T0)

    assert stale.value.status == 409
    assert not Command.objects.exists()


def test_an_illegal_move_is_refused_with_the_rule(waiting_hand):
    hand, users = waiting_hand
    seat, legal, loaded = _pending(hand)
    other = (seat + 1) % 4
    card = loaded.state.hands[other][0]  # a card the speaker does not hold
    last = hand.last_seq

    with pytest.raises(IllegalMoveError) as wrong_card:
        move_play(hand_id=hand.id, user=users[seat], move=Move("offer", card=card),
                  seq=last, command_id=uuid.uuid4(), at=T0)
    with pytest.raises(IllegalMoveError) as wrong_turn:
        move_play(hand_id=hand.id, user=users[other], move=Move("offer", card=card),
                  seq=last, command_id=uuid.uuid4(), at=T0)

    assert wrong_card.value.status == 400 and wrong_card.value.message
    assert wrong_turn.value.rule == "turn"
    hand.refresh_from_db()
    assert hand.last_seq == last and not Command.objects.exists()


def test_someone_without_a_seat_cannot_move(waiting_hand, people):
    hand, _ = waiting_hand
    _, legal, _ = _pending(hand)

    with pytest.raises(NotSeated) as refused:
        move_play(hand_id=hand.id, user=people[4], move=legal[0], seq=hand.last_seq,
                  command_id=uuid.uuid4(), at=T0)

    assert refused.value.status == 403


def test_a_move_on_a_finished_hand_is_refused(waiting_hand):
    hand, users = waiting_hand
    _fire_until_over(hand, T0)

    with pytest.raises(GameError) as over:
        move_play(hand_id=hand.id, user=users[0], move=Move("announce"), seq=hand.last_seq,
                  command_id=uuid.uuid4(), at=T0 + timedelta(hours=1))

    assert over.value.code == "hand_over"


# -- deadlines -----------------------------------------------------------------------------------


def test_a_deadline_fired_early_late_twice_or_at_the_wrong_seq_does_nothing(waiting_hand):
    hand, _ = waiting_hand
    seq, due = hand.last_seq, hand.deadline
    assert hand.deadline_seq == seq and hand.deadline_kind == "timeout"
    assert due == T0 + hand.partie.move_timeout

    assert not deadline_fire(hand_id=hand.id, seq=seq, at=due - timedelta(microseconds=1))
    assert not deadline_fire(hand_id=hand.id, seq=seq - 1, at=due + timedelta(seconds=1))
    assert not deadline_fire(hand_id=hand.id, seq=seq + 1, at=due + timedelta(seconds=1))
    assert not deadline_fire(hand_id=uuid.uuid4(), seq=seq, at=due + timedelta(seconds=1))
    hand.refresh_from_db()
    assert hand.last_seq == seq

    assert deadline_fire(hand_id=hand.id, seq=seq, at=due)
    hand.refresh_from_db()
    after = hand.last_seq
    assert after > seq
    assert not deadline_fire(hand_id=hand.id, seq=seq, at=due + timedelta(seconds=1))  # again
    hand.refresh_from_db()
    assert hand.last_seq == after

    _fire_until_over(hand, due)
    last = hand.last_seq
    assert not deadline_fire(hand_id=hand.id, seq=last, at=due + timedelta(days=1))  # over
    assert HandEvent.objects.filter(hand=hand).count() == last


def test_a_passed_deadline_plays_the_default_move_recorded_timeout(waiting_hand):
    hand, _ = waiting_hand
    seat, legal, loaded = _pending(hand)
    assert len(legal) > 1
    default = loaded.game.default_move(loaded.state, seat)

    assert deadline_fire(hand_id=hand.id, seq=hand.last_seq, at=hand.deadline)

    played = HandEvent.objects.get(hand=hand, seq=hand.last_seq + 1)
    assert played.by == BY_TIMEOUT and played.actor is None
    assert (played.type, played.payload.get("card")) == (default.type, default.card)
    assert played.payload["seat"] == seat


def test_a_persons_only_move_is_forced_after_the_forced_move_delay(people):
    """While the Comet may be played, every decision waits the Comet window (whoever holds
    it); otherwise an only move is forced after the forced-move delay and a choice has the
    move time-out."""
    partie = _start("comet", people[:2], forced_move_delay=timedelta(seconds=2),
                    comet_window=timedelta(seconds=5), move_timeout=timedelta(seconds=40))
    hand = partie.hands.get()
    clock = T0
    kinds = set()
    while hand.status == Hand.Status.PLAYING:
        seat, legal, loaded = _pending(hand)
        chance = loaded.game.comet_window_open(loaded.state)
        if chance:
            assert (hand.deadline_kind, hand.deadline) == ("comet", clock + timedelta(seconds=5))
        elif len(legal) == 1:
            assert (hand.deadline_kind, hand.deadline) == ("forced", clock + timedelta(seconds=2))
        else:
            assert (hand.deadline_kind, hand.deadline) == ("timeout",
                                                           clock + timedelta(seconds=40))
        kinds.add(hand.deadline_kind)
        clock = hand.deadline
        assert deadline_fire(hand_id=hand.id, seq=hand.last_seq, at=clock)
        played = HandEvent.objects.get(hand=hand, seq=hand.last_seq + 1)
        # At a Comet chance the holder's standing order (by default: play it at a blocked run
        # he holds a card of, else keep it) chooses for him, as his click would.
        assert played.by == (BY_FORCED if len(legal) == 1 else
                             BY_PLAYER if chance else BY_TIMEOUT)
        hand.refresh_from_db()
    assert "comet" in kinds and kinds <= {"comet", "forced", "timeout"}
    assert verify_record(hand_record(hand=hand))


def test_bots_move_at_once_and_a_timeout_bot_waits_for_its_deadline():
    partie = _start("commere", [], ["heuristic", "heuristic", "heuristic", "timeout"],
                    options={"rounds": 1})
    hand = partie.hands.get()
    if hand.status == Hand.Status.PLAYING:  # the round may end before the timeout bot speaks
        seat, _, _ = _pending(hand)
        assert seat == 3 and hand.deadline_kind in ("timeout", "forced")
    _fire_until_over(hand, T0)

    bys = {e["by"] for e in _events(hand) if e.get("seat") == 3 and e["type"] != "pay"
           and e["by"] != "service"}
    assert bys <= {BY_TIMEOUT, BY_FORCED}
    assert {e["by"] for e in _events(hand) if e.get("seat") in (0, 1, 2)
            and e["type"] in ("offer", "give_back", "return", "announce")} <= {
        BY_PLAYER, BY_FORCED}


# -- the seed ------------------------------------------------------------------------------------


def test_the_seed_stays_apart_until_the_hand_is_over(waiting_hand, people):
    hand, users = waiting_hand
    seed = HandSeed.objects.get(hand=hand).seed

    for user in [*users.values(), people[4]]:
        assert hand_view(hand=hand, user=user)["seed"] is None
    rows = HandEvent.objects.filter(hand=hand).values_list("payload", "prev", "hash")
    assert seed not in str(list(rows))
    with pytest.raises(GameError) as early:
        hand_record(hand=hand)
    assert early.value.code == "hand_not_over"
    assert hand.commitment == hashlib.sha256(bytes.fromhex(seed)).hexdigest()

    _fire_until_over(hand, T0)

    assert hand_view(hand=hand, user=people[4])["seed"] == seed
    record = hand_record(hand=hand)
    assert record["seed"] == seed and record["commitment"] == hand.commitment
    assert seed not in str(list(HandEvent.objects.filter(hand=hand).values_list("payload")))


# -- many hands: records, ledger and books agree -------------------------------------------------


def test_two_hundred_bot_hands_verify_and_reconcile_and_the_books_balance():
    started = time.perf_counter()
    out = StringIO()
    call_command("play_bots", game="comet", players=4, hands=100,
                 bots="heuristic,random,timeout", stdout=out)
    call_command("play_bots", game="commere", players=6, hands=100,
                 bots="heuristic,random,timeout,heuristic", stdout=out)
    played = time.perf_counter() - started

    hands = {str(h.id): h for h in Hand.objects.select_related("partie", "secret")}
    assert len(hands) == 200
    assert {h.partie.game for h in hands.values()} == {"comet", "commere"}
    assert all(h.status == Hand.Status.OVER for h in hands.values())
    assert Partie.objects.filter(status=Partie.Status.OVER).count() == 2
    assert set(HandEvent.objects.values_list("by", flat=True)) == {
        BY_PLAYER, BY_FORCED, BY_TIMEOUT, "service"}
    # No gap and no duplicate: each hand's seqs are exactly 1..last_seq.
    assert HandEvent.objects.count() == sum(h.last_seq for h in hands.values())
    assert HandEvent.objects.filter(seq__gt=F("hand__last_seq")).count() == 0
    # verify_hands runs verify_record(hand_record(hand)) and reconcile_hand(hand) on each hand.
    report = StringIO()
    call_command("verify_hands", stdout=report)
    lines = report.getvalue().splitlines()
    verified = [re.fullmatch(r"OK ([0-9a-f]{64}) hand (\S+)", line) for line in lines[:-1]]
    assert all(verified), [line for line in lines if not line.startswith("OK ")][:5]
    assert {m.group(2) for m in verified} == set(hands)
    assert lines[-1] == "200 finished hand(s) checked, 0 with discrepancies"
    for hand in (*list(hands.values())[:3], *list(hands.values())[-3:]):  # and directly
        record = hand_record(hand=hand)
        assert verify_record(record) == record["digest"]
        assert chips.reconcile_hand(hand=hand) == []
    assert trial_balance().total == 0
    assert trial_balance(club_key="casual").total == 0
    print(f"200 bot hands played in {played:.1f} s; checked in "
          f"{time.perf_counter() - started - played:.1f} s")
