"""Ma commère, accommodez-moi: every clause of RULES.md §1 and the Ma commère items of §3.

Most rounds are four seats with seat 3 the banker, so that the speaking order is 0, 1, 2, 3
and "the next seat" is seat + 1. ``Round`` (tests/engine/commere_helpers.py) deals the hands
a test asks for.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.engine import commere
from games.engine.base import (
    BY_FORCED,
    BY_TIMEOUT,
    Event,
    HandOver,
    IllegalMove,
    Move,
    NotYourTurn,
    RuleError,
)
from games.engine.cards import FULL_DECK
from games.engine.deal import commitment, deal_from_seed
from games.engine.record import build_record, seal_all
from games.engine.verify import verify_record

from .commere_helpers import ANNOUNCE, COMMITMENT, Round, deck_for, give_back, offer, ret

# Four hands with no combination, and exchanges that make none (see quiet_phase_1).
QUIET = [["2C", "7D", "8H"], ["3C", "8D", "KH"], ["4C", "9D", "AH"], ["5S", "6H", "JS"]]
QUIET_TALON = ["9S", "TD", "4H", "KS"]


def quiet_phase_1(r: Round) -> None:
    """The 2C goes round the table and comes back: nobody ever holds a combination."""
    r.exchange(0, "2C", "3C")
    r.exchange(1, "2C", "4C")
    r.exchange(2, "2C", "5S")
    r.exchange(3, "2C", "3C")


def circulate(r: Round, card: str) -> None:
    """Seat 0's ``card`` goes round and comes back: seat 0 ends phase 1 with his first hand.

    Seats 1-3 hold QUIET fillers that make no combination whatever card they are offered.
    """
    r.exchange(0, card, "3C")
    r.exchange(1, card, "4C")
    r.exchange(2, card, "5S")
    r.exchange(3, card, "3C")


def with_seat_0(hand: list[str], **kwargs: Any) -> Round:
    """Seat 0, the first speaker, holds ``hand``; the others hold QUIET fillers."""
    return Round([hand, *QUIET[1:]], **kwargs)


# --------------------------------------------------------------------------------------------
# Players, cards, deck, options


def test_four_to_twelve_players() -> None:
    for n in (3, 13):
        with pytest.raises(ValueError, match="4 to 12 players"):
            commere.begin(
                deck=list(FULL_DECK), dealer=0, seats=[{"seat": s} for s in range(n)],
                options=commere.normalise_options({}),
                chips_before={str(s): 5 for s in range(n)}, pot_before=0, commitment=COMMITMENT,
            )
    assert (commere.MIN_SEATS, commere.MAX_SEATS) == (4, 12)


def test_a_full_fifty_two_card_deck_is_used() -> None:
    with pytest.raises(ValueError, match="52-card"):
        commere.initial_state([c for c in FULL_DECK if c != "8D"])


def test_card_points_ace_eleven_faces_and_ten_ten_others_their_number() -> None:
    assert commere.evaluate(("AH", "KH", "QH"), False) == (commere.SEQUENCE, 31, 14, 13, 12)
    assert commere.evaluate(("TC", "TD", "TH"), False) == (commere.TRICON, 30, 10, 10, 10)
    assert commere.evaluate(("2S", "5S", "9S"), False) == (commere.POINT, 16, 9, 5, 2)


def test_options_default_as_rules_md_says() -> None:
    assert commere.normalise_options(None) == {
        "ante": 1, "compulsory_announce": True, "ace_low_sequence": False, "max_turns": 30,
        "rounds": None, "until_broke": False,
    }
    assert commere.normalise_options({"max_turns": None})["max_turns"] is None


@pytest.mark.parametrize(("options", "named"), [
    ({"antes": 1}, "antes"),
    ({"ante": -1}, "ante"),
    ({"ante": "1"}, "ante"),
    ({"ante": True}, "ante"),
    ({"compulsory_announce": 1}, "compulsory_announce"),
    ({"ace_low_sequence": "yes"}, "ace_low_sequence"),
    ({"max_turns": 0}, "max_turns"),
    ({"max_turns": 2.5}, "max_turns"),
    ({"rounds": -3}, "rounds"),
    ({"until_broke": None}, "until_broke"),
])
def test_bad_options_are_refused_naming_the_option(options: dict[str, object], named: str) -> None:
    with pytest.raises(ValueError, match=named):
        commere.normalise_options(options)


def test_missing_options_of_a_record_take_their_defaults() -> None:
    deck = deck_for(QUIET, 3)
    events = commere.begin(deck=deck, dealer=3, seats=[{"seat": s} for s in range(4)],
                           options={"ante": 2}, chips_before={str(s): 9 for s in range(4)},
                           pot_before=0, commitment=COMMITMENT)
    assert events[0].data["options"] == {"ante": 2}
    state = commere.replay(deck, events)
    assert state.pot == 8
    assert commere.legal_moves(state) == {0: [offer("2C"), offer("7D"), offer("8H")]}


# --------------------------------------------------------------------------------------------
# Combinations and their order


def test_tricon_beats_sequence_beats_point() -> None:
    tricon = commere.evaluate(("2C", "2D", "2H"), False)
    sequence = commere.evaluate(("2C", "3D", "4H"), False)
    point = commere.evaluate(("AS", "KS", "JS"), False)
    assert tricon and sequence and point
    assert tricon > sequence > point
    assert [commere.combination_name(c) for c in (("2C", "2D", "2H"), ("2C", "3D", "4H"),
                                                  ("AS", "KS", "JS"), ("AS", "KS", "JH"))] == \
        ["tricon", "sequence", "point", None]


def test_a_sequence_is_three_consecutive_ranks_whatever_the_suits() -> None:
    assert commere.combination_name(("9C", "TD", "JH")) == "sequence"
    assert commere.combination_name(("9C", "TD", "QH")) is None


def test_three_suited_consecutive_cards_are_a_sequence_not_a_point() -> None:
    assert commere.combination_name(("7H", "8H", "9H")) == "sequence"
    assert commere.evaluate(("7H", "8H", "9H"), False) > commere.evaluate(("AS", "KS", "JS"),  # type: ignore[operator]
                                                                          False)


def test_ace_is_high_only_ace_king_queen_is_a_sequence_ace_two_three_is_not() -> None:
    assert commere.combination_name(("AC", "KD", "QH")) == "sequence"
    assert commere.combination_name(("AC", "2D", "3H")) is None


def test_no_wrap_around_king_ace_two_is_never_a_sequence() -> None:
    assert commere.combination_name(("KC", "AD", "2H")) is None
    assert commere.combination_name(("KC", "AD", "2H"), True) is None
    assert commere.combination_name(("QC", "KD", "2H"), True) is None


def test_ace_two_three_counts_with_ace_low_sequence_as_the_lowest_sequence_of_all() -> None:
    low = commere.evaluate(("AC", "2D", "3H"), True)
    two_three_four = commere.evaluate(("2C", "3D", "4H"), True)
    best_point = commere.evaluate(("AS", "KS", "JS"), True)
    assert low is not None and two_three_four is not None and best_point is not None
    # A-2-3 has 16 points and 2-3-4 only 9: "whatever the points".
    assert best_point < low < two_three_four
    assert commere.combination_name(("AC", "2C", "3C"), True) == "sequence"


def test_same_type_the_higher_total_of_points_wins() -> None:
    def key(*cards: str) -> tuple[int, ...]:
        k = commere.evaluate(cards, False)
        assert k is not None
        return k
    assert key("QC", "KD", "AH") > key("JC", "QD", "KH")  # 31 > 30
    assert key("AS", "2S", "9S") > key("KS", "8S", "3S")  # 22 > 21, the ace beats the king
    assert key("9C", "9D", "9H") > key("8C", "8D", "8H")


def test_equal_points_compare_the_ranks_one_by_one_from_the_highest() -> None:
    def key(*cards: str) -> tuple[int, ...]:
        k = commere.evaluate(cards, False)
        assert k is not None
        return k
    assert key("KC", "QD", "JH") > key("QC", "JD", "TH")  # both 30: "K-Q-J beats Q-J-T"
    assert key("KC", "KD", "KH") > key("QC", "QD", "QH")  # "three kings beat three queens"
    assert key("KS", "QS", "2S") > key("KH", "JH", "2H")  # 22 each: kings equal, then Q > J
    assert key("KS", "TS", "3S") > key("QH", "JH", "3H")  # 23 each: K > Q at once
    assert key("9C", "TD", "JH") == key("9S", "TH", "JC")


def test_evaluate_wants_three_different_cards() -> None:
    with pytest.raises(ValueError):
        commere.evaluate(("2C", "2C", "2D"), False)
    with pytest.raises(ValueError):
        commere.evaluate(("2C", "3C"), False)


# --------------------------------------------------------------------------------------------
# The deal and the antes


def test_banker_deals_three_rounds_of_one_card_from_the_next_seat_and_receives_the_last_card_of_each_round() -> None:  # noqa: E501
    deck = list(FULL_DECK)
    events = commere.begin(deck=deck, dealer=2, seats=[{"seat": s} for s in range(4)],
                           options=commere.normalise_options({}),
                           chips_before={str(s): 5 for s in range(4)}, pot_before=0,
                           commitment=COMMITMENT)
    state = commere.replay(deck, events)
    assert set(state.hands[3]) == {deck[0], deck[4], deck[8]}
    assert set(state.hands[0]) == {deck[1], deck[5], deck[9]}
    assert set(state.hands[2]) == {deck[3], deck[7], deck[11]}  # the banker: last of each round
    assert state.talon == tuple(deck[12:])  # deck[3n] on top


def test_every_player_pays_the_ante_one_per_seat_from_the_seat_after_the_banker() -> None:
    r = Round(QUIET, banker=1, options={"ante": 2}, chips=[10, 10, 10, 10], pot_before=3)
    assert r.types() == ["hand_started", "pay", "pay", "pay", "pay"]
    assert [p["from"] for p in r.pays("ante")] == [2, 3, 0, 1]
    assert all(p == {"from": p["from"], "to": "pot", "amount": 2, "reason": "ante", "short": 0}
               for p in r.pays())
    assert r.state.pot == 3 + 8
    assert r.state.chips == (8, 8, 8, 8)
    assert commere.to_act(r.state) == [2]  # then the seat after the banker speaks


def test_hand_started_carries_the_header_fields() -> None:
    r = Round(QUIET, chips=[4, 5, 6, 7], pot_before=2)
    assert r.events[0].type == "hand_started" and r.events[0].by == "service"
    assert r.events[0].data == {
        "dealer": 3, "seats": [{"seat": s, "player": f"p{s}"} for s in range(4)],
        "options": commere.normalise_options({}),
        "chips_before": {"0": 4, "1": 5, "2": 6, "3": 7}, "pot_before": 2,
        "commitment": COMMITMENT,
    }


def test_a_player_who_cannot_pay_the_ante_pays_what_he_has_and_the_rest_is_short() -> None:
    r = Round(QUIET, options={"ante": 2}, chips=[1, 0, 5, 5])
    assert r.pays("ante")[:2] == [
        {"from": 0, "to": "pot", "amount": 1, "reason": "ante", "short": 1},
        {"from": 1, "to": "pot", "amount": 0, "reason": "ante", "short": 2},
    ]
    assert r.state.chips == (0, 0, 3, 3) and r.state.pot == 5


def test_an_ante_of_zero_gives_no_payment() -> None:
    r = Round(QUIET, options={"ante": 0})
    assert r.types() == ["hand_started"]
    assert commere.to_act(r.state) == [0]


# --------------------------------------------------------------------------------------------
# Phase 1: exchanges between players


def test_each_player_speaks_once_from_the_seat_after_the_banker_to_the_banker() -> None:
    r = Round(QUIET, talon=QUIET_TALON)
    waited = []
    for offerer, card, back in [(0, "2C", "3C"), (1, "2C", "4C"), (2, "2C", "5S"),
                                (3, "2C", "3C")]:
        waited.append(commere.to_act(r.state)[0])
        r.play(offerer, offer(card))
        waited.append(commere.to_act(r.state)[0])
        r.play((offerer + 1) % 4, give_back(back))
    # Speaker, asked, speaker, …: the banker speaks last and offers to the first speaker.
    assert waited == [0, 1, 1, 2, 2, 3, 3, 0]


def test_the_two_cards_change_hands_together_when_the_asked_player_gives_back() -> None:
    r = Round(QUIET)
    r.play(0, offer("2C"))
    assert r.hand(0) == ["2C", "7D", "8H"] and r.hand(1) == ["3C", "8D", "KH"]
    r.play(1, give_back("KH"))
    assert r.hand(0) == ["7D", "8H", "KH"] and r.hand(1) == ["2C", "3C", "8D"]


def test_the_asked_player_gives_back_one_of_the_three_cards_he_held_before_the_offer() -> None:
    r = Round(QUIET)
    r.play(0, offer("2C"))
    assert r.legal() == {1: [give_back("3C"), give_back("8D"), give_back("KH")]}
    with pytest.raises(IllegalMove, match="you can only give back one of the three cards you "
                                          "held before the offer"):
        r.play(1, give_back("2C"))


def test_the_asked_player_speaks_next_with_his_new_hand() -> None:
    # Seat 1 is offered the 8C that makes him 8-9-T; he then speaks, and must announce.
    r = Round([["8C", "2D", "KH"], ["9H", "TS", "4D"], QUIET[2], QUIET[3]])
    r.exchange(0, "8C", "4D")
    assert r.legal() == {1: [ANNOUNCE]}


def test_a_speaker_who_holds_a_combination_must_announce_it() -> None:
    r = with_seat_0(["2C", "7C", "QC"])
    assert r.legal() == {0: [ANNOUNCE]}
    with pytest.raises(IllegalMove, match="you must announce: you hold a point and announcing "
                                          "is compulsory"):
        r.play(0, offer("2C"))
    events = r.play(0, ANNOUNCE, BY_FORCED)
    assert [e.type for e in events][:2] == ["announce", "showdown"]


def test_announcing_ends_the_round_at_once_and_every_hand_is_shown() -> None:
    r = with_seat_0(["2C", "7C", "QC"])
    events = r.play(0, ANNOUNCE, BY_FORCED)
    assert [e.type for e in events] == ["announce", "showdown", "pay", "hand_over"]
    assert events[1].data == {
        "hands": {"0": ["2C", "7C", "QC"], "1": ["3C", "8D", "KH"], "2": ["4C", "9D", "AH"],
                  "3": ["6H", "5S", "JS"]},
        "winner": 0, "combination": "point",
    }
    assert commere.is_over(r.state)


def test_announcing_is_optional_when_compulsory_announce_is_false() -> None:
    r = with_seat_0(["2C", "7C", "QC"], options={"compulsory_announce": False})
    assert r.legal() == {0: [ANNOUNCE, offer("2C"), offer("7C"), offer("QC")]}
    r.play(0, offer("2C"))
    assert commere.to_act(r.state) == [1]


def test_an_asked_player_holding_a_combination_announces_and_the_offer_is_withdrawn() -> None:
    r = Round([QUIET[0], ["9H", "9C", "9S"], QUIET[2], QUIET[3]])
    r.play(0, offer("2C"))
    assert r.legal() == {1: [ANNOUNCE]}
    with pytest.raises(IllegalMove, match="you must announce: you hold a tricon and announcing "
                                          "is compulsory"):
        r.play(1, give_back("9H"))
    events = r.play(1, ANNOUNCE, BY_FORCED)
    # Nothing changed hands: the offered 2C is still seat 0's.
    assert events[1].data["hands"]["0"] == ["2C", "7D", "8H"]
    assert events[1].data["hands"]["1"] == ["9C", "9H", "9S"]
    assert events[1].data["winner"] == 1


def test_an_asked_player_may_give_back_instead_when_announcing_is_optional() -> None:
    r = Round([QUIET[0], ["9H", "9C", "9S"], QUIET[2], QUIET[3]],
              options={"compulsory_announce": False})
    r.play(0, offer("2C"))
    assert r.legal() == {1: [ANNOUNCE, give_back("9C"), give_back("9H"), give_back("9S")]}
    r.play(1, give_back("9S"))
    assert r.hand(1) == ["2C", "9C", "9H"]


def test_you_can_only_announce_a_combination_you_hold() -> None:
    for options in ({}, {"compulsory_announce": False}):
        r = Round(QUIET, options=options)
        with pytest.raises(IllegalMove, match="you can only announce a combination you hold"):
            r.play(0, ANNOUNCE)


# Seat 1 makes a point and seat 3 a tricon after they have spoken (see the test below).
LATE = [["2C", "7D", "QH"], ["8C", "9H", "5C"], ["4D", "TC", "AH"], ["5S", "5H", "JD"]]


def late_combinations() -> Round:
    r = Round(LATE)
    r.exchange(0, "2C", "5C")  # seat 1: 2C 8C 9H
    r.exchange(1, "9H", "TC")  # seat 1: 2C 8C TC, a point, after his turn
    assert commere.to_act(r.state) == [2]
    r.exchange(2, "4D", "JD")  # seat 3: 4D 5H 5S
    r.exchange(3, "4D", "5C")  # seat 3: 5C 5H 5S, a tricon, after his turn
    return r


def test_a_player_who_makes_a_combination_after_his_turn_waits_for_the_end_of_phase_1() -> None:
    r = Round(LATE)
    r.exchange(0, "2C", "5C")
    r.exchange(1, "9H", "TC")
    assert commere.combination_name(r.state.hands[1]) == "point"
    with pytest.raises(NotYourTurn, match="it is not your turn: seat 2 must speak"):
        r.play(1, ANNOUNCE)


def test_a_combination_made_after_ones_turn_ends_the_round_when_phase_1_ends() -> None:
    r = late_combinations()
    # "As if the first such player in speaking order had announced": seat 1, not seat 3.
    assert r.legal() == {1: [ANNOUNCE]}
    assert commere.default_move(r.state, 1) == ANNOUNCE
    with pytest.raises(NotYourTurn):
        r.play(3, ANNOUNCE)
    events = r.play(1, ANNOUNCE, BY_FORCED)
    # The strongest combination on the table wins, announcer or not.
    assert events[1].data["winner"] == 3 and events[1].data["combination"] == "tricon"


def test_when_nobody_holds_a_combination_phase_2_starts_with_the_seat_after_the_banker() -> None:
    r = Round(QUIET, talon=QUIET_TALON)
    r.exchange(0, "2C", "3C")
    r.exchange(1, "2C", "4C")
    r.exchange(2, "2C", "5S")
    r.play(3, offer("2C"))
    events = r.play(0, give_back("3C"))
    assert [(e.type, e.by, e.data) for e in events] == [
        ("give_back", "player", {"seat": 0, "card": "3C"}),
        ("draw", "service", {"seat": 0, "card": "9S"}),
    ]


# --------------------------------------------------------------------------------------------
# Phase 2: exchange with the banker


def test_each_player_returns_one_of_his_four_cards_the_new_one_allowed() -> None:
    r = Round(QUIET, talon=QUIET_TALON)
    quiet_phase_1(r)
    assert r.hand(0) == ["2C", "7D", "8H", "9S"]
    assert r.legal() == {0: [ret("2C"), ret("7D"), ret("8H"), ret("9S")]}
    events = r.play(0, ret("9S"))
    assert [(e.type, e.data) for e in events] == [
        ("return", {"seat": 0, "card": "9S"}), ("draw", {"seat": 1, "card": "TD"}),
    ]
    assert r.hand(0) == ["2C", "7D", "8H"]


def test_the_banker_takes_a_card_too_and_then_a_new_turn_starts_with_phase_1() -> None:
    r = Round(QUIET, talon=QUIET_TALON)
    quiet_phase_1(r)
    r.play(0, ret("9S"))
    r.play(1, ret("TD"))
    r.play(2, ret("4H"))
    assert r.events[-1].data == {"seat": 3, "card": "KS"}  # the banker draws last
    assert r.play(3, ret("3C")) == [Event("return", "player", {"seat": 3, "card": "3C"})]
    assert r.state.turn == 2
    assert r.legal() == {0: [offer("2C"), offer("7D"), offer("8H")]}


def test_the_talon_is_first_in_first_out() -> None:
    r = Round(QUIET, talon=QUIET_TALON)
    talon = r.state.talon
    assert talon[:4] == tuple(QUIET_TALON)
    quiet_phase_1(r)
    for seat, card in [(0, "2C"), (1, "8D"), (2, "4H"), (3, "JS")]:
        r.play(seat, ret(card))
    # Drawn from the top; returned cards go under, in the order they were returned.
    assert r.state.talon == talon[4:] + ("2C", "8D", "4H", "JS")
    assert len(r.state.talon) == 52 - 12


def test_nobody_announces_during_phase_2_a_combination_made_there_is_announced_next() -> None:
    r = Round(QUIET, talon=QUIET_TALON)
    quiet_phase_1(r)
    with pytest.raises(IllegalMove, match="nobody announces during phase 2"):
        r.play(0, ANNOUNCE)
    r.play(0, ret("2C"))  # seat 0 keeps 7D 8H 9S, a sequence
    assert commere.legal_moves(r.state) == {1: [ret("4C"), ret("8D"), ret("TD"), ret("KH")]}
    r.play(1, ret("TD"))
    r.play(2, ret("4H"))
    r.play(3, ret("KS"))
    assert r.legal() == {0: [ANNOUNCE]}  # the first speaker of turn 2


# --------------------------------------------------------------------------------------------
# End of the round: showdown and payments


def test_the_showdown_can_be_lost_by_the_announcer() -> None:
    r = Round([["2C", "7C", "QC"], ["3D", "4H", "5D"], ["9H", "9C", "9S"], QUIET[3]])
    events = r.play(0, ANNOUNCE, BY_FORCED)
    assert events[1].data["winner"] == 2 and events[1].data["combination"] == "tricon"
    assert commere.result(r.state) == {
        "winner": 2, "net": {"0": -3, "1": -3, "2": 9, "3": -3}, "combination": "tricon",
    }


def test_tricon_takes_the_pot_and_two_chips_from_every_other_player_from_the_seat_after_him() -> None:  # noqa: E501
    r = Round([["2C", "7C", "QC"], ["3D", "4H", "5D"], ["9H", "9C", "9S"], QUIET[3]],
              pot_before=5)
    r.play(0, ANNOUNCE, BY_FORCED)
    assert [p for p in r.pays() if p["reason"] != "ante"] == [
        {"from": "pot", "to": 2, "amount": 9, "reason": "pot", "short": 0},
        {"from": 3, "to": 2, "amount": 2, "reason": "tricon", "short": 0},
        {"from": 0, "to": 2, "amount": 2, "reason": "tricon", "short": 0},
        {"from": 1, "to": 2, "amount": 2, "reason": "tricon", "short": 0},
    ]
    assert r.state.pot == 0


def test_only_the_winning_combination_is_paid() -> None:
    # Seat 1's sequence and seat 0's point earn nothing: the tricon alone is paid.
    r = Round([["2C", "7C", "QC"], ["3D", "4H", "5D"], ["9H", "9C", "9S"], QUIET[3]])
    r.play(0, ANNOUNCE, BY_FORCED)
    assert {p["reason"] for p in r.pays()} == {"ante", "pot", "tricon"}
    assert all(p["to"] in ("pot", 2) for p in r.pays())


def test_sequence_takes_the_pot_and_one_chip_from_every_other_player() -> None:
    r = Round([["2C", "7C", "QC"], ["3D", "4H", "5D"], QUIET[2], QUIET[3]])
    r.play(0, ANNOUNCE, BY_FORCED)
    assert [(p["from"], p["to"], p["amount"], p["reason"]) for p in r.pays()][4:] == [
        ("pot", 1, 4, "pot"), (2, 1, 1, "sequence"), (3, 1, 1, "sequence"),
        (0, 1, 1, "sequence"),
    ]
    assert commere.result(r.state) == {
        "winner": 1, "net": {"0": -2, "1": 6, "2": -2, "3": -2}, "combination": "sequence",
    }


def test_point_takes_the_pot_only() -> None:
    r = with_seat_0(["2C", "7C", "QC"], pot_before=2)
    r.play(0, ANNOUNCE, BY_FORCED)
    assert [p for p in r.pays()][4:] == [
        {"from": "pot", "to": 0, "amount": 6, "reason": "pot", "short": 0},
    ]
    assert commere.result(r.state) == {
        "winner": 0, "net": {"0": 5, "1": -1, "2": -1, "3": -1}, "combination": "point",
    }


def test_an_empty_pot_gives_no_pot_payment() -> None:
    r = with_seat_0(["2C", "7C", "QC"], options={"ante": 0})
    events = r.play(0, ANNOUNCE, BY_FORCED)
    assert [e.type for e in events] == ["announce", "showdown", "hand_over"]


def test_a_player_who_cannot_pay_the_winner_pays_what_he_has_and_the_rest_is_short() -> None:
    r = Round([["2C", "7C", "QC"], ["3D", "4H", "5D"], ["9H", "9C", "9S"], QUIET[3]],
              chips=[3, 1, 5, 1])
    r.play(0, ANNOUNCE, BY_FORCED)
    assert [p for p in r.pays("tricon")] == [
        {"from": 3, "to": 2, "amount": 0, "reason": "tricon", "short": 2},
        {"from": 0, "to": 2, "amount": 2, "reason": "tricon", "short": 0},
        {"from": 1, "to": 2, "amount": 0, "reason": "tricon", "short": 2},
    ]
    assert min(r.state.chips) == 0
    assert commere.result(r.state)["net"] == {"0": -3, "1": -1, "2": 5, "3": -1}  # type: ignore[index]


@pytest.mark.parametrize(("banker", "hands", "winner"), [
    # Banker 2: speaking order 3, 0, 1, 2. Seats 0 and 2 hold equal sequences; seat 0 is
    # nearer the banker's next seat.
    (2, [["9C", "TD", "JH"], QUIET[1], ["9S", "TH", "JC"], ["2D", "7D", "QD"]], 0),
    # The first speaker himself, though seat 0 has a lower number.
    (2, [["9C", "TD", "JS"], QUIET[1], QUIET[2], ["9H", "TC", "JD"]], 3),
])
def test_equal_combinations_go_to_the_player_nearest_the_bankers_next_seat(
    banker: int, hands: list[list[str]], winner: int
) -> None:
    r = Round(hands, banker=banker)
    events = r.play(3, ANNOUNCE, BY_FORCED)
    assert events[1].data["winner"] == winner


def test_at_the_showdown_equal_points_are_settled_by_the_ranks() -> None:
    r = Round([["QC", "JD", "TH"], QUIET[1], ["KS", "QH", "JC"], QUIET[3]])
    events = r.play(0, ANNOUNCE, BY_FORCED)
    assert events[1].data["winner"] == 2  # K-Q-J beats Q-J-T, both 30 points


def test_net_is_what_each_seat_gained_and_sums_to_pot_before_minus_pot_after() -> None:
    r = Round([["2C", "7C", "QC"], ["3D", "4H", "5D"], QUIET[2], QUIET[3]], pot_before=7,
              chips=[5, 6, 7, 8])
    r.play(0, ANNOUNCE, BY_FORCED)
    res = commere.result(r.state)
    assert res is not None
    assert res["net"] == {str(s): r.state.chips[s] - [5, 6, 7, 8][s] for s in range(4)}
    assert sum(res["net"].values()) == 7 - r.state.pot
    assert r.events[-1] == Event("hand_over", "service", {"result": res})


# --------------------------------------------------------------------------------------------
# A round that does not end (service rule)


def test_a_void_round_keeps_the_pot_when_phase_1_of_turn_max_turns_ends_without_combination() -> None:  # noqa: E501
    r = Round(QUIET, options={"max_turns": 1}, pot_before=3)
    r.exchange(0, "2C", "3C")
    r.exchange(1, "2C", "4C")
    r.exchange(2, "2C", "5S")
    r.play(3, offer("2C"))
    events = r.play(0, give_back("3C"))
    assert [e.type for e in events] == ["give_back", "void", "hand_over"]
    assert events[1].data == {"hands": {
        "0": ["2C", "7D", "8H"], "1": ["4C", "8D", "KH"], "2": ["9D", "AH", "5S"],
        "3": ["3C", "6H", "JS"],
    }}
    assert events[2].data == {"result": {
        "winner": None, "net": {"0": -1, "1": -1, "2": -1, "3": -1}, "combination": None,
    }}
    assert r.state.pot == 7 and commere.is_over(r.state)


def test_the_round_goes_on_to_phase_2_before_turn_max_turns() -> None:
    r = Round(QUIET, talon=QUIET_TALON, options={"max_turns": 2})
    quiet_phase_1(r)
    assert r.types()[-1] == "draw"
    for seat, card in [(0, "9S"), (1, "TD"), (2, "4H"), (3, "KS")]:
        r.play(seat, ret(card))
    assert r.state.turn == 2
    r.exchange(0, "2C", "4C")
    r.exchange(1, "2C", "5S")
    r.exchange(2, "2C", "3C")
    r.exchange(3, "2C", "4C")
    assert r.types()[-2:] == ["void", "hand_over"]


def test_a_combination_at_the_end_of_the_last_turn_ends_the_round_and_it_is_not_void() -> None:
    r = Round(LATE, options={"max_turns": 1})
    r.exchange(0, "2C", "5C")
    r.exchange(1, "9H", "TC")
    r.exchange(2, "4D", "JD")
    r.exchange(3, "4D", "5C")
    assert r.legal() == {1: [ANNOUNCE]}


# --------------------------------------------------------------------------------------------
# Time-outs: the default move of RULES.md §3


@pytest.mark.parametrize(("hand", "gives"), [
    (["7H", "7C", "8S"], "8S"),  # a pair > two consecutive ranks
    (["9H", "2H", "TC"], "2H"),  # two consecutive ranks > two of a suit
    (["9H", "2H", "KC"], "KC"),  # two of a suit > nothing, whatever the points
    (["KS", "2C", "7D"], "2C"),  # then the points kept
    (["AS", "2C", "9H"], "2C"),  # A-2 is not consecutive without ace_low_sequence
])
def test_timeout_offer_gives_the_card_whose_loss_leaves_the_strongest_holding(
    hand: list[str], gives: str
) -> None:
    r = with_seat_0(hand)
    assert commere.default_move(r.state, 0) == offer(gives)
    r.play(0, offer(gives), BY_TIMEOUT)


def test_timeout_with_ace_low_sequence_keeps_ace_two_as_two_consecutive_ranks() -> None:
    r = with_seat_0(["AS", "2C", "9H"], options={"ace_low_sequence": True})
    assert commere.default_move(r.state, 0) == offer("9H")


def test_timeout_give_back_counts_the_offered_card_in_the_holding() -> None:
    # Seat 1 keeps 8C TD with the offered 9H: a sequence. (Without the 9H he would give the 8C.)
    r = Round([["9H", "2D", "KC"], ["8C", "TD", "KS"], QUIET[2], QUIET[3]])
    r.play(0, offer("9H"))
    assert commere.default_move(r.state, 1) == give_back("KS")


@pytest.mark.parametrize(("hand", "passed", "drawn", "returns"), [
    (["7C", "7S", "AC"], "AC", "7H", "AC"),  # the combination kept first: the tricon
    (["7C", "8S", "TS"], "TS", "9H", "7C"),  # the stronger sequence 8-9-T over 7-8-9
    (["JC", "KD", "5H"], "JC", "5D", "JC"),  # equal holdings: the lowest card, by rank
    (["5C", "5D", "9H"], "9H", "9S", "5C"),  # equal holdings, same rank: then suit C < D
])
def test_timeout_return_gives_the_card_whose_loss_leaves_the_strongest_three(
    hand: list[str], passed: str, drawn: str, returns: str
) -> None:
    r = with_seat_0(hand, talon=[drawn])
    circulate(r, passed)
    assert r.hand(0) == sorted([*hand, drawn])
    assert commere.default_move(r.state, 0) == ret(returns)
    r.play(0, ret(returns), BY_TIMEOUT)


def test_timeout_announces_when_announcing_and_exchanging_are_both_allowed() -> None:
    r = with_seat_0(["2C", "7C", "QC"], options={"compulsory_announce": False})
    assert commere.default_move(r.state, 0) == ANNOUNCE
    r.play(0, ANNOUNCE, BY_TIMEOUT)


def test_a_move_recorded_as_timeout_must_be_the_default_move() -> None:
    r = with_seat_0(["7H", "7C", "8S"])
    with pytest.raises(RuleError, match="not the time-out move"):
        r.play(0, offer("7H"), BY_TIMEOUT)


def test_a_move_recorded_as_forced_must_be_the_only_legal_move() -> None:
    r = Round(QUIET)
    with pytest.raises(RuleError, match="not forced"):
        r.play(0, offer("2C"), BY_FORCED)


def test_only_an_awaited_seat_has_a_default_move() -> None:
    r = Round(QUIET)
    with pytest.raises(NotYourTurn):
        commere.default_move(r.state, 2)


# --------------------------------------------------------------------------------------------
# Errors speak to the player, and change nothing


def test_it_is_not_your_turn_names_the_seat_and_what_it_must_do() -> None:
    r = Round(QUIET)
    r.play(0, offer("2C"))
    with pytest.raises(NotYourTurn, match="^it is not your turn: seat 1 must give back a card$"):
        r.play(3, offer("5S"))


def test_you_do_not_hold_a_card_you_name() -> None:
    r = Round(QUIET)
    with pytest.raises(IllegalMove, match="^you do not hold 7S$"):
        r.play(0, offer("7S"))


def test_an_asked_player_cannot_offer() -> None:
    r = Round(QUIET)
    r.play(0, offer("2C"))
    with pytest.raises(IllegalMove, match="give back one of the three cards"):
        r.play(1, offer("3C"))


def test_a_move_without_its_card_or_of_another_game_is_refused() -> None:
    r = Round(QUIET)
    with pytest.raises(IllegalMove, match="name the card"):
        r.play(0, Move("offer"))
    with pytest.raises(IllegalMove, match="no move 'play'"):
        r.play(0, Move("play", card="2C"))


def test_nothing_can_be_played_once_the_round_is_over() -> None:
    r = with_seat_0(["2C", "7C", "QC"])
    r.play(0, ANNOUNCE, BY_FORCED)
    assert commere.legal_moves(r.state) == {} and commere.to_act(r.state) == []
    with pytest.raises(HandOver):
        r.play(1, offer("3C"))


def test_the_state_is_unchanged_after_a_rule_error() -> None:
    r = Round(QUIET)
    r.play(0, offer("2C"))
    before, seen = r.state, commere.view(r.state, 1)
    for seat, move in [(1, give_back("2C")), (1, give_back("7S")), (2, give_back("4C")),
                       (1, ANNOUNCE), (1, offer("3C"))]:
        with pytest.raises(RuleError):
            r.play(seat, move)
    assert r.state == before and commere.view(r.state, 1) == seen
    assert r.state == commere.replay(r.deck, r.events)
    r.play(1, give_back("3C"))
    assert r.hand(1) == ["2C", "8D", "KH"]


# --------------------------------------------------------------------------------------------
# Hidden information


def test_a_player_sees_his_own_hand_and_the_table_never_the_talon() -> None:
    r = Round(QUIET)
    seen = commere.view(r.state, 0)
    assert seen["hand"] == ["2C", "7D", "8H"]
    assert seen["talon"] == 40 and seen["pot"] == 4 and seen["banker"] == 3
    assert seen["hand_sizes"] == {"0": 3, "1": 3, "2": 3, "3": 3}
    assert seen["awaiting"] == {"seat": 0, "move": "offer"}
    assert seen["legal_moves"] == [{"type": "offer", "card": c} for c in ("2C", "7D", "8H")]
    assert seen["hands"] is None
    assert commere.view(r.state, None)["hand"] is None


def test_only_the_offerer_and_the_asked_player_see_the_offered_card() -> None:
    r = Round(QUIET)
    r.play(0, offer("2C"))
    assert commere.view(r.state, 0)["offer"] == {"from": 0, "to": 1, "card": "2C"}
    assert commere.view(r.state, 1)["offer"] == {"from": 0, "to": 1, "card": "2C"}
    for other in (2, 3, None):
        assert commere.view(r.state, other)["offer"] == {"from": 0, "to": 1, "card": None}


def test_only_the_two_of_them_learn_the_exchanged_cards() -> None:
    r = Round(QUIET)
    r.exchange(0, "2C", "3C")
    passes = [{"turn": 1, "kind": "offer", "from": 0, "to": 1, "card": "2C"},
              {"turn": 1, "kind": "give_back", "from": 1, "to": 0, "card": "3C"}]
    assert commere.view(r.state, 0)["passes"] == passes
    assert commere.view(r.state, 1)["passes"] == passes
    hidden = [{**p, "card": None} for p in passes]
    assert commere.view(r.state, 2)["passes"] == hidden
    assert commere.view(r.state, None)["passes"] == hidden


def test_a_player_sees_the_card_he_draws_and_returns_others_do_not() -> None:
    r = Round(QUIET, talon=QUIET_TALON)
    quiet_phase_1(r)
    r.play(0, ret("7D"))
    own = commere.view(r.state, 0)["passes"][-3:]
    assert own == [{"turn": 1, "kind": "draw", "from": "talon", "to": 0, "card": "9S"},
                   {"turn": 1, "kind": "return", "from": 0, "to": "talon", "card": "7D"},
                   {"turn": 1, "kind": "draw", "from": "talon", "to": 1, "card": None}]
    assert [p["card"] for p in commere.view(r.state, 1)["passes"][-3:]] == [None, None, "TD"]


def test_a_spectator_sees_no_cards_until_the_round_is_over_then_every_hand() -> None:
    r = Round([["2C", "7C", "QC"], ["3D", "4H", "5D"], QUIET[2], QUIET[3]])
    assert commere.view(r.state, None)["hands"] is None
    r.play(0, ANNOUNCE, BY_FORCED)
    seen = commere.view(r.state, None)
    assert seen["hands"]["1"] == ["3D", "5D", "4H"]
    assert seen["winner"] == 1 and seen["result"]["combination"] == "sequence"
    assert seen["phase"] == "over"


# --------------------------------------------------------------------------------------------
# Moves in events, the bot, and whole rounds


def test_move_of_maps_the_four_moves_back_and_nothing_else() -> None:
    assert commere.move_of(Event("announce", "forced", {"seat": 2})) == (2, ANNOUNCE)
    assert commere.move_of(Event("offer", "player", {"seat": 1, "card": "2C"})) == (1, offer("2C"))
    assert commere.move_of(Event("give_back", "timeout", {"seat": 0, "card": "QH"})) == \
        (0, give_back("QH"))
    assert commere.move_of(Event("return", "player", {"seat": 3, "card": "9S"})) == (3, ret("9S"))
    for kind in ("draw", "pay", "showdown", "void", "hand_over", "hand_started"):
        assert commere.move_of(Event(kind, "service", {"seat": 0, "card": "2C"})) is None


def test_the_heuristic_bot_announces_and_otherwise_keeps_what_builds_combinations() -> None:
    r = with_seat_0(["2C", "7C", "QC"], options={"compulsory_announce": False})
    legal = r.legal()[0]
    assert commere.heuristic_move(r.state, 0, legal, True, random.Random(1)) == ANNOUNCE
    r = with_seat_0(["7H", "7C", "KS"])
    assert commere.heuristic_move(r.state, 0, r.legal()[0], True, random.Random(1)) == offer("KS")


def play_random_round(seed: int, n: int, options: dict[str, object], chips: list[int],
                      pot_before: int) -> tuple[Round, list[str]]:
    rng = random.Random(seed)
    hands_deck = list(FULL_DECK)
    rng.shuffle(hands_deck)
    r = Round([hands_deck[3 * s: 3 * s + 3] for s in range(n)], banker=rng.randrange(n),
              talon=hands_deck[3 * n:], options=options, chips=chips, pot_before=pot_before)
    bys = []
    while not commere.is_over(r.state):
        assert len(r.events) < 10_000
        (seat, moves), = commere.legal_moves(r.state).items()
        assert commere.to_act(r.state) == [seat]
        style = rng.random()
        if len(moves) == 1:
            move, by = moves[0], BY_FORCED
        elif style < 0.3:
            move, by = commere.default_move(r.state, seat), BY_TIMEOUT
        elif style < 0.6:
            move, by = rng.choice(moves), "player"
        else:
            move, by = commere.heuristic_move(r.state, seat, moves, True, rng), "player"  # type: ignore[assignment]
        bys.append(by)
        r.play(seat, move, by)
    return r, bys


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    n=st.integers(4, 12),
    options=st.fixed_dictionaries({
        "ante": st.integers(0, 3),
        "compulsory_announce": st.booleans(),
        "ace_low_sequence": st.booleans(),
        "max_turns": st.sampled_from([1, 2, 5, None]),
    }),
    chips=st.lists(st.integers(0, 6), min_size=12, max_size=12),
    pot_before=st.integers(0, 9),
)
def test_every_round_ends_and_conserves_cards_and_chips(
    seed: int, n: int, options: dict[str, object], chips: list[int], pot_before: int
) -> None:
    r, _ = play_random_round(seed, n, options, chips[:n], pot_before)
    state = r.state
    assert sorted([c for h in state.hands for c in h] + list(state.talon)) == sorted(FULL_DECK)
    assert all(len(h) == 3 for h in state.hands)
    assert min(state.chips) >= 0
    assert sum(state.chips) + state.pot == sum(chips[:n]) + pot_before
    res = commere.result(state)
    assert res is not None and sum(res["net"].values()) == pot_before - state.pot
    assert r.events[-1].type == "hand_over" and r.events[-1].data["result"] == res
    assert (res["winner"] is None) == (res["combination"] is None) == ("void" in r.types())
    assert commere.replay(r.deck, r.events) == state
    moves = [commere.move_of(e) for e in r.events]
    assert sum(m is not None for m in moves) == sum(e.by != "service" for e in r.events)


def test_a_round_played_by_bots_gives_a_record_the_verifier_accepts() -> None:
    seed = "ab" * 32
    deck, dealer = deal_from_seed("commere", seed, 7)
    events = commere.begin(deck=deck, dealer=dealer, seats=[{"seat": s, "player": f"p{s}"}
                                                            for s in range(7)],
                           options=commere.normalise_options({"compulsory_announce": False}),
                           chips_before={str(s): 3 for s in range(7)}, pot_before=1,
                           commitment=commitment(seed))
    state = commere.replay(deck, events)
    while not commere.is_over(state):
        (seat, moves), = commere.legal_moves(state).items()
        if len(moves) == 1:
            move, by = moves[0], BY_FORCED
        else:
            move, by = commere.default_move(state, seat), BY_TIMEOUT
        new = commere.decide(state, seat, move, by)
        for e in new:
            state = commere.apply(state, e)
        events += new
    sealed = seal_all(events, commitment=commitment(seed), at="2025-01-01T20:00:00Z")
    record = build_record(game="commere", hand="h", table="t", partie="p", number=1, seed=seed,
                          deck=deck, events=sealed)
    assert verify_record(record) == sealed[-1]["hash"]
