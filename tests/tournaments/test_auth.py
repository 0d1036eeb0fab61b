"""Signed-in people: Django's sessions and ``ModelBackend`` (settings: ``cached_db`` sessions on
Redis when REDIS_URL is set, the database otherwise). A change to the person (deactivated, new
password, deleted) or signing out takes effect on his very next request, whichever engine keeps
the sessions."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.db import connection
from django.test import Client, override_settings
from django.test.utils import CaptureQueriesContext

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parent.parent.parent

REDIS = {"BACKEND": "django_redis.cache.RedisCache", "LOCATION": "redis://127.0.0.1:6379/8"}
DB = "django.contrib.sessions.backends.db"
CACHED_DB = "django.contrib.sessions.backends.cached_db"


@pytest.fixture(params=[pytest.param(DB, id="db"),
                        pytest.param(CACHED_DB, id="cached_db", marks=pytest.mark.redis)])
def engine(request: pytest.FixtureRequest) -> Iterator[str]:
    if request.param == DB:
        with override_settings(SESSION_ENGINE=DB):
            yield DB
        return
    # A prefix of its own: parallel test processes share the Redis server.
    cache = dict(REDIS, KEY_PREFIX=f"auth-tests-{uuid.uuid4().hex}")
    with override_settings(CACHES={"default": cache}, SESSION_ENGINE=CACHED_DB):
        yield CACHED_DB
        from django.core.cache import cache as default_cache

        # This test's keys only: django-redis's clear() would empty the whole Redis database,
        # which the other test process shares.
        default_cache.delete_pattern("*")


@pytest.fixture
def signed_in(engine: str, django_user_model: Any) -> tuple[Client, Any]:
    user = django_user_model.objects.create_user("alice", password="first-password")
    client = Client()
    assert client.login(username="alice", password="first-password")
    return client, user


@pytest.mark.parametrize(("redis_url", "expected"), [("", DB),
                                                      ("redis://127.0.0.1:6379/8", CACHED_DB)])
def test_the_settings_use_djangos_own_session_engines(redis_url: str, expected: str) -> None:
    """cached_db on Redis when REDIS_URL is set; the database alone without it."""
    code = ("from config.settings import base; "
            "print(base.SESSION_ENGINE, base.AUTHENTICATION_BACKENDS[-1], "
            "getattr(base, 'CACHES', {}).get('default', {}).get('BACKEND'))")
    env = {**os.environ, "REDIS_URL": redis_url}
    found = subprocess.run([sys.executable, "-c", code], env=env, check=True, cwd=ROOT,
                           capture_output=True, text=True).stdout.split()
    cache = ("django_redis.cache.RedisCache" if redis_url
             else "django.core.cache.backends.locmem.LocMemCache")
    assert found == [expected, "tournaments.auth.NulSafeModelBackend", cache]


def test_the_backend_is_djangos_model_backend() -> None:
    from django.contrib.auth.backends import ModelBackend

    from tournaments.auth import NulSafeModelBackend

    assert issubclass(NulSafeModelBackend, ModelBackend)
    assert NulSafeModelBackend.get_user is ModelBackend.get_user


def _session_reads(client: Client) -> tuple[int, list[str]]:
    with CaptureQueriesContext(connection) as queries:
        status = client.get("/api/parties/").status_code
    return status, [q["sql"] for q in queries if "django_session" in q["sql"]]


def test_cached_db_sessions_are_read_from_the_cache(signed_in, engine):
    client, _ = signed_in
    client.get("/api/parties/")

    status, reads = _session_reads(client)

    assert status == 200
    assert (reads == []) if engine == CACHED_DB else (len(reads) == 1)


def test_a_deactivated_person_is_refused_at_his_next_request(signed_in):
    client, user = signed_in
    assert client.get("/api/parties/").status_code == 200

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
