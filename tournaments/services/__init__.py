"""A club's evenings, written: one module per subject. Each function is a command of the
domain, keyword-only, in one transaction; the reads are ``tournaments.selectors``."""

from .clubs import club_create, membership_add
from .door import (
    cash_out,
    checkin,
    checkin_undo,
    rebuy,
    registration_add,
    registration_remove,
    stack,
)
from .seats import announce, seat_change
from .soirees import (
    BOT_KIND,
    EDITABLE,
    soiree_cancel,
    soiree_check,
    soiree_close_now,
    soiree_create,
    soiree_finish,
    soiree_open,
    soiree_tick,
    soiree_update,
)

__all__ = [
    "BOT_KIND", "EDITABLE", "announce", "cash_out", "checkin", "checkin_undo", "club_create",
    "membership_add", "rebuy", "registration_add", "registration_remove", "seat_change",
    "soiree_cancel", "soiree_check", "soiree_close_now", "soiree_create", "soiree_finish",
    "soiree_open", "soiree_tick", "soiree_update", "stack",
]
