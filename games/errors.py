"""The game service's domain errors, each with its HTTP status and code (config.errors)."""

from __future__ import annotations

from typing import Any

from config.errors import DomainError


class GameError(DomainError):
    """A client's mistake about a partie or a hand."""

    status = 400
    code = "game_error"


class IllegalMoveError(GameError):
    """The rules forbid the move; ``rule`` names the clause (from the engine's RuleError)."""

    status = 400
    code = "illegal_move"

    def __init__(self, message: str, *, rule: str) -> None:
        super().__init__(message)
        self.rule = rule

    def fields(self) -> dict[str, Any]:
        return {"rule": self.rule}


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


class NotViewer(GameError):
    """The partie belongs to a club the requester is not a member of, or is a casual table he
    does not sit at (games/permissions.py)."""

    status = 403
    code = "not_viewer"
