"""Signed-in people from the cache (tournaments/auth.py; settings when REDIS_URL is set):
sessions ``cached_db`` and users kept by ``CachedModelBackend``. A request then reads neither
from the database, and a change to the person (deactivated, new password, deleted) still takes
effect on his very next request."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connection
from django.test import Client, override_settings
from django.test.utils import CaptureQueriesContext

pytestmark = pytest.mark.django_db

LOCMEM = {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "auth-tests"}
REDIS = {"BACKEND": "django_redis.cache.RedisCache", "LOCATION": "redis://127.0.0.1:6379/8"}


@pytest.fixture(params=[pytest.param(LOCMEM, id="locmem"),
                        pytest.param(REDIS, id="redis", marks=pytest.mark.redis)])
def cached_auth(request: pytest.FixtureRequest) -> Iterator[None]:
    # A prefix of its own: parallel test processes share the Redis server.
    cache = dict(request.param, KEY_PREFIX=f"auth-tests-{uuid.uuid4().hex}")
    with override_settings(
        CACHES={"default": cache},
        SESSION_ENGINE="django.contrib.sessions.backends.cached_db",
        AUTHENTICATION_BACKENDS=["tournaments.auth.CachedModelBackend"],
    ):
        yield
        from django.core.cache import cache as default_cache

        # This test's keys only: django-redis's clear() would empty the whole Redis database,
        # which the other test process shares.
        if hasattr(default_cache, "delete_pattern"):
            default_cache.delete_pattern("*")
        else:
            default_cache.clear()


@pytest.fixture
def signed_in(cached_auth: None, django_user_model: Any) -> tuple[Client, Any]:
    user = django_user_model.objects.create_user("alice", password="first-password")
    client = Client()
    assert client.login(username="alice", password="first-password")
    return client, user


def _auth_queries(client: Client) -> tuple[int, list[str]]:
    with CaptureQueriesContext(connection) as queries:
        status = client.get("/api/parties/").status_code
    return status, [q["sql"] for q in queries
                    if "django_session" in q["sql"] or "auth_user" in q["sql"]]


def test_a_signed_in_request_reads_neither_session_nor_user_from_the_database(signed_in):
    client, _ = signed_in
    client.get("/api/parties/")  # the first request may fill the cache

    status, reads = _auth_queries(client)

    assert status == 200
    assert reads == []


def test_a_deactivated_person_is_refused_at_his_next_request(signed_in):
    client, user = signed_in
    assert client.get("/api/parties/").status_code == 200  # cached now

    user.is_active = False
    user.save()

    assert client.get("/api/parties/").status_code == 401


def test_a_new_password_signs_out_the_old_sessions(signed_in):
    client, user = signed_in
    assert client.get("/api/parties/").status_code == 200

    user.set_password("second-password")
    user.save()

    assert client.get("/api/parties/").status_code == 401


def test_a_deleted_person_is_refused_at_his_next_request(signed_in):
    client, user = signed_in
    assert client.get("/api/parties/").status_code == 200

    user.delete()

    assert client.get("/api/parties/").status_code == 401


def test_signing_out_ends_the_session_everywhere(signed_in):
    client, _ = signed_in
    assert client.get("/api/parties/").status_code == 200
    other = Client()
    other.cookies = client.cookies  # the same session from another browser tab

    client.logout()

    assert other.get("/api/parties/").status_code == 401


def test_a_row_read_before_a_change_committed_and_cached_after_it_is_read_again(
        signed_in, django_capture_on_commit_callbacks):
    """The race of two processes: one deactivates the person inside a transaction, another
    reads his row (still the old one: not committed) and caches it; then the change commits.
    The next request must not trust the cached row."""
    from django.core.cache import cache

    from tournaments import auth

    client, user = signed_in
    assert client.get("/api/parties/").status_code == 200
    stale = type(user).objects.get(pk=user.pk)  # the row as it is before the change

    with django_capture_on_commit_callbacks(execute=True):  # the commit, at the block's end
        user.is_active = False
        user.save()
        # The other process caches what it read, tagged with the generation it sees now.
        cache.set(auth._key(user.pk), (cache.get(auth._generation_key(user.pk), 0), stale))

    assert client.get("/api/parties/").status_code == 401
