"""PostgreSQL itself refuses what would break the books, whatever code or SQL asks.

SQLite has no triggers (ledger/models.py): these tests run on PostgreSQL only; the CHECK
constraints, which both databases enforce, are tested in test_services.py as well."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

import pytest
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from ledger import services
from ledger.audit import books_audit
from ledger.models import Account, JournalEntry, Posting
from ledger.testing import ledger_purge
from tests.ledger.conftest import check_deferred_constraints
from tests.ledger.factories import CLUB

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


def run(sql: str, params: list[object] | None = None) -> None:
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, params)


@pytest.fixture
def entry(wallet_a: Account, fund: Callable[[Account, int], Account]) -> JournalEntry:
    fund(wallet_a, 100)
    return JournalEntry.objects.get()


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE ledger_posting SET amount = amount * 2",
        "UPDATE ledger_posting SET balance_after = 0",
        "DELETE FROM ledger_posting",
        "UPDATE ledger_journalentry SET memo = 'rewritten'",
        "DELETE FROM ledger_journalentry",
    ],
)
def test_raw_sql_that_updates_or_deletes_ledger_rows_is_refused(
    entry: JournalEntry, sql: str
) -> None:
    with pytest.raises(IntegrityError, match="append-only"):
        run(sql)
    assert JournalEntry.objects.get().memo == entry.memo
    assert sorted(Posting.objects.values_list("amount", flat=True)) == [-100, 100]


@pytest.mark.parametrize(
    "sql",
    [
        "TRUNCATE ledger_posting",
        "TRUNCATE ledger_journalentry CASCADE",
        "TRUNCATE ledger_posting, ledger_journalentry, ledger_account",
        "TRUNCATE ledger_account CASCADE",
    ],
)
def test_truncating_ledger_rows_is_refused(entry: JournalEntry, sql: str) -> None:
    check_deferred_constraints()  # PostgreSQL truncates no table with checks still pending
    with pytest.raises(IntegrityError, match="TRUNCATE on .* refused"):
        run(sql)
    assert Posting.objects.count() == 2


def test_truncating_an_empty_ledger_is_allowed_so_that_a_fresh_database_can_be_flushed() -> None:
    run("TRUNCATE ledger_posting, ledger_journalentry, ledger_account")


def test_a_balance_cannot_be_edited_by_hand(entry: JournalEntry, wallet_a: Account) -> None:
    with pytest.raises(IntegrityError, match="changes only by posting"):
        run("UPDATE ledger_account SET balance = 1000000 WHERE id = %s", [wallet_a.pk])
    with pytest.raises(IntegrityError, match="changes only by posting"), transaction.atomic():
        Account.objects.filter(pk=wallet_a.pk).update(balance=0)
    stale = Account.objects.get(pk=wallet_a.pk)
    stale.balance = 5
    with pytest.raises(IntegrityError, match="changes only by posting"), transaction.atomic():
        stale.save()
    assert Account.objects.get(pk=wallet_a.pk).balance == 100


def test_an_account_keeps_its_kind_and_club_but_may_be_renamed(wallet_a: Account) -> None:
    with pytest.raises(IntegrityError, match="never change"), transaction.atomic():
        Account.objects.filter(pk=wallet_a.pk).update(kind="bank", owner=None)
    with pytest.raises(IntegrityError, match="never change"), transaction.atomic():
        Account.objects.filter(pk=wallet_a.pk).update(club_key="elsewhere")
    Account.objects.filter(pk=wallet_a.pk).update(name="Alice's chips")
    assert Account.objects.get(pk=wallet_a.pk).name == "Alice's chips"


def _entry(at: datetime, *, club_key: str = CLUB, key: str = "k") -> JournalEntry:
    return JournalEntry.objects.create(idempotency_key=key, club_key=club_key, at=at, source="t")


def test_an_unbalanced_entry_is_refused_at_commit(wallet_a: Account, bank: Account) -> None:
    now = timezone.now()
    with pytest.raises(IntegrityError, match="sum to zero"), transaction.atomic():
        entry = _entry(now)
        Posting.objects.create(entry=entry, account=bank, amount=-100, balance_after=-100, at=now)
        Posting.objects.create(entry=entry, account=wallet_a, amount=90, balance_after=90, at=now)
        check_deferred_constraints()
    assert not JournalEntry.objects.exists()


def test_an_entry_is_refused_when_a_posting_belongs_to_another_club(
    wallet_a: Account, bank: Account
) -> None:
    other_bank = services.bank_get_or_create(club_key="club-b")
    now = timezone.now()
    with pytest.raises(IntegrityError, match="belong to its club"), transaction.atomic():
        entry = _entry(now)
        Posting.objects.create(
            entry=entry, account=other_bank, amount=-100, balance_after=-100, at=now
        )
        Posting.objects.create(entry=entry, account=wallet_a, amount=100, balance_after=100, at=now)
        check_deferred_constraints()
    assert not JournalEntry.objects.exists()


def test_an_entry_is_refused_when_a_posting_carries_another_time(
    wallet_a: Account, bank: Account
) -> None:
    now = timezone.now()
    with pytest.raises(IntegrityError, match="carry its time"), transaction.atomic():
        entry = _entry(now)
        Posting.objects.create(entry=entry, account=bank, amount=-100, balance_after=-100, at=now)
        Posting.objects.create(
            entry=entry, account=wallet_a, amount=100, balance_after=100,
            at=now + timedelta(seconds=1),
        )
        check_deferred_constraints()
    assert not JournalEntry.objects.exists()


def test_an_entry_needs_two_postings(wallet_a: Account, bank: Account) -> None:
    with pytest.raises(IntegrityError, match="two or more"), transaction.atomic():
        _entry(timezone.now())
        check_deferred_constraints()
    assert not JournalEntry.objects.exists()


def test_a_posting_added_to_a_written_entry_unbalances_it_and_is_refused(
    entry: JournalEntry, wallet_b: Account
) -> None:
    with pytest.raises(IntegrityError, match="sum to zero"), transaction.atomic():
        Posting.objects.create(entry=entry, account=wallet_b, amount=5, balance_after=5,
                               at=entry.at)
        check_deferred_constraints()
    assert Posting.objects.filter(entry=entry).count() == 2


@pytest.mark.django_db(transaction=True)
def test_an_unbalanced_entry_is_rolled_back_at_commit(wallet_a: Account, bank: Account) -> None:
    now = timezone.now()
    with pytest.raises(IntegrityError, match="sum to zero"), transaction.atomic():
        entry = _entry(now)
        Posting.objects.create(entry=entry, account=bank, amount=-100, balance_after=-100, at=now)
        Posting.objects.create(entry=entry, account=wallet_a, amount=90, balance_after=90, at=now)
    assert not JournalEntry.objects.exists()
    assert not Posting.objects.exists()


def test_a_wallet_never_goes_below_zero_even_when_python_is_bypassed(
    entry: JournalEntry, wallet_a: Account
) -> None:
    with pytest.raises(IntegrityError, match="below zero"), transaction.atomic():
        Posting.objects.create(
            entry=entry, account=wallet_a, amount=-101, balance_after=-1, at=entry.at
        )
    with (
        pytest.raises(IntegrityError, match="ledger_account_balance_not_negative"),
        transaction.atomic(),
    ):
        Account.objects.filter(pk=wallet_a.pk).update(balance=-1)
    assert Account.objects.get(pk=wallet_a.pk).balance == 100


def test_a_posting_must_state_the_balance_it_leaves(entry: JournalEntry, wallet_a: Account) -> None:
    with pytest.raises(IntegrityError, match="balance_after"), transaction.atomic():
        Posting.objects.create(
            entry_id=entry.pk + 1, account=wallet_a, amount=-10, balance_after=500,
            at=timezone.now(),
        )


def test_postings_of_an_account_stay_in_time_order(entry: JournalEntry, wallet_a: Account) -> None:
    before = entry.at - timezone.timedelta(seconds=1)
    with pytest.raises(IntegrityError, match="earlier than"), transaction.atomic():
        Posting.objects.create(
            entry_id=entry.pk + 1, account=wallet_a, amount=-10, balance_after=90, at=before
        )


def _lines(*lines: tuple[int, Account, int, int, datetime]) -> list[Posting]:
    """Postings (entry id, account, amount, balance_after, at) written by one INSERT statement.
    An entry has one line per account."""
    return Posting.objects.bulk_create(
        Posting(entry_id=entry_id, account=account, amount=amount, balance_after=after, at=at)
        for entry_id, account, amount, after, at in lines
    )


def test_postings_written_in_one_statement_chain_in_order_and_the_balance_follows(
    entry: JournalEntry, wallet_a: Account, bank: Account
) -> None:
    """Each line states the balance the lines before it leave; the account may then move to
    what its latest posting left, and to nothing else."""
    at = entry.at + timedelta(seconds=1)
    later = at + timedelta(seconds=1)
    new = entry.pk + 1
    with transaction.atomic():
        _lines((new, wallet_a, -30, 70, at), (new, bank, 30, bank.balance + 30, at),
               (new + 1, wallet_a, 5, 75, later), (new + 1, bank, -5, bank.balance + 25, later))
        with pytest.raises(IntegrityError, match="changes only by posting"), transaction.atomic():
            Account.objects.filter(pk=wallet_a.pk).update(balance=70, last_posted_at=later)
        Account.objects.filter(pk=wallet_a.pk).update(balance=75, last_posted_at=later)
        assert Account.objects.get(pk=wallet_a.pk).balance == 75
        # Their entries are never written: rolled back before the test's end checks the keys.
        transaction.set_rollback(True)


def test_a_statement_may_not_take_a_wallet_below_zero_on_the_way(
    entry: JournalEntry, wallet_a: Account
) -> None:
    """A wallet of 100 paying 150 then receiving 60 ends at 10, but was below zero between."""
    at = entry.at
    with pytest.raises(IntegrityError, match="below zero"), transaction.atomic():
        _lines((entry.pk + 1, wallet_a, -150, -50, at), (entry.pk + 2, wallet_a, 60, 10, at))
    assert Account.objects.get(pk=wallet_a.pk).balance == 100


def test_a_statement_states_each_balance_in_the_order_written(
    entry: JournalEntry, wallet_a: Account
) -> None:
    """Right for the statement's end, wrong for its first line: refused."""
    at = entry.at
    with pytest.raises(IntegrityError, match="balance_after"), transaction.atomic():
        _lines((entry.pk + 1, wallet_a, -10, 80, at), (entry.pk + 2, wallet_a, -10, 80, at))
    assert Account.objects.get(pk=wallet_a.pk).balance == 100


def test_a_statement_keeps_an_accounts_postings_in_time_order(
    entry: JournalEntry, wallet_a: Account
) -> None:
    later = entry.at + timedelta(seconds=5)
    with pytest.raises(IntegrityError, match="earlier than"), transaction.atomic():
        _lines((entry.pk + 1, wallet_a, -10, 90, later),
               (entry.pk + 2, wallet_a, -10, 80, later - timedelta(seconds=1)))
    assert Account.objects.get(pk=wallet_a.pk).last_posted_at == entry.at


def test_a_posting_to_no_account_is_refused(entry: JournalEntry, wallet_a: Account) -> None:
    missing = Account(pk=wallet_a.pk + 10_000)
    with (
        pytest.raises(IntegrityError, match="no such account"),
        transaction.atomic(),
    ):
        _lines((entry.pk + 1, missing, 5, 5, entry.at))
    assert Posting.objects.count() == 2


def test_the_bank_alone_goes_below_zero(
    bank: Account, wallet_a: Account, key: Callable[[], str]
) -> None:
    services.buy_in(wallet=wallet_a, amount=70, source="t", idempotency_key=key())
    bank.refresh_from_db()
    assert bank.balance == -70


def test_a_throwaway_ledger_can_be_purged_and_keeps_its_triggers(entry: JournalEntry) -> None:
    ledger_purge()
    assert not (
        Account.objects.exists() or JournalEntry.objects.exists() or Posting.objects.exists()
    )
    assert all(finding.ok for finding in books_audit())
