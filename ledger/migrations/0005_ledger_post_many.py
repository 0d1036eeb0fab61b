"""PostgreSQL: a batch of entries in one statement (``ledger_post_many``), as ``ledger_post``
writes one entry. SQLite keeps the Python path of ledger.services.writer.

Profiled (bench/api_bench.md, third round), a game's batch (a hand's antes, its payments) cost
1.5 to 2.7 ms: ``ledger_lock``, then both INSERTs sent as one query with a placeholder per
value, which psycopg parses again at every call (a statement of that length is not cached) and
PostgreSQL plans again. This function takes the batch as arrays (a statement whose text never
changes, so psycopg converts it once; the function's own statements keep their plans for the
connection) and runs ``ledger_post``'s steps for all of it:

1. the keys' locks, in hash order (as ``ledger_lock``);
2. the accounts, locked in id order;
3. the keys looked up: if any is taken the batch writes nothing and answers ``'taken'``, and
   Python takes its own path (replays, and conflicts checked against the stored postings);
4. funds, line after line on the balances the earlier lines leave (an entry never names an
   account twice, so this is the Python check, ``check_funds``, entry after entry);
5. the entries' time (one for the batch): never before an account's last posting;
6. the postings in order with the balance each leaves, then the entries that seal them,
   through the triggers of 0002/0004, which still enforce every rule.

Any refusal ('missing', 'short', 'backdated', 'taken') writes nothing and fails no statement,
so the caller's transaction stays usable; Python then runs its own path on the locked rows to
raise the same error as before, with the same message.
"""

from collections.abc import Callable
from typing import Any

from django.db import migrations

KEY_LOCK_CLASS = 1281713255  # as 0003: the ledger's advisory locks

POSTGRES_INSTALL = [
    f"""
    CREATE OR REPLACE FUNCTION ledger_post_many(
        p_keys text[], p_sources text[], p_memos text[], p_clubs text[],
        p_entry_of integer[], p_accounts bigint[], p_amounts bigint[],
        p_at timestamptz, p_now timestamptz,
        OUT outcome text, OUT entry_ids bigint[], OUT posted_at timestamptz,
        OUT after bigint[]
    ) LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
    -- outcome: 'written' (entry_ids in the order of p_keys, posted_at, after: the balance each
    -- line leaves), or a refusal that wrote nothing: 'missing', 'taken', 'short', 'backdated'.
    -- Entry k's lines are the lines j with p_entry_of[j] = k, in the order of p_keys.
    DECLARE
        h integer;
        ids bigint[];
        held bigint[];
        kinds text[];
        latest timestamptz;
        r record;
        i integer;
        n integer := cardinality(p_accounts);
    BEGIN
        FOR h IN SELECT DISTINCT hashtext(k) FROM unnest(p_keys) AS k ORDER BY 1 LOOP
            PERFORM pg_advisory_xact_lock({KEY_LOCK_CLASS}, h);
        END LOOP;
        ids := '{{}}'; held := '{{}}'; kinds := '{{}}';
        FOR r IN SELECT a.id, a.balance, a.kind, a.last_posted_at FROM ledger_account a
                  WHERE a.id = ANY (p_accounts) ORDER BY a.id FOR NO KEY UPDATE LOOP
            ids := ids || r.id;
            held := held || r.balance;
            kinds := kinds || r.kind::text;
            latest := greatest(latest, r.last_posted_at);
        END LOOP;
        IF cardinality(ids) < (SELECT count(DISTINCT a) FROM unnest(p_accounts) AS a) THEN
            outcome := 'missing';
            RETURN;
        END IF;
        PERFORM 1 FROM ledger_journalentry e WHERE e.idempotency_key = ANY (p_keys);
        IF FOUND THEN
            outcome := 'taken';
            RETURN;
        END IF;
        after := array_fill(NULL::bigint, ARRAY[n]);
        FOR j IN 1 .. n LOOP
            i := array_position(ids, p_accounts[j]);
            held[i] := held[i] + p_amounts[j];
            IF kinds[i] <> 'bank' AND held[i] < 0 THEN
                outcome := 'short';
                RETURN;
            END IF;
            after[j] := held[i];
        END LOOP;
        IF p_at IS NULL THEN
            posted_at := greatest(p_now, latest);
        ELSIF p_at < latest THEN
            outcome := 'backdated';
            RETURN;
        ELSE
            posted_at := p_at;
        END IF;
        entry_ids := ARRAY(
            SELECT nextval(pg_get_serial_sequence('ledger_journalentry', 'id'))
              FROM generate_series(1, cardinality(p_keys)));
        INSERT INTO ledger_posting (entry_id, account_id, amount, balance_after, at)
        SELECT entry_ids[u.e], u.a, u.m, u.b, posted_at
          FROM unnest(p_entry_of, p_accounts, p_amounts, after) WITH ORDINALITY AS u(e, a, m, b, o)
         ORDER BY u.o;
        INSERT INTO ledger_journalentry
            (id, idempotency_key, club_key, at, memo, source, shortfall, reverses_id)
        SELECT u.id, u.k, u.c, posted_at, u.m, u.s, 0, NULL
          FROM unnest(entry_ids, p_keys, p_clubs, p_memos, p_sources)
               WITH ORDINALITY AS u(id, k, c, m, s, o)
         ORDER BY u.o;
        outcome := 'written';
    END $$
    """,
]

POSTGRES_UNINSTALL = [
    "DROP FUNCTION IF EXISTS ledger_post_many(text[], text[], text[], text[], integer[],"
    " bigint[], bigint[], timestamptz, timestamptz)",
]


def _run(statements_by_vendor: dict[str, list[str]]) -> Callable[[Any, Any], None]:
    def run(apps: Any, schema_editor: Any) -> None:
        for statement in statements_by_vendor.get(schema_editor.connection.vendor, []):
            schema_editor.execute(statement, params=None)

    return run


class Migration(migrations.Migration):
    dependencies = [("ledger", "0004_entry_seal_by_index")]

    operations = [
        migrations.RunPython(
            _run({"postgresql": POSTGRES_INSTALL}), _run({"postgresql": POSTGRES_UNINSTALL})
        ),
    ]
