"""A NUL character (0x00) from a client is refused with an answer that names where it was, on
both databases; PostgreSQL's text cannot hold one, and before these guards a session cookie or
Basic credentials holding one reached the database and failed there with a 500 (found by
schemathesis, tests/test_api_schema.py)."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from django.test import Client, RequestFactory

from config.middleware import nul_in
from tournaments.auth import NulSafeModelBackend

pytestmark = pytest.mark.django_db


def _basic(username: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{username}:{password}".encode()).decode()


def test_basic_credentials_with_a_nul_are_wrong_credentials(organiser: Any) -> None:
    answer = Client().get("/api/parties/", HTTP_AUTHORIZATION=_basic("ol\x00ga", "pw-olga-123"))
    assert answer.status_code == 401
    assert answer.json() == {"error": "authentication_failed",
                             "detail": "Invalid username/password."}
    # The right credentials still pass: the guard refuses only what holds a NUL.
    good = Client().get("/api/parties/", HTTP_AUTHORIZATION=_basic("olga", "pw-olga-123"))
    assert good.status_code == 200


@pytest.mark.parametrize(("username", "password"), [("ol\x00ga", "pw-olga-123"),
                                                    ("olga", "pw-olga\x00-123")])
def test_the_backend_refuses_a_nul_before_any_query(organiser: Any, username: str,
                                                    password: str,
                                                    django_assert_num_queries: Any) -> None:
    # Over HTTP only the PostgreSQL pass can tell (SQLite stores a NUL): here both can.
    backend = NulSafeModelBackend()
    with django_assert_num_queries(0):
        assert backend.authenticate(None, username=username, password=password) is None
    assert backend.authenticate(None, username="olga", password="pw-olga-123") == organiser


def test_a_session_cookie_with_a_nul_is_refused_by_name(organiser: Any) -> None:
    client = Client()
    # Django's cookie parser turns the octal escape of a quoted value into the character.
    client.cookies.load({"sessionid": "abcdefgh\x00ijklmnop"})
    answer = client.get("/api/parties/")
    assert answer.status_code == 400
    assert answer.json() == {
        "error": "invalid",
        "detail": "the cookie 'sessionid' contains a NUL character (0x00), which no value here "
                  "may hold"}
    page = client.get("/")
    assert page.status_code == 400
    assert page["Content-Type"].startswith("text/plain")
    assert "the cookie 'sessionid' contains a NUL character" in page.content.decode()


def test_a_query_parameter_with_a_nul_is_refused_by_name(organiser: Any) -> None:
    client = Client()
    client.force_login(organiser)
    answer = client.get("/api/soirees/?club=de%00mo")
    assert answer.status_code == 400
    assert answer.json()["detail"].startswith("the query parameter 'club' contains a NUL")
    assert answer.json()["club"] == ["contains a NUL character (0x00)"]
    assert client.get("/api/soirees/?club=demo").status_code == 200


@pytest.mark.parametrize(("meta", "named"), [
    ({"QUERY_STRING": "club=de\x00mo"}, ("query parameter", "club")),
    ({"QUERY_STRING": "de%00mo=1"}, ("query parameter", "de\x00mo")),
    ({"HTTP_COOKIE": "sessionid=abc\x00def"}, ("cookie", "sessionid")),
    ({"HTTP_COOKIE": 'csrftoken="abc\\000def"'}, ("cookie", "csrftoken")),
    ({"QUERY_STRING": "club=+AAA-", "CONTENT_TYPE": "text/plain; charset=utf-7"},
     ("query parameter", "club")),
    ({"QUERY_STRING": "club=demo%0", "HTTP_COOKIE": "sessionid=abc000"}, None),
])
def test_every_way_a_nul_arrives_is_found(meta: dict[str, str],
                                           named: tuple[str, str] | None) -> None:
    # Each spelling of a NUL, in the query, a cookie or another charset, is found.
    request = RequestFactory().get("/api/soirees/", **meta)
    assert nul_in(request) == named
