"""The ledger's domain errors: one small hierarchy, each with a message a person can act on.

Each carries its HTTP ``status`` and a ``code`` (config.errors); the project's one exception
handler (config/exceptions.py) answers them as ``{"error": code, "detail": message}``, so that
a client mistake is never a 500.
"""

from __future__ import annotations

from config.errors import DomainError


class LedgerError(DomainError):
    """Something the ledger refuses to do; nothing was written."""

    status = 400
    code = "ledger_error"


class InvalidEntry(LedgerError):
    """The postings asked for do not make an entry (too few, zero, repeated or mixed clubs)."""

    code = "invalid_entry"


class UnbalancedEntry(InvalidEntry):
    """The postings do not sum to zero: chips would appear or vanish."""

    code = "unbalanced_entry"


class InsufficientChips(LedgerError):
    """A wallet or a pot would go below zero (RULES.md §3: chips never go below zero)."""

    status = 409
    code = "insufficient_chips"

    def __init__(self, message: str, *, account_id: int, balance: int, needed: int) -> None:
        super().__init__(message)
        self.account_id = account_id
        self.balance = balance
        self.needed = needed


class IdempotencyConflict(LedgerError):
    """The idempotency key was already used for an entry with different postings."""

    status = 409
    code = "idempotency_conflict"


class AlreadyReversed(LedgerError):
    """An entry is reversed at most once."""

    status = 409
    code = "already_reversed"


class BackdatedEntry(LedgerError):
    """An entry dated before one of its accounts' last posting would break running balances."""

    code = "backdated_entry"
