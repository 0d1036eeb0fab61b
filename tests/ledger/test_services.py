"""Posting entries: transfers, payments, buy-ins, cash-outs, reversals and idempotency."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest
import time_machine
from django.db import transaction
from django.utils import timezone

from ledger import selectors, services
from ledger.exceptions import (
    AlreadyReversed,
    BackdatedEntry,
    IdempotencyConflict,
    InsufficientChips,
    InvalidEntry,
    UnbalancedEntry,
)
from ledger.models import Account, JournalEntry, Posting
from tests.ledger.factories import UserFactory, WalletFactory

pytestmark = pytest.mark.django_db

Fund = Callable[[Account, int], Account]
Key = Callable[[], str]


def balance(account: Account) -> int:
    return selectors.account_balance(account=account)


def test_a_buy_in_moves_chips_from_the_bank_to_the_wallet(
    wallet_a: Account, bank: Account, key: Key
) -> None:
    entry = services.buy_in(
        wallet=wallet_a, amount=250, source="soiree:1/buy-in", idempotency_key=key()
    )
    assert (balance(wallet_a), balance(bank)) == (250, -250)
    assert wallet_a.balance == 250  # the instance passed in is refreshed
    assert sorted(entry.postings.values_list("amount", flat=True)) == [-250, 250]
    assert entry.club_key == "club-a" and entry.memo == "Buy-in"


def test_a_transfer_moves_exactly_the_amount(
    wallet_a: Account, wallet_b: Account, fund: Fund, key: Key
) -> None:
    fund(wallet_a, 100)
    services.transfer(
        payer=wallet_a,
        payee=wallet_b,
        amount=40,
        memo="side bet",
        source="t",
        idempotency_key=key(),
    )
    assert (balance(wallet_a), balance(wallet_b)) == (60, 40)


def test_a_transfer_that_would_make_a_wallet_negative_is_refused_and_changes_nothing(
    wallet_a: Account, wallet_b: Account, fund: Fund, key: Key
) -> None:
    fund(wallet_a, 30)
    entries, postings = JournalEntry.objects.count(), Posting.objects.count()
    with pytest.raises(
        InsufficientChips, match=r"alice @ club-a holds 30, this entry takes 50"
    ) as refused:
        services.transfer(
            payer=wallet_a,
            payee=wallet_b,
            amount=50,
            memo="too much",
            source="t",
            idempotency_key=key(),
        )
    assert (refused.value.balance, refused.value.needed) == (30, 50)
    assert (balance(wallet_a), balance(wallet_b)) == (30, 0)
    assert (JournalEntry.objects.count(), Posting.objects.count()) == (entries, postings)


def test_a_pot_cannot_pay_out_more_than_it_holds(pot: Account, wallet_a: Account, key: Key) -> None:
    with pytest.raises(InsufficientChips):
        services.transfer(
            payer=pot, payee=wallet_a, amount=1, memo="win", source="t", idempotency_key=key()
        )


def test_pay_what_you_have_pays_in_full_when_the_payer_can(
    wallet_a: Account, pot: Account, fund: Fund, key: Key
) -> None:
    fund(wallet_a, 100)
    entry, shortfall = services.pay_what_you_have(
        payer=wallet_a,
        payee=pot,
        amount=30,
        memo="ante",
        source="hand:1/event:2",
        idempotency_key=key(),
    )
    assert shortfall == 0 and entry is not None and entry.memo == "ante"
    assert (balance(wallet_a), balance(pot)) == (70, 30)


def test_pay_what_you_have_pays_all_he_has_and_records_the_shortfall(
    wallet_a: Account, pot: Account, fund: Fund, key: Key
) -> None:
    fund(wallet_a, 20)
    entry, shortfall = services.pay_what_you_have(
        payer=wallet_a,
        payee=pot,
        amount=50,
        memo="Comet payment",
        source="hand:1/event:9",
        idempotency_key=key(),
    )
    assert shortfall == 30
    assert entry is not None and entry.shortfall == 30
    assert entry.memo == "Comet payment (owed 50, paid 20, shortfall 30)"
    assert (balance(wallet_a), balance(pot)) == (0, 20)


def test_pay_what_you_have_with_nothing_writes_nothing(
    wallet_a: Account, pot: Account, key: Key
) -> None:
    assert services.pay_what_you_have(
        payer=wallet_a, payee=pot, amount=50, memo="ante", source="t", idempotency_key=key()
    ) == (None, 50)
    assert not JournalEntry.objects.exists()


def test_a_retried_payment_returns_the_first_entry_and_its_shortfall(
    wallet_a: Account, pot: Account, fund: Fund, key: Key
) -> None:
    fund(wallet_a, 20)
    k = key()
    first = services.pay_what_you_have(
        payer=wallet_a, payee=pot, amount=50, memo="m", source="t", idempotency_key=k
    )
    fund(wallet_a, 100)  # chips arriving later do not change what the first payment was
    again = services.pay_what_you_have(
        payer=wallet_a, payee=pot, amount=50, memo="m", source="t", idempotency_key=k
    )
    assert again == first
    assert balance(wallet_a) == 100


def test_cash_out_returns_the_chips_to_the_bank(
    wallet_a: Account, bank: Account, fund: Fund, key: Key
) -> None:
    fund(wallet_a, 100)
    services.cash_out(wallet=wallet_a, amount=40, source="t", idempotency_key=key())
    assert (balance(wallet_a), balance(bank)) == (60, -60)
    services.cash_out(wallet=wallet_a, source="t", idempotency_key=key())
    assert (balance(wallet_a), balance(bank)) == (0, 0)
    assert services.cash_out(wallet=wallet_a, source="t", idempotency_key=key()) is None


def test_cash_out_of_more_than_held_is_refused(wallet_a: Account, fund: Fund, key: Key) -> None:
    fund(wallet_a, 10)
    with pytest.raises(InsufficientChips):
        services.cash_out(wallet=wallet_a, amount=11, source="t", idempotency_key=key())


def test_the_same_key_and_postings_return_the_first_entry(wallet_a: Account, key: Key) -> None:
    k = key()
    first = services.buy_in(wallet=wallet_a, amount=100, source="t", idempotency_key=k)
    again = services.buy_in(wallet=wallet_a, amount=100, source="t", idempotency_key=k)
    assert again.pk == first.pk
    assert balance(wallet_a) == 100
    assert JournalEntry.objects.count() == 1


def test_the_same_key_with_other_postings_is_an_error(
    wallet_a: Account, wallet_b: Account, key: Key
) -> None:
    k = key()
    services.buy_in(wallet=wallet_a, amount=100, source="t", idempotency_key=k)
    with pytest.raises(IdempotencyConflict, match="already used by entry"):
        services.buy_in(wallet=wallet_a, amount=99, source="t", idempotency_key=k)
    with pytest.raises(IdempotencyConflict):
        services.buy_in(wallet=wallet_b, amount=100, source="t", idempotency_key=k)
    assert (balance(wallet_a), balance(wallet_b)) == (100, 0)


def test_a_retry_is_answered_even_when_the_funds_are_gone_since(
    wallet_a: Account, wallet_b: Account, fund: Fund, key: Key
) -> None:
    fund(wallet_a, 50)
    k = key()
    first = services.transfer(
        payer=wallet_a, payee=wallet_b, amount=50, memo="m", source="t", idempotency_key=k
    )
    again = services.transfer(
        payer=wallet_a, payee=wallet_b, amount=50, memo="m", source="t", idempotency_key=k
    )
    assert again.pk == first.pk


@pytest.mark.parametrize(
    ("amounts", "error", "message"),
    [
        ((-100, 90), UnbalancedEntry, r"sum to -10"),
        ((0, 0), InvalidEntry, "moves nothing"),
        ((True, -1), InvalidEntry, "whole numbers"),
        ((1.5, -1.5), InvalidEntry, "whole numbers"),
    ],
)
def test_malformed_entries_are_refused(
    wallet_a: Account,
    bank: Account,
    key: Key,
    amounts: tuple[int, int],
    error: type[Exception],
    message: str,
) -> None:
    with pytest.raises(error, match=message):
        services.entry_post(
            postings=[(bank, amounts[0]), (wallet_a, amounts[1])],
            memo="m",
            source="t",
            idempotency_key=key(),
        )
    assert not JournalEntry.objects.exists()


def test_an_entry_needs_two_distinct_accounts_of_one_club(
    wallet_a: Account, bank: Account, key: Key
) -> None:
    with pytest.raises(InvalidEntry, match="two or more"):
        services.entry_post(postings=[(bank, 0)], memo="m", source="t", idempotency_key=key())
    with pytest.raises(InvalidEntry, match="appears twice"):
        services.entry_post(
            postings=[(bank, -5), (bank, 5)], memo="m", source="t", idempotency_key=key()
        )
    elsewhere = WalletFactory(owner=UserFactory(), club_key="club-b")
    with pytest.raises(InvalidEntry, match="one club"):
        services.entry_post(
            postings=[(bank, -5), (elsewhere, 5)], memo="m", source="t", idempotency_key=key()
        )


def test_an_entry_with_many_postings_shares_a_pot(
    pot: Account, wallet_a: Account, wallet_b: Account, wallet_c: Account, fund: Fund, key: Key
) -> None:
    fund(wallet_a, 10)
    services.transfer(
        payer=wallet_a, payee=pot, amount=10, memo="ante", source="t", idempotency_key=key()
    )
    services.entry_post(
        postings=[(pot, -10), (wallet_a, 3), (wallet_b, 4), (wallet_c, 3)],
        memo="Pot shared",
        source="partie:1/pot-shared",
        idempotency_key=key(),
    )
    assert [balance(a) for a in (pot, wallet_a, wallet_b, wallet_c)] == [0, 3, 4, 3]


def test_a_reversal_cancels_an_entry_once(
    wallet_a: Account, wallet_b: Account, fund: Fund, key: Key
) -> None:
    fund(wallet_a, 100)
    mistake = services.transfer(
        payer=wallet_a,
        payee=wallet_b,
        amount=30,
        memo="wrong seat",
        source="hand:4/event:3",
        idempotency_key=key(),
    )
    reversal = services.entry_reverse(entry=mistake, reason="paid the wrong seat")
    assert (balance(wallet_a), balance(wallet_b)) == (100, 0)
    assert reversal.reverses_id == mistake.pk and reversal.source == "hand:4/event:3"
    assert reversal.memo == f"Reversal of entry #{mistake.pk}: paid the wrong seat"
    assert (
        services.entry_reverse(entry=mistake, reason="again").pk == reversal.pk
    )  # same default key
    with pytest.raises(AlreadyReversed):
        services.entry_reverse(entry=mistake, reason="again", idempotency_key=key())
    assert (balance(wallet_a), balance(wallet_b)) == (100, 0)


def test_a_reversal_whose_chips_are_gone_is_refused(
    wallet_a: Account, wallet_b: Account, fund: Fund, key: Key
) -> None:
    fund(wallet_a, 100)
    entry = services.transfer(
        payer=wallet_a, payee=wallet_b, amount=30, memo="m", source="t", idempotency_key=key()
    )
    services.cash_out(wallet=wallet_b, source="t", idempotency_key=key())
    with pytest.raises(InsufficientChips):
        services.entry_reverse(entry=entry, reason="too late")
    assert not JournalEntry.objects.filter(reverses=entry).exists()


def test_an_entry_refused_inside_the_callers_transaction_leaves_it_usable(
    wallet_a: Account, wallet_b: Account, fund: Fund, key: Key
) -> None:
    fund(wallet_a, 10)
    with transaction.atomic():
        with pytest.raises(InsufficientChips):
            services.transfer(
                payer=wallet_a,
                payee=wallet_b,
                amount=11,
                memo="m",
                source="t",
                idempotency_key=key(),
            )
        services.transfer(
            payer=wallet_a, payee=wallet_b, amount=10, memo="m", source="t", idempotency_key=key()
        )
    assert (balance(wallet_a), balance(wallet_b)) == (0, 10)


def test_entries_roll_back_with_the_callers_transaction(
    wallet_a: Account, fund: Fund, key: Key
) -> None:
    class MoveRefused(Exception):
        pass

    with pytest.raises(MoveRefused), transaction.atomic():
        fund(wallet_a, 10)
        raise MoveRefused
    assert balance(wallet_a) == 0
    assert not JournalEntry.objects.exists()


def test_an_entry_may_not_be_dated_before_its_accounts_last_posting(
    wallet_a: Account, fund: Fund, key: Key
) -> None:
    fund(wallet_a, 10)
    with pytest.raises(BackdatedEntry):
        services.cash_out(
            wallet=wallet_a,
            source="t",
            idempotency_key=key(),
            at=timezone.now() - timedelta(hours=1),
        )
    with pytest.raises(InvalidEntry, match="timezone-aware"):
        services.cash_out(
            wallet=wallet_a,
            source="t",
            idempotency_key=key(),
            at=timezone.now().replace(tzinfo=None),
        )


def test_entries_keep_each_accounts_time_order_when_the_clock_steps_back(
    wallet_a: Account, wallet_b: Account, fund: Fund, key: Key
) -> None:
    fund(wallet_a, 10)
    first = Posting.objects.get(account=wallet_a).at
    with time_machine.travel(first - timedelta(minutes=5), tick=False):
        entry = services.transfer(
            payer=wallet_a, payee=wallet_b, amount=5, memo="m", source="t", idempotency_key=key()
        )
    assert entry.at == first


def test_a_staff_grant_and_withdrawal_name_the_staff_member_and_the_reason(
    wallet_a: Account, staff: object, key: Key
) -> None:
    grant = services.chips_grant(
        wallet=wallet_a, amount=500, reason="welcome", by=staff, idempotency_key=key()
    )
    assert grant.memo == "Grant of 500 chips by stan: welcome" and grant.source == "admin:grant"
    withdrawal = services.chips_grant(
        wallet=wallet_a, amount=-200, reason="typo", by=staff, idempotency_key=key()
    )
    assert withdrawal.memo == "Withdrawal of 200 chips by stan: typo"
    assert balance(wallet_a) == 300
    with pytest.raises(InsufficientChips):
        services.chips_grant(
            wallet=wallet_a, amount=-301, reason="too much", by=staff, idempotency_key=key()
        )


def test_accounts_are_one_per_club_and_owner(alice: object) -> None:
    first = services.wallet_get_or_create(club_key="club-a", owner=alice)
    assert services.wallet_get_or_create(club_key="club-a", owner=alice) == first
    assert services.wallet_get_or_create(club_key="casual", owner=alice) != first
    assert services.bank_get_or_create(club_key="club-a") == services.bank_get_or_create(
        club_key="club-a"
    )
    assert (
        services.pot_get_or_create(club_key="club-a", ref="partie:3").name
        == "Pot partie:3 @ club-a"
    )


def test_a_batch_of_entries_posts_in_order_all_or_nothing(
    wallet_a: Account, wallet_b: Account, pot: Account, bank: Account, key: Key
) -> None:
    keys = [key() for _ in range(3)]
    batch = [
        services.EntryRequest(
            postings=[(bank, -50), (wallet_a, 50)], memo="buy", source="b", idempotency_key=keys[0]
        ),
        services.EntryRequest(
            postings=[(wallet_a, -30), (pot, 30)], memo="ante", source="b", idempotency_key=keys[1]
        ),
        services.EntryRequest(
            postings=[(pot, -30), (wallet_b, 30)], memo="won", source="b", idempotency_key=keys[2]
        ),
    ]
    entries = services.entries_post(entries=batch)
    assert [e.idempotency_key for e in entries] == keys
    assert [balance(a) for a in (wallet_a, wallet_b, pot, bank)] == [20, 30, 0, -50]
    assert wallet_a.balance == 20 and pot.balance == 0
    assert [p.balance_after for p in selectors.account_statement(account=pot)] == [30, 0]
    again = services.entries_post(entries=batch)  # a retry posts nothing
    assert [e.pk for e in again] == [e.pk for e in entries]
    assert JournalEntry.objects.count() == 3


def test_a_batch_keeps_each_entrys_shortfall(
    wallet_a: Account, pot: Account, bank: Account, key: Key
) -> None:
    services.buy_in(wallet=wallet_a, amount=5, source="b", idempotency_key=key())
    batch = [
        services.EntryRequest(postings=[(wallet_a, -3), (pot, 3)], memo="ante, owed 5",
                              source="b", idempotency_key=key(), shortfall=2),
        services.EntryRequest(postings=[(wallet_a, -1), (pot, 1)], memo="ante",
                              source="b", idempotency_key=key()),
    ]
    entries = services.entries_post(entries=batch)
    assert [e.shortfall for e in entries] == [2, 0]
    stored = JournalEntry.objects.filter(pk__in=[e.pk for e in entries]).order_by("pk")
    assert [e.shortfall for e in stored] == [2, 0]


def test_a_batch_refuses_a_shortfall_below_zero(wallet_a: Account, pot: Account, key: Key) -> None:
    services.buy_in(wallet=wallet_a, amount=5, source="b", idempotency_key=key())
    request = services.EntryRequest(postings=[(wallet_a, -3), (pot, 3)], memo="ante",
                                    source="b", idempotency_key=key(), shortfall=-1)
    with pytest.raises(InvalidEntry, match="positive amount"):
        services.entries_post(entries=[request])
    assert not JournalEntry.objects.filter(idempotency_key=request.idempotency_key).exists()


@pytest.mark.parametrize("text", [
    'a "quoted" memo', "back\\slash \\\" both", "{braces}, commas, and (parens)", "NULL",
    "  spaces  ", "table d'hôte ♠ ♥", "line\nbreak and\ttab", "\\",
])
def test_a_batch_stores_its_texts_exactly_as_given(
    wallet_a: Account, bank: Account, key: Key, text: str
) -> None:
    # The batch's keys, sources and memos go to PostgreSQL as array literals (writer._text_array):
    # every character PostgreSQL's array syntax gives a meaning must come back as it was sent.
    keys = [f"{key()}:{text}", key()]
    batch = [
        services.EntryRequest(postings=[(bank, -5), (wallet_a, 5)], memo=text,
                              source=f"src {text}", idempotency_key=keys[0]),
        services.EntryRequest(postings=[(bank, -1), (wallet_a, 1)], memo=f"{text}{text}",
                              source=text, idempotency_key=keys[1]),
    ]
    services.entries_post(entries=batch)
    stored = {e.idempotency_key: (e.memo, e.source) for e in JournalEntry.objects.all()}
    assert stored == {keys[0]: (text, f"src {text}"), keys[1]: (f"{text}{text}", text)}
    assert services.entries_post(entries=batch)  # the retry finds both keys as they were


def test_a_batch_that_runs_out_of_chips_writes_nothing(
    wallet_a: Account, pot: Account, fund: Fund, key: Key
) -> None:
    fund(wallet_a, 40)
    before = JournalEntry.objects.count()
    batch = [
        services.EntryRequest(
            postings=[(wallet_a, -30), (pot, 30)], memo="ante", source="b", idempotency_key=key()
        ),
        services.EntryRequest(
            postings=[(wallet_a, -30), (pot, 30)], memo="ante", source="b", idempotency_key=key()
        ),
    ]
    with pytest.raises(InsufficientChips, match="holds 10, this entry takes 30"):
        services.entries_post(entries=batch)
    assert JournalEntry.objects.count() == before
    assert balance(wallet_a) == 40


def test_a_batch_needs_one_key_per_entry_and_respects_earlier_keys(
    wallet_a: Account, bank: Account, key: Key
) -> None:
    k = key()
    one = services.EntryRequest(
        postings=[(bank, -5), (wallet_a, 5)], memo="m", source="b", idempotency_key=k
    )
    with pytest.raises(InvalidEntry, match="its own idempotency key"):
        services.entries_post(entries=[one, one])
    services.buy_in(wallet=wallet_a, amount=7, source="b", idempotency_key=k)
    with pytest.raises(IdempotencyConflict):
        services.entries_post(entries=[one])
    assert services.entries_post(entries=[]) == []


def test_a_batch_refused_inside_the_callers_transaction_leaves_it_usable(
    wallet_a: Account, wallet_b: Account, bank: Account, fund: Fund, key: Key
) -> None:
    """The batch checks everything before it writes, so it needs no savepoint: a refusal is
    raised out of its block with nothing written, and the caller goes on."""
    fund(wallet_a, 10)
    k = key()
    services.buy_in(wallet=wallet_b, amount=5, source="b", idempotency_key=k)
    with transaction.atomic():
        with pytest.raises(InsufficientChips):
            services.entries_post(
                entries=[
                    services.EntryRequest(
                        postings=[(bank, -1), (wallet_b, 1)],
                        memo="m",
                        source="b",
                        idempotency_key=key(),
                    ),
                    services.EntryRequest(
                        postings=[(wallet_a, -11), (wallet_b, 11)],
                        memo="m",
                        source="b",
                        idempotency_key=key(),
                    ),
                ]
            )
        with pytest.raises(IdempotencyConflict):
            services.entries_post(
                entries=[
                    services.EntryRequest(
                        postings=[(bank, -6), (wallet_b, 6)],
                        memo="m",
                        source="b",
                        idempotency_key=k,
                    )
                ]
            )
        with pytest.raises(IdempotencyConflict):
            services.buy_in(wallet=wallet_b, amount=6, source="b", idempotency_key=k)
        services.transfer(
            payer=wallet_a, payee=wallet_b, amount=10, memo="m", source="t", idempotency_key=key()
        )
    assert (balance(wallet_a), balance(wallet_b)) == (0, 15)
    assert JournalEntry.objects.count() == 3


def test_an_unknown_account_is_refused(wallet_a: Account, bank: Account, key: Key) -> None:
    ghost = Account(pk=10**9, kind="wallet", club_key=wallet_a.club_key, name="ghost")
    with pytest.raises(InvalidEntry, match=r"No such account: \[1000000000\]"):
        services.transfer(
            payer=bank, payee=ghost, amount=5, memo="m", source="t", idempotency_key=key()
        )
    request = services.EntryRequest(
        postings=[(bank, -5), (ghost, 5)], memo="m", source="t", idempotency_key=key()
    )
    with pytest.raises(InvalidEntry, match="No such account"):
        services.entries_post(entries=[request])
    assert not JournalEntry.objects.exists()


def test_an_entry_may_be_dated_but_never_before_its_accounts_last_posting(
    wallet_a: Account, wallet_b: Account, fund: Fund, key: Key
) -> None:
    fund(wallet_a, 10)
    last = wallet_a.last_posted_at
    assert last is not None
    later = last + timedelta(minutes=1)
    entry = services.transfer(
        payer=wallet_a,
        payee=wallet_b,
        amount=4,
        memo="m",
        source="t",
        idempotency_key=key(),
        at=later,
    )
    assert entry.at == later == JournalEntry.objects.get(pk=entry.pk).at
    assert wallet_a.last_posted_at == later and wallet_a.balance == 6
    with pytest.raises(BackdatedEntry, match="would come before its accounts' last posting"):
        services.transfer(
            payer=wallet_a,
            payee=wallet_b,
            amount=1,
            memo="m",
            source="t",
            idempotency_key=key(),
            at=later - timedelta(seconds=1),
        )
    assert balance(wallet_a) == 6


def test_a_refused_batch_writes_nothing_and_says_why(
    wallet_a: Account, wallet_b: Account, bank: Account, fund: Fund, key: Key
) -> None:
    """Funds are checked on the balances the batch's earlier entries leave; a refusal writes
    nothing and leaves the caller's transaction usable."""
    fund(wallet_a, 5)
    batch = [
        services.EntryRequest(
            postings=[(wallet_a, -3), (wallet_b, 3)], memo="m", source="b", idempotency_key=key()
        )
        for _ in range(2)
    ]
    with transaction.atomic():
        with pytest.raises(InsufficientChips, match="holds 2, this entry takes 3"):
            services.entries_post(entries=batch)
        assert balance(wallet_a) == 5  # the transaction is still usable
        services.entries_post(entries=batch[:1])
    assert (balance(wallet_a), balance(wallet_b)) == (2, 3)
    assert not JournalEntry.objects.filter(idempotency_key=batch[1].idempotency_key).exists()
