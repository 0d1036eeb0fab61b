"""PostgreSQL: ``ledger_post``, one entry written in one statement (SQLite keeps the Python path).

Posting an entry used to cost eight round trips when called inside a transaction (savepoint,
lock, key lookup, postings, entry, release, plus the caller's BEGIN and COMMIT), and the round
trips, not the database's work, were most of its time. ``ledger_post`` does the same steps
inside the server, in the same order, and answers with what Python needs to build the entry
or the error:

1. the key's lock (a transaction-level advisory lock on the key's hash; ``ledger_lock_keys``
   takes the same locks for the writers that stay in Python): writers of one key queue up
   here, so a retry racing the first writer waits for it and then finds its entry, instead of
   failing on the unique index, which would abort the caller's transaction;
2. the accounts, locked in id order (FOR NO KEY UPDATE: it orders balance writers like FOR
   UPDATE, without blocking foreign-key checks on the account);
3. the key looked up (a fresh snapshot in READ COMMITTED, taken after both locks);
4. funds: a wallet or pot that would go below zero is reported, nothing written;
5. the entry's time: never before an account's last posting (``p_at`` null: the later of
   ``p_now``, Python's clock, and that last posting; else ``p_at``, or a refusal);
6. the postings, then the entry that seals them, through the triggers of 0002, which still
   enforce every rule whoever writes.

A refusal (missing account, funds, backdating) is an answer, not an error: no statement fails,
so the function needs no savepoint, and the caller's transaction stays usable. Every writer of
entries (ledger.services.writer) takes the key's lock first and the accounts' locks second.
"""

from collections.abc import Callable
from typing import Any

from django.db import migrations

# Advisory locks are keyed (class, object); the class keeps the ledger's apart from any other.
KEY_LOCK_CLASS = 1281713255  # "Ledg"

POSTGRES_INSTALL = [
    f"""
    CREATE OR REPLACE FUNCTION ledger_lock_keys(p_keys text[]) RETURNS void
    LANGUAGE sql AS $$
        -- Sorted, so that two batches sharing keys never wait for each other in a circle.
        SELECT count(pg_advisory_xact_lock({KEY_LOCK_CLASS}, h))
          FROM (SELECT DISTINCT hashtext(k) AS h FROM unnest(p_keys) AS k ORDER BY 1) AS s;
    $$
    """,
    f"""
    CREATE OR REPLACE FUNCTION ledger_post(
        p_key text, p_source text, p_memo text, p_club text,
        p_accounts bigint[], p_amounts bigint[], p_at timestamptz, p_now timestamptz,
        p_shortfall bigint, p_reverses bigint,
        OUT outcome text, OUT posted_id bigint, OUT posted_at timestamptz,
        OUT balances bigint[], OUT short_index integer, OUT missing bigint[]
    ) LANGUAGE plpgsql AS $$
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
    "DROP FUNCTION IF EXISTS ledger_lock_keys(text[])",
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
