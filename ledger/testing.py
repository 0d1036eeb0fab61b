"""Helpers for throwaway databases only: never call them on books that matter.

``ledger_purge`` empties the ledger past its append-only triggers, for a throwaway database.
On PostgreSQL the bypass is deliberate DDL (disabling the triggers inside one transaction),
which needs the table owner's rights; SQLite has no triggers to bypass.
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
            for table in TABLES:
                cursor.execute(f"DELETE FROM {table}")
