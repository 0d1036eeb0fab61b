"""The plain-SQL statements of the move path prepare each value as the ORM would
(store._preparer against the field's own ``get_db_prep_save``)."""

from __future__ import annotations

import enum
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.db import connection, models

from config.rows import built
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


class _Suit(enum.Enum):
    SPADES = "S"


JSON_SAMPLES: list[Any] = [
    {"a": [1, 2]}, [1, "x"], {}, [], {"name": "Académie — ♠ ß", "n": None, "ok": True},
    {"big": 2**70}, {"neg": -(2**63)}, {"f": 1.5}, {"nested": [{"k": [[], {}]}]},
    {"status": Hand.Status.OVER}, {"when": AWARE}, {"b": b"x"},
    {"esc": "line\nbreak\t\"quote\" \\ \u0001 \u2028"}, {1: "int key"},
    {"id": uuid.UUID(int=5)}, {"enum": _Suit.SPADES}, {"nan": float("nan")},
    {"inf": float("inf")},
]
#: What orjson writes where Django's json.dumps refuses the value (a UUID, a plain Enum) or
#: writes a NaN that PostgreSQL refuses: no command writes these (store._json_bytes).
DIFFERENT = {"id": {"id": str(uuid.UUID(int=5))}, "enum": {"enum": "S"}, "nan": {"nan": None},
             "inf": {"inf": None}}


@pytest.mark.postgres
@pytest.mark.parametrize("value", JSON_SAMPLES, ids=range(len(JSON_SAMPLES)))
def test_a_json_value_is_written_as_django_writes_it(value: Any) -> None:
    # The move path writes a JSON column with orjson where the value holds only plain JSON
    # types: the same JSON value as Django's json.dumps, or the same refusal. A UUID is the
    # one documented difference (orjson writes its text; json.dumps refuses it).
    import json

    field = HandEvent._meta.get_field("payload")
    fast = store._preparer(connection.vendor, field)(value)
    django = field.get_db_prep_save(value, connection)

    def written(wrapped: Any) -> tuple[str, Any]:
        try:
            return "value", json.loads(wrapped.dumps(wrapped.obj))
        except TypeError as exc:
            return "error", type(exc)

    ours, theirs = written(fast), written(django)
    if isinstance(value, dict) and value.keys() & DIFFERENT:  # the documented exceptions
        assert ours == ("value", DIFFERENT[next(iter(value))]), ours
        return
    assert ours == theirs, (value, ours, theirs)
    if ours[0] == "value":  # and PostgreSQL stores the same jsonb for both texts
        text = fast.dumps(fast.obj)
        with connection.cursor() as cursor:
            cursor.execute("SELECT %s::jsonb = %s::jsonb",
                           [text if isinstance(text, str) else text.decode(),
                            django.dumps(django.obj)])
            assert cursor.fetchone() == (True,)


# -- rows read by plain SQL become instances as from_db makes them (store.built) ---------------


def _instance_pairs() -> list[tuple[type[models.Model], list[str], list[Any]]]:
    from django.contrib.auth import get_user_model

    from ledger.models import Account

    user = get_user_model()
    t = AWARE
    pairs: list[tuple[type[models.Model], list[str], list[Any]]] = []
    for model in (Hand, Partie, HandSeed, Account, user):
        names = [f.attname for f in model._meta.concrete_fields]
        values = [_a_value(f, t) for f in model._meta.concrete_fields]
        pairs.append((model, names, values))
    pairs.append((user, [user._meta.pk.attname, user.USERNAME_FIELD], [3, "ann"]))  # deferred
    return pairs


def _a_value(field: models.Field, t: datetime) -> Any:
    if isinstance(field, models.UUIDField):
        return uuid.UUID(int=11)
    if isinstance(field, models.DateTimeField):
        return t
    if isinstance(field, models.BooleanField):
        return True
    if isinstance(field, models.IntegerField | models.AutoField | models.ForeignKey):
        return 5
    if isinstance(field, models.JSONField):
        return {"rounds": 3}
    if isinstance(field, models.BinaryField):
        return b"\x00snap"
    if isinstance(field, models.DurationField):
        return timedelta(seconds=9)
    return "text"


@pytest.mark.parametrize("case", range(6))
def test_an_instance_built_from_a_row_is_the_one_from_db_makes(case: int) -> None:
    model, names, values = _instance_pairs()[case]
    expected = model.from_db("default", names, values)

    made = built(model, "default", names, values)

    assert type(made) is model
    assert {k: v for k, v in vars(made).items() if k != "_state"} == {
        k: v for k, v in vars(expected).items() if k != "_state"}
    assert (made._state.adding, made._state.db) == (False, "default")
    assert made.get_deferred_fields() == expected.get_deferred_fields()
    assert made.pk == expected.pk and made == expected


def test_a_field_not_read_is_read_when_asked(django_user_model: Any) -> None:
    person = django_user_model.objects.create_user("deferred", email="d@example.org")

    made = built(django_user_model, "default", ["id", "username"], [person.pk, "deferred"])

    assert made.get_deferred_fields() == {f.attname for f in django_user_model._meta.concrete_fields
                                          if f.attname not in ("id", "username")}
    assert made.email == "d@example.org"  # read from the database, as a deferred field is


def test_nothing_listens_to_the_model_signals_an_instance_built_from_a_row_skips() -> None:
    from django.db.models.signals import post_init, pre_init

    assert not pre_init.receivers and not post_init.receivers


# -- the cursor each connection keeps for these statements (store._kept_cursor) ---------------


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)  # no test transaction: the connection may be closed
def test_the_kept_cursor_serves_every_statement_until_its_connection_changes() -> None:
    import gc
    import threading
    import weakref

    from django.db import connections

    db = connections["default"]
    with store._cursor(db) as first:
        first.execute("SELECT 1", [])
    with store._cursor(db) as again:
        again.execute("SELECT 2", [])
        assert again.fetchone() == (2,)
    assert again.cursor is first.cursor and not first.cursor.closed  # kept, not closed on exit
    # A nested use, while the kept cursor's results are still to be read, gets its own.
    with store._cursor(db) as outer:
        outer.execute("SELECT 5", [])
        with store._cursor(db) as inner:
            inner.execute("SELECT 6", [])
            assert inner.fetchone() == (6,)
        assert outer.fetchone() == (5,)
    assert outer.cursor is first.cursor and inner.cursor is not first.cursor
    assert inner.cursor.closed and not first.cursor.closed
    # Another thread has its own connection, so its own cursor.
    other: list[Any] = []

    def elsewhere() -> None:
        theirs = connections["default"]
        with store._cursor(theirs) as cursor:
            cursor.execute("SELECT 3", [])
            other.append(cursor.cursor)
        theirs.close()

    thread = threading.Thread(target=elsewhere)
    thread.start()
    thread.join()
    assert other and other[0] is not first.cursor
    # A connection that Django closes and opens again gets a new cursor, and the old
    # connection is not kept alive by the old cursor.
    assert not db.in_atomic_block
    old_connection = weakref.ref(db.connection)
    db.close()
    with store._cursor(db) as renewed:
        renewed.execute("SELECT 4", [])
        assert renewed.fetchone() == (4,)
    assert renewed.cursor is not first.cursor and renewed.cursor.connection is db.connection
    del first, again, outer, inner  # the test's own references to the old cursor
    gc.collect()
    assert old_connection() is None
