"""Helpers for throwaway databases only: never call them on books that matter.

``ledger_purge`` empties the ledger past its append-only triggers. Tests that commit (pytest's
``django_db(transaction=True)``) need it before their teardown: Django's flush truncates every
table, and the triggers refuse that while the ledger holds rows. The bypass is deliberate DDL
(disabling or dropping the triggers inside one transaction), which needs the table owner's
rights; no setting or flag turns the triggers off.
"""

from __future__ import annotations

from django.db import DEFAULT_DB_ALIAS, connections, transaction

TABLES = ("ledger_posting", "ledger_journalentry", "ledger_account")


def ledger_purge(*, using: str = DEFAULT_DB_ALIAS) -> None:
    """Delete every posting, entry and account, with the triggers suspended meanwhile."""
    connection = connections[using]
    with transaction.atomic(using=using), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            for table in TABLES:
                cursor.execute(f"ALTER TABLE {table} DISABLE TRIGGER USER")
            cursor.execute("TRUNCATE ledger_posting, ledger_journalentry")
            cursor.execute("DELETE FROM ledger_account")
            # Run the deferred foreign-key checks now: a table with pending trigger events
            # cannot be altered.
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
            cursor.execute("SET CONSTRAINTS ALL DEFERRED")
            for table in TABLES:
                cursor.execute(f"ALTER TABLE {table} ENABLE TRIGGER USER")
        else:
            # SQLite cannot disable a trigger: drop them and create them again, same SQL.
            placeholders = ", ".join(["%s"] * len(TABLES))
            cursor.execute(
                "SELECT name, sql FROM sqlite_master"
                f" WHERE type = 'trigger' AND tbl_name IN ({placeholders})",
                list(TABLES),
            )
            triggers = cursor.fetchall()
            for name, _ in triggers:
                cursor.execute(f'DROP TRIGGER "{name}"')
            for table in TABLES:
                cursor.execute(f"DELETE FROM {table}")
            for _, sql in triggers:
                cursor.execute(sql)
