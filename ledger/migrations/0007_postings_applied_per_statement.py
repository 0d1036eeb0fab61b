"""PostgreSQL: a statement's postings are applied to their accounts once per statement, not
once per row.

``ledger_posting_apply`` (0002) ran for each posting: a look-up of its entry, then an UPDATE of
its account, each a trigger call of its own. A game's batch (a hand's payments and the next
hand's antes: 2 entries, 10 postings, 5 accounts) spent about 0.45 ms of its 0.9 ms there
(bench/api_bench.md, seventeenth round). The trigger is now an AFTER ... FOR EACH STATEMENT
trigger on the statement's transition table (``added``), with the same rules:

1. the accounts are locked in id order (FOR NO KEY UPDATE), as the ledger's functions lock
   them (0003, 0005): a statement waiting for an account holds none of the higher ones, so it
   cannot deadlock with a writer that locks in the same order (the per-row trigger locked
   each account as its row came);
2. each account's postings, in the order written (their ids), must name no entry already
   written, be no earlier than the one before (the first: than the account's last posting),
   leave a wallet or pot at zero or more (the CHECK constraint on ``ledger_account`` saw each
   posting's balance; it sees only the statement's last now), and state the balance they
   leave (``balance_after``);
3. each account is then updated once, by the sum of its postings, to the time of its last.

The first posting at fault (by id) is refused with the per-row trigger's message, and a
posting at fault in two ways with the one that trigger checked first, in the order above. Every query
has one plan whatever the statement's size (arrays and ``= ANY``, an ordered scan of the
transition table, a walk in PL/pgSQL): plans that join the transition table are cached for
the connection with the first statement's row count, and one cached for a single posting
made a batch of thousands quadratic (now 18–29 µs a posting at any size). The function runs
with ``enable_seqscan = off``: a plan made while the tables were small scanned them whole
(the look-up of written entries, the accounts' UPDATE) and stayed cached for the connection
as they grew (a benchmark's server: 6.1 ms of CPU a move against 3.6). Two cases
differ from the per-row trigger: a posting skipped by ON CONFLICT DO NOTHING is not in the
transition table and moves no balance (the per-row trigger had moved it); and postings
written in the same statement as their entry (one statement of CTEs) are refused, since the
entry exists when the trigger runs (the ledger writes the postings, then the entry, each in
a statement of its own). The trigger keeps its name, so ``check_books`` finds it.

``ledger_post`` (0003), which wrote an entry's postings one INSERT each, now writes them in
one: the trigger's cost is per statement (about 0.1 ms), and a transfer paid it twice. SQLite
is unchanged.
"""

from importlib import import_module
from typing import Any

from django.db import migrations

ERR = "USING ERRCODE = 'integrity_constraint_violation'"

LEDGER_POST = import_module("ledger.migrations.0003_ledger_post")
_ONE_BY_ONE = """        FOR j IN 1 .. n LOOP
            balances[j] := balances[j] + p_amounts[j];
            INSERT INTO ledger_posting (entry_id, account_id, amount, balance_after, at)
            VALUES (posted_id, p_accounts[j], p_amounts[j], balances[j], posted_at);
        END LOOP;
"""
_TOGETHER = """        FOR j IN 1 .. n LOOP
            balances[j] := balances[j] + p_amounts[j];
        END LOOP;
        INSERT INTO ledger_posting (entry_id, account_id, amount, balance_after, at)
        SELECT posted_id, u.a, u.m, u.b, posted_at
          FROM unnest(p_accounts, p_amounts, balances) WITH ORDINALITY AS u(a, m, b, o)
         ORDER BY u.o;
"""


def _ledger_post(old: str, new: str) -> str:
    """0003's ``ledger_post``, its postings written by ``new`` instead of ``old``."""
    functions: list[str] = LEDGER_POST.POSTGRES_INSTALL
    [function] = [f for f in functions if "FUNCTION ledger_post(" in f]
    assert function.count(old) == 1, old
    return function.replace(old, new)

POSTGRES_INSTALL = [
    f"""
    CREATE OR REPLACE FUNCTION ledger_postings_apply() RETURNS trigger LANGUAGE plpgsql
    SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
    DECLARE
        account_ids bigint[];
        ids bigint[] := '{{}}';
        held bigint[] := '{{}}';
        kinds text[] := '{{}}';
        latest timestamptz[] := '{{}}';
        moved bigint[];
        r record;
        i integer := 0;
        n integer;
        previous bigint;
        written bigint[];
        fault text;
        bad_id bigint;
        bad_account bigint;
        bad_leaves bigint;
        bad_fault text;
    BEGIN
        -- The accounts, and the entries already written (none, unless the statement is
        -- refused), looked up by their index whatever the plan: ``= ANY`` of an array.
        SELECT array_agg(DISTINCT a.account_id),
               (SELECT array_agg(e.id) FROM ledger_journalentry e
                 WHERE e.id = ANY (ARRAY(SELECT DISTINCT b.entry_id FROM added b)))
          INTO account_ids, written FROM added a;
        IF account_ids IS NULL THEN
            RETURN NULL;  -- no row
        END IF;
        -- The accounts locked in id order, as the ledger's functions lock them (0003, 0005).
        FOR r IN SELECT a.id, a.balance, a.kind::text AS kind, a.last_posted_at
                   FROM ledger_account a WHERE a.id = ANY (account_ids)
                  ORDER BY a.id FOR NO KEY UPDATE LOOP
            ids := ids || r.id;
            held := held || r.balance;
            kinds := kinds || r.kind;
            latest := latest || r.last_posted_at;
        END LOOP;
        n := cardinality(ids);
        moved := array_fill(0::bigint, ARRAY[n]);
        -- Each account's postings in the order written: both lists are sorted by account, so
        -- one walk pairs them. The first fault by posting id is the one named, and a posting's
        -- faults in the per-row trigger's order: its entry, its account and time, its balance.
        FOR r IN SELECT a.id, a.entry_id, a.account_id, a.amount, a.balance_after, a.at
                   FROM added a ORDER BY a.account_id, a.id LOOP
            IF previous IS DISTINCT FROM r.account_id THEN
                previous := r.account_id;
                WHILE i < n AND ids[i + 1] <= r.account_id LOOP
                    i := i + 1;
                END LOOP;
            END IF;
            fault := NULL;
            IF r.entry_id = ANY (written) THEN
                fault := format('ledger: entry %s is already written; the postings of an entry '
                                'are written before it, never after', r.entry_id);
            ELSIF i = 0 OR ids[i] <> r.account_id OR latest[i] > r.at THEN
                fault := format('ledger: posting at %s to account %s: no such account, or '
                                'earlier than its last posting', r.at, r.account_id);
            ELSE
                held[i] := held[i] + r.amount;
                moved[i] := moved[i] + r.amount;
                latest[i] := r.at;
                IF kinds[i] <> 'bank' AND held[i] < 0 THEN
                    fault := 'negative';
                ELSIF r.balance_after IS DISTINCT FROM held[i] THEN
                    fault := format('ledger: posting to account %s states balance_after %s, '
                                    'but the account now holds %s', r.account_id,
                                    r.balance_after, held[i]);
                END IF;
            END IF;
            IF fault IS NOT NULL AND (bad_id IS NULL OR r.id < bad_id) THEN
                bad_id := r.id;
                bad_account := r.account_id;
                bad_leaves := held[i];
                bad_fault := fault;
            END IF;
        END LOOP;
        IF bad_fault = 'negative' THEN
            RAISE EXCEPTION 'ledger: posting to account % would leave it at %: only the bank '
                'goes below zero (ledger_account_balance_not_negative)', bad_account, bad_leaves
                USING ERRCODE = 'check_violation', TABLE = 'ledger_account',
                      CONSTRAINT = 'ledger_account_balance_not_negative';
        ELSIF bad_fault IS NOT NULL THEN
            RAISE EXCEPTION '%', bad_fault {ERR};
        END IF;
        -- ``a.id = ANY (ids)`` as well: the accounts by their index whatever the plan, which
        -- else may scan the whole table (its generic plan joins with a guess of the array).
        UPDATE ledger_account a SET balance = a.balance + u.moved, last_posted_at = u.latest
          FROM unnest(ids, moved, latest) AS u(id, moved, latest)
         WHERE a.id = ANY (ids) AND a.id = u.id;
        RETURN NULL;
    END $$
    """,
    "DROP TRIGGER ledger_posting_apply ON ledger_posting",
    """
    CREATE TRIGGER ledger_posting_apply AFTER INSERT ON ledger_posting
        REFERENCING NEW TABLE AS added
        FOR EACH STATEMENT EXECUTE FUNCTION ledger_postings_apply()
    """,
    # An entry's postings in one statement: one call of the trigger, not one per posting.
    _ledger_post(_ONE_BY_ONE, _TOGETHER),
]

POSTGRES_UNINSTALL = [
    "DROP TRIGGER ledger_posting_apply ON ledger_posting",
    """
    CREATE TRIGGER ledger_posting_apply BEFORE INSERT ON ledger_posting
        FOR EACH ROW EXECUTE FUNCTION ledger_posting_apply()
    """,
    "DROP FUNCTION ledger_postings_apply()",
    _ledger_post(_ONE_BY_ONE, _ONE_BY_ONE),
]


def _run(statements: list[str]) -> Any:
    def run(apps: Any, schema_editor: Any) -> None:
        if schema_editor.connection.vendor == "postgresql":
            for statement in statements:
                schema_editor.execute(statement, params=None)

    return run


class Migration(migrations.Migration):
    dependencies = [("ledger", "0006_ledger_post_many_shortfalls")]

    operations = [migrations.RunPython(_run(POSTGRES_INSTALL), _run(POSTGRES_UNINSTALL))]
