"""Find a game module by its name (``comet`` or ``commere``)."""

from __future__ import annotations

import importlib
from typing import cast

from .protocol import Game

GAME_NAMES = ("comet", "commere")


def get_game(name: str) -> Game:
    if name not in GAME_NAMES:
        raise ValueError(f"unknown game {name!r}: choose one of {', '.join(GAME_NAMES)}")
    return cast(Game, importlib.import_module(f"games.engine.{name}"))
