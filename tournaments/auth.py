"""Signing in: Django's ``ModelBackend``, refusing credentials that hold a NUL character.

PostgreSQL's text cannot hold a NUL, and Django's backend looked such a username up in the
database, which failed with a 500 (an HTTP Basic header can carry any byte; found by
schemathesis). No username or password of this service holds one, so the credentials are
simply wrong: a 401.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.base_user import AbstractBaseUser


class NulSafeModelBackend(ModelBackend):
    """Django's backend, refusing credentials that hold a NUL character before any query."""

    def authenticate(self, request: Any, username: str | None = None,
                     password: str | None = None, **kwargs: Any) -> AbstractBaseUser | None:
        if any(isinstance(value, str) and "\x00" in value
               for value in (username, password, *kwargs.values())):
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)
