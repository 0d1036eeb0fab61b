"""Signed-in people from the cache.

Every request of a signed-in person reads his session and then his user row. With Redis
configured, sessions are ``cached_db`` (read from the cache, written to both) and this backend
keeps the user row in the same cache, so an API request reads neither from the database (they
were two of the three queries of a plain request, and a third of a move's CPU;
bench/api_bench.md).

The cached user is dropped whenever the row is saved or deleted through the ORM (the admin, a
password change, ``last_login`` at sign-in), so deactivating a player or changing a password
takes effect on his next request. A change made past the ORM (raw SQL, ``QuerySet.update``)
is seen within ``USER_CACHE_SECONDS``.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.base_user import AbstractBaseUser
from django.core.cache import cache
from django.db.models.signals import post_delete, post_save

USER_CACHE_SECONDS = 300


def _key(user_id: Any) -> str:
    return f"auth:user:{user_id}"


class CachedModelBackend(ModelBackend):
    """``ModelBackend`` whose ``get_user`` (run by every request of a signed-in person) reads
    the user from the cache, falling back to the database."""

    def get_user(self, user_id: Any) -> AbstractBaseUser | None:
        user = cache.get(_key(user_id))
        if user is None:
            try:
                user = get_user_model()._default_manager.get(pk=user_id)
            except get_user_model().DoesNotExist:
                return None
            cache.set(_key(user_id), user, USER_CACHE_SECONDS)
        return user if self.user_can_authenticate(user) else None


def forget_user(sender: Any, instance: AbstractBaseUser, **kwargs: Any) -> None:
    """Drop the cached row of a user who was saved or deleted."""
    cache.delete(_key(instance.pk))


def connect() -> None:
    """Connected in every process (the app's ``ready``), not only where the backend serves:
    a management command or the admin that changes a user must drop his cached row."""
    user = get_user_model()
    post_save.connect(forget_user, sender=user, dispatch_uid="academie-forget-user-saved")
    post_delete.connect(forget_user, sender=user, dispatch_uid="academie-forget-user-deleted")
