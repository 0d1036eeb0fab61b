"""Helpers for throwaway databases only: never call them on books that matter.

``ledger_purge`` empties the ledger past its append-only triggers: for a throwaway database,
or before Django's flush in a test that commits (``django_db(transaction=True)``) on SQLite,
where flush deletes every row and the triggers refuse that while the ledger holds rows.
(On PostgreSQL, tests/conftest.py flushes with ``session_replication_role = replica``.)
The bypass is deliberate DDL (disabling or dropping the triggers inside one transaction),
which needs the table owner's rights; no setting or flag turns the triggers off.
"""

from __future__ import annotations

from django.db import DEFAULT_DB_ALIAS, connections, transaction

TABLES = ("ledger_posting", "ledger_journalentry", "ledger_account")


def ledger_purge(*, using: str = DEFAULT_DB_ALIAS) -> None:
    """Delete every posting, entry and account, with the triggers suspended meanwhile."""
    connection = connections[using]
    with transaction.atomic(using=using), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # Run pending deferred checks now: a table with pending trigger events cannot be
            # altered. Back to deferred at the end, as Django's own constraint checks do.
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
            for table in TABLES:
                cursor.execute(f"ALTER TABLE {table} DISABLE TRIGGER USER")
            cursor.execute("TRUNCATE ledger_posting, ledger_journalentry")
            cursor.execute("DELETE FROM ledger_account")
            for table in TABLES:
                cursor.execute(f"ALTER TABLE {table} ENABLE TRIGGER USER")
            cursor.execute("SET CONSTRAINTS ALL DEFERRED")
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
