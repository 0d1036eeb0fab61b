"""``manage.py check_books`` says what it checked, and fails when the books are wrong."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.utils import timezone

from ledger.models import Account, JournalEntry, Posting
from tests.ledger.conftest import triggers_off

pytestmark = pytest.mark.django_db


def check_books() -> str:
    out = StringIO()
    call_command("check_books", stdout=out)
    return out.getvalue()


def test_balanced_books_pass_every_check(wallet_a: Account, pot: Account, fund) -> None:
    fund(wallet_a, 100)
    output = check_books()
    for check in [
        "trial balance is zero",
        "every entry has 2+ postings summing to zero",
        "no wallet or pot below zero",
        "balances match postings",
        "running balances chain",
        "database triggers in place",
    ]:
        assert f"ok   {check}" in output
    assert "The books balance: 8 checks passed." in output


def test_an_empty_ledger_balances() -> None:
    assert "The books balance" in check_books()


def test_broken_books_fail_and_say_what_is_wrong(wallet_a: Account, bank: Account) -> None:
    now = timezone.now()
    with triggers_off("ledger_posting", "ledger_journalentry", "ledger_account"):
        Posting.objects.create(entry_id=1, account=wallet_a, amount=-5, balance_after=-5, at=now)
        Posting.objects.create(entry_id=1, account=bank, amount=4, balance_after=4, at=now)
        JournalEntry.objects.create(
            id=1, idempotency_key="k", club_key="club-a", at=now, source="t"
        )
        with connection.cursor() as cursor:
            # Past the CHECK constraint too: dropped inside the test's transaction on
            # PostgreSQL; SQLite can only ignore every CHECK for a while.
            if connection.vendor == "postgresql":
                cursor.execute(
                    "ALTER TABLE ledger_account DROP CONSTRAINT ledger_account_balance_not_negative"
                )
            else:
                cursor.execute("PRAGMA ignore_check_constraints = ON")
            try:
                Account.objects.filter(pk=wallet_a.pk).update(balance=-5)
                Account.objects.filter(pk=bank.pk).update(balance=7)
            finally:
                if connection.vendor == "sqlite":
                    cursor.execute("PRAGMA ignore_check_constraints = OFF")
    with pytest.raises(CommandError, match="checks failed"):
        out = StringIO()
        try:
            call_command("check_books", stdout=out)
        finally:
            output = out.getvalue()
    assert "FAIL trial balance is zero: 2 account(s) sum to 2" in output
    assert (
        "FAIL every entry has 2+ postings summing to zero" in output
        and "#1 (2 lines, sum -1)" in output
    )
    assert "FAIL no wallet or pot below zero" in output
    assert "FAIL balances match postings" in output
    assert "ok   database triggers in place" in output


@pytest.mark.postgres  # SQLite has no triggers
def test_missing_triggers_fail_the_check() -> None:
    with triggers_off("ledger_posting"), pytest.raises(CommandError):
        out = StringIO()
        try:
            call_command("check_books", stdout=out)
        finally:
            output = out.getvalue()
    assert (
        "FAIL database triggers in place: missing, outdated or disabled: ledger_posting." in output
    )
