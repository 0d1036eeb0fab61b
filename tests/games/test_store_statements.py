"""The plain-SQL statements of the move path prepare each value as the ORM would
(store._preparer against the field's own ``get_db_prep_save``)."""

from __future__ import annotations

import enum
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.db import connection, models, transaction

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


# -- a hand's events sent as one JSON array (store._json_rows_statement) -----------------------


def _event_rows(hand: Hand, people: list[Any], first_seq: int) -> list[dict[str, Any]]:
    """Rows as store.append makes them, with values of every kind an event's columns take."""
    return [
        {"hand_id": hand.pk, "seq": first_seq + i, "type": kind, "payload": payload,
         "by": by, "actor_id": actor, "command_id": command, "at": "2030-05-04T20:00:00.000123Z",
         "prev": "a" * 64, "hash": f"{i:x}" * 64}
        for i, (kind, payload, by, actor, command) in enumerate([
            ("play", {"seat": 1, "card": "7H"}, "player", people[1].pk, uuid.UUID(int=9)),
            ("stop", {"reason": "king"}, "service", None, None),
            ("pay", {"from": 2, "to": "pot", "amount": 3, "short": 0, "reason": "ante"},
             "forced", None, uuid.UUID(int=10)),
            ("note", {"name": "Académie — ♠ ß", "esc": "a\nb\t\"q\" \\ \u0001", "n": None,
                      "ok": True, "big": 2**62, "list": [[], {}]}, "timeout", people[0].pk,
             None),
        ])
    ]


def _stored(hand: Hand) -> list[tuple[Any, ...]]:
    return list(HandEvent.objects.filter(hand=hand).order_by("seq").values_list(
        "seq", "type", "payload", "by", "actor_id", "command_id", "at", "prev", "hash"))


def _hands(people: list[Any]) -> list[Hand]:
    """Two hands just dealt, at two tables of Comet (the second seats three more people)."""
    from django.contrib.auth import get_user_model

    from games.services import partie_start

    more = [get_user_model().objects.create_user(f"extra{i}") for i in range(3)]
    return [partie_start(game="comet", players=seated, options={}, buy_in=50,
                         table_label=f"table {n}", at=AWARE).hands.get()
            for n, seated in enumerate([people[:3], more])]


@pytest.mark.postgres
def test_on_postgresql_events_are_one_json_parameter_and_stored_as_values_would_be(
        people, monkeypatch) -> None:
    json_hand, values_hand = _hands(people)
    json_rows = _event_rows(json_hand, people, json_hand.last_seq + 1)
    model, sql, params = store._insert_statement(HandEvent, json_rows)
    assert "jsonb_to_recordset" in sql and len(params) == 1  # the array, whatever the count
    assert store._insert_statement(HandEvent, json_rows[:1])[1] == sql
    store._execute([(model, sql, params)])
    monkeypatch.setattr(store, "_json_rows_statement", lambda *a: None)  # VALUES, as before
    values_sql = store._insert_statement(HandEvent, json_rows)[1]
    assert "VALUES" in values_sql and "jsonb_to_recordset" not in values_sql
    store.insert(HandEvent, _event_rows(values_hand, people, values_hand.last_seq + 1))
    by_json, by_values = _stored(json_hand)[-4:], _stored(values_hand)[-4:]
    assert [row[0] for row in by_json] == [json_hand.last_seq + n for n in (1, 2, 3, 4)]
    assert by_json == by_values  # every column: the same values, converted the same way
    assert by_json[-1][2]["name"] == "Académie — ♠ ß" and by_json[-1][5] is None


@pytest.mark.postgres
@pytest.mark.parametrize("column, value", [
    ("at", AWARE),  # a datetime: the field's own conversion writes its text
    ("by", HandEvent.By.FORCED),  # a str subclass
    ("payload", {"when": AWARE}),  # the field's JSON refuses it, as before
    ("payload", {"huge": 2**70}),  # past 64 bits: json.dumps writes it, orjson cannot
])
def test_a_value_that_is_not_plain_json_is_written_by_values(people, column, value) -> None:
    hand = _hands(people)[0]
    rows = _event_rows(hand, people, hand.last_seq + 1)[:1]
    rows[0][column] = value
    sql = store._insert_statement(HandEvent, rows)[1]
    assert "VALUES" in sql and "jsonb_to_recordset" not in sql


@pytest.mark.postgres
def test_the_guarded_statement_refuses_a_stale_hand_with_json_events(people) -> None:
    # The events take their hand from the hand's guarded update (``(SELECT id FROM u)``): a
    # hand no longer at the seq read leaves it NULL, and nothing is written.
    from games.errors import StaleSequence

    hand = _hands(people)[0]
    before = _stored(hand)
    rows = _event_rows(hand, people, hand.last_seq + 1)
    with pytest.raises(StaleSequence), transaction.atomic():
        store._execute_guarded(hand, rows, None, read_seq=hand.last_seq + 5)
    assert _stored(hand) == before
