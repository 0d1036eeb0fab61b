"""Throttling: the API answers 429 with a JSON error past its rate, and sign-in locks a username
out of an address after repeated wrong passwords (django-axes), the right one included."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client
from rest_framework.throttling import SimpleRateThrottle

pytestmark = pytest.mark.django_db


@pytest.fixture
def rates(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Low rates, counted from nothing: DRF's throttles read their rates once, at import."""
    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES",
                        {"anon": "3/m", "user": "5/m", "moves": "2/m"})
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def axes(settings: Any) -> Iterator[None]:
    settings.AXES_ENABLED = True
    settings.AXES_FAILURE_LIMIT = 10
    cache.clear()
    yield
    cache.clear()


def _basic(username: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{username}:{password}".encode()).decode()


def test_api_gets_beyond_the_user_rate_get_429_with_a_json_error(rates, organiser) -> None:
    client = Client()
    client.force_login(organiser)
    answers = [client.get("/api/parties/") for _ in range(6)]
    assert [a.status_code for a in answers[:5]] == [200] * 5
    assert answers[5].status_code == 429
    assert answers[5]["Content-Type"].startswith("application/json")
    assert "throttled" in answers[5].json()["detail"].lower()
    assert int(answers[5]["Retry-After"]) > 0


def test_another_user_has_his_own_count(rates, organiser, outsider) -> None:
    first, second = Client(), Client()
    first.force_login(organiser)
    second.force_login(outsider)
    for _ in range(5):
        first.get("/api/parties/")
    assert first.get("/api/parties/").status_code == 429
    assert second.get("/api/parties/").status_code == 200


def test_the_move_endpoint_has_its_own_scope() -> None:
    from games.api.views import HandMovesView

    assert HandMovesView.throttle_scope == "moves"


def test_forty_wrong_passwords_lock_the_right_one_out(axes, organiser) -> None:
    client = Client()
    for _ in range(40):
        client.post("/accounts/login/", {"username": "olga", "password": "wrong"})
    answer = client.post("/accounts/login/", {"username": "olga", "password": "pw-olga-123"})
    assert answer.status_code == 429
    assert "_auth_user_id" not in client.session
    assert client.get("/").status_code == 302  # still signed out


def test_a_few_wrong_passwords_do_not_lock_out(axes, organiser) -> None:
    client = Client()
    for _ in range(3):
        client.post("/accounts/login/", {"username": "olga", "password": "wrong"})
    answer = client.post("/accounts/login/", {"username": "olga", "password": "pw-olga-123"})
    assert answer.status_code == 302
    assert client.session["_auth_user_id"] == str(organiser.pk)


def test_the_lock_out_holds_for_http_basic_too(axes, organiser) -> None:
    client = Client()
    for _ in range(12):
        client.get("/api/parties/", HTTP_AUTHORIZATION=_basic("olga", "wrong"))
    answer = client.get("/api/parties/", HTTP_AUTHORIZATION=_basic("olga", "pw-olga-123"))
    assert answer.status_code in (401, 429)


def test_a_nul_username_is_wrong_credentials_with_the_lock_out_on(axes, settings,
                                                                  organiser) -> None:
    settings.AXES_HANDLER = "axes.handlers.cache.AxesCacheHandler"
    answer = Client().get("/api/parties/", HTTP_AUTHORIZATION=_basic("ol\x00ga", "pw-olga-123"))
    assert answer.status_code == 401
