"""Version 2 of the hand record: the players' seed shares (HAND_RECORD.md, "Version 2").

The service commits to its seed at ``hand_started``; each seated person then sends a share of
32 random bytes, and the deck is shuffled under a key that mixes the seed with the shares of the
seats that sent one in time (the ``deal`` event's contributors). Neither the service nor a
player can choose the deck: the service did not know the shares when it committed, and the
players do not know the seed until the hand is over.

``SharedDeal`` is a game (``protocol.Game``) for a version-2 hand: until ``deal`` its state is a
``Shuffling`` (nobody holds a card, nobody may move); at ``deal`` it derives the deck and hands
the game's own engine the held ``hand_started``, so everything after the deal is the game's
version-1 play, antes first.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .base import BY_PLAYER, BY_SERVICE, Event, Move, RuleError
from .deal import RandomStream, canonical_deck, shuffled
from .protocol import Game
from .seals import deck_key_v3

FORMAT_V2 = "academie.hand/2"
SHARE = "share"
DEAL = "deal"
_HEX64 = re.compile(r"[0-9a-f]{64}")


def is_share(value: Any) -> bool:
    """32 bytes as 64 lowercase hex digits, as a share must be written."""
    return isinstance(value, str) and _HEX64.fullmatch(value) is not None


def deck_key(seed: str, shares: Mapping[int, str]) -> bytes:
    """K = sha256(seed || c_1 || c_2 || …), each c the contributor's seat as one byte then its
    32 share bytes, in ascending seat order (no contributor: sha256(seed))."""
    material = bytes.fromhex(seed)
    for seat in sorted(shares):
        material += seat.to_bytes(1, "big") + bytes.fromhex(shares[seat])
    return hashlib.sha256(material).digest()


def deck_v2(game: str, seed: str, shares: Mapping[int, str]) -> list[str]:
    """The deck shuffled by the stream sha256(K || i), read as in version 1."""
    return shuffled(game, RandomStream(deck_key(seed, shares).hex()))


def deck_v3(game: str, seed: str, shares: Mapping[int, str]) -> list[str]:
    """Version 3's deck: the stream sha256(K || i) under the keyed K (HAND_RECORD.md,
    "Version 3"), so that no deck follows from the commitment alone."""
    return shuffled(game, RandomStream(deck_key_v3(seed, shares).hex()))


def shared_deck(version: int, game: str, seed: str, shares: Mapping[int, str]) -> list[str]:
    """The deck of a version-2 or version-3 hand."""
    return (deck_v3 if version == 3 else deck_v2)(game, seed, shares)


def first_dealer_v2(seed: str, n_seats: int) -> int:
    """A partie's first dealer: the first draw of the seed's own stream, public before any
    share is sent."""
    return RandomStream(seed).uniform(n_seats)


def share_event(seat: int, share: str) -> Event:
    return Event(SHARE, BY_PLAYER, {"seat": seat, "share": share})


@dataclass(frozen=True, slots=True)
class Shuffling:
    """A version-2 hand before its deal: the held ``hand_started`` and the shares sent so far,
    by seat, in the order they came."""

    started: Event | None = None
    shares: tuple[tuple[int, str], ...] = ()

    @property
    def sent(self) -> dict[int, str]:
        return dict(self.shares)


class NotDealt(RuleError):
    rule = "deal"


class SharedDeal:
    """A game's engine for version-2 and version-3 hands, dealt from ``seed`` and the
    contributors' shares under the version's deck key.

    It holds the seed, as the service's state of a version-1 hand holds the deck: it never
    leaves the service before the hand is over, and ``view`` shows nothing of it."""

    def __init__(self, game: Game, seed: str, version: int = 2) -> None:
        self.game = game
        self.seed = seed
        self.version = version

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, SharedDeal)
                and (self.game, self.seed, self.version) == (other.game, other.seed,
                                                             other.version))

    def __hash__(self) -> int:
        return hash((SharedDeal, self.game, self.seed, self.version))

    def __getattr__(self, name: str) -> Any:
        # Constants and the game's own extras (comet_played, heuristic_move, …) are the game's.
        return getattr(self.game, name)

    # -- states ------------------------------------------------------------------------------

    def initial_state(self, deck: Sequence[str] = ()) -> Any:
        return Shuffling()

    def apply(self, state: Any, event: Event) -> Any:
        if not isinstance(state, Shuffling):
            return self.game.apply(state, event)
        if event.type == "hand_started" and state.started is None:
            return replace(state, started=event)
        if event.type == SHARE and state.started is not None:
            return replace(state, shares=state.shares + ((int(event.data["seat"]),
                                                           str(event.data["share"])),))
        if event.type == DEAL and state.started is not None:
            sent = state.sent
            deck = shared_deck(self.version, self.game.NAME, self.seed,
                               {int(s): sent[int(s)] for s in event.data["contributors"]})
            return self.game.apply(self.game.initial_state(deck), state.started)
        raise ValueError(f"a version-2 hand has no {event.type!r} event before its deal")

    def replay(self, deck: Sequence[str], events: Sequence[Event]) -> Any:
        state = self.initial_state(deck)
        for event in events:
            state = self.apply(state, event)
        return state

    def start(self, **header: Any) -> Event:
        """``hand_started`` of a hand not yet dealt: ``begin``'s arguments but the deck (the
        event names no card, so any deck gives the same)."""
        return self.game.begin(deck=canonical_deck(self.game.NAME), **header)[0]

    def deal(self, state: Shuffling) -> list[Event]:
        """The ``deal`` event, with every seat that sent a share as a contributor, and the
        antes that follow it."""
        if state.started is None:
            raise ValueError("the hand has not started")
        contributors = sorted(state.sent)
        deck = shared_deck(self.version, self.game.NAME, self.seed, state.sent)
        data = state.started.data
        opening = self.game.begin(
            deck=deck, dealer=data["dealer"], seats=data["seats"], options=data["options"],
            chips_before=data["chips_before"], pot_before=data["pot_before"],
            commitment=data["commitment"],
            **({"comet_payment_due": data["comet_payment_due"]}
               if "comet_payment_due" in data else {}),
        )
        return [Event(DEAL, BY_SERVICE, {"contributors": contributors}), *opening[1:]]

    # -- questions ---------------------------------------------------------------------------

    def legal_moves(self, state: Any) -> dict[int, list[Move]]:
        return {} if isinstance(state, Shuffling) else self.game.legal_moves(state)

    def to_act(self, state: Any) -> list[int]:
        return [] if isinstance(state, Shuffling) else self.game.to_act(state)

    def is_over(self, state: Any) -> bool:
        return False if isinstance(state, Shuffling) else self.game.is_over(state)

    def result(self, state: Any) -> dict[str, Any] | None:
        return None if isinstance(state, Shuffling) else self.game.result(state)

    def decide(self, state: Any, seat: int, move: Move, by: str = BY_PLAYER) -> list[Event]:
        if isinstance(state, Shuffling):
            raise NotDealt("the cards are not dealt yet: the hand waits for the players' "
                           "shares of randomness")
        return self.game.decide(state, seat, move, by)

    def default_move(self, state: Any, seat: int) -> Move:
        if isinstance(state, Shuffling):
            raise NotDealt("the cards are not dealt yet")
        return self.game.default_move(state, seat)

    def view(self, state: Any, seat: int | None) -> dict[str, Any]:
        if not isinstance(state, Shuffling):
            return self.game.view(state, seat)
        out: dict[str, Any] = {"game": self.game.NAME, "phase": "shuffling", "to_act": [],
                               "shares": sorted(state.sent), "seat": seat}
        if state.started is not None:
            data = state.started.data
            out.update({"dealer": data["dealer"], "seats": len(data["seats"]),
                        "chips": dict(data["chips_before"]), "pot": data["pot_before"],
                        "hand": [] if seat is not None else None})
        return out

    def move_of(self, event: Event) -> tuple[int, Move] | None:
        return self.game.move_of(event)


def is_shuffling(state: Any) -> bool:
    return isinstance(state, Shuffling)
