"""Shared test set-up.

Events and ledger rows are append-only through database triggers, which also refuse the
TRUNCATE that Django's transactional tests use to empty the database between tests. Only for
that flush, the test run switches PostgreSQL's ``session_replication_role`` to ``replica``,
under which ordinary triggers do not fire (a superuser privilege the test role has; the service's
own connections never do this).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.db.backends.postgresql.operations import DatabaseOperations as PgOperations

ROOT = Path(__file__).resolve().parent.parent

_original_flush = PgOperations.execute_sql_flush


def _flush_without_triggers(self: PgOperations, sql_list: Any) -> None:
    with self.connection.cursor() as cursor:
        cursor.execute("SET session_replication_role = replica")
    try:
        _original_flush(self, sql_list)
    finally:
        with self.connection.cursor() as cursor:
            cursor.execute("SET session_replication_role = DEFAULT")


PgOperations.execute_sql_flush = _flush_without_triggers  # type: ignore[method-assign]


@pytest.fixture(autouse=True)
def seeded_deals(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every hand a test deals, and every seating it draws, takes its seed from the test's node
    id (tests/seeding.py), and so does a Celery worker the test starts: no test depends on the
    luck of a deal, and a failure repeats. A test that needs particular seeds patches
    ``games.services.parties.new_seed`` again itself."""
    from tests.seeding import SEED_BASE_ENV, install

    install(request.node.nodeid, monkeypatch.setattr)
    monkeypatch.setenv(SEED_BASE_ENV, request.node.nodeid)


@pytest.fixture(autouse=True)
def empty_cache() -> Any:
    """Each test starts with an empty cache (the process's own, outside the Redis tests): a
    document kept by one test's soirée must not be served for another's that SQLite gave the
    same id and the same state."""
    from django.core.cache import cache

    cache.clear()
    yield


@pytest.fixture(autouse=True)
def english_outside_requests() -> Any:
    """A service called by a test speaks English, whatever a request before it in the same
    process left active: a request's own language is set by its middleware, and a test that
    reads French says so (``translation.override("fr")`` or an Accept-Language)."""
    from django.utils import translation

    with translation.override("en"):
        yield


@pytest.fixture
def organiser(django_user_model: Any) -> Any:
    return django_user_model.objects.create_user("olga", password="pw-olga-123")


@pytest.fixture
def outsider(django_user_model: Any) -> Any:
    return django_user_model.objects.create_user("oscar", password="pw-oscar-123")


@pytest.fixture
def test_database_url(django_db_setup: None) -> str:
    """This test's PostgreSQL database (pytest-django's ``test_<name>``, one per xdist worker),
    as the processes a test starts (a live server, a Celery worker) name it."""
    from django.db import connection

    db_settings = connection.settings_dict
    return (f"postgres://{db_settings['USER']}@{db_settings['HOST'] or '127.0.0.1'}:"
            f"{db_settings['PORT'] or 5432}/{db_settings['NAME']}")
