"""Tournament errors, each with its HTTP status and code (config.errors)."""

from config.errors import DomainError


class TournamentError(DomainError):
    status = 400
    code = "tournament_error"


class SoireeError(TournamentError):
    status = 400
    code = "soiree_error"


class NotOrganiser(TournamentError):
    status = 403
    code = "not_organiser"


class NotMember(TournamentError):
    status = 403
    code = "not_member"


class SoireeState(TournamentError):
    status = 409
    code = "soiree_state"


class NobodyHere(SoireeState):
    """A soirée with no person checked in does not open: it waits for its first arrival."""

    code = "nobody_checked_in"


class NotAuditor(TournamentError):
    """Not one who may do this to a hand: dispute it (its players, the organiser) or rule on
    it (a club auditor who did not play it)."""

    status = 403
    code = "not_allowed_here"
