"""Signing in, and signed-in people from the cache.

Both backends refuse credentials holding a NUL character (``NulSafeModelBackend``):
PostgreSQL's text cannot hold one, and Django's backend looked such a username up in the
database, which failed with a 500 (an HTTP Basic header can carry any byte; found by
schemathesis). No username or password of this service holds one, so the credentials are
simply wrong: a 401.

Every request of a signed-in person reads his session and then his user row. With Redis
configured, sessions are ``cached_db`` (read from the cache, written to both) and this backend
keeps the user row in the same cache, so an API request reads neither from the database (they
were two of the three queries of a plain request, and a third of a move's CPU;
bench/api_bench.md).

A cached user is read again once his row has been saved or deleted through the ORM (the admin, a
password change, ``last_login`` at sign-in) and the change committed, so deactivating a player
or changing a password takes effect on his next request. A change made past the ORM (raw SQL,
``QuerySet.update``) is seen within ``USER_CACHE_SECONDS``. The cache holds the user's row,
password hash included: Redis is a private part of the deployment, like the database.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.base_user import AbstractBaseUser
from django.core.cache import cache
from django.db import transaction
from django.db.models.signals import post_delete, post_save

USER_CACHE_SECONDS = 300


def _key(user_id: Any) -> str:
    return f"auth:user:{user_id}"


def _generation_key(user_id: Any) -> str:
    return f"auth:user-generation:{user_id}"


def user_keys(user_id: Any) -> tuple[str, str]:
    """The cache keys of a user: his row, and his generation."""
    return _key(user_id), _generation_key(user_id)


#: How long keys read with a session may serve that session's user: the same request.
PREFETCH_SECONDS = 1.0
_prefetched = threading.local()
_clock = time.monotonic


def prefetch(user_id: Any, found: dict[str, Any]) -> None:
    """Keys of ``user_keys(user_id)`` just read with his session, for this thread's next
    ``get_user`` of that user (``None``: nothing read)."""
    _prefetched.value = None if user_id is None else (str(user_id), found, _clock())


def prefetched(user_id: Any) -> dict[str, Any] | None:
    """The keys ``prefetch`` left for ``user_id`` in this thread, taken once, if read within
    ``PREFETCH_SECONDS``; else ``None``."""
    held = getattr(_prefetched, "value", None)
    _prefetched.value = None
    if held is None or held[0] != str(user_id) or _clock() - held[2] > PREFETCH_SECONDS:
        return None
    found: dict[str, Any] = held[1]
    return found


class NulSafeModelBackend(ModelBackend):
    """Django's backend, refusing credentials that hold a NUL character before any query."""

    def authenticate(self, request: Any, username: str | None = None,
                     password: str | None = None, **kwargs: Any) -> AbstractBaseUser | None:
        if any(isinstance(value, str) and "\x00" in value
               for value in (username, password, *kwargs.values())):
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)


class CachedModelBackend(NulSafeModelBackend):
    """``ModelBackend`` whose ``get_user`` (run by every request of a signed-in person) reads
    the user from the cache, falling back to the database.

    A cached row is tagged with the user's generation, which every committed save or delete of
    the user moves on; a row tagged with an older generation is read again. So a request that
    read the row just before a change committed, and cached it just after, cannot keep the old
    row alive: its tag is already old. Both keys come in one round trip, or with the session
    in its own (``prefetched``: the session engine of tournaments/sessions.py)."""

    def get_user(self, user_id: Any) -> AbstractBaseUser | None:
        key, generation_key = user_keys(user_id)
        found = prefetched(user_id)
        if found is None:
            found = cache.get_many([key, generation_key])
        generation = found.get(generation_key, 0)
        cached = found.get(key)
        if cached is not None and cached[0] == generation:
            user = cached[1]
        else:
            try:
                user = get_user_model()._default_manager.get(pk=user_id)
            except get_user_model().DoesNotExist:
                return None
            cache.set(key, (generation, user), USER_CACHE_SECONDS)
        return user if self.user_can_authenticate(user) else None


def forget_user(sender: Any, instance: AbstractBaseUser, **kwargs: Any) -> None:
    """Move the user's generation on now and again once the change is committed: every row
    cached before either point is then read again (the second covers a row read before the
    commit and cached after the first)."""
    key = _generation_key(instance.pk)

    def move_on() -> None:
        if not cache.add(key, 1, timeout=None):
            cache.incr(key)

    move_on()
    transaction.on_commit(move_on)


def connect() -> None:
    """Connected in every process (the app's ``ready``), not only where the backend serves:
    a management command or the admin that changes a user must drop his cached row."""
    user = get_user_model()
    post_save.connect(forget_user, sender=user, dispatch_uid="academie-forget-user-saved")
    post_delete.connect(forget_user, sender=user, dispatch_uid="academie-forget-user-deleted")
