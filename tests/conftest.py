"""Shared test set-up.

Events and ledger rows are append-only through database triggers, which also refuse the
TRUNCATE that Django's transactional tests use to empty the database between tests. Only for
that flush, the test run switches PostgreSQL's ``session_replication_role`` to ``replica``,
under which ordinary triggers do not fire (a superuser privilege the test role has; the service's
own connections never do this).
"""

from __future__ import annotations

from typing import Any

import pytest
from django.db.backends.postgresql.operations import DatabaseOperations as PgOperations

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


@pytest.fixture
def organiser(django_user_model: Any) -> Any:
    return django_user_model.objects.create_user("olga", password="pw-olga-123")


@pytest.fixture
def outsider(django_user_model: Any) -> Any:
    return django_user_model.objects.create_user("oscar", password="pw-oscar-123")


@pytest.fixture(autouse=True)
def _no_recent_hands() -> Any:
    """Each test starts without the hands an earlier test's moves left in this process's memory
    (games/services/recent.py): a hand is only ever its own test's."""
    from games.services import recent

    recent.hands.clear()
    yield
    recent.hands.clear()


@pytest.fixture(autouse=True)
def live_hub() -> Any:
    """Each test announces to a hub of its own, in this process (games/live.py); a test that
    needs Redis replaces it with ``live.use_hub``."""
    from games import live

    hub = live.LocalHub()
    old = live.use_hub(hub)
    yield hub
    live.use_hub(old)
