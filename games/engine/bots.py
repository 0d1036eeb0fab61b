"""Bots: the levels *débutant* (a random legal player), *habile* (the heuristic player) and
*fort* (ISMCTS, ``ismcts.py``), and the time-out player.

A bot is asked ``choose(game, state, seat, legal, required, events)``. ``required`` is true when
the hand waits for this seat's decision; when false the seat only *may* act (the Comet holder's
chance at a waiting card), and the bot returns ``None`` to let it pass. ``events`` are the hand's
events so far, which only the *fort* bot reads (``needs_history``), as its seat sees them.

The ``timeout`` bot plays exactly the default move of RULES.md §3 for every decision, and never
takes an optional move, as the service does when a deadline passes; its moves are recorded
``by: "timeout"`` (a seat's only legal move is recorded ``forced`` whoever plays it).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from . import ismcts
from .base import BY_PLAYER, BY_TIMEOUT, Event, Move
from .protocol import Game
from .visibility import redact_events

#: The levels a club chooses among, by the bot that plays each.
LEVELS = {"debutant": "random", "habile": "heuristic", "fort": "ismcts"}

History = Sequence[Event | Mapping[str, Any]]


class Bot:
    name = "bot"
    by = BY_PLAYER
    #: Whether ``choose`` reads the hand's events (the service loads them only then).
    needs_history = False

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def choose(
        self, game: Game, state: Any, seat: int, legal: list[Move], required: bool,
        events: History = (),
    ) -> Move | None:
        raise NotImplementedError


class RandomBot(Bot):
    """Any legal move, uniformly; takes an optional move one time in four."""

    name = "random"

    def choose(
        self, game: Game, state: Any, seat: int, legal: list[Move], required: bool,
        events: History = (),
    ) -> Move | None:
        if not required and self.rng.random() >= 0.25:
            return None
        return self.rng.choice(legal)


class HeuristicBot(Bot):
    """The game's own sensible strategy (``heuristic_move`` of the game module)."""

    name = "heuristic"

    def choose(
        self, game: Game, state: Any, seat: int, legal: list[Move], required: bool,
        events: History = (),
    ) -> Move | None:
        return game.heuristic_move(state, seat, legal, required, self.rng)


class TimeoutBot(Bot):
    """Never moves in time: the default move of RULES.md §3 is played for it."""

    name = "timeout"
    by = BY_TIMEOUT

    def choose(
        self, game: Game, state: Any, seat: int, legal: list[Move], required: bool,
        events: History = (),
    ) -> Move | None:
        if not required:
            return None
        return game.default_move(state, seat)


class IsmctsBot(Bot):
    """The *fort* level: ISMCTS from the seat's view and the history as the seat sees it.

    This adapter is the only place that touches the state: it asks the game for the seat's
    ``view`` and redacts the events for the seat, as the seat's own page gets them; the search
    is given those and nothing else.
    """

    name = "ismcts"
    needs_history = True

    def __init__(self, rng: random.Random, playouts: int | None = None) -> None:
        super().__init__(rng)
        self.playouts = playouts

    def choose(
        self, game: Game, state: Any, seat: int, legal: list[Move], required: bool,
        events: History = (),
    ) -> Move | None:
        if not legal:
            return None
        if required and len(legal) == 1:
            return legal[0]
        view = game.view(state, seat)
        records = [e.to_dict() if isinstance(e, Event) else dict(e) for e in events]
        history = redact_events(records, viewer=seat, n_seats=int(_seats(view)), over=False)
        return ismcts.choose(game, view, history, required=required, rng=self.rng,
                             playouts=self.playouts)


def _seats(view: Mapping[str, Any]) -> int:
    seats = view.get("seats")
    return int(seats) if isinstance(seats, int) else len(view["chips"])


BOTS: dict[str, type[Bot]] = {
    b.name: b for b in (RandomBot, HeuristicBot, IsmctsBot, TimeoutBot)
}


def make_bot(name: str, rng: random.Random) -> Bot:
    try:
        return BOTS[name](rng)
    except KeyError:
        raise ValueError(f"unknown bot {name!r}: choose among {', '.join(BOTS)}") from None
