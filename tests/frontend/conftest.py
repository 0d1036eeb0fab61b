"""Fixtures of the page tests: Playwright drives Debian's Chromium (scripts/test.sh:
never ``playwright install``; the system browser, headless, without its background traffic)."""

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

CHROMIUM = "/usr/bin/chromium"
ROOT = Path(__file__).resolve().parent.parent.parent
#: The live layer's Redis database in the page tests (channels-redis, the server's prefix).
REDIS_URL = "redis://127.0.0.1:6379/11"


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": [
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]}


@dataclass
class Server:
    url: str
    redis_url: str | None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(params=["embedded", pytest.param("redis", marks=pytest.mark.redis)])
def live_server_process(request: pytest.FixtureRequest, transactional_db: None,
                        test_database_url: str, tmp_path: Path) -> Iterator[Server]:
    """The service in a process of its own, on this test's PostgreSQL database (its rows must be
    committed: ``transactional_db``): ``manage.py serve`` as the embedded default runs it (the
    in-process channel layer, the timer thread), or daphne on Redis as deployed, where commands
    played in other processes (this one, as a Celery worker would) reach its pages."""
    port = _free_port()
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test",
           "DATABASE_URL": test_database_url, "REDIS_URL": ""}
    redis_url = None
    if request.param == "embedded":
        env["ACADEMIE_TIMERS"] = "thread"
        command = [sys.executable, "manage.py", "serve", f"127.0.0.1:{port}"]
    else:
        redis_url = env["REDIS_URL"] = REDIS_URL
        env["ACADEMIE_TIMERS"] = "off"
        command = [sys.executable, "-m", "daphne", "--bind", "127.0.0.1", "--port", str(port),
                   "config.asgi:application"]
    log_path = tmp_path / "server.log"
    with log_path.open("wb") as log:
        server = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log,
                                  stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert server.poll() is None, log_path.read_text()
                assert time.monotonic() < deadline, "the server did not start"
                time.sleep(0.1)
        yield Server(url=f"http://127.0.0.1:{port}", redis_url=redis_url)
    finally:
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(10)
