"""Fixtures of the page tests: Playwright drives Debian's Chromium (scripts/test.sh:
never ``playwright install``; the system browser, headless, without its background traffic)."""

from __future__ import annotations

import os
import shutil
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


# -- helpers of the browser tests ---------------------------------------------------------------

SHOTS = Path("/tmp/shots")


def wait_for_js(page: Any, expression: str, timeout: float = 20) -> None:
    """Poll ``expression`` in the page until it is true. Not ``page.wait_for_function``: its
    polling evaluates a string in the page, which the pages' CSP (no 'unsafe-eval') refuses;
    ``page.evaluate`` runs it through the DevTools protocol instead."""
    end = time.monotonic() + timeout
    while not page.evaluate(expression):
        assert time.monotonic() < end, f"not true after {timeout} s: {expression}"
        page.wait_for_timeout(50)


def shot(page: Any, tmp_path: Path, name: str) -> Path:
    """A full-page screenshot kept with the test (and in /tmp/shots, to look at)."""
    path = tmp_path / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    SHOTS.mkdir(exist_ok=True)
    shutil.copy(path, SHOTS / path.name)
    return path


def fits(page: Any, width: int) -> bool:
    """Nothing on the page is wider than the screen (no sideways scrolling)."""
    return bool(page.evaluate(f"document.documentElement.scrollWidth <= {width}"))


def sign_in(page: Any, server_url: str, username: str, password: str, next_path: str = "/") -> None:
    """Sign in through the login page, as a person does, and land on ``next_path``."""
    page.goto(f"{server_url}/accounts/login/?next={next_path}")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("main button[type=submit]")
