"""The interface every game module (``comet``, ``commere``) provides.

The service, the verifier, the simulator and the bots only ever talk to a game through these
functions, so that both games are replayed, verified and simulated by the same code.

State is an immutable (frozen dataclass, tuples) value. Events are ``base.Event``; moves are
``base.Move``. Seats are ints 0..n-1 in playing order.

* ``begin(...)`` returns the opening events of a hand: ``hand_started`` then the ante ``pay``
  events, one per seat starting with the seat after the dealer (RULES.md, HAND_RECORD.md).
* ``initial_state(deck)`` is the state before ``hand_started``; ``apply`` folds events into it;
  ``replay(deck, events)`` does both.
* ``legal_moves(state)`` maps every seat that may act now to its legal moves.
  ``to_act(state)`` lists the seats whose decision the hand is waiting for (each has a deadline
  and a time-out default); a seat may appear in ``legal_moves`` without being waited for (the
  holder of the Comet may play it instead of a waiting next card).
* ``decide(state, seat, move, by)`` returns the move's event followed by every derived event
  (payments, a run's stop, draws from the talon, the showdown, ``hand_over``); it raises a
  ``base.RuleError`` whose message tells the player which rule forbids the move.
  ``by`` is ``player``, ``forced`` (only legal move) or ``timeout`` (the default move).
* ``default_move(state, seat)``: the time-out move of RULES.md §3 for a seat in ``to_act``.
* ``view(state, seat)``: what that seat may see (``None``: a spectator), JSON-ready.
* ``move_of(event)``: ``(seat, Move)`` if the event is a player's move, else ``None``.
* ``heuristic_move(state, seat, legal, required, rng)``: the sensible bot's choice; with
  ``required`` false it may return ``None`` (decline an optional move).
* ``sample_state(view, history, rng)``: a state that the seat of ``view`` cannot tell from the
  real one, given the hand's events as that seat sees them, the cards it cannot see dealt at
  random (the ISMCTS bot's determinisations).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from .base import Event, Move


class Game(Protocol):
    NAME: str
    MIN_SEATS: int
    MAX_SEATS: int
    DEFAULT_OPTIONS: Mapping[str, Any]

    def normalise_options(self, options: Mapping[str, Any] | None) -> dict[str, Any]: ...

    def begin(
        self,
        *,
        deck: Sequence[str],
        dealer: int,
        seats: Sequence[Mapping[str, Any]],
        options: Mapping[str, Any],
        chips_before: Mapping[str, int],
        pot_before: int,
        commitment: str,
        comet_payment_due: int | None = None,
    ) -> list[Event]: ...

    def initial_state(self, deck: Sequence[str]) -> Any: ...

    def apply(self, state: Any, event: Event) -> Any: ...

    def replay(self, deck: Sequence[str], events: Sequence[Event]) -> Any: ...

    def legal_moves(self, state: Any) -> dict[int, list[Move]]: ...

    def to_act(self, state: Any) -> list[int]: ...

    def decide(self, state: Any, seat: int, move: Move, by: str = "player") -> list[Event]: ...

    def default_move(self, state: Any, seat: int) -> Move: ...

    def view(self, state: Any, seat: int | None) -> dict[str, Any]: ...

    def is_over(self, state: Any) -> bool: ...

    def result(self, state: Any) -> dict[str, Any] | None: ...

    def move_of(self, event: Event) -> tuple[int, Move] | None: ...

    def heuristic_move(
        self, state: Any, seat: int, legal: list[Move], required: bool, rng: random.Random
    ) -> Move | None: ...

    def sample_state(
        self, view: Mapping[str, Any], history: Sequence[Mapping[str, Any]], rng: random.Random
    ) -> Any: ...
