"""PostgreSQL: the ledger's functions plan their lookups by index, whatever the tables' size when
a connection first calls them (``enable_seqscan = off`` for the length of each call).

``ledger_lock``, ``ledger_post`` and ``ledger_post_many`` keep one generic plan per connection
(``plan_cache_mode = force_generic_plan``, 0003), made at its first call. A generic plan takes
an array parameter for ten values, so while the accounts and the journal were small (a new
club, a benchmark's fresh database) the planner preferred to scan them whole: the key lookup
read every journal entry at every batch (1,103 rows for a batch of two keys) and the account
lock every account. Those costs grew with the books until an ANALYZE replanned. Measured on a
game's batch (bench/api_bench.md, eighteenth round): ``ledger_post_many`` 0.72–0.76 ms of
server time per call against 0.86–1.14 ms; the entry seal, which runs inside the call and so
under the same setting, 32–34 µs against 64–90 µs.

Every statement these functions run, and the triggers they fire (0002, 0004), finds its rows
by a key with an index (an account's id, an entry's id or idempotency key, a posting's entry),
so no lookup needs a scan. A later ``CREATE OR REPLACE`` of one of them replaces its settings:
it must keep this one (tests/ledger/test_services.py reads the plans). SQLite has
neither the functions nor plans kept per connection.
"""

from collections.abc import Callable
from typing import Any

from django.db import migrations

FUNCTIONS = [
    "ledger_lock(text[], bigint[])",
    "ledger_post(text, text, text, text, bigint[], bigint[], timestamptz, timestamptz, bigint,"
    " bigint)",
    "ledger_post_many(text[], text[], text[], text[], bigint[], integer[], bigint[], bigint[],"
    " timestamptz, timestamptz)",
]


def _run(template: str) -> Callable[[Any, Any], None]:
    def run(apps: Any, schema_editor: Any) -> None:
        if schema_editor.connection.vendor == "postgresql":
            for function in FUNCTIONS:
                schema_editor.execute(template.format(function=function), params=None)

    return run


class Migration(migrations.Migration):
    dependencies = [("ledger", "0006_ledger_post_many_shortfalls")]

    operations = [
        migrations.RunPython(_run("ALTER FUNCTION {function} SET enable_seqscan = off"),
                             _run("ALTER FUNCTION {function} RESET enable_seqscan")),
    ]
