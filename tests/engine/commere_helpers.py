"""Build Ma commère situations: the hands you want → a deck that deals them → a round to play."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from games.engine import commere
from games.engine.base import BY_PLAYER, Event, Move
from games.engine.cards import FULL_DECK

COMMITMENT = "0" * 64


def deck_for(hands: Sequence[Sequence[str]], banker: int, talon: Sequence[str] = ()) -> list[str]:
    """The deck order that deals ``hands[seat]`` to each seat (HAND_RECORD.md: three rounds of
    one card, from the seat after the banker, the banker last), then ``talon`` on top of the
    talon, then every other card in canonical order."""
    n = len(hands)
    used = [c for h in hands for c in h] + list(talon)
    assert all(len(h) == 3 for h in hands), "three cards each"
    assert len(set(used)) == len(used), f"a card is dealt twice: {used}"
    deck = [""] * (3 * n)
    for r in range(3):
        for k in range(n):
            deck[r * n + k] = hands[(banker + 1 + k) % n][r]
    rest = [c for c in FULL_DECK if c not in set(used)]
    return deck + list(talon) + rest


def offer(card: str) -> Move:
    return Move("offer", card=card)


def give_back(card: str) -> Move:
    return Move("give_back", card=card)


def ret(card: str) -> Move:
    return Move("return", card=card)


ANNOUNCE = Move("announce")


class Round:
    """A round being played in a test: the state, and every event so far."""

    def __init__(
        self,
        hands: Sequence[Sequence[str]],
        *,
        banker: int = 3,
        talon: Sequence[str] = (),
        options: Mapping[str, Any] | None = None,
        chips: int | Sequence[int] = 20,
        pot_before: int = 0,
    ) -> None:
        n = len(hands)
        self.deck = deck_for(hands, banker, talon)
        wallet = [chips] * n if isinstance(chips, int) else list(chips)
        self.events: list[Event] = commere.begin(
            deck=self.deck, dealer=banker,
            seats=[{"seat": s, "player": f"p{s}"} for s in range(n)],
            options=commere.normalise_options(options),
            chips_before={str(s): wallet[s] for s in range(n)},
            pot_before=pot_before, commitment=COMMITMENT,
        )
        self.state = commere.replay(self.deck, self.events)

    def play(self, seat: int, move: Move, by: str = BY_PLAYER) -> list[Event]:
        """Decide the move, apply what it causes, and return those events."""
        new = commere.decide(self.state, seat, move, by)
        for event in new:
            self.state = commere.apply(self.state, event)
        self.events.extend(new)
        return new

    def exchange(self, offerer: int, card: str, back: str) -> list[Event]:
        """One phase-1 exchange: ``offerer`` offers ``card``, the next seat gives ``back``."""
        self.play(offerer, offer(card))
        return self.play((offerer + 1) % len(self.state.hands), give_back(back))

    def hand(self, seat: int) -> list[str]:
        return sorted(self.state.hands[seat])

    def legal(self) -> dict[int, list[Move]]:
        return commere.legal_moves(self.state)

    def types(self, events: Sequence[Event] | None = None) -> list[str]:
        return [e.type for e in (self.events if events is None else events)]

    def pays(self, reason: str | None = None) -> list[dict[str, Any]]:
        return [e.data for e in self.events
                if e.type == "pay" and (reason is None or e.data["reason"] == reason)]
