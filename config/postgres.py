"""PostgreSQL connections: read ``timestamptz`` values with psycopg's C loader.

Django (5.2) registers its own loader for ``timestamptz`` on every psycopg 3 connection
(``django.db.backends.postgresql.psycopg_any.register_tzloader``): a subclass of psycopg's
*Python* ``TimestamptzLoader``, which parses each value in Python and then replaces its tzinfo
with the connection's time zone. psycopg's C build (``psycopg[binary]``) has a C loader, but it
cannot be subclassed, so Django's loader never uses it. Profiled (bench/api_bench.md, tenth
round), that parsing was about a tenth of the CPU of a move that ends a hand, which reads and
reads back a few dozen timestamps; the C loader parses a value six times faster.

On a connection whose time zone is UTC (``USE_TZ`` on and no ``TIME_ZONE`` in the database's
settings, this project's case), the C loader's value is exactly Django's: an aware datetime
whose tzinfo is ``datetime.timezone.utc``, as Django's ``replace(tzinfo=UTC)`` gives. Elsewhere
(another time zone, USE_TZ off, no C build) Django's loader is left in place.
"""

from __future__ import annotations

import datetime
from typing import Any

from django.db.backends.base.base import BaseDatabaseWrapper

try:
    from psycopg import adapt, adapters, postgres
    from psycopg.pq import Format
except ImportError:  # SQLite only: no psycopg installed
    adapt = None  # type: ignore[assignment]

UTC = datetime.UTC


def _c_loader() -> type | None:
    """psycopg's C ``timestamptz`` text loader, or ``None`` without the C build."""
    if adapt is None:
        return None
    found = adapters.get_loader(postgres.types["timestamptz"].oid, Format.TEXT)
    return found if found is not None and found.__module__.startswith("psycopg_") else None


_C_LOADER = _c_loader()


class UtcTimestamptzLoader(adapt.Loader if adapt is not None else object):  # type: ignore[misc]
    """``timestamptz`` through the C loader, for a connection in UTC. ``timezone`` is the
    attribute Django compares with the connection's time zone before it registers its own
    loader again on a cursor (``DatabaseWrapper.create_cursor``)."""

    timezone = UTC

    def __init__(self, oid: int, context: Any = None) -> None:
        super().__init__(oid, context)
        assert _C_LOADER is not None
        # The C method itself, bound once: psycopg's row loader calls it for every value
        # without a Python frame of ours in between.
        self.load = _C_LOADER(oid, context).load  # type: ignore[method-assign]

    def load(self, data: Any) -> Any:  # psycopg's abstract method; the instance's is used
        raise NotImplementedError  # pragma: no cover - replaced in __init__


def use_c_timestamptz_loader(sender: Any, connection: BaseDatabaseWrapper, **kwargs: Any) -> None:
    """``connection_created`` receiver: install ``UtcTimestamptzLoader`` where it gives what
    Django's loader gives (see the module's docstring)."""
    if connection.vendor != "postgresql" or _C_LOADER is None:
        return
    if connection.timezone is not UTC or connection.timezone_name != "UTC":
        return
    raw = connection.connection
    if raw.pgconn.parameter_status(b"TimeZone") != b"UTC":  # psycopg's timezone.utc then
        return
    raw.adapters.register_loader("timestamptz", UtcTimestamptzLoader)
