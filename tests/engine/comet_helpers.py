"""Build Comet situations: the hands you want → a deck that deals them → a deal to play."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from games.engine import comet
from games.engine.base import BY_PLAYER, Event, Move
from games.engine.cards import RANKS
from games.engine.deal import canonical_deck

COMMITMENT = "0" * 64

COMET = Move("comet")
KEEP = Move("keep_comet")


def play(card: str) -> Move:
    return Move("play", card=card)


def open_(suit: str, card: str | None = None) -> Move:
    return Move("open", suit=suit, card=card)


def cards(spec: str) -> list[str]:
    """``"AC-KC 9D 5H"`` → the cards, a range running up one suit (``AC-KC`` is the 13 clubs)."""
    out: list[str] = []
    for word in spec.split():
        if "-" in word:
            low, high = word.split("-")
            assert low[1] == high[1], f"a range stays in one suit: {word}"
            ranks = RANKS[RANKS.index(low[0]) : RANKS.index(high[0]) + 1]
            out.extend(r + low[1] for r in ranks if r + low[1] != "8D")
        else:
            out.append(word)
    return out


def deal_sizes(n: int, dealer: int) -> dict[int, int]:
    """How many cards each seat gets: all 51, one at a time from the seat after the dealer."""
    sizes = dict.fromkeys(range(n), 0)
    for i in range(51):
        sizes[(dealer + 1 + i) % n] += 1
    return sizes


def deck_for(n: int, dealer: int, hands: Mapping[int, str | Iterable[str]]) -> list[str]:
    """The deck order that deals exactly ``hands[seat]`` to every seat given; the other cards
    go, in canonical order, to the seats not given, in seat order."""
    sizes = deal_sizes(n, dealer)
    wanted = {s: cards(h) if isinstance(h, str) else list(h) for s, h in hands.items()}
    given = [c for h in wanted.values() for c in h]
    assert len(set(given)) == len(given), "a card is dealt twice"
    for seat, h in wanted.items():
        assert len(h) == sizes[seat], f"seat {seat} is dealt {sizes[seat]} cards, not {len(h)}"
    rest = [c for c in canonical_deck("comet") if c not in set(given)]
    for seat in range(n):
        if seat not in wanted:
            wanted[seat], rest = rest[: sizes[seat]], rest[sizes[seat] :]
    assert not rest
    queues = {s: list(h) for s, h in wanted.items()}
    return [queues[(dealer + 1 + i) % n].pop(0) for i in range(51)]


class Deal:
    """A deal being played in a test: the state and every event so far."""

    def __init__(
        self,
        hands: Mapping[int, str | Iterable[str]],
        *,
        n: int = 3,
        dealer: int | None = None,
        options: Mapping[str, Any] | None = None,
        chips: Iterable[int] | None = None,
        pot_before: int = 0,
        comet_payment_due: int | None = None,
    ) -> None:
        self.n = n
        self.dealer = n - 1 if dealer is None else dealer
        self.deck = deck_for(n, self.dealer, hands)
        chip_list = list(chips) if chips is not None else [20] * n
        self.options = comet.normalise_options(options)
        self.events: list[Event] = comet.begin(
            deck=self.deck,
            dealer=self.dealer,
            seats=[{"seat": i, "player": f"p{i}"} for i in range(n)],
            options=self.options,
            chips_before={str(i): c for i, c in enumerate(chip_list)},
            pot_before=pot_before,
            commitment=COMMITMENT,
            comet_payment_due=comet_payment_due,
        )
        self.state = comet.replay(self.deck, self.events)

    def move(self, seat: int, move: Move, by: str = BY_PLAYER) -> list[Event]:
        """Play one move; return the events it made."""
        new = comet.decide(self.state, seat, move, by)
        for event in new:
            self.state = comet.apply(self.state, event)
        self.events.extend(new)
        return new

    def forced(self) -> list[Event]:
        """Play every forced move (the waited seat's only legal move) until a decision is due.

        The Comet holder's optional chance at a waiting card is passed over, as when his
        ``comet_window`` runs out.
        """
        made: list[Event] = []
        while not comet.is_over(self.state):
            waiting = comet.to_act(self.state)
            moves = comet.legal_moves(self.state)[waiting[0]]
            if len(moves) != 1:
                break
            made += self.move(waiting[0], moves[0], "forced")
        return made

    def hand(self, seat: int) -> list[str]:
        return comet.view(self.state, seat)["hand"]  # type: ignore[no-any-return]

    @property
    def chips(self) -> list[int]:
        return list(self.state.chips)


def types(events: Iterable[Event]) -> list[str]:
    return [e.type for e in events]


def pays(events: Iterable[Event]) -> list[tuple[Any, Any, int, str, int]]:
    """The pay events as ``(from, to, amount, reason, short)``."""
    return [
        (e.data["from"], e.data["to"], e.data["amount"], e.data["reason"], e.data["short"])
        for e in events
        if e.type == "pay"
    ]


def moves_only(events: Iterable[Event]) -> list[tuple[str, dict[str, Any]]]:
    """The events other than payments, as ``(type, data)``."""
    return [(e.type, e.data) for e in events if e.type != "pay"]
