"""Signed-in people from the cache (tournaments/auth.py; settings when REDIS_URL is set):
sessions ``cached_db`` (tournaments/sessions.py) and users kept by ``CachedModelBackend``. A
request then reads neither from the database, reads the cache once, and a change to the person
(deactivated, new password, deleted) still takes effect on his very next request."""

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
        SESSION_ENGINE="tournaments.sessions",
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


#: Round trips are counted on Redis only: the local-memory cache's get_many calls its get.
ON_REDIS = pytest.mark.parametrize(
    "cached_auth", [pytest.param(REDIS, id="redis", marks=pytest.mark.redis)], indirect=True)


def _cache_reads(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Every read of the cache from now on, as the list of keys it asked for."""
    from django.core.cache import caches

    cache = caches["default"]  # the sessions' cache too
    reads: list[list[str]] = []
    get, get_many = cache.get, cache.get_many

    def counted_get(key: str, *args: Any, **kwargs: Any) -> Any:
        reads.append([key])
        return get(key, *args, **kwargs)

    def counted_get_many(keys: Any, *args: Any, **kwargs: Any) -> Any:
        reads.append(list(keys))
        return get_many(keys, *args, **kwargs)

    monkeypatch.setattr(cache, "get", counted_get)
    monkeypatch.setattr(cache, "get_many", counted_get_many)
    return reads


@ON_REDIS
def test_a_signed_in_request_reads_the_cache_once(signed_in, monkeypatch):
    from tournaments import auth

    client, user = signed_in
    assert client.get("/api/parties/").status_code == 200  # this process learns the session
    reads = _cache_reads(monkeypatch)

    assert client.get("/api/parties/").status_code == 200

    assert len(reads) == 1
    session_key = client.cookies["sessionid"].value
    assert reads[0][0].endswith(session_key) and reads[0][1:] == list(auth.user_keys(user.pk))


@ON_REDIS
def test_a_session_this_process_has_not_read_is_read_as_before(signed_in, monkeypatch):
    from tournaments import sessions

    client, _ = signed_in
    sessions.owners.forget(client.cookies["sessionid"].value)  # read by another process so far
    reads = _cache_reads(monkeypatch)

    assert client.get("/api/parties/").status_code == 200

    assert len(reads) == 2  # the session, then the user's keys
    assert client.get("/api/parties/").status_code == 200
    assert len(reads) == 3  # one from now on


@ON_REDIS
def test_keys_read_for_the_wrong_user_never_serve(signed_in, django_user_model, monkeypatch):
    """A session remembered as another person's (it cannot happen: a session key names one
    user all its life) reads that person's keys with it, and they serve nobody."""
    from tournaments import auth, sessions

    client, user = signed_in
    bob = django_user_model.objects.create_user("bob", password="bobs-password")
    session_key = client.cookies["sessionid"].value
    sessions.owners.remember(session_key, str(bob.pk))

    store = sessions.SessionStore(session_key)
    assert store[auth_session_key()] == str(user.pk)  # the session as it is

    assert getattr(auth._prefetched, "value", None) is None  # nothing left for anybody
    assert sessions.owners.get(session_key) == str(user.pk)  # remembered right from now on
    reads = _cache_reads(monkeypatch)
    response = client.get("/api/parties/")
    assert response.status_code == 200 and response.wsgi_request.user == user
    assert len(reads) == 1 and reads[0][1:] == list(auth.user_keys(user.pk))


def auth_session_key() -> str:
    from django.contrib.auth import SESSION_KEY

    return SESSION_KEY


def test_keys_read_with_a_session_serve_once_in_their_thread_and_not_for_long(monkeypatch):
    import threading

    from tournaments import auth

    auth.prefetch(7, {"k": 1})
    assert auth.prefetched(7) == {"k": 1}
    assert auth.prefetched(7) is None  # taken once

    auth.prefetch("7", {"k": 2})
    seen: list[Any] = []
    thread = threading.Thread(target=lambda: seen.append(auth.prefetched(7)))
    thread.start()
    thread.join()
    assert seen == [None]  # another thread's request never sees them

    clock = [100.0]
    monkeypatch.setattr(auth, "_clock", lambda: clock[0])
    auth.prefetch(7, {"k": 3})
    clock[0] += auth.PREFETCH_SECONDS + 0.01
    assert auth.prefetched(7) is None


@pytest.mark.redis
def test_sessions_kept_in_another_cache_than_the_users_are_read_on_their_own(
        django_user_model, monkeypatch):
    """The users' rows and generations live in the default cache (tournaments/auth.py): a
    session kept elsewhere never brings them, so no stale row there could serve."""
    from tournaments import auth

    prefix = f"auth-tests-{uuid.uuid4().hex}"
    with override_settings(
        CACHES={"default": dict(REDIS, KEY_PREFIX=prefix),
                "sessions": dict(LOCMEM, LOCATION=prefix)},
        SESSION_CACHE_ALIAS="sessions",
        SESSION_ENGINE="tournaments.sessions",
        AUTHENTICATION_BACKENDS=["tournaments.auth.CachedModelBackend"],
    ):
        django_user_model.objects.create_user("carol", password="carols-password")
        client = Client()
        assert client.login(username="carol", password="carols-password")
        handed: list[Any] = []
        prefetch = auth.prefetch
        monkeypatch.setattr(auth, "prefetch", lambda user_id, found: (
            handed.append(user_id), prefetch(user_id, found)))

        for _ in range(3):
            assert client.get("/api/parties/").status_code == 200

        assert handed == [None, None, None]
        from django.core.cache import cache

        cache.delete_pattern("*")
