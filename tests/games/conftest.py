"""Fixtures of the game service's tests: personas and API clients.

``organiser`` and ``outsider`` come from tests/conftest.py; a ``player`` is a person who takes a
seat. Add fixtures here rather than rewriting the file: other test modules share it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from rest_framework.test import APIClient

from .factories import UserFactory


@pytest.fixture
def player(db: None) -> Any:
    return UserFactory(username="pia")


@pytest.fixture
def people(django_user_model: Any) -> list[Any]:
    """Four people with passwords, for a table of Ma commère (some modules seat their own)."""
    return [django_user_model.objects.create_user(name, password="pw-for-tests")
            for name in ("alice", "bruno", "chloe", "denis")]


@pytest.fixture
def api_as() -> Callable[[Any], APIClient]:
    """An API client signed in as ``user`` (``None``: nobody signed in)."""

    def make(user: Any) -> APIClient:
        client = APIClient()
        if user is not None:
            client.force_authenticate(user)
        return client

    return make
