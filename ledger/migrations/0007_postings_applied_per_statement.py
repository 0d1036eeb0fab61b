"""PostgreSQL: a statement's postings are applied to their accounts once per statement, not
once per row.

``ledger_posting_apply`` (0002) ran for each posting: a look-up of its entry, then an UPDATE of
its account, each a trigger call of its own. A game's batch (a hand's payments and the next
hand's antes: 2 entries, 10 postings, 5 accounts) spent about 0.45 ms of its 0.9 ms there
(bench/api_bench.md, seventeenth round). The trigger is now an AFTER ... FOR EACH STATEMENT
trigger on the statement's transition table, which does the same work in two queries:

1. no posting may name an entry already written;
2. each account is updated once, by the sum of its postings in the statement, if its postings
   stay in time order (each no earlier than the one written before it, and the first no
   earlier than the account's last posting), then every posting is checked, in the order
   written (their ids), against the balance it leaves: ``balance_after`` must be the
   account's balance before the statement plus the postings up to it, and a wallet or a pot
   may not go below zero at any posting (before, the CHECK constraint on ``ledger_account``
   saw each posting's balance; it still sees the statement's last).

Same refusals, with the same messages, as the per-row trigger; the first posting at fault (by
id) is named. The UPDATE locks each account row until commit, as before: writers of one
account still queue, and each statement sees the balance the last one left (a READ COMMITTED
UPDATE re-reads a row another transaction changed). The ledger's functions lock the accounts
in id order before they write (0003, 0005), so the order of this UPDATE's rows cannot
deadlock them. The trigger keeps its name, so ``check_books`` finds it. SQLite is unchanged.
"""

from typing import Any

from django.db import migrations

ERR = "USING ERRCODE = 'integrity_constraint_violation'"

POSTGRES_INSTALL = [
    f"""
    CREATE OR REPLACE FUNCTION ledger_postings_apply() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
        bad record;
    BEGIN
        SELECT n.entry_id INTO bad FROM added n
         WHERE EXISTS (SELECT 1 FROM ledger_journalentry e WHERE e.id = n.entry_id) LIMIT 1;
        IF FOUND THEN
            RAISE EXCEPTION 'ledger: entry % is already written; the postings of an entry are '
                'written before it, never after', bad.entry_id {ERR};
        END IF;
        WITH lines AS (
            SELECT n.id, n.account_id, n.balance_after, n.at,
                   sum(n.amount) OVER (PARTITION BY n.account_id ORDER BY n.id) AS running,
                   lag(n.at) OVER (PARTITION BY n.account_id ORDER BY n.id) AS previous_at
              FROM added n
        ), sums AS (
            SELECT n.account_id, sum(n.amount) AS delta, min(n.at) AS first_at,
                   max(n.at) AS last_at
              FROM added n GROUP BY n.account_id
        ), applied AS (
            UPDATE ledger_account a
               SET balance = a.balance + s.delta, last_posted_at = s.last_at
              FROM sums s
             WHERE a.id = s.account_id
               AND (a.last_posted_at IS NULL OR a.last_posted_at <= s.first_at)
               AND NOT EXISTS (SELECT 1 FROM lines l WHERE l.account_id = s.account_id
                                                       AND l.previous_at > l.at)
            RETURNING a.id, a.balance - s.delta AS opening, a.kind::text AS kind
        )
        SELECT l.id, l.account_id, l.at, l.balance_after, u.id AS found,
               u.opening + l.running AS leaves, u.kind
          INTO bad
          FROM lines l LEFT JOIN applied u ON u.id = l.account_id
         WHERE u.id IS NULL OR l.balance_after IS DISTINCT FROM u.opening + l.running
            OR (u.kind <> 'bank' AND u.opening + l.running < 0)
         ORDER BY l.id LIMIT 1;
        IF NOT FOUND THEN
            RETURN NULL;
        ELSIF bad.found IS NULL THEN
            RAISE EXCEPTION 'ledger: posting at % to account %: no such account, or earlier than '
                'its last posting', bad.at, bad.account_id {ERR};
        ELSIF bad.balance_after IS DISTINCT FROM bad.leaves THEN
            RAISE EXCEPTION 'ledger: posting to account % states balance_after %, but the account '
                'now holds %', bad.account_id, bad.balance_after, bad.leaves {ERR};
        END IF;
        RAISE EXCEPTION 'ledger: posting to account % would leave it at %: only the bank goes '
            'below zero (ledger_account_balance_not_negative)', bad.account_id, bad.leaves
            USING ERRCODE = 'check_violation';
    END $$
    """,
    "DROP TRIGGER ledger_posting_apply ON ledger_posting",
    """
    CREATE TRIGGER ledger_posting_apply AFTER INSERT ON ledger_posting
        REFERENCING NEW TABLE AS added
        FOR EACH STATEMENT EXECUTE FUNCTION ledger_postings_apply()
    """,
]

POSTGRES_UNINSTALL = [
    "DROP TRIGGER ledger_posting_apply ON ledger_posting",
    """
    CREATE TRIGGER ledger_posting_apply BEFORE INSERT ON ledger_posting
        FOR EACH ROW EXECUTE FUNCTION ledger_posting_apply()
    """,
    "DROP FUNCTION ledger_postings_apply()",
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
