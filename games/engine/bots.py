"""Bots: a random legal player, a sensible heuristic player, and the time-out player.

A bot is asked ``choose(game, state, seat, legal, required)``. ``required`` is true when the hand
waits for this seat's decision; when false the seat only *may* act (the Comet holder's chance at a
waiting card), and the bot returns ``None`` to let it pass.

The ``timeout`` bot plays exactly the default move of RULES.md §3 for every decision, and never
takes an optional move, as the service does when a deadline passes; its moves are recorded
``by: "timeout"`` (a seat's only legal move is recorded ``forced`` whoever plays it).
"""

from __future__ import annotations

import random
from typing import Any

from .base import BY_PLAYER, BY_TIMEOUT, Move
from .protocol import Game


class Bot:
    name = "bot"
    by = BY_PLAYER

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def choose(
        self, game: Game, state: Any, seat: int, legal: list[Move], required: bool
    ) -> Move | None:
        raise NotImplementedError


class RandomBot(Bot):
    """Any legal move, uniformly; takes an optional move one time in four."""

    name = "random"

    def choose(
        self, game: Game, state: Any, seat: int, legal: list[Move], required: bool
    ) -> Move | None:
        if not required and self.rng.random() >= 0.25:
            return None
        return self.rng.choice(legal)


class HeuristicBot(Bot):
    """The game's own sensible strategy (``heuristic_move`` of the game module)."""

    name = "heuristic"

    def choose(
        self, game: Game, state: Any, seat: int, legal: list[Move], required: bool
    ) -> Move | None:
        return game.heuristic_move(state, seat, legal, required, self.rng)


class TimeoutBot(Bot):
    """Never moves in time: the default move of RULES.md §3 is played for it."""

    name = "timeout"
    by = BY_TIMEOUT

    def choose(
        self, game: Game, state: Any, seat: int, legal: list[Move], required: bool
    ) -> Move | None:
        if not required:
            return None
        return game.default_move(state, seat)


BOTS: dict[str, type[Bot]] = {b.name: b for b in (RandomBot, HeuristicBot, TimeoutBot)}


def make_bot(name: str, rng: random.Random) -> Bot:
    try:
        return BOTS[name](rng)
    except KeyError:
        raise ValueError(f"unknown bot {name!r}: choose among {', '.join(BOTS)}") from None
