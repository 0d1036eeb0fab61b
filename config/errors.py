"""The one base class of the apps' domain errors; config/exceptions.py answers them.

An app's error says what went wrong in its own terms and carries its HTTP ``status`` and a
stable ``code`` that clients may match on. Apps import this module; it imports no app.
"""

from __future__ import annotations

from typing import Any


class DomainError(Exception):
    """A request the domain refuses; nothing was changed. Answered by the API as
    ``{"error": code, "detail": message, **fields()}`` with ``status``."""

    status = 400
    code = "domain_error"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code

    def detail(self) -> str:
        """The message as the requester reads it (an error may translate it)."""
        return self.message

    def fields(self) -> dict[str, Any]:
        """What the answer holds besides the code and the message (none by default)."""
        return {}
