"""config/postgres.py: PostgreSQL connections read ``timestamptz`` through psycopg's C loader,
and every value read is exactly what Django's own loader gives."""

from __future__ import annotations

import datetime

import pytest
from django.db import connection
from django.db.backends.postgresql.psycopg_any import register_tzloader
from django.utils import timezone

from config.postgres import UtcTimestamptzLoader

pytestmark = [pytest.mark.postgres, pytest.mark.django_db]

VALUES = [
    "2026-11-30 08:04:41.962239+00", "2026-03-29 01:30:00.123456+02", "1999-12-31 23:59:59-11:30",
    "0001-01-01 00:00:00+00", "9999-12-31 23:59:59.999999+00", "2024-02-29 12:00:00+05:45",
]
QUERY = ("SELECT v::timestamptz, ARRAY[v::timestamptz, NULL] FROM unnest(%s::text[]) AS v "
         "UNION ALL SELECT NULL, NULL")


@pytest.fixture(autouse=True)
def _postgres() -> None:
    if connection.vendor != "postgresql":
        pytest.fail("this test is marked for PostgreSQL and must run there")


def test_the_connection_reads_timestamptz_with_the_c_loader() -> None:
    connection.ensure_connection()
    loader = connection.connection.adapters.get_loader(1184, 0)  # timestamptz, text
    assert loader is UtcTimestamptzLoader
    with connection.cursor() as cursor:
        # Django's own check (create_cursor) finds the connection's time zone: not replaced.
        assert cursor.cursor.adapters.get_loader(1184, 0) is UtcTimestamptzLoader
        cursor.execute("SELECT %s::timestamptz", ["2026-11-30 08:00:00+01"])
        [(value,)] = cursor.fetchall()
    assert value == datetime.datetime(2026, 11, 30, 7, 0, tzinfo=datetime.UTC)
    assert value.tzinfo is datetime.UTC


def test_every_value_is_what_djangos_loader_gives() -> None:
    with connection.cursor() as cursor:
        cursor.execute(QUERY, [VALUES])
        ours = cursor.fetchall()
    with connection.cursor() as cursor:
        register_tzloader(connection.timezone, cursor.cursor)  # Django's Python loader
        assert cursor.cursor.adapters.get_loader(1184, 0) is not UtcTimestamptzLoader
        cursor.execute(QUERY, [VALUES])
        djangos = cursor.fetchall()
    assert len(ours) == len(VALUES) + 1
    assert ours == djangos
    for (a, array_a), (b, _) in zip(ours[:-1], djangos[:-1], strict=True):
        assert a.tzinfo is b.tzinfo is datetime.UTC
        assert array_a[0] == a and array_a[1] is None
    assert ours[-1] == (None, None)


def test_the_orm_reads_what_it_wrote() -> None:
    from django.contrib.auth import get_user_model

    at = timezone.now().replace(microsecond=123456)
    user = get_user_model().objects.create(username="clock", last_login=at)
    read = get_user_model().objects.get(pk=user.pk).last_login
    assert read == at and read.tzinfo is datetime.UTC
