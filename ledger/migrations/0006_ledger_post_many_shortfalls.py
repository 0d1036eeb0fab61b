"""PostgreSQL: ``ledger_post_many`` keeps each entry's shortfall (``p_shortfalls``), as
``ledger_post`` (0003) and the Python path keep it. Until now a batch wrote 0 for every entry,
so a game entry whose memo told of a shortfall (RULES.md §3) showed none in its field.

Same steps and refusals as 0005's function otherwise; the old signature is dropped, and
restored on the way back. SQLite keeps the Python path of ledger.services.writer.
"""

from collections.abc import Callable
from importlib import import_module
from typing import Any

from django.db import migrations

BEFORE = import_module("ledger.migrations.0005_ledger_post_many")

OLD_SIGNATURE = ("ledger_post_many(text[], text[], text[], text[], integer[], bigint[], bigint[],"
                 " timestamptz, timestamptz)")
NEW_SIGNATURE = ("ledger_post_many(text[], text[], text[], text[], bigint[], integer[], bigint[],"
                 " bigint[], timestamptz, timestamptz)")


def _with_shortfalls(function: str) -> str:
    """0005's function text with the shortfalls taken and written."""
    steps = [
        ("p_keys text[], p_sources text[], p_memos text[], p_clubs text[],\n",
         "p_keys text[], p_sources text[], p_memos text[], p_clubs text[], p_shortfalls bigint[],\n"),
        ("SELECT u.id, u.k, u.c, posted_at, u.m, u.s, 0, NULL\n"
         "          FROM unnest(entry_ids, p_keys, p_clubs, p_memos, p_sources)\n"
         "               WITH ORDINALITY AS u(id, k, c, m, s, o)",
         "SELECT u.id, u.k, u.c, posted_at, u.m, u.s, coalesce(u.sh, 0), NULL\n"
         "          FROM unnest(entry_ids, p_keys, p_clubs, p_memos, p_sources, p_shortfalls)\n"
         "               WITH ORDINALITY AS u(id, k, c, m, s, sh, o)"),
    ]
    for old, new in steps:
        assert function.count(old) == 1, old
        function = function.replace(old, new)
    return function


POSTGRES_INSTALL = [f"DROP FUNCTION IF EXISTS {OLD_SIGNATURE}",
                    *(_with_shortfalls(f) for f in BEFORE.POSTGRES_INSTALL)]
POSTGRES_UNINSTALL = [f"DROP FUNCTION IF EXISTS {NEW_SIGNATURE}", *BEFORE.POSTGRES_INSTALL]


def _run(statements: list[str]) -> Callable[[Any, Any], None]:
    def run(apps: Any, schema_editor: Any) -> None:
        if schema_editor.connection.vendor == "postgresql":
            for statement in statements:
                schema_editor.execute(statement, params=None)

    return run


class Migration(migrations.Migration):
    dependencies = [("ledger", "0005_ledger_post_many")]

    operations = [migrations.RunPython(_run(POSTGRES_INSTALL), _run(POSTGRES_UNINSTALL))]
