"""The plain-SQL statements of the move path prepare each value as the ORM would
(store._preparer against the field's own ``get_db_prep_save``)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.db import connection, models

from games.models import Command, Hand, HandEvent, HandSeed, Partie
from games.services import store

pytestmark = pytest.mark.django_db

AWARE = datetime(2030, 5, 4, 20, 0, tzinfo=UTC)
SAMPLES: list[Any] = [
    None, 0, 7, 2**40, True, "", "seven", "2030-05-04T20:00:00Z", Hand.Status.OVER, AWARE,
    AWARE.astimezone(UTC), uuid.UUID(int=5), str(uuid.UUID(int=5)), b"\x00\x01", 1.5,
    {"a": [1, 2]}, [1, "x"], timedelta(seconds=3),
]


def _same(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if hasattr(a, "obj") and hasattr(b, "obj"):  # psycopg's Jsonb wrapper: no __eq__
        return bool(a.obj == b.obj)
    return bool(a == b)


def _outcome(prepare: Any, value: Any) -> tuple[str, Any]:
    try:
        return "value", prepare(value)
    except Exception as exc:  # noqa: BLE001 - the same refusal, whichever it is
        return "error", type(exc)


@pytest.mark.parametrize("model", [HandEvent, Hand, Command, Partie, HandSeed])
def test_each_value_is_prepared_as_the_field_prepares_it(model: type[models.Model]) -> None:
    compared = 0
    for field in model._meta.concrete_fields:
        fast = store._preparer(connection.vendor, field)
        for value in SAMPLES:
            got = _outcome(fast, value)
            want = _outcome(lambda v, f=field: f.get_db_prep_save(v, connection), value)
            if got[0] == "error" or want[0] == "error":
                assert got == want, (field.name, value)
            else:
                assert _same(got[1], want[1]), (field.name, value, got, want)
            compared += 1
    assert compared == len(model._meta.concrete_fields) * len(SAMPLES)


@pytest.mark.postgres
def test_on_postgresql_the_usual_values_skip_the_fields_conversion(monkeypatch) -> None:
    # The point of the fast path: what a command writes does not go through the field.
    called: list[Any] = []
    field = HandEvent._meta.get_field("hash")
    monkeypatch.setattr(type(field), "get_db_prep_save",
                        lambda self, value, conn: called.append(value) or value)
    store._preparer.cache_clear()
    try:
        fast = store._preparer(connection.vendor, field)
        assert fast("abc") == "abc" and fast(None) is None and called == []
        assert fast(Hand.Status.OVER) is Hand.Status.OVER and called == []  # a str, as it is
        assert fast(5) == 5 and called == [5]  # anything else: the field's conversion
    finally:
        store._preparer.cache_clear()  # nothing keeps the patched method
