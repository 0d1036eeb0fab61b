"""The game service's domain errors, each with its HTTP status and code (config.errors)."""

from __future__ import annotations

from typing import Any

from config.errors import DomainError
from games.rule_words import in_words


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

    def detail(self) -> str:
        # The engine speaks English; the reader may not.
        return in_words(self.message)

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


class NotInvited(GameError):
    status = 403
    code = "not_invited"


class InvitationClosed(GameError):
    """The table no longer waits for answers (it plays, or was cancelled), or this invitation
    has been answered already."""

    status = 409
    code = "invitation_closed"


class NotEnoughChips(GameError):
    """A player's casual wallet holds less than the table's buy-in."""

    status = 409
    code = "not_enough_chips"


class PlayerBusy(GameError):
    """The player has accepted another casual table, or plays at one."""

    status = 409
    code = "player_busy"


class NotTableOwner(GameError):
    status = 403
    code = "not_table_owner"


class ShareRefused(GameError):
    """A share that is not 32 bytes as 64 lowercase hex digits, or from a bot's seat."""

    status = 400
    code = "share_refused"


class ShareAlreadySent(GameError):
    status = 409
    code = "share_already_sent"


class AlreadyDealt(GameError):
    """A share that comes after the hand's deal: it can no longer count."""

    status = 409
    code = "already_dealt"


class TablePaused(GameError):
    """A move at a table that waits for a player who left it."""

    status = 409
    code = "table_paused"


class PauseRefused(GameError):
    """A pause asked at a soirée's table, which waits for nobody."""

    status = 409
    code = "pause_refused"


class OrderRefused(GameError):
    """A standing order the table's Comet window leaves no time for ("ask me" under 8 s)."""

    status = 409
    code = "order_refused"
