"""The game service's domain errors; config/exceptions.py maps them to HTTP status codes."""

from __future__ import annotations


class GameError(Exception):
    """A client's mistake about a partie or a hand. ``code`` names it in the API's answer."""

    status = 400
    code = "game_error"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code

    @property
    def message(self) -> str:
        return str(self.args[0])


class IllegalMoveError(GameError):
    """The rules forbid the move; ``rule`` names the clause (from the engine's RuleError)."""

    status = 400
    code = "illegal_move"

    def __init__(self, message: str, *, rule: str) -> None:
        super().__init__(message)
        self.rule = rule


class NotSeated(GameError):
    status = 403
    code = "not_seated"


class StaleSequence(GameError):
    status = 409
    code = "stale_sequence"


class CommandConflict(GameError):
    status = 409
    code = "command_conflict"


class HandNotOver(GameError):
    status = 409
    code = "hand_not_over"


class HandIsOver(GameError):
    status = 409
    code = "hand_over"


class PartieOver(GameError):
    status = 409
    code = "partie_over"


class InvalidPartie(GameError):
    status = 400
    code = "invalid_partie"
