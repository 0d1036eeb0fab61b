"""Comet (Comète): the rules of RULES.md section 2 as pure functions over an immutable state.

The module implements ``protocol.Game``: ``begin`` opens a hand, ``decide`` turns a seat's move
into events, ``apply`` folds one event into the state, and ``replay`` rebuilds a hand.

Rules notes (choices where RULES.md leaves the engine a decision):

* **Going out ends the deal at once.** When a player plays his last card (``open``, ``play`` or
  ``comet``) the events are: the move, its Comet payments (for a ``comet``), ``out``, the pot,
  the ``per_card`` payments, ``hand_over``. No ``stop`` is emitted, even if the run would have
  been blocked by that card: the deal is over, so no run stops and nobody opens again.
* **Opening moves name the suit.** ``Move("open", suit="H")``: the card is the opener's lowest
  heart by rule, so ``legal_moves`` and ``move_of`` give the suit only; ``decide`` also accepts
  a ``card`` and then checks that it is that lowest card.
* **The Comet at an opening.** A holder whose only card is the Comet plays ``Move("comet")``
  when he must open; it stands for ``9D`` and he goes out. It is never a legal opening otherwise.
* **Where the Comet may be played.** "At any time a run needs a card": while a next card is
  waiting (``legal_moves`` offers it to the Comet holder, who is not waited for), and when a run
  is blocked by the gap or by an already played card (then the holder is asked, and waited for).
  After a king the run stops at once: the Comet holder is not asked.
* **Standing for a card.** The Comet stands for the card the run needed; the run goes on from
  the card after it. Standing for the missing 8D it "fills the whole gap" and the next card is
  TD. Standing for 7D (a waiting 7D) the next card is the gap, and as the Comet is then gone
  the run stops there (reason ``gap``). A card the Comet stood for stays in its holder's hand
  and is not "already played".
* **Time-outs and forced moves are checked.** ``decide`` refuses ``by="forced"`` unless the
  seat is waited for and the move is its only legal move, and ``by="timeout"`` unless the seat
  is waited for and the move is ``default_move``; the optional Comet at a waiting card is never
  forced nor a time-out.
* **Who opens next.** After a ``stop`` the player who played the run's last card opens, the
  Comet included: a Comet that ends a run (standing for a king, before a played card or at the
  gap) gives its player the next opening.
* **Records from elsewhere.** ``apply`` trusts its events (``decide`` is where moves are
  checked, and the verifier re-decides every move), and reads only ``ante``, ``per_card``,
  ``comet_payment`` and ``comet_payment_due`` from ``hand_started``; ``begin`` records the
  options as given to it, after checking them with ``normalise_options``.
* **View.** Every seat sees whose move it is (``to_act``), as RULES.md §3 makes it public,
  except while a blocked run waits for the Comet holder: that would say who holds the Comet,
  so only the holder himself sees his seat in ``to_act`` then (``waiting_for`` says ``comet``).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .base import (
    BY_FORCED,
    BY_SERVICE,
    BY_TIMEOUT,
    MOVE_BYS,
    Event,
    Handlers,
    HandOver,
    IllegalMove,
    Move,
    NotYourTurn,
    RuleError,
    apply_event,
    fold,
)
from .cards import CANONICAL_INDEX, COMET, FULL_DECK, MISSING, SUITS

NAME = "comet"
MIN_SEATS = 2
MAX_SEATS = 6
DEFAULT_OPTIONS: Mapping[str, Any] = {
    "ante": 1,
    "per_card": 1,
    "comet_payment": 1,
    "progressive_comet": False,
    "deals": None,
    "until_broke": False,
}

_AMOUNT_OPTIONS = ("ante", "per_card", "comet_payment")
_BOOL_OPTIONS = ("progressive_comet", "until_broke")

# Cards are handled as their index in the canonical deck (suit * 13 + rank, A = 0 … K = 12);
# a hand is a bit mask of those indices, so that every question about it is an int operation.
_IDX = CANONICAL_INDEX
_CARD = FULL_DECK
_COMET = _IDX[COMET]
_GAP = _IDX[MISSING]
_COMET_BIT = 1 << _COMET
_KING = 12
_SUIT_MASK = tuple(((1 << 13) - 1) << (13 * i) for i in range(4))
_SUIT_NAME = {"C": "club", "D": "diamond", "H": "heart", "S": "spade"}

# Phases. NEW: before hand_started. OPEN: a seat must open. RUN: a next card is waiting.
# BLOCKED: the Comet holder is asked at a blocked run. STOPPING: a ``stop`` is due.
# ENDING: a player went out, the closing events are due. OVER: after hand_over.
NEW, OPEN, RUN, BLOCKED, STOPPING, ENDING, OVER = range(7)
_PHASE_NAME = ("not_started", "open", "run", "blocked", "stopping", "ending", "over")

STOP_KING = "king"
STOP_GAP = "gap"
STOP_PLAYED = "played"

_COMET_MOVE = Move("comet")
_KEEP_MOVE = Move("keep_comet")
_PLAY_MOVES = tuple(Move("play", card=c) for c in _CARD)
_OPEN_MOVES = tuple(Move("open", suit=s) for s in SUITS)


@dataclass(frozen=True, slots=True)
class Setup:
    """What ``hand_started`` fixes for the whole hand."""

    n: int
    dealer: int
    seats: tuple[Mapping[str, Any], ...]
    options: Mapping[str, Any]
    ante: int
    per_card: int
    comet_payment_due: int
    chips_before: tuple[int, ...]
    pot_before: int
    commitment: str


@dataclass(frozen=True, slots=True)
class CometState:
    """A hand of Comet between two events.

    ``hands`` are bit masks of canonical card indices; ``played`` the mask of real cards played;
    ``table`` the cards in the order played as ``(seat, card, stands_for)`` indices (-1: none).
    ``last`` is the card the run last reached (the card the Comet stood for, or 9D after it
    filled the gap); ``need`` the card the run needs (at a block: the card it cannot get).
    """

    deck: tuple[str, ...]
    setup: Setup | None = None
    hands: tuple[int, ...] = ()
    chips: tuple[int, ...] = ()
    pot: int = 0
    played: int = 0
    table: tuple[tuple[int, int, int], ...] = ()
    phase: int = NEW
    opener: int = -1
    last: int = -1
    need: int = -1
    need_holder: int = -1
    block: str = ""
    last_player: int = -1
    comet_holder: int = -1
    last_stop: str = ""
    winner: int = -1


# ---------------------------------------------------------------------------------------------
# Options and the progressive Comet payment


def normalise_options(options: Mapping[str, Any] | None) -> dict[str, Any]:
    """Fill in the defaults of RULES.md §2.

    Unknown options, wrong types and negative amounts raise ValueError naming the option.
    """
    out = dict(DEFAULT_OPTIONS)
    for key, value in (options or {}).items():
        if key not in DEFAULT_OPTIONS:
            raise ValueError(f"unknown Comet option {key!r}")
        if key in _AMOUNT_OPTIONS:
            if not isinstance(value, int) or isinstance(value, bool):
                raise ValueError(f"option {key!r} must be a whole number of chips")
            if value < 0:
                raise ValueError(f"option {key!r} cannot be negative")
        elif key in _BOOL_OPTIONS:
            if not isinstance(value, bool):
                raise ValueError(f"option {key!r} must be true or false")
        elif key == "deals" and value is not None:
            if not isinstance(value, int) or isinstance(value, bool):
                raise ValueError("option 'deals' must be a whole number of deals or null")
            if value < 1:
                raise ValueError("option 'deals' must be at least 1")
        out[key] = value
    return out


def next_comet_payment_due(
    options: Mapping[str, Any], previous_due: int | None, comet_played_last_deal: bool | None
) -> int:
    """The Comet payment in force for a deal.

    RULES.md §2: with ``progressive_comet`` "the Comet payment doubles for every consecutive
    deal of the partie in which the Comet was not played, and returns to ``comet_payment``
    after a deal in which it was". ``previous_due``/``comet_played_last_deal`` describe the
    partie's previous deal (``None`` for its first deal).
    """
    base = int(options.get("comet_payment", DEFAULT_OPTIONS["comet_payment"]))
    if not options.get("progressive_comet", False):
        return base
    if previous_due is None or comet_played_last_deal is None or comet_played_last_deal:
        return base
    return previous_due * 2


# ---------------------------------------------------------------------------------------------
# Small helpers


def _cards_of(mask: int) -> list[str]:
    """The cards of a mask in canonical deck order."""
    out = []
    while mask:
        low = mask & -mask
        out.append(_CARD[low.bit_length() - 1])
        mask ^= low
    return out


def _lowest(mask: int) -> int:
    return (mask & -mask).bit_length() - 1


def _holder(hands: tuple[int, ...], card: int) -> int:
    for seat, hand in enumerate(hands):
        if hand >> card & 1:
            return seat
    return -1


def _pay(frm: int | str, to: int | str, amount: int, reason: str, short: int) -> Event:
    return Event(
        "pay",
        BY_SERVICE,
        {"from": frm, "to": to, "amount": amount, "reason": reason, "short": short},
    )


# ---------------------------------------------------------------------------------------------
# Beginning a hand


def begin(
    *,
    deck: Sequence[str],
    dealer: int,
    seats: Sequence[Mapping[str, Any]],
    options: Mapping[str, Any],
    chips_before: Mapping[str, int],
    pot_before: int,
    commitment: str,
    comet_payment_due: int | None = None,
) -> list[Event]:
    """``hand_started`` then the antes, one per seat starting with the seat after the dealer."""
    n = len(seats)
    if not MIN_SEATS <= n <= MAX_SEATS:
        raise ValueError(f"Comet is played by {MIN_SEATS} to {MAX_SEATS} players, not {n}")
    if not 0 <= dealer < n:
        raise ValueError(f"dealer {dealer} is not a seat of this table")
    if sorted(deck) != sorted(c for c in FULL_DECK if c != MISSING):
        raise ValueError("a Comet deck holds the 51 cards without 8D, each once")
    opts = normalise_options(options)
    if comet_payment_due is None:
        comet_payment_due = int(opts["comet_payment"])
    if comet_payment_due < 0:
        raise ValueError("comet_payment_due cannot be negative")
    chips = [int(chips_before[str(i)]) for i in range(n)]
    if any(c < 0 for c in chips) or pot_before < 0:
        raise ValueError("chips never go below zero")
    events = [
        Event(
            "hand_started",
            BY_SERVICE,
            {
                "dealer": dealer,
                "seats": [dict(s) for s in seats],
                "options": dict(options),
                "chips_before": {str(i): chips[i] for i in range(n)},
                "pot_before": pot_before,
                "commitment": commitment,
                "comet_payment_due": comet_payment_due,
            },
        )
    ]
    ante = int(opts["ante"])
    if ante:
        for k in range(1, n + 1):
            seat = (dealer + k) % n
            amount = min(ante, chips[seat])
            events.append(_pay(seat, "pot", amount, "ante", ante - amount))
    return events


def initial_state(deck: Sequence[str]) -> CometState:
    return CometState(deck=tuple(deck))


# ---------------------------------------------------------------------------------------------
# apply: one event into the state. It trusts the event (decide is where moves are checked), so
# that replaying a stored hand is fast.


def _started(s: CometState, d: Mapping[str, Any]) -> CometState:
    seats = tuple(d["seats"])
    n = len(seats)
    dealer = int(d["dealer"])
    options = dict(d["options"])
    base = int(options.get("comet_payment", DEFAULT_OPTIONS["comet_payment"]))
    due = d.get("comet_payment_due")
    setup = Setup(
        n=n,
        dealer=dealer,
        seats=seats,
        options=options,
        ante=int(options.get("ante", DEFAULT_OPTIONS["ante"])),
        per_card=int(options.get("per_card", DEFAULT_OPTIONS["per_card"])),
        comet_payment_due=base if due is None else int(due),
        chips_before=tuple(int(d["chips_before"][str(i)]) for i in range(n)),
        pot_before=int(d["pot_before"]),
        commitment=str(d["commitment"]),
    )
    # RULES.md §2 Dealing: "all 51 cards one at a time, starting with the next seat".
    hands = [0] * n
    for i, card in enumerate(s.deck):
        hands[(dealer + 1 + i) % n] |= 1 << _IDX[card]
    htuple = tuple(hands)
    return CometState(
        s.deck,
        setup,
        htuple,
        setup.chips_before,
        setup.pot_before,
        0,
        (),
        OPEN,
        (dealer + 1) % n,  # "The player after the dealer opens the first run."
        -1,
        -1,
        -1,
        "",
        -1,
        _holder(htuple, _COMET),
        "",
        -1,
    )


def _paid(s: CometState, d: Mapping[str, Any]) -> CometState:
    amount = int(d["amount"])
    frm = d["from"]
    to = d["to"]
    chips = list(s.chips)
    pot = s.pot
    if frm == "pot":
        pot -= amount
    else:
        chips[frm] -= amount
    if to == "pot":
        pot += amount
    else:
        chips[to] += amount
    return CometState(
        s.deck,
        s.setup,
        s.hands,
        tuple(chips),
        pot,
        s.played,
        s.table,
        s.phase,
        s.opener,
        s.last,
        s.need,
        s.need_holder,
        s.block,
        s.last_player,
        s.comet_holder,
        s.last_stop,
        s.winner,
    )


def _card_played(s: CometState, seat: int, card: int, reached: int, stands: int) -> CometState:
    """A card (or the Comet) leaves ``seat``'s hand; the run has reached ``reached``."""
    hands = list(s.hands)
    hand = hands[seat] & ~(1 << card)
    hands[seat] = hand
    htuple = tuple(hands)
    if card == _COMET:
        played = s.played
        comet_holder = -1
    else:
        played = s.played | (1 << card)
        comet_holder = s.comet_holder
    need = -1
    holder = -1
    block = ""
    if not hand:
        # "The deal ends the moment a player plays his last card."
        phase = ENDING
    elif reached % 13 == _KING:
        # "A run is blocked when ... the last card was a king"; the Comet is not asked then.
        phase = STOPPING
        block = STOP_KING
    else:
        need = reached + 1
        if need == _GAP:
            block = STOP_GAP  # "After 7D the next card is the missing 8D."
        elif played >> need & 1:
            block = STOP_PLAYED  # "the next card has already been played in an earlier run"
        else:
            holder = _holder(htuple, need)
        # "When a run is blocked for a reason other than a king and the Comet is still in a
        # hand, its holder is asked first."
        phase = (BLOCKED if comet_holder >= 0 else STOPPING) if block else RUN
    return CometState(
        s.deck,
        s.setup,
        htuple,
        s.chips,
        s.pot,
        played,
        s.table + ((seat, card, stands),),
        phase,
        -1,
        reached,
        need,
        holder,
        block,
        seat,
        comet_holder,
        s.last_stop,
        s.winner,
    )


def _opened(s: CometState, d: Mapping[str, Any]) -> CometState:
    card = _IDX[d["card"]]
    return _card_played(s, int(d["seat"]), card, card, -1)


def _comet_played(s: CometState, d: Mapping[str, Any]) -> CometState:
    stands = _IDX[d["stands_for"]]
    # Standing for the missing 8D "it fills the whole gap (it stands for the 8D and is itself the
    # 9D), so the run goes on with TD".
    reached = _COMET if stands == _GAP else stands
    return _card_played(s, int(d["seat"]), _COMET, reached, stands)


# ``keep_comet`` and ``stop`` come a few times a hand: ``replace`` names what they change. The
# events of every card (``play``, ``comet``) build the state positionally, which replays faster.


def _kept(s: CometState, d: Mapping[str, Any]) -> CometState:
    return replace(s, phase=STOPPING, opener=-1, need_holder=-1)


def _stopped(s: CometState, d: Mapping[str, Any]) -> CometState:
    # "A blocked run stops ... The player who played its last card opens the next run."
    return replace(s, phase=OPEN, opener=s.last_player, last=-1, need=-1, need_holder=-1,
                   block="", last_stop=str(d["reason"]))


def _went_out(s: CometState, d: Mapping[str, Any]) -> CometState:
    return CometState(
        s.deck,
        s.setup,
        s.hands,
        s.chips,
        s.pot,
        s.played,
        s.table,
        ENDING,
        -1,
        s.last,
        -1,
        -1,
        "",
        s.last_player,
        s.comet_holder,
        s.last_stop,
        int(d["seat"]),
    )


def _over(s: CometState, d: Mapping[str, Any]) -> CometState:
    return CometState(
        s.deck,
        s.setup,
        s.hands,
        s.chips,
        s.pot,
        s.played,
        s.table,
        OVER,
        -1,
        s.last,
        -1,
        -1,
        "",
        s.last_player,
        s.comet_holder,
        s.last_stop,
        s.winner,
    )


def _play_event(s: CometState, d: Mapping[str, Any]) -> CometState:
    card = _IDX[d["card"]]
    return _card_played(s, int(d["seat"]), card, card, -1)


_TITLE = "a Comet hand"
_APPLY: Handlers[CometState] = {
    "hand_started": _started,
    "pay": _paid,
    "open": _opened,
    "play": _play_event,
    "comet": _comet_played,
    "keep_comet": _kept,
    "stop": _stopped,
    "out": _went_out,
    "hand_over": _over,
}


def apply(state: CometState, event: Event) -> CometState:
    return apply_event(_APPLY, state, event, game=_TITLE)


def replay(deck: Sequence[str], events: Sequence[Event]) -> CometState:
    return fold(_APPLY, initial_state(deck), events, game=_TITLE)


# ---------------------------------------------------------------------------------------------
# Questions about the state


def legal_moves(state: CometState) -> dict[int, list[Move]]:
    phase = state.phase
    if phase == RUN:
        holder = state.need_holder
        moves = {holder: [_PLAY_MOVES[state.need]]}
        comet = state.comet_holder
        if comet >= 0:
            # "Its holder may play it ... in place of the next card while that card is waiting";
            # "If the holder of the Comet also holds the next card, he chooses which to play."
            if comet == holder:
                moves[holder].append(_COMET_MOVE)
            else:
                moves[comet] = [_COMET_MOVE]
        return moves
    if phase == OPEN:
        seat = state.opener
        hand = state.hands[seat]
        real = hand & ~_COMET_BIT
        if not real:
            # "It cannot open a run, except when it is its holder's only card."
            return {seat: [_COMET_MOVE]}
        return {seat: [_OPEN_MOVES[i] for i in range(4) if real & _SUIT_MASK[i]]}
    if phase == BLOCKED:
        return {state.comet_holder: [_COMET_MOVE, _KEEP_MOVE]}
    return {}


def to_act(state: CometState) -> list[int]:
    phase = state.phase
    if phase == RUN:
        return [state.need_holder]
    if phase == OPEN:
        return [state.opener]
    if phase == BLOCKED:
        return [state.comet_holder]
    return []


def is_over(state: CometState) -> bool:
    return state.phase == OVER


def comet_played(state: CometState) -> bool:
    """Whether the Comet was played in this deal (what ``progressive_comet`` looks at)."""
    return state.setup is not None and state.comet_holder < 0


def comet_window_open(state: CometState) -> bool:
    """Whether the Comet may be played at this point: a run needs a card (waiting or blocked)
    and the Comet is still in a hand. Public knowledge: it says nothing of who holds it."""
    return state.phase in (RUN, BLOCKED) and state.comet_holder >= 0


#: A Comet holder's standing orders (RULES.md §2, house rule): when the service plays the
#: Comet for him at a chance the rules give him. ``ask``: never without his click.
COMET_ORDERS = ("blocked", "out", "first", "never", "ask")


def comet_holder(state: CometState) -> int:
    """The seat holding the Comet, or -1 once it is played. Hidden: for the service only."""
    return state.comet_holder


def comet_order_plays(state: CometState, seat: int, order: str) -> bool:
    """Whether ``order`` plays the Comet for ``seat`` now, at a chance the rules give him:

    - ``blocked``: a run is blocked (not by a king) whose suit he holds a card of, so that
      the run he needs goes on;
    - ``out``: the Comet is his last card, so that playing it takes him out;
    - ``first``: at the first chance, for the payment;
    - ``never`` and ``ask``: not by itself.
    """
    if order not in COMET_ORDERS:
        raise ValueError(f"unknown Comet order {order!r}")
    if state.comet_holder != seat or not comet_window_open(state):
        return False
    hand = state.hands[seat]
    if order == "first":
        return True
    if order == "out":
        return hand == _COMET_BIT
    if order == "blocked":
        if state.phase != BLOCKED:
            return False
        suit = state.need // 13
        return bool(hand & ~_COMET_BIT & _SUIT_MASK[suit])
    return False


def _net(state: CometState) -> dict[str, int]:
    assert state.setup is not None
    before = state.setup.chips_before
    return {str(i): state.chips[i] - before[i] for i in range(state.setup.n)}


def result(state: CometState) -> dict[str, Any] | None:
    if state.phase != OVER:
        return None
    return {"winner": state.winner if state.winner >= 0 else None, "net": _net(state)}


def move_of(event: Event) -> tuple[int, Move] | None:
    t = event.type
    d = event.data
    if t == "play":
        return int(d["seat"]), _PLAY_MOVES[_IDX[d["card"]]]
    if t == "open":
        return int(d["seat"]), Move("open", suit=str(d["suit"]))
    if t == "comet":
        return int(d["seat"]), _COMET_MOVE
    if t == "keep_comet":
        return int(d["seat"]), _KEEP_MOVE
    return None


# ---------------------------------------------------------------------------------------------
# decide


def _suit_word(suit: str) -> str:
    return _SUIT_NAME.get(suit, suit)


def _not_your_turn(state: CometState) -> RuleError:
    phase = state.phase
    if phase == OPEN:
        return NotYourTurn(f"it is not your turn: seat {state.opener} must open")
    if phase == RUN:
        return NotYourTurn(f"it is not your turn: the run needs {_CARD[state.need]}")
    if phase == BLOCKED:
        return NotYourTurn("it is not your turn: the run is blocked and the Comet holder is asked")
    return NotYourTurn("it is not your turn")


def _check_comet(state: CometState, seat: int) -> int:
    """The card the Comet would stand for, or a RuleError."""
    if state.comet_holder < 0:
        raise IllegalMove("the Comet has already been played in this deal", rule="comet_once")
    if seat != state.comet_holder:
        raise IllegalMove("only the holder of the Comet can play it", rule="comet_holder")
    phase = state.phase
    if phase in (RUN, BLOCKED):
        return state.need
    if phase == OPEN:
        if seat != state.opener:
            if state.last_stop == STOP_KING:
                raise IllegalMove("the Comet cannot be played after a king", rule="comet_king")
            raise _not_your_turn(state)
        if state.hands[seat] != _COMET_BIT:
            raise IllegalMove(
                "the Comet cannot open a run unless it is your last card", rule="comet_open"
            )
        # "then he plays it when he must open (it stands for the 9D) and goes out."
        return _COMET
    raise _not_your_turn(state)


def _check_open(state: CometState, seat: int, move: Move) -> tuple[str, int]:
    if state.phase != OPEN:
        if state.phase == RUN:
            raise IllegalMove(f"a run is under way: it needs {_CARD[state.need]}", rule="open")
        raise _not_your_turn(state)
    if seat != state.opener:
        raise _not_your_turn(state)
    suit = move.suit
    if suit is None and move.card is not None and len(move.card) == 2:
        suit = move.card[1]
    if suit is None or suit not in SUITS:
        raise IllegalMove("to open, choose a suit: C, D, H or S", rule="open")
    hand = state.hands[seat]
    if hand == _COMET_BIT:
        raise IllegalMove(
            "your only card is the Comet: play it to open and go out", rule="comet_open"
        )
    mine = hand & _SUIT_MASK[SUITS.index(suit)] & ~_COMET_BIT
    if not mine:
        if suit == "D" and hand & _COMET_BIT:
            raise IllegalMove(
                "you hold no diamond to open with: the Comet cannot open a run unless it is "
                "your last card",
                rule="comet_open",
            )
        raise IllegalMove(f"you hold no {_suit_word(suit)} to open with", rule="open")
    # "To open, a player chooses a suit in which he holds a card other than the Comet and
    # plays his lowest card of that suit, not counting the Comet."
    lowest = _lowest(mine)
    if move.card is not None and move.card != _CARD[lowest]:
        raise IllegalMove(
            f"you must open with your lowest {_suit_word(suit)}, {_CARD[lowest]}", rule="open"
        )
    return suit, lowest


def _check_play(state: CometState, seat: int, move: Move) -> int:
    card = move.card
    if card is None or card not in _IDX or card == MISSING:
        raise IllegalMove(f"there is no card {card!r} in a Comet deck", rule="play")
    if card == COMET:
        raise IllegalMove("the Comet is played with the comet move", rule="play")
    idx = _IDX[card]
    if not state.hands[seat] >> idx & 1:
        raise IllegalMove(f"you do not hold {card}", rule="play")
    phase = state.phase
    if phase == RUN:
        if idx != state.need:
            raise IllegalMove(f"the run needs {_CARD[state.need]}, not {card}", rule="play")
        return idx
    if phase == OPEN:
        if seat == state.opener:
            raise IllegalMove(
                "you open the next run: choose a suit, and your lowest card of it is played",
                rule="open",
            )
        raise _not_your_turn(state)
    if phase == BLOCKED:
        raise IllegalMove(
            f"the run is blocked ({_block_words(state)}): only the Comet can be played",
            rule="play",
        )
    raise _not_your_turn(state)


def _block_words(state: CometState) -> str:
    if state.block == STOP_GAP:
        return "8D is missing"
    if state.block == STOP_PLAYED:
        return f"{_CARD[state.need]} has already been played"
    return "after a king"


def _closing(state: CometState, events: list[Event], chips: list[int], winner: int) -> None:
    """``out``, the pot, the per_card payments and ``hand_over`` (RULES.md §2 Going out)."""
    assert state.setup is not None
    n = state.setup.n
    events.append(Event("out", BY_SERVICE, {"seat": winner}))
    pot = state.pot
    if pot:
        # "He takes the pot"; a debt of 0 gives no event.
        events.append(_pay("pot", winner, pot, "pot", 0))
        chips[winner] += pot
    per_card = state.setup.per_card
    if per_card:
        # "every other player pays him per_card for each card still in his hand" — a Comet kept
        # to the end "counts as one card in its holder's hand" (it is one bit of the mask).
        for k in range(1, n):
            payer = (winner + k) % n
            due = per_card * state.hands[payer].bit_count()
            if due:
                amount = due if due <= chips[payer] else chips[payer]
                chips[payer] -= amount
                chips[winner] += amount
                events.append(_pay(payer, winner, amount, "per_card", due - amount))
    before = state.setup.chips_before
    net = {str(i): chips[i] - before[i] for i in range(n)}
    events.append(Event("hand_over", BY_SERVICE, {"result": {"winner": winner, "net": net}}))


def decide(state: CometState, seat: int, move: Move, by: str = "player") -> list[Event]:
    """The move's event and every event that follows from it, or a RuleError."""
    phase = state.phase
    if phase == OVER:
        raise HandOver("the hand is over")
    setup = state.setup
    if setup is None:
        raise RuleError("the hand has not started")
    if by not in MOVE_BYS:
        raise RuleError(f"a move is made by the player, forced or on time-out, not {by!r}")
    if not isinstance(seat, int) or not 0 <= seat < setup.n:
        raise NotYourTurn(f"there is no seat {seat!r} at this table")

    t = move.type
    if t == "comet":
        stands = _check_comet(state, seat)
        event = Event("comet", by, {"seat": seat, "stands_for": _CARD[stands]})
        canonical = _COMET_MOVE
    elif t == "play":
        card = _check_play(state, seat, move)
        event = Event("play", by, {"seat": seat, "card": _CARD[card]})
        canonical = _PLAY_MOVES[card]
    elif t == "open":
        suit, card = _check_open(state, seat, move)
        event = Event("open", by, {"seat": seat, "suit": suit, "card": _CARD[card]})
        canonical = _OPEN_MOVES[SUITS.index(suit)]
    elif t == "keep_comet":
        if phase != BLOCKED:
            if seat == state.comet_holder or state.comet_holder < 0:
                raise IllegalMove("no blocked run is asking for the Comet now", rule="keep_comet")
            raise IllegalMove("only the holder of the Comet can keep it", rule="comet_holder")
        if seat != state.comet_holder:
            raise IllegalMove("only the holder of the Comet can keep it", rule="comet_holder")
        event = Event("keep_comet", by, {"seat": seat})
        canonical = _KEEP_MOVE
    else:
        raise IllegalMove(f"there is no {t!r} move in Comet", rule="move")

    if by != "player":
        waited = to_act(state)
        if seat not in waited:
            raise RuleError(f"a {by} move is made only for a seat the hand is waiting for", rule=by)
        if by == BY_FORCED and legal_moves(state).get(seat) != [canonical]:
            raise RuleError("a forced move must be the only legal move", rule=by)
        if by == BY_TIMEOUT and default_move(state, seat) != canonical:
            raise RuleError("a time-out plays the default move", rule=by)

    events = [event]
    after = apply(state, event)
    chips: list[int] | None = None
    if t == "comet":
        # "The moment it is played, every other player pays its holder the Comet payment."
        due = setup.comet_payment_due
        if due:
            n = setup.n
            chips = list(after.chips)
            for k in range(1, n):
                payer = (seat + k) % n
                amount = due if due <= chips[payer] else chips[payer]
                chips[payer] -= amount
                chips[seat] += amount
                events.append(_pay(payer, seat, amount, "comet", due - amount))
    next_phase = after.phase
    if next_phase == ENDING:
        _closing(after, events, chips if chips is not None else list(after.chips), seat)
    elif next_phase == STOPPING:
        events.append(Event("stop", BY_SERVICE, {"reason": after.block}))
    return events


# ---------------------------------------------------------------------------------------------
# Time-out defaults, the view, the bot


def _opening_suit(hand: int) -> int:
    """RULES.md §3: "the suit in which he holds the most cards (the Comet not counted); if equal,
    the suit whose lowest card is lowest; then suit order"."""
    real = hand & ~_COMET_BIT
    best = -1
    best_key = (0, 0)
    for i in range(4):
        mine = real & _SUIT_MASK[i]
        if mine:
            key = (mine.bit_count(), -(_lowest(mine) - 13 * i))
            if best < 0 or key > best_key:
                best, best_key = i, key
    return best


def default_move(state: CometState, seat: int) -> Move:
    """The time-out move of RULES.md §3 for a seat the hand is waiting for."""
    phase = state.phase
    if phase == OPEN and seat == state.opener:
        suit = _opening_suit(state.hands[seat])
        return _COMET_MOVE if suit < 0 else _OPEN_MOVES[suit]
    if phase == RUN and seat == state.need_holder:
        # "Comet, holder of both the Comet and the next card: play the real card."
        return _PLAY_MOVES[state.need]
    if phase == BLOCKED and seat == state.comet_holder:
        # "Comet, holder asked at a blocked run: keep the Comet."
        return _KEEP_MOVE
    raise NotYourTurn("the hand is not waiting for this seat")


def view(state: CometState, seat: int | None) -> dict[str, Any]:
    """What ``seat`` may see (``None``: a spectator): the public table and his own hand only."""
    setup = state.setup
    if setup is None:
        return {"game": NAME, "phase": _PHASE_NAME[NEW]}
    n = setup.n
    phase = state.phase
    over = phase == OVER
    waiting = to_act(state)
    waiting_for = {OPEN: "open", RUN: "next_card", BLOCKED: "comet"}.get(phase)
    if phase == BLOCKED:
        # Whose move it is would say who holds the Comet: only the holder sees it.
        waiting = [s for s in waiting if s == seat]
    played = []
    for who, card, stands in state.table:
        entry: dict[str, Any] = {"seat": who, "card": _CARD[card]}
        if stands >= 0:
            entry["stands_for"] = _CARD[stands]
        played.append(entry)
    run: dict[str, Any] | None = None
    if phase in (RUN, BLOCKED, STOPPING, ENDING, OVER) and state.table and state.last >= 0:
        last_seat, last_card, last_stands = state.table[-1]
        run = {
            "suit": SUITS[state.last // 13],
            "last_card": _CARD[last_card],
            "last_stands_for": _CARD[last_stands] if last_stands >= 0 else None,
            "last_seat": last_seat,
            "next_card": _CARD[state.need] if phase == RUN else None,
            "blocked": state.block or None,
        }
    out: dict[str, Any] = {
        "game": NAME,
        "phase": _PHASE_NAME[phase],
        "dealer": setup.dealer,
        "seats": n,
        "to_act": waiting,
        "waiting_for": waiting_for,
        "opener": state.opener if phase == OPEN else None,
        "run": run,
        "last_stop": state.last_stop or None,
        "played": played,
        "cards_in_hand": {str(i): state.hands[i].bit_count() for i in range(n)},
        "pot": state.pot,
        "chips": {str(i): state.chips[i] for i in range(n)},
        "comet_payment_due": setup.comet_payment_due,
        "comet_played": comet_played(state),
    }
    if seat is not None and 0 <= seat < n:
        out["seat"] = seat
        out["hand"] = _cards_of(state.hands[seat])
        out["legal_moves"] = [m.to_dict() for m in legal_moves(state).get(seat, [])]
    if over:
        out["hands"] = {str(i): _cards_of(state.hands[i]) for i in range(n)}
        out["result"] = result(state)
        out["winner"] = state.winner
    return out


def _stretch(hand: int, played: int, reached: int) -> tuple[int, bool]:
    """After the run reached ``reached``: how many cards of ``hand`` follow on in a row, and
    whether the run is then blocked (so that he played its last card and opens next), as far as
    the seat can tell from his hand and the table."""
    count = 0
    card = reached
    while card % 13 != _KING:
        card += 1
        if card == _GAP:
            return count, True
        if not hand >> card & 1:
            return count, bool(played >> card & 1)
        count += 1
    return count, True


def heuristic_move(
    state: CometState, seat: int, legal: list[Move], required: bool, rng: random.Random
) -> Move | None:
    """A sensible player, using only what that seat may see.

    Opening: the suit that lets him play the longest stretch of his own cards, preferring a
    stretch that ends the run (he then opens again). The Comet: played when it is his last
    card, when it lets him take over a blocked run with cards of his own after it (or end the
    run himself), and at a waiting card only late in the deal when he follows on; kept
    otherwise. With the real next card and the Comet, the real card.
    """
    if not legal:
        return None
    phase = state.phase
    hand = state.hands[seat]
    count = hand.bit_count()
    if phase == OPEN:
        if legal[0] is _COMET_MOVE or legal[0].type == "comet":
            return legal[0]
        best: list[Move] = []
        best_score = -1
        real = hand & ~_COMET_BIT
        for move in legal:
            i = SUITS.index(move.suit or "C")
            low = _lowest(real & _SUIT_MASK[i])
            length, ends = _stretch(hand, state.played, low)
            length += 1
            # Ending the run keeps the opening; high cards left behind cost the same as low
            # ones, so long stretches come first.
            score = length * 4 + (6 if ends else 0) + low % 13 // 4
            if score > best_score:
                best, best_score = [move], score
            elif score == best_score:
                best.append(move)
        return best[0] if len(best) == 1 else rng.choice(best)
    has_comet = _COMET_MOVE in legal
    if phase == BLOCKED:
        if count == 1:
            return _COMET_MOVE
        reached = _COMET if state.need == _GAP else state.need
        length, ends = _stretch(hand, state.played, reached)
        # Kept, the Comet lets him go out at almost any moment once it is his last card; so he
        # plays it here only to follow on with a stretch of his own, to take the next opening
        # from another player, or late in the deal when he follows on at all.
        if length >= 2 or (ends and state.last_player != seat) or (length and count <= 4):
            return _COMET_MOVE
        return _KEEP_MOVE
    if phase == RUN:
        play = _PLAY_MOVES[state.need]
        if play in legal:
            return play
        if has_comet:
            if count == 1:
                return _COMET_MOVE
            length, _ends = _stretch(hand, state.played, state.need)
            if length and count - length <= 3:
                return _COMET_MOVE
            return None if not required else legal[0]
    return legal[0] if required else None


# ---------------------------------------------------------------------------------------------
# A state a seat cannot tell from the real one (the ISMCTS bot's determinisations)

_DEALT = tuple(c for c in _CARD if c != MISSING)


def sample_state(
    view: Mapping[str, Any], history: Sequence[Mapping[str, Any]], rng: random.Random
) -> CometState:
    """A hand that ``view``'s seat cannot tell from the real one, the cards he cannot see dealt
    at random.

    What the seat knows is kept: his own hand, the cards played and by whom, how many cards
    each seat holds, and who holds the waiting next card (the table shows whose move it is).
    Every other card goes to the other seats uniformly at random, by the counts. The state is
    the replay of ``history`` (the events as that seat sees them; nothing in Comet's is hidden
    but who kept the Comet, which no handler reads) from a deck that deals each seat the cards
    he holds in the sample plus the cards he played.
    """
    seat = int(view["seat"])
    n = int(view["seats"])
    dealer = int(view["dealer"])
    mine = list(view["hand"])
    held: list[list[str]] = [[] for _ in range(n)]
    played: list[list[str]] = [[] for _ in range(n)]
    held[seat] = mine
    seen = set(mine)
    for entry in view["played"]:
        played[int(entry["seat"])].append(entry["card"])
        seen.add(entry["card"])
    free = {s: int(view["cards_in_hand"][str(s)]) for s in range(n) if s != seat}
    run = view.get("run")
    if view["phase"] == _PHASE_NAME[RUN] and run and run["next_card"] not in seen:
        holder = int(view["to_act"][0])
        held[holder].append(run["next_card"])
        free[holder] -= 1
        seen.add(run["next_card"])
    unseen = [c for c in _DEALT if c not in seen]  # canonical order: the sample is the seed's
    rng.shuffle(unseen)
    start = 0
    for s, count in free.items():
        held[s].extend(unseen[start:start + count])
        start += count
    dealt = [held[s] + played[s] for s in range(n)]
    deck = [dealt[(dealer + 1 + i) % n].pop() for i in range(len(_DEALT))]
    events = [Event.from_dict({**e, "by": e.get("by") or BY_SERVICE}) for e in history
              if e["type"] not in ("share", "deal")]
    return replay(deck, events)
