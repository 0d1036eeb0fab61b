"""The books' guards on PostgreSQL (the triggers in ledger/models.py's Meta.triggers): append-only
entries and postings, running balances, balanced entries at commit, fixed account identities.
SQLite gets no triggers (django-pgtrigger installs them on PostgreSQL only)."""

import pgtrigger.compiler
import pgtrigger.migrations
from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("ledger", "0001_initial"),
    ]

    operations = [
        pgtrigger.migrations.AddTrigger(
            model_name='account',
            trigger=pgtrigger.compiler.Trigger(name='identity_fixed', sql=pgtrigger.compiler.UpsertTriggerSql(condition='WHEN (OLD."club_key" IS DISTINCT FROM (NEW."club_key") OR OLD."kind" IS DISTINCT FROM (NEW."kind") OR OLD."owner_id" IS DISTINCT FROM (NEW."owner_id") OR OLD."ref" IS DISTINCT FROM (NEW."ref"))', func="RAISE EXCEPTION 'ledger: the kind, club, owner and ref of account % never change', OLD.id USING ERRCODE = 'integrity_constraint_violation';", hash='7b1bc97c967c47dedf1c5f71dce87f978723c816', operation='UPDATE', pgid='pgtrigger_identity_fixed_b7f9b', table='ledger_account', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='account',
            trigger=pgtrigger.compiler.Trigger(name='balance_from_postings', sql=pgtrigger.compiler.UpsertTriggerSql(condition='WHEN (OLD."balance" IS DISTINCT FROM (NEW."balance") OR OLD."last_posted_at" IS DISTINCT FROM (NEW."last_posted_at"))', declare='DECLARE latest_balance bigint; latest_at timestamptz;', func="\n                SELECT p.balance_after, p.at INTO latest_balance, latest_at\n                  FROM ledger_posting p WHERE p.account_id = NEW.id\n                 ORDER BY p.at DESC, p.id DESC LIMIT 1;\n                IF NEW.balance IS DISTINCT FROM coalesce(latest_balance, 0)\n                   OR NEW.last_posted_at IS DISTINCT FROM latest_at THEN\n                    RAISE EXCEPTION 'ledger: account % would hold %, but its latest posting left '\n                        '%: a balance changes only by posting an entry (ledger.services)',\n                        NEW.id, NEW.balance, coalesce(latest_balance, 0) USING ERRCODE = 'integrity_constraint_violation';\n                END IF;\n                RETURN NULL;\n                ", hash='518c41ecf80d945b9d3d245f9b0546e13aa41e81', operation='UPDATE', pgid='pgtrigger_balance_from_postings_04225', table='ledger_account', when='AFTER')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='journalentry',
            trigger=pgtrigger.compiler.Trigger(name='append_only', sql=pgtrigger.compiler.UpsertTriggerSql(func="RAISE EXCEPTION 'ledger: % on % refused: entries and postings are append-only; correct a mistake with a reversing entry', TG_OP, TG_TABLE_NAME USING ERRCODE = 'integrity_constraint_violation';", hash='68fdb768abce473638334b9306649a8e73ad7795', operation='UPDATE OR DELETE', pgid='pgtrigger_append_only_d47c8', table='ledger_journalentry', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='journalentry',
            trigger=pgtrigger.compiler.Trigger(name='no_truncate', sql=pgtrigger.compiler.UpsertTriggerSql(declare='DECLARE has_rows boolean;', func="\n            EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I.%I)', TG_TABLE_SCHEMA, TG_TABLE_NAME)\n               INTO has_rows;\n            IF has_rows THEN\n                RAISE EXCEPTION 'ledger: TRUNCATE on % refused: entries and postings are '\n                    'append-only', TG_TABLE_NAME USING ERRCODE = 'integrity_constraint_violation';\n            END IF;\n            RETURN NULL;\n            ", hash='ecd822a3d0ba8342c2784f2cfc8cec0b5b0675dd', level='STATEMENT', operation='TRUNCATE', pgid='pgtrigger_no_truncate_f453a', table='ledger_journalentry', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='journalentry',
            trigger=pgtrigger.compiler.Trigger(name='balanced', sql=pgtrigger.compiler.UpsertTriggerSql(constraint='CONSTRAINT', declare='DECLARE lines bigint; total numeric; strays bigint;', func="\n    SELECT count(*), coalesce(sum(p.amount), 0),\n           count(*) FILTER (WHERE p.at IS DISTINCT FROM e.at OR\n               (SELECT a.club_key FROM ledger_account a WHERE a.id = p.account_id)\n               IS DISTINCT FROM e.club_key)\n      INTO lines, total, strays\n      FROM ledger_journalentry e LEFT JOIN ledger_posting p ON p.entry_id = e.id\n     WHERE e.id = NEW.id;\n    IF lines < 2 OR total <> 0 THEN\n        RAISE EXCEPTION 'ledger: entry % has % posting(s) summing to %; an entry needs two or '\n            'more postings that sum to zero', NEW.id, lines, total USING ERRCODE = 'integrity_constraint_violation';\n    END IF;\n    IF strays > 0 THEN\n        RAISE EXCEPTION 'ledger: the postings of entry % must carry its time and belong to its '\n            'club', NEW.id USING ERRCODE = 'integrity_constraint_violation';\n    END IF;\n    RETURN NULL;\n    ", hash='4568d002cd87f7d31d038ac552bd46322da570f8', operation='INSERT', pgid='pgtrigger_balanced_e20fb', table='ledger_journalentry', timing='DEFERRABLE INITIALLY DEFERRED', when='AFTER')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='posting',
            trigger=pgtrigger.compiler.Trigger(name='append_only', sql=pgtrigger.compiler.UpsertTriggerSql(func="RAISE EXCEPTION 'ledger: % on % refused: entries and postings are append-only; correct a mistake with a reversing entry', TG_OP, TG_TABLE_NAME USING ERRCODE = 'integrity_constraint_violation';", hash='6ae3a8115292cb09e941ee79a0dbf5825f606ea5', operation='UPDATE OR DELETE', pgid='pgtrigger_append_only_f2ff5', table='ledger_posting', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='posting',
            trigger=pgtrigger.compiler.Trigger(name='no_truncate', sql=pgtrigger.compiler.UpsertTriggerSql(declare='DECLARE has_rows boolean;', func="\n            EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I.%I)', TG_TABLE_SCHEMA, TG_TABLE_NAME)\n               INTO has_rows;\n            IF has_rows THEN\n                RAISE EXCEPTION 'ledger: TRUNCATE on % refused: entries and postings are '\n                    'append-only', TG_TABLE_NAME USING ERRCODE = 'integrity_constraint_violation';\n            END IF;\n            RETURN NULL;\n            ", hash='29f07f494ed1b7b2f8b546eb5174d058f6297e47', level='STATEMENT', operation='TRUNCATE', pgid='pgtrigger_no_truncate_96585', table='ledger_posting', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='posting',
            trigger=pgtrigger.compiler.Trigger(name='running_balance', sql=pgtrigger.compiler.UpsertTriggerSql(declare='DECLARE kind varchar; previous_balance bigint; previous_at timestamptz;', func="\n                SELECT a.kind INTO kind FROM ledger_account a WHERE a.id = NEW.account_id;\n                IF NOT FOUND THEN\n                    RAISE EXCEPTION 'ledger: posting to account %: no such account',\n                        NEW.account_id USING ERRCODE = 'integrity_constraint_violation';\n                END IF;\n                SELECT p.balance_after, p.at INTO previous_balance, previous_at\n                  FROM ledger_posting p WHERE p.account_id = NEW.account_id\n                 ORDER BY p.at DESC, p.id DESC LIMIT 1;\n                IF previous_at > NEW.at THEN\n                    RAISE EXCEPTION 'ledger: posting at % to account % is earlier than its last '\n                        'posting (%)', NEW.at, NEW.account_id, previous_at USING ERRCODE = 'integrity_constraint_violation';\n                END IF;\n                IF NEW.balance_after IS DISTINCT FROM coalesce(previous_balance, 0) + NEW.amount\n                THEN\n                    RAISE EXCEPTION 'ledger: posting to account % states balance_after %, but '\n                        'its previous posting left %', NEW.account_id, NEW.balance_after,\n                        coalesce(previous_balance, 0) USING ERRCODE = 'integrity_constraint_violation';\n                END IF;\n                IF NEW.balance_after < 0 AND kind <> 'bank' THEN\n                    RAISE EXCEPTION 'ledger: posting to account % would leave it below zero (%)',\n                        NEW.account_id, NEW.balance_after USING ERRCODE = 'integrity_constraint_violation';\n                END IF;\n                RETURN NEW;\n                ", hash='3b63bd6bf9f276f25ec3bc589fdd6765dea47df5', operation='INSERT', pgid='pgtrigger_running_balance_4a554', table='ledger_posting', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='posting',
            trigger=pgtrigger.compiler.Trigger(name='entry_balanced', sql=pgtrigger.compiler.UpsertTriggerSql(constraint='CONSTRAINT', declare='DECLARE lines bigint; total numeric; strays bigint;', func="\n    SELECT count(*), coalesce(sum(p.amount), 0),\n           count(*) FILTER (WHERE p.at IS DISTINCT FROM e.at OR\n               (SELECT a.club_key FROM ledger_account a WHERE a.id = p.account_id)\n               IS DISTINCT FROM e.club_key)\n      INTO lines, total, strays\n      FROM ledger_journalentry e LEFT JOIN ledger_posting p ON p.entry_id = e.id\n     WHERE e.id = NEW.entry_id;\n    IF lines < 2 OR total <> 0 THEN\n        RAISE EXCEPTION 'ledger: entry % has % posting(s) summing to %; an entry needs two or '\n            'more postings that sum to zero', NEW.entry_id, lines, total USING ERRCODE = 'integrity_constraint_violation';\n    END IF;\n    IF strays > 0 THEN\n        RAISE EXCEPTION 'ledger: the postings of entry % must carry its time and belong to its '\n            'club', NEW.entry_id USING ERRCODE = 'integrity_constraint_violation';\n    END IF;\n    RETURN NULL;\n    ", hash='22ca8038578968ecd9ee1774e1c2a551bd42ea0c', operation='INSERT', pgid='pgtrigger_entry_balanced_64717', table='ledger_posting', timing='DEFERRABLE INITIALLY DEFERRED', when='AFTER')),
        ),
    ]
