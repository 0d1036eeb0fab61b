"""Ma commère, accommodez-moi: RULES.md §1 and the Ma commère items of §3, as a pure engine.

The module implements ``protocol.Game``. A hand (a *round*, "manche") is a list of events
(HAND_RECORD.md); the state is folded from them by ``apply`` and never changes in place.

Rules notes (where RULES.md leaves the engine a choice, what it does):

* **Announcing needs a combination.** ``announce`` is legal only for a player who holds one,
  also with ``compulsory_announce`` false ("you can only announce a combination you hold").
  With ``compulsory_announce`` true it is then his only legal move, so the service plays it
  ``forced``.
* **The asked player's choice.** He gives back one of the three cards he held before the
  offer; the offered card joins his hand only when he gives back, both cards changing hands
  together. An asked player who holds a combination announces instead (the offer is withdrawn:
  nothing changes hands); with ``compulsory_announce`` false he may give back instead.
* **Who speaks next.** After an exchange the next speaker is the seat after the offerer, i.e.
  the asked player, with his new hand. The offerer, if the card he received made him a
  combination, has already spoken: it counts at the end of phase 1.
* **End of phase 1.** When the banker's exchange is done and nobody has announced, the first
  seat in speaking order (from the seat after the banker) holding a combination is the only
  seat that may act, and its only move is ``announce`` (played ``forced`` by the service),
  whatever ``compulsory_announce`` says (RULES.md puts no condition on this clause). The
  showdown then compares every combination on the table.
* **Void round.** Only when phase 1 of turn ``max_turns`` ends with no combination anywhere
  (a combination anywhere means the forced announcement above instead); the pot stays.
* **A-2-3.** With ``ace_low_sequence`` it is a sequence below every other sequence, the ace
  counting as a one in its ranks; two A-2-3 sequences are equal (then the seat nearest the
  banker's next seat wins).
* **Time-out card (offer, give back, return).** "The holding" is what the player holds once the
  card has left him: for an offer, the two cards he keeps (the card he will receive is not known
  yet); for a give-back, the two cards he keeps *and the offered card*, which he has seen and
  receives at once (so the combination of those three counts); for a return, the three cards he
  keeps. Holdings compare by (combination, best two-card part, points kept); the two-card part
  is pair > two consecutive ranks (A-K always, A-2 only with ``ace_low_sequence``) > two of a
  suit > nothing. Among equal cards the lowest goes: rank 2 lowest … A highest, then suit
  C < D < H < S.
* **Nothing due, no event.** An ``ante`` of 0 gives no ante payments, an empty pot no ``pot``
  payment (HAND_RECORD.md: "A debt of 0 gives no event"). A player who could not pay his ante
  in full still plays the round and may win it.
* **Payments are chips, not antes.** The tricon's 2 chips and the sequence's 1 chip from every
  other player do not scale with ``ante``.
* **The record's options.** ``hand_started`` repeats the options as the service passed them
  (the service stores normalised options); missing options take their defaults, so records
  of other tools that leave defaults out are still replayed and verified.
* **forced and timeout.** ``decide`` refuses a ``forced`` move that is not the only legal move
  and a ``timeout`` move that is not the default move, so a replay checks them too.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from .base import (
    BY_FORCED,
    BY_PLAYER,
    BY_SERVICE,
    BY_TIMEOUT,
    MOVE_BYS,
    Event,
    Handlers,
    HandOver,
    IllegalMove,
    Move,
    NotYourTurn,
    apply_event,
    fold,
)
from .cards import CANONICAL_INDEX, FULL_DECK, SUIT_ORDER

NAME = "commere"
MIN_SEATS = 4
MAX_SEATS = 12  # RULES.md §1: "so that the talon always holds a card for everyone"

DEFAULT_OPTIONS: dict[str, Any] = {
    "ante": 1,
    "compulsory_announce": True,
    "ace_low_sequence": False,
    "max_turns": 30,
    "rounds": None,
    "until_broke": False,
}

# --------------------------------------------------------------------------------------------
# Options


def _check_int(name: str, value: Any, *, minimum: int, nullable: bool) -> None:
    if value is None and nullable:
        return
    if not isinstance(value, int) or isinstance(value, bool):
        kind = "an integer or null" if nullable else "an integer"
        raise ValueError(f"option {name!r} must be {kind}, not {value!r}")
    if value < minimum:
        raise ValueError(f"option {name!r} must be at least {minimum}, not {value}")


def normalise_options(options: Mapping[str, Any] | None) -> dict[str, Any]:
    """Every option of RULES.md §1, defaults filled in; ``ValueError`` names a bad option."""
    given = dict(options or {})
    unknown = sorted(set(given) - set(DEFAULT_OPTIONS))
    if unknown:
        raise ValueError(f"unknown option {unknown[0]!r} for Ma commère "
                         f"(options: {', '.join(DEFAULT_OPTIONS)})")
    out = {**DEFAULT_OPTIONS, **given}
    _check_int("ante", out["ante"], minimum=0, nullable=False)
    _check_int("max_turns", out["max_turns"], minimum=1, nullable=True)
    _check_int("rounds", out["rounds"], minimum=1, nullable=True)
    for name in ("compulsory_announce", "ace_low_sequence", "until_broke"):
        if not isinstance(out[name], bool):
            raise ValueError(f"option {name!r} must be true or false, not {out[name]!r}")
    return out


# --------------------------------------------------------------------------------------------
# Cards and combinations

#: "Card order, high to low: A K Q J T 9 8 7 6 5 4 3 2."
_RANK_VALUE = {r: v for v, r in enumerate("23456789TJQKA", start=2)}
#: "Card points: A = 11; K, Q, J = 10; other cards their number (T = 10)."
_POINTS = {r: (11 if r == "A" else min(v, 10)) for r, v in _RANK_VALUE.items()}
_CARD_VALUE = {c: _RANK_VALUE[c[0]] for c in FULL_DECK}
_CARD_POINTS = {c: _POINTS[c[0]] for c in FULL_DECK}
_BIT = {c: 1 << i for i, c in enumerate(FULL_DECK)}
#: "The lowest of them (by rank, then suit C < D < H < S)", 2 lowest and A highest.
_LOWNESS = {c: (_RANK_VALUE[c[0]], SUIT_ORDER[c[1]]) for c in FULL_DECK}
_canonical = CANONICAL_INDEX.__getitem__

POINT, SEQUENCE, TRICON = 1, 2, 3
_TYPE_NAME = {TRICON: "tricon", SEQUENCE: "sequence", POINT: "point"}

Key = tuple[int, ...]
#: Below every combination key (whose first item is the type, 1 to 3).
_NO_COMBINATION: Key = (0,)


def _key(cards: Sequence[str], ace_low: bool) -> Key | None:
    """The strength of three cards as a combination (RULES.md §1), or None."""
    hi, mid, lo = sorted((_CARD_VALUE[c] for c in cards), reverse=True)
    points = sum(_CARD_POINTS[c] for c in cards)
    # 1. Tricon: three cards of the same rank.
    if hi == mid == lo:
        return (TRICON, points, hi, mid, lo)
    # 2. Séquence: three consecutive ranks, suits irrelevant; A high only (A-K-Q yes, K-A-2 never).
    #    "Three suited consecutive cards are a séquence (the higher type)."
    if hi - mid == 1 and mid - lo == 1:
        return (SEQUENCE, points, hi, mid, lo)
    # With ace_low_sequence, A-2-3 "as the lowest sequence of all (below 2-3-4, whatever the
    # points)": points 0 put it under every other sequence (2-3-4 has 9).
    if ace_low and (hi, mid, lo) == (14, 3, 2):
        return (SEQUENCE, 0, 3, 2, 1)
    # 3. Point: three cards of the same suit.
    if cards[0][1] == cards[1][1] == cards[2][1]:
        return (POINT, points, hi, mid, lo)
    return None


def _combination_table(ace_low: bool) -> dict[int, Key]:
    """Every three-card combination, by the bit mask of its cards (about 2,000 of them)."""
    by_rank: dict[str, list[str]] = {}
    by_suit: dict[str, list[str]] = {}
    for card in FULL_DECK:
        by_rank.setdefault(card[0], []).append(card)
        by_suit.setdefault(card[1], []).append(card)
    candidates: list[tuple[str, ...]] = []
    for same in (*by_rank.values(), *by_suit.values()):
        candidates.extend(combinations(same, 3))
    runs = ["234", "345", "456", "567", "678", "789", "89T", "9TJ", "TJQ", "JQK", "QKA", "A23"]
    for run in runs:
        a, b, c = (by_rank[r] for r in run)
        candidates.extend((x, y, z) for x in a for y in b for z in c)
    table: dict[int, Key] = {}
    for three in candidates:
        key = _key(three, ace_low)
        if key is not None:
            table[_BIT[three[0]] | _BIT[three[1]] | _BIT[three[2]]] = key
    return table


_COMBINATIONS = {False: _combination_table(False), True: _combination_table(True)}


def _two_card_part(a: str, b: str, ace_low: bool) -> int:
    """RULES.md §3: "a pair > two consecutive ranks, as a sequence would allow > two of a suit"."""
    va, vb = _CARD_VALUE[a], _CARD_VALUE[b]
    if va == vb:
        return 3
    if abs(va - vb) == 1 or (ace_low and {va, vb} == {14, 2}):
        return 2
    if a[1] == b[1]:
        return 1
    return 0


_TWO_CARD_PARTS = {
    ace_low: {
        _BIT[a] | _BIT[b]: _two_card_part(a, b, ace_low) for a, b in combinations(FULL_DECK, 2)
    }
    for ace_low in (False, True)
}


def evaluate(cards: Sequence[str], ace_low: bool = False) -> Key | None:
    """A comparable strength of three cards as a combination, or None if they make none.

    Keys compare with ``>``: first the type (tricon 3 > sequence 2 > point 1), then the card
    points, then the ranks one by one from the highest (A = 14 … 2 = 2; the ace of a low A-2-3
    counts 1, and that sequence's points 0, so that it is the lowest sequence).
    """
    if len(cards) != 3 or len(set(cards)) != 3 or not all(c in _BIT for c in cards):
        raise ValueError(f"a combination is exactly three different cards, not {list(cards)}")
    return _COMBINATIONS[ace_low].get(_BIT[cards[0]] | _BIT[cards[1]] | _BIT[cards[2]])


def combination_name(cards: Sequence[str], ace_low: bool = False) -> str | None:
    """``"tricon"``, ``"sequence"``, ``"point"`` or None."""
    key = evaluate(cards, ace_low)
    return None if key is None else _TYPE_NAME[key[0]]


def _combo(hand: tuple[str, ...], ace_low: bool) -> Key | None:
    """The combination of a three-card hand (None for four cards, during a return)."""
    if len(hand) != 3:
        return None
    return _COMBINATIONS[ace_low].get(_BIT[hand[0]] | _BIT[hand[1]] | _BIT[hand[2]])


def _holding_score(kept: Sequence[str], ace_low: bool) -> tuple[Key, int, int]:
    """How strong a holding is, for the time-out card of RULES.md §3.

    First the combination the kept cards make (only when three are kept), then the best
    two-card part among them, then the points kept.
    """
    parts = _TWO_CARD_PARTS[ace_low]
    if len(kept) == 3:
        a, b, c = (_BIT[x] for x in kept)
        combo = _COMBINATIONS[ace_low].get(a | b | c, _NO_COMBINATION)
        part = max(parts[a | b], parts[a | c], parts[b | c])
    else:
        combo = _NO_COMBINATION
        part = parts[_BIT[kept[0]] | _BIT[kept[1]]]
    return (combo, part, sum(_CARD_POINTS[x] for x in kept))


# --------------------------------------------------------------------------------------------
# State

TALON = -1  # the talon, as giver or taker of a card in the history

# Internal phases. Phase 1 (exchanges between players): SPEAK (a speaker offers or announces),
# ANSWER (the asked player gives back or announces), FINAL (phase 1 is over and the first seat
# holding a combination announces). Phase 2 (exchange with the banker): DRAW (the service deals
# the talon's top card), RETURN (that seat returns a card under the talon).
NEW, ANTES, SPEAK, ANSWER, FINAL, DRAW, RETURN = "new", "antes", "speak", "answer", "final", \
    "draw", "return"
VOIDING, ANNOUNCED, SETTLING, OVER = "voiding", "announced", "settling", "over"

_PUBLIC_PHASE = {
    NEW: "not_started", ANTES: "antes", SPEAK: "exchange", ANSWER: "exchange",
    FINAL: "exchange", DRAW: "talon", RETURN: "talon", VOIDING: "void",
    ANNOUNCED: "showdown", SETTLING: "showdown", OVER: "over",
}
_AWAITED_MOVE = {SPEAK: "offer", ANSWER: "give_back", FINAL: "announce", RETURN: "return"}


@dataclass(frozen=True, slots=True)
class Table:
    """What ``hand_started`` fixes for the whole hand."""

    n: int
    banker: int
    #: Speaking order: from the seat after the banker round to the banker.
    order: tuple[int, ...]
    options: tuple[tuple[str, Any], ...]
    ante: int
    compulsory: bool
    ace_low: bool
    max_turns: int | None
    chips_before: tuple[int, ...]
    pot_before: int


@dataclass(frozen=True, slots=True)
class Pass:
    """A card that went from one holder to another (or was offered), newest first."""

    turn: int
    #: offer, give_back, withdrawn (an offer the asked seat announced over), draw, return
    kind: str
    giver: int  # a seat, or TALON
    taker: int
    card: str
    earlier: Pass | None


@dataclass(frozen=True, slots=True)
class State:
    """A round after some events. Hands are kept in canonical deck order."""

    deck: tuple[str, ...]
    table: Table | None
    phase: str
    turn: int
    #: Index in the speaking order of the speaker (phase 1) or of the seat served (phase 2).
    step: int
    #: The seat the hand waits for (-1: nobody, a service event is due).
    actor: int
    #: The card offered by the speaker to the asked seat, until it is given back or withdrawn.
    offer: str | None
    hands: tuple[tuple[str, ...], ...]
    #: Top card first; returned cards go to the end (first in, first out).
    talon: tuple[str, ...]
    chips: tuple[int, ...]
    pot: int
    history: Pass | None
    winner: int | None
    combination: str | None


def initial_state(deck: Sequence[str]) -> State:
    deck = tuple(deck)
    if len(deck) != 52 or set(deck) != set(FULL_DECK):
        raise ValueError("Ma commère is dealt from a full 52-card deck")
    return State(deck=deck, table=None, phase=NEW, turn=0, step=0, actor=-1, offer=None,
                 hands=(), talon=(), chips=(), pot=0, history=None, winner=None,
                 combination=None)


def _sorted3(cards: Sequence[str]) -> tuple[str, ...]:
    return tuple(sorted(cards, key=_canonical))


def _deal(deck: tuple[str, ...], n: int, banker: int) -> tuple[tuple[tuple[str, ...], ...],
                                                               tuple[str, ...]]:
    """HAND_RECORD.md: three rounds of one card each from the seat after the banker, the banker
    receiving the last card of each round; the rest is the talon, ``deck[3n]`` on top."""
    hands: list[list[str]] = [[] for _ in range(n)]
    for i in range(3 * n):
        hands[(banker + 1 + i) % n].append(deck[i])
    return tuple(_sorted3(h) for h in hands), deck[3 * n:]


def _first_with_combination(hands: tuple[tuple[str, ...], ...], order: tuple[int, ...],
                            ace_low: bool) -> int:
    table = _COMBINATIONS[ace_low]
    for seat in order:
        a, b, c = hands[seat]
        if _BIT[a] | _BIT[b] | _BIT[c] in table:
            return seat
    return -1


# --------------------------------------------------------------------------------------------
# apply: fold one event into the state


def _started(state: State, data: Mapping[str, Any]) -> State:
    opts = normalise_options(data["options"])
    n = len(data["seats"])
    banker = int(data["dealer"])
    chips = tuple(int(data["chips_before"][str(s)]) for s in range(n))
    table = Table(
        n=n, banker=banker, order=tuple((banker + 1 + k) % n for k in range(n)),
        options=tuple(opts.items()), ante=opts["ante"], compulsory=opts["compulsory_announce"],
        ace_low=opts["ace_low_sequence"], max_turns=opts["max_turns"], chips_before=chips,
        pot_before=int(data["pot_before"]),
    )
    hands, talon = _deal(state.deck, n, banker)
    # With no ante nothing is paid, and the first speaker speaks at once.
    phase, actor = (ANTES, -1) if table.ante > 0 else (SPEAK, table.order[0])
    return State(state.deck, table, phase, 1, 0, actor, None, hands, talon, chips,
                 table.pot_before, None, None, None)


def _paid(s: State, data: Mapping[str, Any]) -> State:
    t = s.table
    assert t is not None
    amount = int(data["amount"])
    src, dst = data["from"], data["to"]
    chips = list(s.chips)
    pot = s.pot
    if src == "pot":
        pot -= amount
    else:
        chips[src] -= amount
    if dst == "pot":
        pot += amount
    else:
        chips[dst] += amount
    phase, actor = s.phase, s.actor
    # The antes are paid one per seat from the seat after the banker: the banker pays last, and
    # then the first speaker speaks.
    if phase == ANTES and src == t.banker and data["reason"] == "ante":
        phase, actor = SPEAK, t.order[0]
    return State(s.deck, t, phase, s.turn, s.step, actor, s.offer, s.hands, s.talon,
                 tuple(chips), pot, s.history, s.winner, s.combination)


def _offered(s: State, data: Mapping[str, Any]) -> State:
    t = s.table
    assert t is not None
    # The offered card stays in the offerer's hand until the asked seat gives one back.
    asked = (int(data["seat"]) + 1) % t.n
    return State(s.deck, t, ANSWER, s.turn, s.step, asked, data["card"], s.hands, s.talon,
                 s.chips, s.pot, s.history, s.winner, s.combination)


def _given_back(s: State, data: Mapping[str, Any]) -> State:
    t = s.table
    assert t is not None and s.offer is not None
    asked, back, offered = int(data["seat"]), data["card"], s.offer
    offerer = (asked - 1) % t.n
    # "The two cards change hands together."
    hands = list(s.hands)
    hands[offerer] = _sorted3([c for c in hands[offerer] if c != offered] + [back])
    hands[asked] = _sorted3([c for c in hands[asked] if c != back] + [offered])
    new_hands = tuple(hands)
    history = Pass(s.turn, "give_back", asked, offerer, back,
                   Pass(s.turn, "offer", offerer, asked, offered, s.history))
    step = s.step + 1
    if step < t.n:
        # The next speaker is the seat after the offerer: the asked seat, with his new hand.
        return State(s.deck, t, SPEAK, s.turn, step, t.order[step], None, new_hands, s.talon,
                     s.chips, s.pot, history, s.winner, s.combination)
    # Every player has spoken and nobody announced: "if a player holds a combination the round
    # ends as if the first such player in speaking order had announced".
    first = _first_with_combination(new_hands, t.order, t.ace_low)
    if first >= 0:
        phase, actor = FINAL, first
    elif t.max_turns is not None and s.turn >= t.max_turns:
        # "If phase 1 of turn number max_turns ends with no combination anywhere, the round is
        # void."
        phase, actor = VOIDING, -1
    else:
        # Phase 2: the banker deals the talon's top card to each player in turn.
        phase, actor = DRAW, -1
    return State(s.deck, t, phase, s.turn, 0, actor, None, new_hands, s.talon, s.chips, s.pot,
                 history, s.winner, s.combination)


def _drawn(s: State, data: Mapping[str, Any]) -> State:
    t = s.table
    assert t is not None
    seat, card = int(data["seat"]), data["card"]
    hands = list(s.hands)
    hands[seat] = tuple(sorted((*hands[seat], card), key=_canonical))
    history = Pass(s.turn, "draw", TALON, seat, card, s.history)
    return State(s.deck, t, RETURN, s.turn, s.step, seat, None, tuple(hands), s.talon[1:],
                 s.chips, s.pot, history, s.winner, s.combination)


def _returned(s: State, data: Mapping[str, Any]) -> State:
    t = s.table
    assert t is not None
    seat, card = int(data["seat"]), data["card"]
    hands = list(s.hands)
    hands[seat] = tuple(c for c in hands[seat] if c != card)
    history = Pass(s.turn, "return", seat, TALON, card, s.history)
    talon = (*s.talon, card)  # "which goes face down under the talon"
    if seat == t.banker:
        # "Then a new turn starts with phase 1."
        return State(s.deck, t, SPEAK, s.turn + 1, 0, t.order[0], None, tuple(hands), talon,
                     s.chips, s.pot, history, s.winner, s.combination)
    return State(s.deck, t, DRAW, s.turn, s.step + 1, -1, None, tuple(hands), talon, s.chips,
                 s.pot, history, s.winner, s.combination)


def _announced(s: State, data: Mapping[str, Any]) -> State:
    t = s.table
    assert t is not None
    history = s.history
    if s.offer is not None:
        # An announcement by the asked seat withdraws the offer: nothing changes hands.
        offerer = (int(data["seat"]) - 1) % t.n
        history = Pass(s.turn, "withdrawn", offerer, int(data["seat"]), s.offer, history)
    return State(s.deck, t, ANNOUNCED, s.turn, s.step, -1, None, s.hands, s.talon, s.chips,
                 s.pot, history, s.winner, s.combination)


def _shown(s: State, data: Mapping[str, Any]) -> State:
    winner = data.get("winner")
    return State(s.deck, s.table, SETTLING, s.turn, s.step, -1, None, s.hands, s.talon,
                 s.chips, s.pot, s.history, None if winner is None else int(winner),
                 data.get("combination"))


def _over(s: State, data: Mapping[str, Any]) -> State:
    return State(s.deck, s.table, OVER, s.turn, s.step, -1, None, s.hands, s.talon, s.chips,
                 s.pot, s.history, s.winner, s.combination)


_TITLE = "Ma commère"
_APPLY: Handlers[State] = {
    "hand_started": _started,
    "pay": _paid,
    "offer": _offered,
    "give_back": _given_back,
    "draw": _drawn,
    "return": _returned,
    "announce": _announced,
    "showdown": _shown,
    "void": _shown,
    "hand_over": _over,
}


def apply(state: State, event: Event) -> State:
    return apply_event(_APPLY, state, event, game=_TITLE)


def replay(deck: Sequence[str], events: Sequence[Event]) -> State:
    return fold(_APPLY, initial_state(deck), events, game=_TITLE)


# --------------------------------------------------------------------------------------------
# begin


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
    """``hand_started`` then the antes, one per seat from the seat after the banker."""
    if comet_payment_due is not None:
        raise ValueError("Ma commère has no comet_payment_due")
    initial_state(deck)  # a full 52-card deck
    n = len(seats)
    if not MIN_SEATS <= n <= MAX_SEATS:
        raise ValueError(f"Ma commère is for {MIN_SEATS} to {MAX_SEATS} players, not {n}")
    if not 0 <= dealer < n:
        raise ValueError(f"the banker {dealer} is not a seat")
    if set(chips_before) != {str(s) for s in range(n)}:
        raise ValueError("chips_before must name every seat")
    if pot_before < 0 or any(v < 0 for v in chips_before.values()):
        raise ValueError("chips cannot be negative")
    ante = normalise_options(options)["ante"]
    events = [Event("hand_started", BY_SERVICE, {
        "dealer": dealer,
        "seats": [dict(s) for s in seats],
        "options": dict(options),
        "chips_before": {str(s): chips_before[str(s)] for s in range(n)},
        "pot_before": pot_before,
        "commitment": commitment,
    })]
    # "Every player pays ante into the pot at the start of every round"; chips never go below
    # zero: who cannot pay in full pays what he has, the rest is recorded as short.
    if ante > 0:
        for k in range(n):
            seat = (dealer + 1 + k) % n
            paid = min(ante, chips_before[str(seat)])
            events.append(Event("pay", BY_SERVICE, {
                "from": seat, "to": "pot", "amount": paid, "reason": "ante", "short": ante - paid,
            }))
    return events


# --------------------------------------------------------------------------------------------
# Legal moves

ANNOUNCE = Move("announce")
_MOVES = {kind: {c: Move(kind, card=c) for c in FULL_DECK}
          for kind in ("offer", "give_back", "return")}


def _legal_for(s: State) -> list[Move]:
    """The legal moves of ``s.actor``."""
    t = s.table
    phase = s.phase
    if t is None or s.actor < 0:
        return []
    hand = s.hands[s.actor]
    if phase == RETURN:
        # "Each player, on receiving it, gives back one of his four cards (the new one allowed)."
        moves = _MOVES["return"]
        return [moves[c] for c in hand]
    if phase == FINAL:
        return [ANNOUNCE]
    # SPEAK or ANSWER: a player holding a combination announces it; with compulsory_announce
    # false he may instead exchange.
    holds = _combo(hand, t.ace_low) is not None
    if holds and t.compulsory:
        return [ANNOUNCE]
    # A speaker offers one of his three cards; the asked seat gives back one of the three cards
    # he held before the offer (the offered card is not in his hand yet).
    moves = _MOVES["offer" if phase == SPEAK else "give_back"]
    exchange = [moves[c] for c in hand]
    return [ANNOUNCE, *exchange] if holds else exchange


def legal_moves(state: State) -> dict[int, list[Move]]:
    if state.actor < 0:
        return {}
    return {state.actor: _legal_for(state)}


def to_act(state: State) -> list[int]:
    return [state.actor] if state.actor >= 0 else []


def is_over(state: State) -> bool:
    return state.phase == OVER


# --------------------------------------------------------------------------------------------
# decide


def _hands_field(hands: tuple[tuple[str, ...], ...]) -> dict[str, list[str]]:
    return {str(s): list(h) for s, h in enumerate(hands)}  # hands are kept in canonical order


def _result(t: Table, chips: Sequence[int], winner: int | None,
            combination: str | None) -> dict[str, Any]:
    # net = chips after − chips before, antes included.
    return {
        "winner": winner,
        "net": {str(s): chips[s] - t.chips_before[s] for s in range(t.n)},
        "combination": combination,
    }


def _showdown(s: State, hands: tuple[tuple[str, ...], ...]) -> list[Event]:
    """Every hand is shown; the strongest combination wins; the pot and the bonus are paid."""
    t = s.table
    assert t is not None
    table = _COMBINATIONS[t.ace_low]
    winner, best = -1, _NO_COMBINATION
    # "The strongest combination on the table wins the round, announcer or not; a player without
    # a combination cannot win." Walking the speaking order with a strict comparison gives an
    # equal combination to "the player nearest the banker's next seat in speaking order".
    for seat in t.order:
        a, b, c = hands[seat]
        key = table.get(_BIT[a] | _BIT[b] | _BIT[c])
        if key is not None and key > best:
            winner, best = seat, key
    assert winner >= 0, "an announcement always shows a combination"
    name = _TYPE_NAME[best[0]]
    events = [Event("showdown", BY_SERVICE, {
        "hands": _hands_field(hands), "winner": winner, "combination": name,
    })]
    chips = list(s.chips)
    if s.pot > 0:  # "The winner takes the pot"
        events.append(Event("pay", BY_SERVICE, {
            "from": "pot", "to": winner, "amount": s.pot, "reason": "pot", "short": 0,
        }))
        chips[winner] += s.pot
    # "Tricon: … plus 2 chips from every other player. Séquence: … plus 1 chip." One payment
    # per other seat starting with the seat after the winner; who cannot pay pays what he has.
    due = 2 if best[0] == TRICON else 1 if best[0] == SEQUENCE else 0
    if due:
        for k in range(1, t.n):
            seat = (winner + k) % t.n
            paid = min(due, chips[seat])
            chips[seat] -= paid
            chips[winner] += paid
            events.append(Event("pay", BY_SERVICE, {
                "from": seat, "to": winner, "amount": paid, "reason": name, "short": due - paid,
            }))
    events.append(Event("hand_over", BY_SERVICE, {"result": _result(t, chips, winner, name)}))
    return events


def _refuse(s: State, seat: int, move: Move) -> None:
    """Raise the RuleError that names the rule the move breaks, if it breaks one."""
    t = s.table
    if t is None or s.phase in (NEW, ANTES):
        raise NotYourTurn("the round has not started: the antes are being paid", rule="turn")
    if s.phase in (OVER, SETTLING, ANNOUNCED, VOIDING):
        raise HandOver("the round is over", rule="hand_over")
    if s.actor < 0:
        raise NotYourTurn("nobody may move now: the banker is dealing from the talon")
    if seat != s.actor:
        raise NotYourTurn(f"it is not your turn: seat {s.actor} must "
                          f"{_AWAITED_TEXT[s.phase]}")
    hand = s.hands[seat]
    kind = move.type
    holds = _combo(hand, t.ace_low) if s.phase in (SPEAK, ANSWER) else None
    if kind == "announce":
        if s.phase == RETURN:
            raise IllegalMove("nobody announces during phase 2: return a card under the talon; "
                              "a combination is announced in the next phase 1", rule="announce")
        if s.phase != FINAL and holds is None:
            raise IllegalMove("you can only announce a combination you hold", rule="announce")
        return
    if kind not in _MOVES:
        raise IllegalMove(f"there is no move {kind!r} in Ma commère", rule="move")
    if s.phase == FINAL:
        raise IllegalMove("you must announce: every player has spoken and you are the first in "
                          "speaking order who holds a combination", rule="compulsory_announce")
    if holds is not None and t.compulsory:
        raise IllegalMove(f"you must announce: you hold a {_TYPE_NAME[holds[0]]} and announcing "
                          f"is compulsory", rule="compulsory_announce")
    expected = _AWAITED_MOVE[s.phase]
    if kind != expected:
        raise IllegalMove(_WRONG_KIND[s.phase], rule=expected)
    card = move.card
    if card is None:
        raise IllegalMove(f"name the card to {_VERB[kind]}", rule="card")
    if kind == "give_back" and card == s.offer:
        raise IllegalMove("you can only give back one of the three cards you held before the "
                          "offer", rule="give_back")
    if card not in hand:
        raise IllegalMove(f"you do not hold {card}", rule="card")


_VERB = {"offer": "offer", "give_back": "give back", "return": "return under the talon"}
_AWAITED_TEXT = {
    SPEAK: "speak (offer a card or announce)",
    ANSWER: "give back a card",
    FINAL: "announce",
    RETURN: "return a card under the talon",
}
_WRONG_KIND = {
    SPEAK: "it is your turn to speak: offer one of your cards to the next player "
           "(or announce a combination you hold)",
    ANSWER: "you were offered a card: give back one of the three cards you held before the offer",
    RETURN: "you received the talon's top card: return one of your four cards under the talon",
}


def decide(state: State, seat: int, move: Move, by: str = BY_PLAYER) -> list[Event]:
    if by not in MOVE_BYS:
        raise ValueError(f"a move is made by one of {', '.join(MOVE_BYS)}, not {by!r}")
    _refuse(state, seat, move)
    if by == BY_FORCED and len(_legal_for(state)) != 1:
        raise IllegalMove(f"{move} is not forced: seat {seat} has a choice", rule="forced")
    if by == BY_TIMEOUT and move != default_move(state, seat):
        raise IllegalMove(f"{move} is not the time-out move of seat {seat}", rule="timeout")
    t = state.table
    assert t is not None
    kind = move.type
    if kind == "announce":
        # "When someone announces, every hand is shown" (an offer pending is withdrawn).
        return [Event("announce", by, {"seat": seat}), *_showdown(state, state.hands)]
    card = move.card
    if kind == "offer":
        return [Event("offer", by, {"seat": seat, "card": card})]
    if kind == "give_back":
        events = [Event("give_back", by, {"seat": seat, "card": card})]
        if state.step < t.n - 1:
            return events
        # The banker's exchange ends phase 1: see what the hands are after it.
        after = _given_back(state, {"seat": seat, "card": card})
        if after.phase == VOIDING:
            events.append(Event("void", BY_SERVICE, {"hands": _hands_field(after.hands)}))
            events.append(Event("hand_over", BY_SERVICE,
                                {"result": _result(t, after.chips, None, None)}))
        elif after.phase == DRAW:
            events.append(_draw(t.order[0], state.talon[0]))
        return events
    # return: the card goes under the talon; the next seat receives the top card, and after the
    # banker's return a new turn starts (no event).
    events = [Event("return", by, {"seat": seat, "card": card})]
    if seat != t.banker:
        events.append(_draw((seat + 1) % t.n, state.talon[0]))
    return events


def _draw(seat: int, card: str) -> Event:
    return Event("draw", BY_SERVICE, {"seat": seat, "card": card})


# --------------------------------------------------------------------------------------------
# Default (time-out) move and the heuristic bot


def _give_choices(s: State, seat: int) -> list[tuple[str, tuple[Key, int, int]]]:
    """Each card the seat may give now, with the strength of what he holds once it has left."""
    t = s.table
    assert t is not None
    hand = s.hands[seat]
    extra: tuple[str, ...] = (s.offer,) if s.phase == ANSWER and s.offer is not None else ()
    return [(c, _holding_score([x for x in hand if x != c] + list(extra), t.ace_low))
            for c in hand]


def _best_cards(s: State, seat: int) -> list[str]:
    """The cards whose loss leaves the strongest holding (all of them if several are equal)."""
    choices = _give_choices(s, seat)
    best = max(score for _, score in choices)
    return [c for c, score in choices if score == best]


def default_move(state: State, seat: int) -> Move:
    """RULES.md §3: announce when announcing is allowed; otherwise the card whose loss leaves
    the strongest holding, the lowest such card if several are equal."""
    legal = _legal_for(state) if seat == state.actor else []
    if not legal:
        raise NotYourTurn(f"seat {seat} has no decision to make")
    if legal[0] is ANNOUNCE:
        return ANNOUNCE
    card = min(_best_cards(state, seat), key=_LOWNESS.__getitem__)
    return _MOVES[legal[0].type][card]


def heuristic_move(
    state: State, seat: int, legal: list[Move], required: bool, rng: random.Random
) -> Move | None:
    """A sensible player: announce whenever he may; otherwise give away the card that least
    helps toward a combination (the time-out ranking), a random one of several equal cards."""
    if not legal:
        return None
    if ANNOUNCE in legal:
        return ANNOUNCE
    cards = _best_cards(state, seat)
    card = cards[0] if len(cards) == 1 else rng.choice(cards)
    return _MOVES[legal[0].type][card]


# --------------------------------------------------------------------------------------------
# What a seat sees, the result, and moves in events


def result(state: State) -> dict[str, Any] | None:
    if state.phase != OVER or state.table is None:
        return None
    return _result(state.table, state.chips, state.winner, state.combination)


def _passes(state: State, seat: int | None, reveal: bool) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    node = state.history
    while node is not None:
        entry: dict[str, Any] = {
            "turn": node.turn, "kind": node.kind,
            "from": "talon" if node.giver == TALON else node.giver,
            "to": "talon" if node.taker == TALON else node.taker,
            # "A player sees … the cards passed to or by him": the rest is face down.
            "card": node.card if reveal or seat in (node.giver, node.taker) else None,
        }
        out.append(entry)
        node = node.earlier
    out.reverse()
    return out


def view(state: State, seat: int | None) -> dict[str, Any]:
    """What ``seat`` may see (None: a spectator). Cards are listed in canonical deck order."""
    t = state.table
    if t is None:
        return {"game": NAME, "phase": _PUBLIC_PHASE[NEW]}
    over = state.phase == OVER
    # The hands are shown at the showdown or when the round is void.
    shown = state.phase in (SETTLING, OVER)
    offer = None
    if state.offer is not None:
        offerer = t.order[state.step]
        asked = state.actor
        offer = {"from": offerer, "to": asked,
                 "card": state.offer if seat in (offerer, asked) else None}
    legal = _legal_for(state) if seat is not None and seat == state.actor else []
    out: dict[str, Any] = {
        "game": NAME,
        "seat": seat,
        "banker": t.banker,
        "speaking_order": list(t.order),
        "options": dict(t.options),
        "turn": state.turn,
        "phase": _PUBLIC_PHASE[state.phase],
        "to_act": to_act(state),
        "awaiting": ({"seat": state.actor, "move": _AWAITED_MOVE[state.phase]}
                     if state.actor >= 0 else None),
        "legal_moves": [m.to_dict() for m in legal],
        "pot": state.pot,
        "chips": {str(s): c for s, c in enumerate(state.chips)},
        "talon": len(state.talon),
        "hand_sizes": {str(s): len(h) for s, h in enumerate(state.hands)},
        "hand": list(state.hands[seat]) if seat is not None else None,
        "offer": offer,
        "passes": _passes(state, seat, over),
        "hands": _hands_field(state.hands) if shown else None,
        "winner": state.winner,
        "combination": state.combination,
        "result": result(state),
    }
    return out


def move_of(event: Event) -> tuple[int, Move] | None:
    if event.type == "announce":
        return int(event.data["seat"]), ANNOUNCE
    if event.type in _MOVES:
        card = event.data.get("card")
        return int(event.data["seat"]), Move(event.type, card=card if isinstance(card, str)
                                              else None)
    return None


# --------------------------------------------------------------------------------------------
# A state a seat cannot tell from the real one (the ISMCTS bot's determinisations)

_PHASE_OF_MOVE = {"offer": SPEAK, "give_back": ANSWER, "announce": FINAL, "return": RETURN}


def _talon_slot(k: int) -> int:
    """Places a card may be: a seat (0..n-1) or a place in the talon, numbered -1, -2, …"""
    return -1 - k


def sample_state(
    view: Mapping[str, Any], history: Sequence[Mapping[str, Any]], rng: random.Random
) -> State:
    """A round that ``view``'s seat cannot tell from the real one, the cards he cannot see
    dealt at random.

    What the seat knows is kept: his own hand, the cards passed to or by him, how many cards
    each hand and the talon hold, and the order of the talon as far as he saw it (a card he
    returned lies under the cards returned before it). A card he saw leave him may since have
    gone on, hidden, with any later pass from where it might be; it is placed among those
    places. Every other card goes uniformly at random to what is left of the hands and the
    talon. Used by the ISMCTS bot, before any move of the round's first turn or after.
    """
    me = int(view["seat"])
    started = next(e for e in history if e["type"] == "hand_started")
    table = replay(FULL_DECK, [Event.from_dict({**started, "by": BY_SERVICE})]).table
    assert table is not None
    n = table.n
    mine = list(view["hand"])
    talon = [_talon_slot(k) for k in range(52 - 3 * n)]  # top first
    placed = len(talon)
    # The places each card that the seat saw leave his hand may be now.
    where: dict[str, set[int]] = {}

    def spread(frm: int, to: int) -> None:
        for places in where.values():
            if frm in places:
                places.add(to)

    passes = list(view["passes"])
    i = 0
    while i < len(passes):
        p = passes[i]
        kind, frm, to = p["kind"], p["from"], p["to"]
        if kind == "offer" and i + 1 < len(passes) and passes[i + 1]["kind"] == "give_back":
            back = passes[i + 1]
            i += 2
            if me == frm:
                where[p["card"]] = {to}
                where.pop(back["card"], None)
            elif me == to:
                where[back["card"]] = {frm}
                where.pop(p["card"], None)
            else:  # the two cards change hands together, unseen
                at_giver = [c for c, places in where.items() if frm in places]
                spread(to, frm)
                for c in at_giver:
                    where[c].add(to)
            continue
        i += 1
        if kind == "draw":
            slot = talon.pop(0)
            if to == me:
                where.pop(p["card"], None)
            else:
                for places in where.values():
                    if slot in places:
                        places.discard(slot)
                        places.add(to)
        elif kind == "return":
            slot = _talon_slot(placed)
            placed += 1
            talon.append(slot)
            if frm == me:
                where[p["card"]] = {slot}
            else:
                spread(frm, slot)
    awaiting = view["awaiting"]
    phase = _PHASE_OF_MOVE[awaiting["move"]]
    actor = int(awaiting["seat"])
    offer = view.get("offer")
    if offer is not None and offer["card"] is not None and offer["from"] != me:
        where[offer["card"]] = {int(offer["from"])}
    for card in mine:
        where.pop(card, None)

    capacity = {s: int(view["hand_sizes"][str(s)]) for s in range(n) if s != me}
    capacity.update({slot: 1 for slot in talon})
    tracked = sorted(where, key=lambda c: (len(where[c]), _canonical(c)))
    place: dict[str, int] = {}
    for _attempt in range(20):
        room = dict(capacity)
        place.clear()
        for card in tracked:
            slots = [loc for loc in sorted(where[card]) if loc in room
                     for _ in range(room[loc])]
            if not slots:
                break
            loc = rng.choice(slots)
            place[card] = loc
            room[loc] -= 1
            if not room[loc]:
                del room[loc]
        else:
            break
    else:  # the places could not all be honoured: what the seat saw leave him goes anywhere
        place.clear()
    left = dict(capacity)
    for loc in place.values():
        left[loc] -= 1
    rest = [c for c in FULL_DECK if c not in place and c not in mine]
    rng.shuffle(rest)
    hands: list[list[str]] = [[] for _ in range(n)]
    hands[me] = mine
    in_talon: dict[int, str] = {}
    for card, loc in place.items():
        if loc >= 0:
            hands[loc].append(card)
        else:
            in_talon[loc] = card
    k = 0
    for loc in sorted(left, key=lambda x: (x < 0, abs(x))):
        for _ in range(left[loc]):
            if loc >= 0:
                hands[loc].append(rest[k])
            else:
                in_talon[loc] = rest[k]
            k += 1
    offered = None
    step = table.order.index(actor)
    if phase == ANSWER:
        assert offer is not None
        offerer = int(offer["from"])
        step = table.order.index(offerer)
        # The asked seat sees the card; a sample for another seat takes one of the offerer's.
        offered = offer["card"] or rng.choice(sorted(hands[offerer], key=_canonical))
    return State(
        deck=tuple(FULL_DECK), table=table, phase=phase, turn=int(view["turn"]),
        step=0 if phase == FINAL else step, actor=actor, offer=offered,
        hands=tuple(tuple(sorted(h, key=_canonical)) for h in hands),
        talon=tuple(in_talon[slot] for slot in talon),
        chips=tuple(int(view["chips"][str(s)]) for s in range(n)), pot=int(view["pot"]),
        history=None, winner=None, combination=None,
    )
