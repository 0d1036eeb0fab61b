"""Sessions ``cached_db``, read with the signed-in person's cached row in one round trip.

A request of a signed-in person reads his session, then his user row (tournaments/auth.py): two
round trips to the cache, one after the other, because the session names the user. A session
names one user all its life (Django gives a new session key at sign-in, and signing out deletes
it), so this process remembers which user each session it has read belongs to, and the next
read of that session asks the cache for the session and that user's two keys at once
(``get_many``). Nothing is taken on trust: the session is read from the cache as before, and
the user's keys only serve ``CachedModelBackend.get_user`` if the session just read names that
very user, in this thread, within the same second (``auth.prefetched``). A session the process
has not seen, or one whose cached copy has expired, is read as ``cached_db`` reads it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from django.contrib.auth import SESSION_KEY
from django.contrib.sessions.backends import cached_db
from django.core.cache import caches

from tournaments import auth

#: Sessions whose user this process remembers: more than the people signed in at once.
OWNERS_SIZE = 10_000


class _Owners:
    """A bounded map of session key to the user id its data names, least recently read
    dropped first, safe to use from several threads."""

    def __init__(self, size: int = OWNERS_SIZE) -> None:
        self.size = size
        self._map: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, session_key: str) -> str | None:
        with self._lock:
            return self._map.get(session_key)

    def remember(self, session_key: str, user_id: str) -> None:
        with self._lock:
            self._map[session_key] = user_id
            self._map.move_to_end(session_key)
            while len(self._map) > self.size:
                self._map.popitem(last=False)

    def forget(self, session_key: str) -> None:
        with self._lock:
            self._map.pop(session_key, None)


owners = _Owners()


class SessionStore(cached_db.SessionStore):
    def load(self) -> dict[str, Any]:
        auth.prefetch(None, {})  # whatever an earlier read left in this thread is not this one's
        session_key = self.session_key
        # The user's keys are the default cache's (tournaments/auth.py): read with the session
        # only when the sessions live in that same cache.
        same_cache = self._cache is caches["default"]  # type: ignore[attr-defined]
        owner = owners.get(session_key) if session_key and same_cache else None
        data = None
        if owner is not None:
            try:
                found = self._cache.get_many(  # type: ignore[attr-defined]
                    [self.cache_key, *auth.user_keys(owner)])
            except Exception:  # as cached_db: an unreachable cache falls back to the database
                found = {}
            data = found.get(self.cache_key)
            if data is not None and str(data.get(SESSION_KEY)) == owner:
                auth.prefetch(owner, found)
        if data is None:
            data = super().load()
        if session_key and data.get(SESSION_KEY) is not None:
            owners.remember(session_key, str(data[SESSION_KEY]))
        elif session_key:
            owners.forget(session_key)
        return data
