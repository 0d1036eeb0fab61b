"""Production by default: the deploy check passes, a short secret is refused, pages carry a CSP,
logs are JSON lines with the request's id, the probes answer, and Swagger UI is served from here."""

from __future__ import annotations

import io
import json
import logging
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import Client

from config.logging import JsonFormatter, RequestIdFilter

ROOT = Path(__file__).resolve().parent.parent
SECRET = "q7-Lx_9ZmPw2" * 5  # 60 characters, 12 distinct
SIGNING_KEY = "5e" * 32


def _production(**env: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.production",
                   "DJANGO_SECRET_KEY": SECRET, "DJANGO_ALLOWED_HOSTS": "club.example.org",
                   "DATABASE_URL": "postgres://academie@127.0.0.1:5432/academie",
                   "REDIS_URL": "redis://127.0.0.1:6379/9", "ACADEMIE_SIGNING_KEY": SIGNING_KEY,
                   **env}
    return subprocess.run([sys.executable, "manage.py", "check", "--deploy", "--fail-level",
                           "WARNING"], env=environment, cwd=ROOT, capture_output=True, text=True)


def test_the_deploy_check_gives_no_warning_on_the_production_settings() -> None:
    done = _production()
    assert done.returncode == 0, done.stderr
    assert "System check identified no issues" in done.stdout


def test_production_refuses_a_secret_under_50_characters() -> None:
    done = _production(DJANGO_SECRET_KEY="a-short-secret-of-31-characters")
    assert done.returncode != 0
    assert "ImproperlyConfigured" in done.stderr
    assert "DJANGO_SECRET_KEY must be at least 50 characters long" in done.stderr


@pytest.mark.parametrize("key", ["", "not-hex", "ab" * 16])
def test_production_refuses_to_start_without_a_signing_key(key: str) -> None:
    done = _production(ACADEMIE_SIGNING_KEY=key)
    assert done.returncode != 0
    assert "ACADEMIE_SIGNING_KEY must be set in production" in done.stderr
    assert "secrets.token_hex(32)" in done.stderr  # and says how to make one


def test_the_entry_point_defaults_to_production() -> None:
    assert 'setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")' in (
        ROOT / "config" / "wsgi.py").read_text()
    assert "DJANGO_SETTINGS_MODULE = config.settings.local" in (ROOT / "Makefile").read_text()


def test_https_settings_come_from_the_environment() -> None:
    code = ("from django.conf import settings as s; print(s.SECURE_HSTS_SECONDS, "
            "s.SECURE_SSL_REDIRECT, s.SECURE_PROXY_SSL_HEADER, s.SESSION_COOKIE_SECURE)")
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.production",
           "DJANGO_SECRET_KEY": SECRET, "DJANGO_ALLOWED_HOSTS": "club.example.org",
           "DATABASE_URL": "sqlite:///:memory:", "DJANGO_SECURE_HSTS_SECONDS": "600",
           "DJANGO_SECURE_SSL_REDIRECT": "false",
           "DJANGO_SECURE_PROXY_SSL_HEADER": "HTTP_X_FORWARDED_PROTO",
           "ACADEMIE_SIGNING_KEY": SIGNING_KEY}
    out = subprocess.run([sys.executable, "-c", "import django; django.setup(); " + code],
                         env=env, cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert out.splitlines()[-1].split() == ["600", "False", "('HTTP_X_FORWARDED_PROTO',",
                                            "'https')", "True"]


@pytest.mark.django_db
def test_pages_carry_a_csp_whose_nonce_their_scripts_hold(client: Client, organiser) -> None:
    client.force_login(organiser)
    page = client.get("/")
    assert page.status_code == 200
    policy = page["Content-Security-Policy"]
    nonce = re.search(r"'nonce-([^']+)'", policy).group(1)
    assert "default-src 'self'" in policy and "img-src 'self' data:" in policy
    assert "connect-src 'self'" in policy and "unsafe-inline" not in policy
    html = page.content.decode()
    scripts = re.findall(r"<script[^>]*>", html)
    # No inline one: every script is a file of the service's own (the static files, and
    # Django's JavaScript catalogue at /jsi18n/).
    assert scripts and all(re.search(r'src="/(static/|jsi18n/)', tag) for tag in scripts)
    assert f"'nonce-{nonce}'" in policy.split("style-src")[1].split(";")[0]
    assert ' style="' not in html  # an inline style attribute would be refused
    assert client.get("/").has_header("Content-Security-Policy")


def test_the_swagger_page_loads_only_files_of_this_service(client: Client) -> None:
    page = client.get("/api/docs/")
    assert page.status_code == 200
    html = page.content.decode()
    assets = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert assets and not [a for a in assets if "//" in a]
    files = [a for a in assets if a.startswith("/static/")]
    assert any("swagger-ui-bundle" in a for a in files)
    assert "<script>" not in html  # every script a file: the CSP runs no inline one
    for asset in files:  # served by the service itself (WhiteNoise)
        assert client.get(asset).status_code == 200, asset
    script_src = page["Content-Security-Policy"].split("script-src")[1].split(";")[0]
    assert "unsafe-inline" not in script_src


def test_healthz_answers_without_the_database(client: Client) -> None:
    answer = client.get("/healthz")
    assert answer.status_code == 200 and answer.json() == {"status": "ok"}


@pytest.mark.django_db
def test_readyz_checks_the_database(client: Client, settings) -> None:
    settings.REDIS_URL = ""
    answer = client.get("/readyz")
    assert answer.status_code == 200
    assert answer.json() == {"status": "ok", "checks": {"database": "ok"}}


@pytest.mark.django_db
def test_readyz_answers_503_naming_redis_when_it_is_down(client: Client, settings) -> None:
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens there
    answer = client.get("/readyz")
    assert answer.status_code == 503
    assert answer.json() == {"status": "unavailable",
                             "checks": {"database": "ok", "redis": "unavailable"}}


@pytest.mark.redis
@pytest.mark.django_db
def test_readyz_pings_redis_when_it_is_set(client: Client, settings) -> None:
    settings.REDIS_URL = "redis://127.0.0.1:6379/9"
    assert client.get("/readyz").json()["checks"] == {"database": "ok", "redis": "ok"}


def test_a_sane_request_id_is_kept_and_any_other_replaced(client: Client) -> None:
    assert client.get("/healthz", HTTP_X_REQUEST_ID="abc-123")["X-Request-ID"] == "abc-123"
    fresh = client.get("/healthz", HTTP_X_REQUEST_ID="bad id\n<x>")["X-Request-ID"]
    assert re.fullmatch(r"[0-9a-f-]{36}", fresh)


def test_a_json_log_line_has_the_fields_and_survives_a_lone_surrogate() -> None:
    try:
        raise ValueError("boom")
    except ValueError:
        record = logging.LogRecord("x.y", logging.ERROR, __file__, 1, "bad %s", ("\ud800",),
                                   sys.exc_info())
    RequestIdFilter().filter(record)
    line = json.loads(JsonFormatter().format(record))
    assert set(line) == {"time", "level", "logger", "message", "request_id", "exception"}
    assert line["level"] == "ERROR" and line["logger"] == "x.y" and line["message"] == "bad \ud800"
    assert "ValueError: boom" in line["exception"]


@pytest.mark.django_db
def test_a_500_is_logged_as_json_with_its_request_id(settings) -> None:
    from django.urls import path

    def broken(request):
        raise RuntimeError("a bug")

    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(RequestIdFilter())
    logger = logging.getLogger("django.request")
    logger.addHandler(handler)
    urls = type("urls", (), {"urlpatterns": [path("broken", broken)]})
    settings.ROOT_URLCONF = urls
    try:
        answer = Client(raise_request_exception=False).get("/broken",
                                                           HTTP_X_REQUEST_ID="req-500-1")
    finally:
        logger.removeHandler(handler)
    assert answer.status_code == 500 and answer["X-Request-ID"] == "req-500-1"
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [line["request_id"] for line in lines] == ["req-500-1"]
    assert lines[0]["level"] == "ERROR" and "RuntimeError: a bug" in lines[0]["exception"]


def test_no_page_has_an_inline_script_and_the_policy_allows_none(client: Client) -> None:
    """Every page script is a static file (frontend/static/): the policy's script-src is the
    service's own files, no nonce, no inline code."""
    templates = Path(__file__).resolve().parent.parent / "frontend" / "templates"
    inline = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>")
    found = {str(p.relative_to(templates)): inline.findall(p.read_text())
             for p in templates.rglob("*.html")}
    assert {name: tags for name, tags in found.items() if tags} == {}
    script_src = client.get("/accounts/login/")["Content-Security-Policy"].split(
        "script-src")[1].split(";")[0]
    assert script_src.split() == ["'self'"]
