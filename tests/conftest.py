"""Shared test set-up.

Events and ledger rows are append-only through database triggers, which also refuse the
TRUNCATE that Django's transactional tests use to empty the database between tests. Only for
that flush, the test run switches PostgreSQL's ``session_replication_role`` to ``replica``,
under which ordinary triggers do not fire (a superuser privilege the test role has; the service's
own connections never do this).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
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


@pytest.fixture
def organiser(django_user_model: Any) -> Any:
    return django_user_model.objects.create_user("olga", password="pw-olga-123")


@pytest.fixture
def outsider(django_user_model: Any) -> Any:
    return django_user_model.objects.create_user("oscar", password="pw-oscar-123")


@pytest.fixture(autouse=True)
def live_hub() -> Any:
    """Each test announces to a hub of its own, in this process (games/live.py); a test that
    needs Redis replaces it with ``live.use_hub``."""
    from games import live

    hub = live.LocalHub()
    old = live.use_hub(hub)
    yield hub
    live.use_hub(old)


@pytest.fixture
def test_database_url(django_db_setup: None) -> str:
    """This test's PostgreSQL database (pytest-django's ``test_<name>``, one per xdist worker),
    as the processes a test starts (a live server, a Celery worker) name it."""
    from django.db import connection

    db_settings = connection.settings_dict
    return (f"postgres://{db_settings['USER']}@{db_settings['HOST'] or '127.0.0.1'}:"
            f"{db_settings['PORT'] or 5432}/{db_settings['NAME']}")


@dataclass
class AsgiServer:
    url: str
    port: int


@pytest.fixture
def asgi_server(transactional_db: None, test_database_url: str,
                tmp_path: Path) -> Iterator[AsgiServer]:
    """The live server as deployed (``uvicorn config.asgi:application``) on this test's
    PostgreSQL database and on Redis, and this process announcing through Redis as a web or
    Celery worker does (games/live.py). The test's rows must be committed for the server to
    see them (``transactional_db``)."""
    from games import live

    redis_url = "redis://127.0.0.1:6379/0"  # pub/sub channels are the server's, whatever the db
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test",
           "DATABASE_URL": test_database_url,
           "REDIS_URL": redis_url, "ACADEMIE_TIMERS": "off", "ACADEMIE_LIVE_SECONDS": "20",
           "ACADEMIE_LIVE_KEEPALIVE_SECONDS": "0.5"}
    log_path = tmp_path / "uvicorn.log"
    with log_path.open("wb") as log:
        server = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "config.asgi:application", "--host", "127.0.0.1",
             "--port", str(port), "--log-level", "warning", "--timeout-graceful-shutdown", "1"],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    old = live.use_hub(live.RedisHub(redis_url))
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert server.poll() is None, log_path.read_text()
                assert time.monotonic() < deadline, "the live server did not start"
                time.sleep(0.1)
        yield AsgiServer(url=f"http://127.0.0.1:{port}", port=port)
    finally:
        live.use_hub(old)
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(10)
