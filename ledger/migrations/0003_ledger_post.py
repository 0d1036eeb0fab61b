"""PostgreSQL: an entry in one statement (``ledger_post``); the other writers' locks and
lookups in one (``ledger_lock``). SQLite keeps the Python path of ledger.services.writer.

Profiled (bench/ledger_bench.py, cProfile and timings per statement), posting one entry inside
a transaction cost eight round trips: BEGIN, savepoint, lock, key lookup, postings, entry,
release, COMMIT; the round trips, not the database's work, were most of its time.
``ledger_post`` does the same steps inside the server, in the same order, and answers with
what Python needs to build the entry or the error:

1. the key's lock, a transaction-level advisory lock on the key's hash (``ledger_lock`` takes
   the same locks for the writers that stay in Python): writers of one key queue up here, so
   a retry racing the first writer waits for it and then finds its entry, instead of failing
   on the unique index, which would abort the caller's transaction;
2. the accounts, locked in id order, as every writer does, so that no two deadlock (FOR NO
   KEY UPDATE: it queues balance writers as FOR UPDATE does, without blocking foreign-key
   checks on the account);
3. the key looked up (in READ COMMITTED each statement takes a fresh snapshot: this one sees
   an entry committed while we waited for the locks);
4. funds: a wallet or pot that would go below zero is reported, nothing written;
5. the entry's time: never before an account's last posting (``p_at`` null: the later of
   ``p_now``, Python's clock, and that last posting; else ``p_at``, or a refusal);
6. the postings, then the entry that seals them, through the triggers of 0002, which still
   enforce every rule whoever writes (and the deferred check at commit).

A refusal (missing account, funds, backdating, a key already used) is an answer, not an error:
no statement fails, so no savepoint is needed and the caller's transaction stays usable.
Every writer takes the keys' locks first and the accounts' second.

``plan_cache_mode = force_generic_plan``: the statements on ``= ANY (array)`` were otherwise
planned again at every call (a custom plan; 5 % of the server's time for an entry), for the
same plan as the generic one.
"""

from collections.abc import Callable
from typing import Any

from django.db import migrations

# Advisory locks are keyed (class, object); the class keeps the ledger's apart from any other.
KEY_LOCK_CLASS = 1281713255  # "Ledg"

POSTGRES_INSTALL = [
    f"""
    CREATE OR REPLACE FUNCTION ledger_lock(
        p_keys text[], p_accounts bigint[],
        OUT ids bigint[], OUT balances bigint[], OUT last_posted timestamptz[],
        OUT taken_keys text[], OUT taken_ids bigint[], OUT new_ids bigint[]
    ) LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
    -- For the writers that stay in Python (a batch, or an entry planned on locked balances):
    -- steps 1 to 3 of ledger_post for many keys, and ids for the entries of the keys not taken.
    DECLARE
        h integer;
    BEGIN
        -- In hash order, so that two batches sharing keys never wait for each other in a circle.
        FOR h IN SELECT DISTINCT hashtext(k) FROM unnest(p_keys) AS k ORDER BY 1 LOOP
            PERFORM pg_advisory_xact_lock({KEY_LOCK_CLASS}, h);
        END LOOP;
        SELECT array_agg(a.id ORDER BY a.id), array_agg(a.balance ORDER BY a.id),
               array_agg(a.last_posted_at ORDER BY a.id)
          INTO ids, balances, last_posted
          FROM (SELECT id, balance, last_posted_at FROM ledger_account
                 WHERE id = ANY (p_accounts) ORDER BY id FOR NO KEY UPDATE) AS a;
        SELECT array_agg(e.idempotency_key ORDER BY e.id), array_agg(e.id ORDER BY e.id)
          INTO taken_keys, taken_ids
          FROM ledger_journalentry e WHERE e.idempotency_key = ANY (p_keys);
        new_ids := ARRAY(
            SELECT nextval(pg_get_serial_sequence('ledger_journalentry', 'id'))
              FROM generate_series(1, cardinality(p_keys) - coalesce(cardinality(taken_keys), 0)));
    END $$
    """,
    f"""
    CREATE OR REPLACE FUNCTION ledger_post(
        p_key text, p_source text, p_memo text, p_club text,
        p_accounts bigint[], p_amounts bigint[], p_at timestamptz, p_now timestamptz,
        p_shortfall bigint, p_reverses bigint,
        OUT outcome text, OUT posted_id bigint, OUT posted_at timestamptz,
        OUT balances bigint[], OUT short_index integer, OUT missing bigint[]
    ) LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
    -- outcome: 'written' (posted_id, posted_at, balances after it), 'replay' (posted_id: the
    -- entry holding the key; balances now), 'missing' (missing: unknown account ids),
    -- 'short' (short_index: the 1-based line that would go below zero; balances now),
    -- 'backdated' (posted_at: the accounts' last posting, later than p_at).
    DECLARE
        n integer := cardinality(p_accounts);
        kinds text[] := array_fill(NULL::text, ARRAY[n]);
        latest timestamptz;
        locked integer := 0;
        r record;
        i integer;
    BEGIN
        balances := array_fill(NULL::bigint, ARRAY[n]);
        PERFORM pg_advisory_xact_lock({KEY_LOCK_CLASS}, hashtext(p_key));
        FOR r IN SELECT a.id, a.balance, a.kind, a.last_posted_at FROM ledger_account a
                  WHERE a.id = ANY (p_accounts) ORDER BY a.id FOR NO KEY UPDATE LOOP
            i := array_position(p_accounts, r.id);
            balances[i] := r.balance;
            kinds[i] := r.kind;
            latest := greatest(latest, r.last_posted_at);
            locked := locked + 1;
        END LOOP;
        IF locked < n THEN
            outcome := 'missing';
            missing := ARRAY(SELECT p_accounts[j] FROM generate_series(1, n) AS j
                              WHERE balances[j] IS NULL ORDER BY 1);
            RETURN;
        END IF;
        SELECT e.id INTO posted_id FROM ledger_journalentry e WHERE e.idempotency_key = p_key;
        IF FOUND THEN
            outcome := 'replay';
            RETURN;
        END IF;
        FOR j IN 1 .. n LOOP
            IF kinds[j] <> 'bank' AND balances[j] + p_amounts[j] < 0 THEN
                outcome := 'short';
                short_index := j;
                RETURN;
            END IF;
        END LOOP;
        IF p_at IS NULL THEN
            posted_at := greatest(p_now, latest);
        ELSIF p_at < latest THEN
            outcome := 'backdated';
            posted_at := latest;
            RETURN;
        ELSE
            posted_at := p_at;
        END IF;
        posted_id := nextval(pg_get_serial_sequence('ledger_journalentry', 'id'));
        FOR j IN 1 .. n LOOP
            balances[j] := balances[j] + p_amounts[j];
            INSERT INTO ledger_posting (entry_id, account_id, amount, balance_after, at)
            VALUES (posted_id, p_accounts[j], p_amounts[j], balances[j], posted_at);
        END LOOP;
        INSERT INTO ledger_journalentry
            (id, idempotency_key, club_key, at, memo, source, shortfall, reverses_id)
        VALUES (posted_id, p_key, p_club, posted_at, p_memo, p_source, p_shortfall, p_reverses);
        outcome := 'written';
    END $$
    """,
]

POSTGRES_UNINSTALL = [
    "DROP FUNCTION IF EXISTS ledger_lock(text[], bigint[])",
    "DROP FUNCTION IF EXISTS ledger_post(text, text, text, text, bigint[], bigint[],"
    " timestamptz, timestamptz, bigint, bigint)",
]


def _run(statements_by_vendor: dict[str, list[str]]) -> Callable[[Any, Any], None]:
    def run(apps: Any, schema_editor: Any) -> None:
        # SQLite has one writer at a time and no server to save round trips to: nothing to do.
        for statement in statements_by_vendor.get(schema_editor.connection.vendor, []):
            schema_editor.execute(statement, params=None)

    return run


class Migration(migrations.Migration):
    dependencies = [("ledger", "0002_books_triggers")]

    operations = [
        migrations.RunPython(
            _run({"postgresql": POSTGRES_INSTALL}), _run({"postgresql": POSTGRES_UNINSTALL})
        ),
    ]
