"""The database enforces the books: triggers for PostgreSQL and for the embedded SQLite default.

- Entries and postings are append-only: UPDATE and DELETE are refused row by row, TRUNCATE
  (PostgreSQL) whenever the table holds a row. A mistake is corrected by a reversing entry.
- Postings are written before their entry. Writing a posting applies it to its account's
  balance (one UPDATE, which also locks the account row until commit, so concurrent writers
  queue up and the CHECK constraint sees each of them) and checks that ``balance_after`` is the
  balance it leaves and that the account's postings stay in time order.
- Writing the entry seals it: it is refused unless its postings are two or more, sum to zero,
  carry its time and belong to its club; no posting can be added to a written entry.
  PostgreSQL also checks each posting's entry again at commit (a deferred constraint trigger,
  as django-hordak does), which covers postings slipped in by a concurrent transaction.
- An account's kind, club, owner and ref never change; its balance changes only through the
  posting trigger.

Errors are raised as integrity violations (Django's IntegrityError on both databases), with a
message starting "ledger:". Keep this SQL here, frozen: a later change gets its own migration.
On SQLite, a migration that rebuilds a ledger table drops its triggers; it must create them
again (``manage.py check_books`` reports missing triggers).
"""

from collections.abc import Callable
from typing import Any

from django.db import migrations

ERR = "USING ERRCODE = 'integrity_constraint_violation'"

POSTGRES_INSTALL = [
    f"""
    CREATE OR REPLACE FUNCTION ledger_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        RAISE EXCEPTION 'ledger: % on % refused: entries and postings are append-only; '
            'correct a mistake with a reversing entry', TG_OP, TG_TABLE_NAME {ERR};
    END $$
    """,
    f"""
    CREATE OR REPLACE FUNCTION ledger_refuse_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
        has_rows boolean;
    BEGIN
        -- An empty table may be truncated: nothing is lost, and Django's flush (tests, a
        -- fresh database) truncates every table.
        EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I.%I)', TG_TABLE_SCHEMA, TG_TABLE_NAME)
            INTO has_rows;
        IF has_rows THEN
            RAISE EXCEPTION 'ledger: TRUNCATE on % refused: entries and postings are '
                'append-only', TG_TABLE_NAME {ERR};
        END IF;
        RETURN NULL;
    END $$
    """,
    f"""
    CREATE OR REPLACE FUNCTION ledger_posting_apply() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
        new_balance bigint;
    BEGIN
        IF EXISTS (SELECT 1 FROM ledger_journalentry WHERE id = NEW.entry_id) THEN
            RAISE EXCEPTION 'ledger: entry % is already written; the postings of an entry are '
                'written before it, never after', NEW.entry_id {ERR};
        END IF;
        -- This UPDATE locks the account row until commit: concurrent postings to one account
        -- apply one after the other, each on the balance the previous one left, and the
        -- CHECK constraint on ledger_account refuses any that would take a wallet below zero.
        UPDATE ledger_account
           SET balance = balance + NEW.amount, last_posted_at = NEW.at
         WHERE id = NEW.account_id AND (last_posted_at IS NULL OR last_posted_at <= NEW.at)
        RETURNING balance INTO new_balance;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'ledger: posting at % to account %: no such account, or earlier than '
                'its last posting', NEW.at, NEW.account_id {ERR};
        END IF;
        IF NEW.balance_after IS DISTINCT FROM new_balance THEN
            RAISE EXCEPTION 'ledger: posting to account % states balance_after %, but the account '
                'now holds %', NEW.account_id, NEW.balance_after, new_balance {ERR};
        END IF;
        RETURN NEW;
    END $$
    """,
    f"""
    CREATE OR REPLACE FUNCTION ledger_entry_seal() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
        lines bigint;
        total numeric;
        strays bigint;
    BEGIN
        SELECT count(*), coalesce(sum(p.amount), 0),
               count(*) FILTER (WHERE p.at IS DISTINCT FROM NEW.at
                                   OR a.club_key IS DISTINCT FROM NEW.club_key)
          INTO lines, total, strays
          FROM ledger_posting p JOIN ledger_account a ON a.id = p.account_id
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
    """,
    f"""
    CREATE OR REPLACE FUNCTION ledger_posting_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
        lines bigint;
        total numeric;
    BEGIN
        SELECT count(*), coalesce(sum(amount), 0) INTO lines, total
          FROM ledger_posting WHERE entry_id = NEW.entry_id;
        IF lines < 2 OR total <> 0 THEN
            RAISE EXCEPTION 'ledger: entry % cannot commit: % posting(s) summing to %; an entry '
                'needs two or more postings that sum to zero', NEW.entry_id, lines, total {ERR};
        END IF;
        RETURN NULL;
    END $$
    """,
    f"""
    CREATE OR REPLACE FUNCTION ledger_account_guard() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF NEW.kind IS DISTINCT FROM OLD.kind OR NEW.club_key IS DISTINCT FROM OLD.club_key
           OR NEW.owner_id IS DISTINCT FROM OLD.owner_id OR NEW.ref IS DISTINCT FROM OLD.ref THEN
            RAISE EXCEPTION 'ledger: the kind, club, owner and ref of account % never change',
                OLD.id {ERR};
        END IF;
        -- Depth 1 is a statement run by hand or by Python; the posting trigger runs at depth 2.
        IF (NEW.balance IS DISTINCT FROM OLD.balance
            OR NEW.last_posted_at IS DISTINCT FROM OLD.last_posted_at)
           AND pg_trigger_depth() < 2 THEN
            RAISE EXCEPTION 'ledger: the balance of account % changes only by posting an entry '
                '(ledger.services), never by an update', OLD.id {ERR};
        END IF;
        RETURN NEW;
    END $$
    """,
    """
    CREATE TRIGGER ledger_posting_append_only BEFORE UPDATE OR DELETE ON ledger_posting
        FOR EACH ROW EXECUTE FUNCTION ledger_refuse_change()
    """,
    """
    CREATE TRIGGER ledger_posting_no_truncate BEFORE TRUNCATE ON ledger_posting
        FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse_truncate()
    """,
    """
    CREATE TRIGGER ledger_entry_append_only BEFORE UPDATE OR DELETE ON ledger_journalentry
        FOR EACH ROW EXECUTE FUNCTION ledger_refuse_change()
    """,
    """
    CREATE TRIGGER ledger_entry_no_truncate BEFORE TRUNCATE ON ledger_journalentry
        FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse_truncate()
    """,
    """
    CREATE TRIGGER ledger_posting_apply BEFORE INSERT ON ledger_posting
        FOR EACH ROW EXECUTE FUNCTION ledger_posting_apply()
    """,
    """
    CREATE TRIGGER ledger_entry_seal BEFORE INSERT ON ledger_journalentry
        FOR EACH ROW EXECUTE FUNCTION ledger_entry_seal()
    """,
    """
    CREATE CONSTRAINT TRIGGER ledger_posting_balanced AFTER INSERT ON ledger_posting
        DEFERRABLE INITIALLY DEFERRED
        FOR EACH ROW EXECUTE FUNCTION ledger_posting_balanced()
    """,
    """
    CREATE TRIGGER ledger_account_guard BEFORE UPDATE ON ledger_account
        FOR EACH ROW EXECUTE FUNCTION ledger_account_guard()
    """,
]

POSTGRES_UNINSTALL = [
    "DROP TRIGGER IF EXISTS ledger_account_guard ON ledger_account",
    "DROP TRIGGER IF EXISTS ledger_posting_balanced ON ledger_posting",
    "DROP TRIGGER IF EXISTS ledger_entry_seal ON ledger_journalentry",
    "DROP TRIGGER IF EXISTS ledger_posting_apply ON ledger_posting",
    "DROP TRIGGER IF EXISTS ledger_entry_no_truncate ON ledger_journalentry",
    "DROP TRIGGER IF EXISTS ledger_entry_append_only ON ledger_journalentry",
    "DROP TRIGGER IF EXISTS ledger_posting_no_truncate ON ledger_posting",
    "DROP TRIGGER IF EXISTS ledger_posting_append_only ON ledger_posting",
    "DROP FUNCTION IF EXISTS ledger_account_guard()",
    "DROP FUNCTION IF EXISTS ledger_posting_balanced()",
    "DROP FUNCTION IF EXISTS ledger_entry_seal()",
    "DROP FUNCTION IF EXISTS ledger_posting_apply()",
    "DROP FUNCTION IF EXISTS ledger_refuse_truncate()",
    "DROP FUNCTION IF EXISTS ledger_refuse_change()",
]


def _sqlite_refuse(table: str, operation: str) -> str:
    return f"""
    CREATE TRIGGER {table}_no_{operation.lower()} BEFORE {operation} ON {table}
    BEGIN
        SELECT RAISE(ABORT, 'ledger: {operation} on {table} refused: entries and postings are append-only; correct a mistake with a reversing entry');
    END
    """


SQLITE_INSTALL = [
    _sqlite_refuse("ledger_posting", "UPDATE"),
    _sqlite_refuse("ledger_posting", "DELETE"),
    _sqlite_refuse("ledger_journalentry", "UPDATE"),
    _sqlite_refuse("ledger_journalentry", "DELETE"),
    """
    CREATE TRIGGER ledger_posting_check BEFORE INSERT ON ledger_posting
    BEGIN
        SELECT RAISE(ABORT, 'ledger: this entry is already written; the postings of an entry are written before it, never after')
         WHERE EXISTS (SELECT 1 FROM ledger_journalentry WHERE id = NEW.entry_id);
        SELECT RAISE(ABORT, 'ledger: a posting needs an existing account and may not be earlier than its last posting')
         WHERE NOT EXISTS (SELECT 1 FROM ledger_account WHERE id = NEW.account_id
                             AND (last_posted_at IS NULL OR last_posted_at <= NEW.at));
        SELECT RAISE(ABORT, 'ledger: balance_after must be the account balance plus the amount')
         WHERE NEW.balance_after IS NOT
               (SELECT balance + NEW.amount FROM ledger_account WHERE id = NEW.account_id);
    END
    """,
    # SQLite runs one writer at a time, so applying the posting after the insert cannot race;
    # the CHECK constraint on ledger_account refuses a wallet below zero.
    """
    CREATE TRIGGER ledger_posting_apply AFTER INSERT ON ledger_posting
    BEGIN
        UPDATE ledger_account SET balance = NEW.balance_after, last_posted_at = NEW.at
         WHERE id = NEW.account_id;
    END
    """,
    """
    CREATE TRIGGER ledger_entry_seal BEFORE INSERT ON ledger_journalentry
    BEGIN
        SELECT RAISE(ABORT, 'ledger: an entry needs two or more postings, written before it, that sum to zero')
         WHERE (SELECT count(*) FROM ledger_posting WHERE entry_id = NEW.id) < 2
            OR (SELECT coalesce(sum(amount), 0) FROM ledger_posting WHERE entry_id = NEW.id) <> 0;
        SELECT RAISE(ABORT, 'ledger: the postings of an entry must carry its time and belong to its club')
         WHERE EXISTS (SELECT 1 FROM ledger_posting p JOIN ledger_account a ON a.id = p.account_id
                        WHERE p.entry_id = NEW.id
                          AND (p.at IS NOT NEW.at OR a.club_key IS NOT NEW.club_key));
    END
    """,
    """
    CREATE TRIGGER ledger_account_identity BEFORE UPDATE ON ledger_account
    WHEN NEW.kind IS NOT OLD.kind OR NEW.club_key IS NOT OLD.club_key
      OR NEW.owner_id IS NOT OLD.owner_id OR NEW.ref IS NOT OLD.ref
    BEGIN
        SELECT RAISE(ABORT, 'ledger: the kind, club, owner and ref of an account never change');
    END
    """,
    # Without trigger depth on SQLite, a balance may change only to what the account's latest
    # posting left, which is exactly what ledger_posting_apply writes.
    """
    CREATE TRIGGER ledger_account_balance BEFORE UPDATE ON ledger_account
    WHEN (NEW.balance IS NOT OLD.balance OR NEW.last_posted_at IS NOT OLD.last_posted_at)
     AND NOT EXISTS (
         SELECT 1 FROM (SELECT balance_after, at FROM ledger_posting WHERE account_id = NEW.id
                         ORDER BY at DESC, id DESC LIMIT 1) AS latest
          WHERE latest.balance_after = NEW.balance AND latest.at IS NEW.last_posted_at)
    BEGIN
        SELECT RAISE(ABORT, 'ledger: the balance of an account changes only by posting an entry (ledger.services), never by an update');
    END
    """,
]

SQLITE_UNINSTALL = [
    f"DROP TRIGGER IF EXISTS {name}"
    for name in (
        "ledger_account_balance",
        "ledger_account_identity",
        "ledger_entry_seal",
        "ledger_posting_apply",
        "ledger_posting_check",
        "ledger_journalentry_no_delete",
        "ledger_journalentry_no_update",
        "ledger_posting_no_delete",
        "ledger_posting_no_update",
    )
]


def _run(statements_by_vendor: dict[str, list[str]]) -> Callable[[Any, Any], None]:
    def run(apps: Any, schema_editor: Any) -> None:
        vendor = schema_editor.connection.vendor
        if vendor not in statements_by_vendor:
            raise NotImplementedError(
                f"The ledger enforces its books with triggers on PostgreSQL and SQLite only, "
                f"not on {vendor}."
            )
        for statement in statements_by_vendor[vendor]:
            schema_editor.execute(statement, params=None)

    return run


class Migration(migrations.Migration):
    dependencies = [("ledger", "0001_initial")]

    operations = [
        migrations.RunPython(
            _run({"postgresql": POSTGRES_INSTALL, "sqlite": SQLITE_INSTALL}),
            _run({"postgresql": POSTGRES_UNINSTALL, "sqlite": SQLITE_UNINSTALL}),
        ),
    ]
