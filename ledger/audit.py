"""The checks behind ``manage.py check_books``: do the books balance, and does the database
still enforce them? Plain SQL that PostgreSQL and SQLite both run; each check reads the whole
table once, so it takes seconds at millions of postings, not milliseconds."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pgtrigger
from django.db import connection
from pgtrigger.core import INSTALLED


@dataclass(frozen=True)
class Finding:
    check: str
    ok: bool
    detail: str


def books_audit() -> list[Finding]:
    return [
        _trial_balance(),
        _postings_sum(),
        _entries_balance(),
        _no_negative_wallets(),
        _balances_match_postings(),
        _running_balances(),
        _entries_within_one_club(),
        _triggers_installed(),
    ]


def _rows(sql: str) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(sql)
        return list(cursor.fetchall())


def _trial_balance() -> Finding:
    [(accounts, total)] = _rows("SELECT count(*), coalesce(sum(balance), 0) FROM ledger_account")
    clubs = _rows(
        "SELECT club_key, sum(balance) FROM ledger_account GROUP BY club_key"
        " HAVING sum(balance) <> 0 ORDER BY club_key"
    )
    ok = total == 0 and not clubs
    detail = f"{accounts} account(s) sum to {total}"
    if clubs:
        detail += "; clubs off: " + ", ".join(f"{club} {int(amount):+d}" for club, amount in clubs)
    return Finding("trial balance is zero", ok, detail)


def _postings_sum() -> Finding:
    [(postings, total)] = _rows("SELECT count(*), coalesce(sum(amount), 0) FROM ledger_posting")
    return Finding("all postings sum to zero", total == 0, f"{postings} posting(s) sum to {total}")


def _entries_balance() -> Finding:
    [(entries,)] = _rows("SELECT count(*) FROM ledger_journalentry")
    bad = _rows(
        "SELECT e.id, count(p.id), coalesce(sum(p.amount), 0)"
        " FROM ledger_journalentry e LEFT JOIN ledger_posting p ON p.entry_id = e.id"
        " GROUP BY e.id HAVING count(p.id) < 2 OR coalesce(sum(p.amount), 0) <> 0"
        " ORDER BY e.id"
    )
    [(orphans,)] = _rows(
        "SELECT count(*) FROM ledger_posting p"
        " WHERE NOT EXISTS (SELECT 1 FROM ledger_journalentry e WHERE e.id = p.entry_id)"
    )
    detail = f"{entries} entr(y/ies) checked"
    if bad:
        detail += "; unbalanced: " + ", ".join(
            f"#{i} ({n} lines, sum {int(s):+d})" for i, n, s in bad[:10]
        )
    if orphans:
        detail += f"; {orphans} posting(s) without an entry"
    return Finding("every entry has 2+ postings summing to zero", not bad and not orphans, detail)


def _no_negative_wallets() -> Finding:
    [(accounts,)] = _rows("SELECT count(*) FROM ledger_account WHERE kind <> 'bank'")
    bad = _rows(
        "SELECT id, name, balance FROM ledger_account WHERE kind <> 'bank' AND balance < 0"
        " ORDER BY id"
    )
    detail = f"{accounts} wallet(s) and pot(s) checked"
    if bad:
        detail += "; negative: " + ", ".join(f"{name} (#{i}) {b}" for i, name, b in bad[:10])
    return Finding("no wallet or pot below zero", not bad, detail)


def _balances_match_postings() -> Finding:
    bad = _rows(
        "SELECT a.id, a.name, a.balance, coalesce(s.total, 0) FROM ledger_account a"
        " LEFT JOIN (SELECT account_id, sum(amount) AS total FROM ledger_posting"
        "            GROUP BY account_id) s ON s.account_id = a.id"
        " WHERE a.balance <> coalesce(s.total, 0) ORDER BY a.id"
    )
    detail = "every account's balance is the sum of its postings"
    if bad:
        detail = "off: " + ", ".join(
            f"{n} (#{i}) holds {b}, postings say {t}" for i, n, b, t in bad[:10]
        )
    return Finding("balances match postings", not bad, detail)


def _running_balances() -> Finding:
    [(bad,)] = _rows(
        "SELECT count(*) FROM ("
        "  SELECT balance_after - amount AS before,"
        "         lag(balance_after, 1, 0) OVER (PARTITION BY account_id ORDER BY at, id) AS prev"
        "    FROM ledger_posting) t"
        " WHERE before <> prev"
    )
    detail = "each posting's balance_after follows the one before it"
    if bad:
        detail = f"{bad} posting(s) break their account's running balance"
    return Finding("running balances chain", bad == 0, detail)


def _entries_within_one_club() -> Finding:
    [(bad,)] = _rows(
        "SELECT count(*) FROM ledger_posting p"
        " JOIN ledger_account a ON a.id = p.account_id"
        " JOIN ledger_journalentry e ON e.id = p.entry_id"
        " WHERE a.club_key <> e.club_key OR p.at <> e.at"
    )
    detail = "postings carry their entry's club and time"
    if bad:
        detail = f"{bad} posting(s) differ from their entry's club or time"
    return Finding("entries stay within one club", bad == 0, detail)


def _triggers_installed() -> Finding:
    """PostgreSQL: every trigger of the ledger's models (their Meta.triggers) is installed, up to
    date and enabled. SQLite has none: the services are its only writer."""
    if connection.vendor != "postgresql":
        return Finding("database triggers in place", True, f"none on {connection.vendor}")
    expected = [
        (model, trigger)
        for model, trigger in pgtrigger.registered()
        if model._meta.app_label == "ledger"
    ]
    missing = sorted(
        f"{model._meta.db_table}.{trigger.name}"
        for model, trigger in expected
        if trigger.get_installation_status(model, database=connection.alias)
        != (INSTALLED, True)
    )
    detail = f"{len(expected)} trigger(s) enforce the books on {connection.vendor}"
    if missing:
        detail = "missing, outdated or disabled: " + ", ".join(missing)
    return Finding("database triggers in place", not missing, detail)
