"""Tournament errors, mapped to HTTP answers by config/exceptions.py like the game's."""

from games.errors import GameError


class SoireeError(GameError):
    status = 400
    code = "soiree_error"


class NotOrganiser(GameError):
    status = 403
    code = "not_organiser"


class NotMember(GameError):
    status = 403
    code = "not_member"


class SoireeState(GameError):
    status = 409
    code = "soiree_state"
