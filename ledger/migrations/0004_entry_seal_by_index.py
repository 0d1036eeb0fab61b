"""PostgreSQL: the entry seal (``ledger_entry_seal`` of 0002) reads each posting's account by
its primary key.

The seal joined an entry's postings to their accounts. PL/pgSQL keeps a generic plan for it,
built from the table's average number of postings per entry, which a few large entries (a
soirée's buy-ins, grants to many players) raise to hundreds: the plan then hashed the whole
account table at every entry (a sequential scan of every account, most of the database's CPU
for a game's move; bench/api_bench.md). A correlated lookup of each posting's account cannot
turn into a scan. Same checks, same messages; SQLite is unchanged.
"""

from typing import Any

from django.db import migrations

ERR = "USING ERRCODE = 'integrity_constraint_violation'"


def _seal(club_of_posting: str, postings: str) -> str:
    return f"""
    CREATE OR REPLACE FUNCTION ledger_entry_seal() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
        lines bigint;
        total numeric;
        strays bigint;
    BEGIN
        SELECT count(*), coalesce(sum(p.amount), 0),
               count(*) FILTER (WHERE p.at IS DISTINCT FROM NEW.at
                                   OR {club_of_posting} IS DISTINCT FROM NEW.club_key)
          INTO lines, total, strays
          FROM {postings}
         WHERE p.entry_id = NEW.id;
        IF lines < 2 OR total <> 0 THEN
            RAISE EXCEPTION 'ledger: entry % has % posting(s) summing to %; an entry needs two '
                'or more postings, written before it, that sum to zero', NEW.id, lines, total {ERR};
        END IF;
        IF strays > 0 THEN
            RAISE EXCEPTION 'ledger: the postings of entry % must carry its time and belong to '
                'its club %', NEW.id, NEW.club_key {ERR};
        END IF;
        RETURN NEW;
    END $$
    """


BY_INDEX = _seal("(SELECT a.club_key FROM ledger_account a WHERE a.id = p.account_id)",
                 "ledger_posting p")
# 0002 as it was
JOINED = _seal("a.club_key", "ledger_posting p JOIN ledger_account a ON a.id = p.account_id")



def _run(statement: str) -> Any:
    def run(apps: Any, schema_editor: Any) -> None:
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(statement, params=None)

    return run


class Migration(migrations.Migration):
    dependencies = [("ledger", "0003_ledger_post")]

    operations = [migrations.RunPython(_run(BY_INDEX), _run(JOINED))]
