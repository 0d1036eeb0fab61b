"""Comet, clause by clause: RULES.md section 2 and the Comet items of section 3.

Each situation is dealt from a deck built for it (``comet_helpers.deck_for``). Unless a test
says otherwise the table has three seats, seat 2 deals and seat 0 opens; everyone has 17 cards
and 20 chips, the ante, ``per_card`` and the Comet payment are 1.
"""

from __future__ import annotations

import random

import pytest

from games.engine import comet
from games.engine.base import Event, HandOver, IllegalMove, Move, NotYourTurn, RuleError
from games.engine.deal import canonical_deck

from .comet_helpers import (
    COMET,
    COMMITMENT,
    KEEP,
    Deal,
    cards,
    deal_sizes,
    deck_for,
    moves_only,
    open_,
    pays,
    play,
    types,
)

# Seat 0 opens hearts; 3H waits in seat 1's hand; seat 2 holds the Comet.
WAITING = {0: "AC-KC AH 2H AS 2S", 1: "3H-KH 3S-8S"}  # seat 2: AD-7D 9D TD-KD 9S-KS
# Seat 0 runs the diamonds up to the gap; seat 1 holds the Comet, JD-KD; seat 0 holds TD.
GAP = {0: "AD-7D TD AC-9C", 1: "9D JD QD KD AH-KH"}  # seat 2: TC-KC AS-KS
# Spades 5S-KS are played first; then seat 1 runs AS-4S into the played 5S; seat 2 has the Comet.
PLAYED = {0: "AC-QC 5S-9S", 1: "TS-KS AS-4S AH-9H"}  # seat 2: KC AD-7D 9D TD-KD TH-KH
# 7D and QC, KC wait in seat 1's hand; seat 2 holds the Comet and 2S-KS.
SEVEN = {0: "AD-6D AC-JC", 1: "7D QC KC AH-KH AS"}  # seat 2: 9D TD-KD 2S-KS


def run_of(deal: Deal, seat: int, spec: str) -> None:
    for card in cards(spec):
        deal.move(seat, play(card))


def waiting_three_of_hearts() -> Deal:
    deal = Deal(WAITING)
    deal.move(0, open_("H"))
    deal.move(0, play("2H"))
    return deal


def blocked_at_the_gap() -> Deal:
    deal = Deal(GAP)
    deal.move(0, open_("D"))
    deal.forced()  # 2D … 7D
    return deal


def blocked_on_the_played_five_of_spades() -> Deal:
    deal = Deal(PLAYED)
    deal.move(0, open_("S"))
    deal.forced()  # 6S … 9S, then seat 1's TS … KS: stop (king), seat 1 opens
    deal.move(1, open_("S"))
    deal.forced()  # 2S 3S 4S, then 5S has been played
    return deal


# ---------------------------------------------------------------------------------------------
# Players, cards, stakes


@pytest.mark.parametrize("n", [1, 7])
def test_comet_is_played_by_two_to_six_players(n: int) -> None:
    with pytest.raises(ValueError, match="2 to 6 players"):
        comet.begin(
            deck=canonical_deck("comet"),
            dealer=0,
            seats=[{"seat": i} for i in range(n)],
            options={},
            chips_before={str(i): 5 for i in range(n)},
            pot_before=0,
            commitment=COMMITMENT,
        )
    assert (comet.MIN_SEATS, comet.MAX_SEATS) == (2, 6)


def test_the_eight_of_diamonds_is_removed_for_good_and_the_deck_has_51_cards() -> None:
    deck = canonical_deck("comet")
    assert len(deck) == 51 and "8D" not in deck and "9D" in deck
    with pytest.raises(ValueError, match="without 8D"):
        comet.begin(
            deck=canonical_deck("commere"),
            dealer=0,
            seats=[{"seat": 0}, {"seat": 1}],
            options={},
            chips_before={"0": 5, "1": 5},
            pot_before=0,
            commitment=COMMITMENT,
        )


def test_options_default_to_ante_per_card_and_comet_payment_of_one() -> None:
    assert comet.normalise_options(None) == {
        "ante": 1,
        "per_card": 1,
        "comet_payment": 1,
        "progressive_comet": False,
        "deals": None,
        "until_broke": False,
    }
    assert comet.normalise_options({"ante": 2, "deals": 5})["ante"] == 2


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"antes": 1}, "antes"),
        ({"ante": -1}, "ante"),
        ({"per_card": "1"}, "per_card"),
        ({"comet_payment": 1.5}, "comet_payment"),
        ({"comet_payment": True}, "comet_payment"),
        ({"progressive_comet": 1}, "progressive_comet"),
        ({"until_broke": "yes"}, "until_broke"),
        ({"deals": 0}, "deals"),
        ({"deals": "3"}, "deals"),
    ],
)
def test_bad_options_are_refused_naming_the_option(options: dict[str, object], named: str) -> None:
    with pytest.raises(ValueError, match=f"'{named}'"):
        comet.normalise_options(options)


def test_each_player_pays_the_ante_before_the_deal_from_the_seat_after_the_dealer() -> None:
    deal = Deal({}, n=4, dealer=1, options={"ante": 2}, pot_before=3)
    started, *antes = deal.events
    assert started.type == "hand_started" and started.by == "service"
    assert pays(antes) == [(s, "pot", 2, "ante", 0) for s in (2, 3, 0, 1)]
    assert deal.state.pot == 3 + 8 and deal.chips == [18] * 4


def test_hand_started_carries_the_header_fields() -> None:
    deal = Deal({}, n=2, dealer=0, chips=[7, 9], pot_before=0, comet_payment_due=4)
    data = deal.events[0].data
    assert data == {
        "dealer": 0,
        "seats": [{"seat": 0, "player": "p0"}, {"seat": 1, "player": "p1"}],
        "options": deal.options,
        "chips_before": {"0": 7, "1": 9},
        "pot_before": 0,
        "commitment": COMMITMENT,
        "comet_payment_due": 4,
    }


# ---------------------------------------------------------------------------------------------
# Dealing


def test_uneven_deal_gives_the_first_seats_one_card_more() -> None:
    # "some players get one card more than others": 51 = 4 × 12 + 3.
    deal = Deal({}, n=4, dealer=3)
    counts = comet.view(deal.state, None)["cards_in_hand"]
    assert counts == {"0": 13, "1": 13, "2": 13, "3": 12}
    assert deal_sizes(4, 1) == {2: 13, 3: 13, 0: 13, 1: 12}


def test_the_deal_starts_with_the_seat_after_the_dealer_one_card_at_a_time() -> None:
    deck = canonical_deck("comet")
    random.Random(3).shuffle(deck)
    events = comet.begin(
        deck=deck,
        dealer=1,
        seats=[{"seat": i} for i in range(3)],
        options={},
        chips_before={"0": 5, "1": 5, "2": 5},
        pot_before=0,
        commitment=COMMITMENT,
    )
    state = comet.replay(deck, events)
    for seat, first in ((2, 0), (0, 1), (1, 2)):
        assert comet.view(state, seat)["hand"] == sorted(
            deck[first::3], key=canonical_deck("comet").index
        )


def test_the_deck_helper_deals_the_wanted_hands() -> None:
    deck = deck_for(3, 2, GAP)
    deal = Deal(GAP)
    assert deal.deck == deck
    assert deal.hand(0) == cards("AC-9C AD-7D TD")
    assert deal.hand(2) == cards("TC-KC AS-KS")


# ---------------------------------------------------------------------------------------------
# Runs


def test_the_player_after_the_dealer_opens_the_first_run() -> None:
    deal = Deal({}, n=4, dealer=2)
    assert comet.to_act(deal.state) == [3]
    assert list(comet.legal_moves(deal.state)) == [3]


def test_opening_plays_the_lowest_card_of_the_chosen_suit() -> None:
    deal = Deal(PLAYED)
    assert comet.legal_moves(deal.state) == {0: [open_("C"), open_("S")]}
    events = deal.move(0, open_("S"))
    assert moves_only(events) == [("open", {"seat": 0, "suit": "S", "card": "5S"})]


def test_opening_may_name_the_card_but_it_must_be_the_lowest_of_the_suit() -> None:
    deal = Deal(PLAYED)
    with pytest.raises(IllegalMove, match="you must open with your lowest club, AC"):
        comet.decide(deal.state, 0, open_("C", "3C"))
    assert moves_only(deal.move(0, Move("open", card="AC")))[0][1]["card"] == "AC"


def test_opening_does_not_count_the_comet_as_the_lowest_diamond() -> None:
    deal = Deal({0: "9D JD AC-KC 2H 3H"})
    with pytest.raises(IllegalMove, match="lowest diamond, JD"):
        comet.decide(deal.state, 0, open_("D", "9D"))
    assert deal.move(0, open_("D"))[0].data["card"] == "JD"


def test_the_next_card_is_one_rank_higher_and_its_holder_must_play_it_out_of_turn() -> None:
    deal = Deal(PLAYED)
    deal.move(0, open_("S"))
    run_of(deal, 0, "6S-9S")
    # TS is seat 1's; the run waits for him whoever's turn it would be.
    assert comet.to_act(deal.state) == [1]
    assert comet.legal_moves(deal.state)[1] == [play("TS")]
    assert deal.move(1, play("TS"), by="forced")[0].data == {"seat": 1, "card": "TS"}


def test_a_run_goes_from_ace_low_to_king_high_then_stops_on_the_king() -> None:
    deal = Deal({0: "AC-KC 2H 3H 2S 3S"})
    deal.move(0, open_("C"))
    made = deal.forced()
    assert [e.data["card"] for e in made if e.type == "play"] == cards("2C-KC")
    assert made[-1] == Event("stop", "service", {"reason": "king"})
    # "The player who played its last card opens the next run."
    assert comet.to_act(deal.state) == [0]


def test_the_run_stops_at_the_diamond_gap_when_the_comet_is_gone() -> None:
    deal = Deal({0: "AC 3C-KC AD-4D AS", 1: "2C 5D 6D 7D AH-KH"})  # seat 2 has the Comet
    deal.move(0, open_("C"))
    deal.move(2, COMET)  # for 2C
    deal.forced()  # seat 0 runs 3C … KC and opens again
    deal.move(0, open_("D"))
    made = deal.forced()  # AD … 4D by seat 0, 5D 6D 7D by seat 1
    assert moves_only(made)[-2:] == [
        ("play", {"seat": 1, "card": "7D"}),
        ("stop", {"reason": "gap"}),
    ]
    assert comet.to_act(deal.state) == [1]


def test_run_stops_on_an_already_played_card() -> None:
    deal = waiting_three_of_hearts()
    deal.move(2, COMET)  # for 3H, which stays in seat 1's hand
    deal.forced()  # 4H … KH by seat 1: stop (king), seat 1 opens
    events = deal.move(1, open_("H"))
    # His lowest heart is 3H; the next card, 4H, was played in the earlier run.
    assert moves_only(events) == [
        ("open", {"seat": 1, "suit": "H", "card": "3H"}),
        ("stop", {"reason": "played"}),
    ]
    assert comet.to_act(deal.state) == [1]


def test_diamonds_above_the_gap_can_still_open_a_run() -> None:
    deal = blocked_at_the_gap()
    deal.move(1, KEEP)
    assert comet.legal_moves(deal.state) == {0: [open_("C"), open_("D")]}
    assert deal.move(0, open_("D"))[0].data["card"] == "TD"
    assert comet.view(deal.state, None)["run"]["next_card"] == "JD"


def test_the_player_who_played_the_last_card_of_a_stopped_run_opens_the_next() -> None:
    deal = blocked_at_the_gap()
    events = deal.move(1, KEEP)
    assert types(events) == ["keep_comet", "stop"]
    assert comet.to_act(deal.state) == [0]  # he played 7D
    assert comet.view(deal.state, None)["opener"] == 0


# ---------------------------------------------------------------------------------------------
# The Comet


def test_comet_stands_for_a_waiting_card_which_stays_in_its_holders_hand() -> None:
    deal = waiting_three_of_hearts()
    events = deal.move(2, COMET)
    assert events[0] == Event("comet", "player", {"seat": 2, "stands_for": "3H"})
    assert "3H" in deal.hand(1)
    # The run goes on from the card after the one it stood for.
    assert comet.to_act(deal.state) == [1]
    assert comet.legal_moves(deal.state) == {1: [play("4H")]}


def test_a_card_the_comet_stood_for_is_not_already_played_and_can_be_played_later() -> None:
    deal = waiting_three_of_hearts()
    deal.move(2, COMET)
    deal.forced()  # 4H … KH
    assert "3H" in deal.hand(1)
    assert deal.move(1, open_("H"))[0].data["card"] == "3H"
    assert "3H" not in deal.hand(1)


def test_comet_holder_priority_before_a_forced_next_card() -> None:
    deal = waiting_three_of_hearts()
    # The holder of 3H is waited for; the Comet holder may play it first, and is not waited for.
    assert comet.legal_moves(deal.state) == {1: [play("3H")], 2: [COMET]}
    assert comet.to_act(deal.state) == [1]
    with pytest.raises(RuleError, match="forced"):
        comet.decide(deal.state, 2, COMET, "forced")
    assert types(comet.decide(deal.state, 1, play("3H"), "forced")) == ["play"]


def test_holder_of_the_comet_and_the_next_card_chooses_which_to_play() -> None:
    deal = blocked_at_the_gap()
    deal.move(1, KEEP)
    deal.move(0, open_("D"))  # TD; JD is seat 1's, who holds the Comet too
    assert comet.legal_moves(deal.state) == {1: [play("JD"), COMET]}
    assert comet.to_act(deal.state) == [1]
    assert comet.decide(deal.state, 1, COMET)[0].data["stands_for"] == "JD"
    assert comet.decide(deal.state, 1, play("JD"))[0].data["card"] == "JD"


def test_comet_fills_the_diamond_gap_and_the_run_goes_on_with_ten_of_diamonds() -> None:
    deal = blocked_at_the_gap()
    events = deal.move(1, COMET)
    assert events[0].data == {"seat": 1, "stands_for": "8D"}
    assert comet.legal_moves(deal.state) == {0: [play("TD")]}
    assert comet.view(deal.state, None)["run"]["next_card"] == "TD"


def test_comet_holder_is_asked_first_at_the_diamond_gap() -> None:
    deal = blocked_at_the_gap()
    assert deal.events[-1].type == "play" and deal.events[-1].data["card"] == "7D"
    assert comet.to_act(deal.state) == [1]
    assert comet.legal_moves(deal.state) == {1: [COMET, KEEP]}


def test_comet_holder_is_asked_first_at_a_stop_on_a_played_card() -> None:
    deal = blocked_on_the_played_five_of_spades()
    assert deal.events[-1].data == {"seat": 1, "card": "4S"}  # no stop yet
    assert comet.to_act(deal.state) == [2]
    assert comet.legal_moves(deal.state) == {2: [COMET, KEEP]}
    kept = comet.decide(deal.state, 2, KEEP)
    assert moves_only(kept) == [("keep_comet", {"seat": 2}), ("stop", {"reason": "played"})]


def test_comet_at_a_played_card_stands_for_it_and_the_run_goes_on_from_the_card_after() -> None:
    deal = blocked_on_the_played_five_of_spades()
    events = deal.move(2, COMET)
    # It stands for 5S; 6S was played too, and the Comet is gone: the run stops, and the Comet's
    # player, who played its last card, opens.
    assert moves_only(events) == [
        ("comet", {"seat": 2, "stands_for": "5S"}),
        ("stop", {"reason": "played"}),
    ]
    assert comet.to_act(deal.state) == [2]


def test_comet_cannot_be_played_after_a_king() -> None:
    deal = Deal(SEVEN)
    deal.move(0, open_("C"))
    run_of(deal, 0, "2C-JC")
    deal.move(1, play("QC"))
    events = deal.move(1, play("KC"))
    assert types(events) == ["play", "stop"]  # at once: the Comet holder is not asked
    assert 2 not in comet.legal_moves(deal.state)
    with pytest.raises(IllegalMove, match="the Comet cannot be played after a king"):
        comet.decide(deal.state, 2, COMET)


def test_comet_standing_for_a_king_stops_the_run() -> None:
    deal = Deal(SEVEN)
    deal.move(0, open_("C"))
    run_of(deal, 0, "2C-JC")
    deal.move(1, play("QC"))
    events = deal.move(2, COMET)
    assert moves_only(events) == [
        ("comet", {"seat": 2, "stands_for": "KC"}),
        ("stop", {"reason": "king"}),
    ]
    assert comet.to_act(deal.state) == [2]


def test_comet_standing_for_seven_of_diamonds_meets_the_gap_and_the_run_stops() -> None:
    deal = Deal(SEVEN)
    deal.move(0, open_("D"))
    run_of(deal, 0, "2D-6D")
    events = deal.move(2, COMET)
    assert moves_only(events) == [
        ("comet", {"seat": 2, "stands_for": "7D"}),
        ("stop", {"reason": "gap"}),
    ]
    assert "7D" in deal.hand(1)
    assert comet.to_act(deal.state) == [2]


def test_comet_filling_the_gap_before_an_already_played_ten_of_diamonds_stops_the_run() -> None:
    # Two players, seat 0 deals: seat 1 opens and gets 26 cards.
    deal = Deal({1: "9D TD-KD 5H-KH AS-JS KC"}, n=2, dealer=0)
    deal.move(1, open_("D"))  # TD: the Comet does not count as his lowest diamond
    run_of(deal, 1, "JD-KD")  # stop (king)
    deal.move(1, open_("H"))
    run_of(deal, 1, "6H-KH")
    deal.move(1, open_("S"))
    run_of(deal, 1, "2S-JS")
    deal.forced()  # seat 0's QS KS: stop, seat 0 opens
    deal.move(0, open_("D"))
    deal.forced()  # AD … 7D: the gap; seat 1 is asked
    events = deal.move(1, COMET)
    assert moves_only(events) == [
        ("comet", {"seat": 1, "stands_for": "8D"}),
        ("stop", {"reason": "played"}),
    ]
    assert comet.to_act(deal.state) == [1]


def test_every_other_player_pays_the_comet_holder_at_once_from_the_seat_after_him() -> None:
    deal = Deal(WAITING, n=3, options={"comet_payment": 2})
    deal.move(0, open_("H"))
    deal.move(0, play("2H"))
    events = deal.move(2, COMET)
    assert pays(events) == [(0, 2, 2, "comet", 0), (1, 2, 2, "comet", 0)]
    assert types(events) == ["comet", "pay", "pay"]
    assert deal.chips == [17, 17, 23]


def test_the_comet_is_played_at_most_once_per_deal() -> None:
    deal = waiting_three_of_hearts()
    deal.move(2, COMET)
    assert comet.comet_played(deal.state)
    assert all(COMET not in moves for moves in comet.legal_moves(deal.state).values())
    with pytest.raises(IllegalMove, match="already been played"):
        comet.decide(deal.state, 2, COMET)
    # and a later block stops without asking anyone
    deal.forced()
    assert types(deal.move(1, open_("H"))) == ["open", "stop"]


def test_comet_cannot_open_a_run_unless_it_is_the_last_card() -> None:
    deal = Deal({0: "9D AC-KC AH-3H"})
    assert comet.legal_moves(deal.state) == {0: [open_("C"), open_("H")]}
    with pytest.raises(IllegalMove, match="the Comet cannot open a run unless it is your last"):
        comet.decide(deal.state, 0, COMET)
    with pytest.raises(IllegalMove, match="you hold no diamond to open with"):
        comet.decide(deal.state, 0, open_("D"))


def test_comet_as_last_card_opens_and_goes_out() -> None:
    deal = Deal({0: "AC-KC AD-7D 9H-KH 9D"}, n=2, dealer=1, chips=[50, 50])
    deal.move(0, open_("C"))
    run_of(deal, 0, "2C-KC")  # (he holds the Comet too, so nothing is forced)
    with pytest.raises(IllegalMove, match="the Comet cannot open a run unless"):
        comet.decide(deal.state, 0, COMET)
    deal.move(0, open_("D"))
    run_of(deal, 0, "2D-7D")  # the gap: he is asked, and keeps it
    deal.move(0, KEEP)
    deal.forced()  # hearts are all he has besides the Comet: 9H
    run_of(deal, 0, "TH-KH")
    assert comet.legal_moves(deal.state) == {0: [COMET]}
    made = deal.forced()
    assert comet.is_over(deal.state)
    assert made[0] == Event("comet", "forced", {"seat": 0, "stands_for": "9D"})
    assert types(made) == ["comet", "pay", "out", "pay", "pay", "hand_over"]
    assert pays(made) == [
        (1, 0, 1, "comet", 0),
        ("pot", 0, 2, "pot", 0),
        (1, 0, 25, "per_card", 0),
    ]


def test_comet_kept_to_the_end_counts_as_one_card_in_its_holders_hand() -> None:
    deal = blocked_at_the_gap()
    deal.move(1, KEEP)
    deal.move(0, open_("C"))
    # AC … 9C, seat 2's TC … KC, then seat 2 runs his spades and goes out.
    made = deal.forced()
    assert comet.is_over(deal.state) and deal.state.winner == 2
    # Seat 0 kept TD; seat 1 has 16 cards and the Comet.
    assert pays(made)[-2:] == [(0, 2, 1, "per_card", 0), (1, 2, 17, "per_card", 0)]
    assert "9D" in comet.view(deal.state, None)["hands"]["1"]


# ---------------------------------------------------------------------------------------------
# Going out and paying


def test_going_out_ends_the_deal_with_the_pot_then_per_card_from_the_seat_after_the_winner() -> (
    None
):
    deal = waiting_three_of_hearts()
    deal.move(2, COMET)  # seats 0 and 1 pay 1 each to seat 2
    deal.forced()
    deal.move(1, open_("H"))  # 3H: stop (played)
    deal.move(1, open_("S"))
    made = deal.forced()  # 3S … 8S: his last card
    assert types(made) == ["play"] * 5 + ["out", "pay", "pay", "pay", "hand_over"]
    assert made[5].data == {"seat": 1}
    # Seat 2 has AD-7D TD-KD 9S-KS (16 cards), seat 0 AC-KC AS 2S (15).
    assert pays(made) == [
        ("pot", 1, 3, "pot", 0),
        (2, 1, 16, "per_card", 0),
        (0, 1, 15, "per_card", 0),
    ]
    # "Comet payments already made stay made."
    result = comet.result(deal.state)
    assert result == {
        "winner": 1,
        "net": {"0": -1 - 1 - 15, "1": -1 - 1 + 3 + 31, "2": -1 + 2 - 16},
    }
    assert made[-1].data == {"result": result}


def test_going_out_on_a_king_emits_no_stop() -> None:
    deal = Deal({0: "AC-KC AH-KH"}, n=2, dealer=1, chips=[50, 50])
    deal.move(0, open_("C"))
    made = deal.forced()  # to KC: stop; he opens his hearts and runs them to KH
    assert types(made).count("stop") == 1
    assert made[-5].data == {"seat": 0, "card": "KH"}
    assert types(made[-4:]) == ["out", "pay", "pay", "hand_over"]


def test_net_is_chips_after_minus_chips_before_and_sums_to_the_pot_taken() -> None:
    deal = Deal({0: "AC-KC AH-KH"}, n=2, dealer=1, chips=[5, 40], pot_before=4)
    deal.move(0, open_("C"))
    deal.forced()
    result = comet.result(deal.state)
    assert result is not None
    assert result["net"] == {"0": 4 + 1 + 25, "1": -1 - 25}
    assert sum(result["net"].values()) == 4 - deal.state.pot == 4


# ---------------------------------------------------------------------------------------------
# Rules common to both games (section 3)


def test_pay_what_you_have_records_the_shortfall() -> None:
    deal = Deal({0: "AC-KC AH-KH"}, n=2, dealer=1, chips=[0, 10])
    assert pays(deal.events) == [(0, "pot", 0, "ante", 1), (1, "pot", 1, "ante", 0)]
    deal.move(0, open_("C"))
    made = deal.forced()
    assert pays(made) == [("pot", 0, 1, "pot", 0), (1, 0, 9, "per_card", 16)]
    assert deal.chips == [10, 0]


def test_a_comet_payment_is_paid_with_what_the_payer_has() -> None:
    deal = Deal(WAITING, chips=[0, 2, 5], comet_payment_due=3)
    deal.move(0, open_("H"))
    deal.move(0, play("2H"))
    events = deal.move(2, COMET)
    assert pays(events) == [(0, 2, 0, "comet", 3), (1, 2, 1, "comet", 2)]
    assert min(deal.chips) == 0


def test_a_debt_of_nothing_gives_no_pay_event() -> None:
    deal = Deal(WAITING, options={"ante": 0, "comet_payment": 0, "per_card": 0})
    assert types(deal.events) == ["hand_started"]
    deal.move(0, open_("H"))
    deal.move(0, play("2H"))
    assert types(deal.move(2, COMET)) == ["comet"]
    deal.forced()
    deal.move(1, open_("H"))
    deal.move(1, open_("S"))
    assert types(deal.forced())[-2:] == ["out", "hand_over"]  # an empty pot is not paid


def test_a_forced_move_is_only_ever_the_only_legal_move() -> None:
    deal = Deal(PLAYED)
    with pytest.raises(RuleError, match="only legal move"):
        comet.decide(deal.state, 0, open_("S"), "forced")
    deal = Deal({0: "AC-KC AH-3H AS"})
    with pytest.raises(RuleError, match="only legal move"):
        comet.decide(deal.state, 0, open_("C"), "forced")


def test_timeout_opening_is_the_suit_with_the_most_cards_the_comet_not_counted() -> None:
    # Diamonds: AD-6D and the Comet (6 cards with it, 5 without); clubs 2C-7C (6).
    deal = Deal({0: "9D AD-5D 2C-7C 2H-6H"})
    assert comet.default_move(deal.state, 0) == open_("C")
    deal = Deal({0: "9D AD-6D 2C-6C 2H-6H"})  # diamonds 6, the others 5
    assert comet.default_move(deal.state, 0) == open_("D")


def test_timeout_opening_breaks_a_tie_by_the_lowest_card_then_suit_order() -> None:
    deal = Deal({0: "3C-8C 2H-7H 4S-8S"})  # C 6 from 3C, H 6 from 2H, S 5
    assert comet.default_move(deal.state, 0) == open_("H")
    events = deal.move(0, open_("H"), by="timeout")
    assert events[0] == Event("open", "timeout", {"seat": 0, "suit": "H", "card": "2H"})
    deal = Deal({0: "2C-7C 2H-7H 4S-8S"})
    assert comet.default_move(deal.state, 0) == open_("C")
    with pytest.raises(RuleError, match="default move"):
        comet.decide(deal.state, 0, open_("H"), "timeout")


def test_timeout_holder_of_the_comet_and_the_next_card_plays_the_real_card() -> None:
    deal = blocked_at_the_gap()
    deal.move(1, KEEP)
    deal.move(0, open_("D"))
    assert comet.default_move(deal.state, 1) == play("JD")
    assert deal.move(1, play("JD"), by="timeout")[0].by == "timeout"


def test_timeout_holder_asked_at_a_blocked_run_keeps_the_comet() -> None:
    deal = blocked_on_the_played_five_of_spades()
    assert comet.default_move(deal.state, 2) == KEEP
    assert types(deal.move(2, KEEP, by="timeout")) == ["keep_comet", "stop"]


def test_timeout_with_a_single_legal_move_plays_it() -> None:
    deal = waiting_three_of_hearts()
    assert comet.default_move(deal.state, 1) == play("3H")
    with pytest.raises(NotYourTurn):
        comet.default_move(deal.state, 2)  # the Comet's chance is not waited for
    with pytest.raises(RuleError, match="waiting for"):
        comet.decide(deal.state, 2, COMET, "timeout")


def test_a_seat_sees_its_own_hand_and_the_public_table_only() -> None:
    deal = waiting_three_of_hearts()
    mine = comet.view(deal.state, 1)
    assert mine["hand"] == cards("3H-KH 3S-8S")
    assert mine["cards_in_hand"] == {"0": 15, "1": 17, "2": 17}
    assert [p["card"] for p in mine["played"]] == ["AH", "2H"]
    assert mine["run"]["suit"] == "H" and mine["run"]["next_card"] == "3H"
    assert mine["legal_moves"] == [{"type": "play", "card": "3H"}]
    assert "hands" not in mine
    spectator = comet.view(deal.state, None)
    assert "hand" not in spectator and "hands" not in spectator
    others = {k: v for k, v in comet.view(deal.state, 0).items() if k not in ("seat", "hand")}
    assert others["legal_moves"] == []
    # The Comet holder learns he may play it; nobody else learns where it is.
    assert comet.view(deal.state, 2)["legal_moves"] == [{"type": "comet"}]
    assert "9D" not in repr(comet.view(deal.state, 0))


def test_nobody_learns_who_holds_the_comet_while_its_holder_is_asked() -> None:
    deal = blocked_on_the_played_five_of_spades()
    assert comet.view(deal.state, 2)["to_act"] == [2]
    for seat in (0, 1, None):
        shown = comet.view(deal.state, seat)
        assert shown["to_act"] == [] and shown["waiting_for"] == "comet"
    strip = ("seat", "hand")
    assert {k: v for k, v in comet.view(deal.state, 0).items() if k not in strip} == {
        k: v for k, v in comet.view(deal.state, 1).items() if k not in strip
    }


def test_every_hand_is_shown_once_the_deal_is_over() -> None:
    deal = Deal({0: "AC-KC AH-KH"}, n=2, dealer=1)
    deal.move(0, open_("C"))
    deal.forced()
    shown = comet.view(deal.state, None)
    assert shown["phase"] == "over" and shown["winner"] == 0
    assert shown["hands"] == {"0": [], "1": cards("AD-KD AS-KS")}


# ---------------------------------------------------------------------------------------------
# Progressive Comet payment


def test_progressive_comet_payment_doubles_for_each_deal_without_the_comet_and_resets() -> None:
    options = comet.normalise_options({"comet_payment": 3, "progressive_comet": True})
    due = comet.next_comet_payment_due(options, None, None)  # the partie's first deal
    dues = [due]
    for played in (False, False, True, False):
        due = comet.next_comet_payment_due(options, due, played)
        dues.append(due)
    assert dues == [3, 6, 12, 3, 6]


def test_without_progressive_comet_the_payment_is_always_the_base() -> None:
    options = comet.normalise_options({"comet_payment": 2})
    assert comet.next_comet_payment_due(options, 2, False) == 2
    assert comet.next_comet_payment_due(options, None, None) == 2


def test_the_comet_pays_the_payment_due_for_the_deal() -> None:
    deal = Deal(WAITING, options={"progressive_comet": True}, comet_payment_due=4)
    assert deal.events[0].data["comet_payment_due"] == 4
    deal.move(0, open_("H"))
    deal.move(0, play("2H"))
    assert [p[2] for p in pays(deal.move(2, COMET))] == [4, 4]
    assert comet.view(deal.state, None)["comet_payment_due"] == 4


def test_a_deal_records_whether_the_comet_was_played() -> None:
    deal = blocked_at_the_gap()
    assert not comet.comet_played(deal.state)
    deal.move(1, KEEP)
    deal.move(0, open_("C"))
    deal.forced()
    assert comet.is_over(deal.state) and not comet.comet_played(deal.state)


# ---------------------------------------------------------------------------------------------
# Errors speak to the player, and change nothing


def test_rule_errors_say_which_rule_forbids_the_move() -> None:
    deal = waiting_three_of_hearts()
    cases: list[tuple[int, Move, type[RuleError], str]] = [
        (0, play("AC"), IllegalMove, "the run needs 3H, not AC"),
        (0, play("5H"), IllegalMove, "you do not hold 5H"),
        (0, COMET, IllegalMove, "only the holder of the Comet can play it"),
        (2, KEEP, IllegalMove, "no blocked run is asking for the Comet now"),
        (0, KEEP, IllegalMove, "only the holder of the Comet can keep it"),
        (0, open_("C"), IllegalMove, "a run is under way: it needs 3H"),
        (1, Move("pass"), IllegalMove, "there is no 'pass' move"),
        (1, play("8D"), IllegalMove, "there is no card '8D'"),
        (2, play("9D"), IllegalMove, "the Comet is played with the comet move"),
        (5, play("3H"), NotYourTurn, "there is no seat 5"),
    ]
    for seat, move, error, message in cases:
        with pytest.raises(error, match=message):
            comet.decide(deal.state, seat, move)


def test_it_is_not_your_turn_when_another_seat_must_open() -> None:
    deal = Deal(WAITING)
    with pytest.raises(NotYourTurn, match="it is not your turn: seat 0 must open"):
        comet.decide(deal.state, 1, open_("H"))
    with pytest.raises(NotYourTurn, match="seat 0 must open"):
        comet.decide(deal.state, 1, play("3H"))
    with pytest.raises(IllegalMove, match="you hold no spade to open with"):
        comet.decide(Deal({0: "AC-KC AH-4H"}).state, 0, open_("S"))
    with pytest.raises(IllegalMove, match="choose a suit"):
        comet.decide(deal.state, 0, play("AH"))


def test_only_the_comet_can_be_played_at_a_blocked_run() -> None:
    deal = blocked_at_the_gap()
    with pytest.raises(IllegalMove, match=r"the run is blocked \(8D is missing\)"):
        comet.decide(deal.state, 0, play("TD"))


def test_no_move_once_the_hand_is_over() -> None:
    deal = Deal({0: "AC-KC AH-KH"}, n=2, dealer=1)
    deal.move(0, open_("C"))
    deal.forced()
    with pytest.raises(HandOver, match="the hand is over"):
        comet.decide(deal.state, 1, play("AD"))
    assert comet.legal_moves(deal.state) == {} and comet.to_act(deal.state) == []


def test_state_is_unchanged_after_a_rule_error() -> None:
    deal = waiting_three_of_hearts()
    before = deal.state
    again = comet.replay(deal.deck, deal.events)
    for seat, move in ((0, play("AC")), (2, KEEP), (1, open_("S"))):
        with pytest.raises(RuleError):
            comet.decide(deal.state, seat, move)
    assert deal.state is before and deal.state == again


def test_a_move_made_by_someone_unknown_is_refused() -> None:
    deal = Deal(WAITING)
    with pytest.raises(RuleError, match="player, forced or on time-out"):
        comet.decide(deal.state, 0, open_("H"), "service")


def test_only_the_comet_holder_answers_at_a_blocked_run() -> None:
    deal = blocked_at_the_gap()
    with pytest.raises(NotYourTurn, match="the Comet holder is asked"):
        comet.decide(deal.state, 0, open_("C"))
    with pytest.raises(IllegalMove, match="only the holder of the Comet can keep it"):
        comet.decide(deal.state, 2, KEEP)
    with pytest.raises(IllegalMove, match="only the holder of the Comet can play it"):
        comet.decide(deal.state, 0, COMET)


def test_an_opening_names_a_suit() -> None:
    deal = Deal(WAITING)
    with pytest.raises(IllegalMove, match="to open, choose a suit"):
        comet.decide(deal.state, 0, Move("open", suit="X"))


def test_nothing_can_be_decided_before_the_hand_starts() -> None:
    state = comet.initial_state(canonical_deck("comet"))
    with pytest.raises(RuleError, match="has not started"):
        comet.decide(state, 0, open_("C"))
    assert comet.legal_moves(state) == {} and comet.result(state) is None
    assert comet.view(state, None) == {"game": "comet", "phase": "not_started"}
    with pytest.raises(ValueError, match="no 'draw' event"):
        comet.apply(state, Event("draw", "service", {}))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"dealer": 3}, "dealer 3 is not a seat"),
        ({"chips_before": {"0": -1, "1": 5, "2": 5}}, "below zero"),
        ({"comet_payment_due": -2}, "cannot be negative"),
        ({"options": {"ante": -1}}, "'ante'"),
    ],
)
def test_begin_refuses_a_bad_set_up(change: dict[str, object], message: str) -> None:
    setup: dict[str, object] = {
        "deck": canonical_deck("comet"),
        "dealer": 0,
        "seats": [{"seat": i} for i in range(3)],
        "options": {},
        "chips_before": {"0": 5, "1": 5, "2": 5},
        "pot_before": 0,
        "commitment": COMMITMENT,
    }
    with pytest.raises(ValueError, match=message):
        comet.begin(**{**setup, **change})  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# The sensible bot


def test_bot_opens_the_suit_it_can_run_to_the_king_and_open_again() -> None:
    # Hearts give the longer stretch (2H-7H), but 8H is someone else's; clubs 9C-KC end the run.
    deal = Deal({0: "9C-KC 2H-7H AS 3S 5S 7S 9S JS"})
    legal = comet.legal_moves(deal.state)[0]
    assert comet.heuristic_move(deal.state, 0, legal, True, random.Random(1)) == open_("C")


def test_bot_plays_the_real_card_rather_than_the_comet() -> None:
    deal = blocked_at_the_gap()
    deal.move(1, KEEP)
    deal.move(0, open_("D"))
    legal = comet.legal_moves(deal.state)[1]
    assert comet.heuristic_move(deal.state, 1, legal, True, random.Random(1)) == play("JD")


def test_bot_keeps_the_comet_early_when_waiting_cards_are_not_its_own() -> None:
    deal = waiting_three_of_hearts()
    assert comet.heuristic_move(deal.state, 2, [COMET], False, random.Random(1)) is None


def test_bot_plays_the_comet_at_the_gap_when_it_follows_on_with_its_own_diamonds() -> None:
    deal = Deal({0: "AD-7D AC-9C AH", 1: "9D TD-KD 2H-KH"})
    deal.move(0, open_("D"))
    deal.forced()
    assert comet.heuristic_move(deal.state, 1, [COMET, KEEP], True, random.Random(1)) == COMET


def test_bot_keeps_the_comet_at_a_block_it_cannot_use() -> None:
    deal = blocked_at_the_gap()  # TD is seat 0's: the Comet would hand him the run
    assert comet.heuristic_move(deal.state, 1, [COMET, KEEP], True, random.Random(1)) == KEEP


def test_bot_goes_out_with_the_comet_as_its_last_card() -> None:
    deal = Deal({0: "AC-KC AD-7D 9H-KH 9D"}, n=2, dealer=1, chips=[50, 50])
    deal.move(0, open_("C"))
    run_of(deal, 0, "2C-KC")
    deal.move(0, open_("D"))
    run_of(deal, 0, "2D-7D")
    deal.move(0, KEEP)
    deal.forced()
    run_of(deal, 0, "TH-KH")
    assert comet.heuristic_move(deal.state, 0, [COMET], True, random.Random(1)) == COMET


def test_bot_hands_are_the_same_for_the_same_random_source() -> None:
    def bot_hand(seed: int) -> list[Event]:
        deck = canonical_deck("comet")
        random.Random(11).shuffle(deck)
        rng = random.Random(seed)
        events = comet.begin(
            deck=deck,
            dealer=0,
            seats=[{"seat": i} for i in range(4)],
            options={},
            chips_before={str(i): 30 for i in range(4)},
            pot_before=0,
            commitment=COMMITMENT,
        )
        state = comet.replay(deck, events)
        while not comet.is_over(state):
            legal = comet.legal_moves(state)
            waiting = comet.to_act(state)
            made = None
            for seat, moves in legal.items():
                if seat not in waiting:
                    move = comet.heuristic_move(state, seat, moves, False, rng)
                    if move is not None:
                        made = comet.decide(state, seat, move)
            if made is None:
                seat = waiting[0]
                move = comet.heuristic_move(state, seat, legal[seat], True, rng)
                assert move in legal[seat]
                made = comet.decide(state, seat, move)
            for event in made:
                state = comet.apply(state, event)
            events += made
        return events

    assert bot_hand(5) == bot_hand(5)


# ---------------------------------------------------------------------------------------------
# Replay and the record


def test_move_of_gives_back_the_seat_and_move_of_each_move_event() -> None:
    deal = blocked_at_the_gap()
    deal.move(1, COMET)
    found = [comet.move_of(e) for e in deal.events]
    assert found[: 1 + 3] == [None] * 4  # hand_started and the antes
    assert (0, open_("D")) in found and (0, play("7D")) in found and (1, COMET) in found
    assert comet.move_of(Event("keep_comet", "player", {"seat": 2})) == (2, KEEP)
    assert comet.move_of(Event("stop", "service", {"reason": "gap"})) is None


def test_random_hands_end_conserve_cards_and_chips_and_replay_to_the_same_state() -> None:
    rng = random.Random(7)
    for hand in range(60):
        n = 2 + hand % 5
        deck = canonical_deck("comet")
        rng.shuffle(deck)
        chips = {str(i): rng.randrange(0, 8) for i in range(n)}
        events = comet.begin(
            deck=deck,
            dealer=hand % n,
            seats=[{"seat": i} for i in range(n)],
            options={"comet_payment": 2},
            chips_before=chips,
            pot_before=hand % 3,
            commitment=COMMITMENT,
        )
        state = comet.replay(deck, events)
        total = sum(chips.values()) + hand % 3
        while not comet.is_over(state):
            legal = comet.legal_moves(state)
            seat = rng.choice(list(legal))
            move = rng.choice(legal[seat])
            made = comet.decide(state, seat, move)
            # a verifier re-deciding each recorded move gets the same events back
            again = comet.move_of(made[0])
            assert again is not None and comet.decide(state, *again, made[0].by) == made
            for event in made:
                state = comet.apply(state, event)
            in_hands = sum(h.bit_count() for h in state.hands)
            assert in_hands + len(state.table) == 51
            assert sum(state.chips) + state.pot == total and min(state.chips) >= 0
            events += made
        assert comet.replay(deck, events) == state
        result = comet.result(state)
        assert result is not None and sum(result["net"].values()) == hand % 3 - state.pot
