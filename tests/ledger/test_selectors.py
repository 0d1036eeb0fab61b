"""Balances now and as of a time, statements, the trial balance and settlements."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

import pytest
import time_machine
from django.utils import timezone

from ledger import selectors, services
from ledger.models import Account
from tests.ledger.factories import UserFactory, WalletFactory

pytestmark = pytest.mark.django_db

Fund = Callable[[Account, int], Account]
Key = Callable[[], str]

T0 = datetime(2026, 3, 7, 20, 0, tzinfo=timezone.get_fixed_timezone(60))


def test_balance_as_of_any_past_time(wallet_a: Account, wallet_b: Account, key: Key) -> None:
    with time_machine.travel(T0, tick=False):
        services.buy_in(wallet=wallet_a, amount=100, source="t", idempotency_key=key())
    with time_machine.travel(T0 + timedelta(minutes=10), tick=False):
        services.transfer(
            payer=wallet_a, payee=wallet_b, amount=30, memo="m", source="t", idempotency_key=key()
        )
    with time_machine.travel(T0 + timedelta(minutes=20), tick=False):
        services.transfer(
            payer=wallet_b, payee=wallet_a, amount=5, memo="m", source="t", idempotency_key=key()
        )

    def at(minutes: float) -> int:
        return selectors.account_balance(account=wallet_a, at=T0 + timedelta(minutes=minutes))

    assert [at(-1), at(0), at(5), at(10), at(15), at(20), at(60)] == [0, 100, 100, 70, 70, 75, 75]
    assert selectors.account_balance(account=wallet_a) == 75


def test_a_statement_lists_every_movement_with_its_source_and_running_balance(
    wallet_a: Account, pot: Account, fund: Fund, key: Key
) -> None:
    fund(wallet_a, 100)
    services.pay_what_you_have(
        payer=wallet_a,
        payee=pot,
        amount=40,
        memo="ante",
        source="hand:1/event:1",
        idempotency_key=key(),
    )
    services.pay_what_you_have(
        payer=wallet_a,
        payee=pot,
        amount=80,
        memo="Comet",
        source="hand:1/event:5",
        idempotency_key=key(),
    )
    services.transfer(
        payer=pot,
        payee=wallet_a,
        amount=100,
        memo="won",
        source="hand:1/event:9",
        idempotency_key=key(),
    )
    lines = list(selectors.account_statement(account=wallet_a))
    assert [(p.amount, p.balance_after, p.entry.source) for p in lines] == [
        (100, 100, "test:fund"),
        (-40, 60, "hand:1/event:1"),
        (-60, 0, "hand:1/event:5"),
        (100, 100, "hand:1/event:9"),
    ]
    assert lines[2].entry.memo == "Comet (owed 80, paid 60, shortfall 20)"
    assert sum(p.amount for p in lines) == selectors.account_balance(account=wallet_a)


def test_a_statement_over_a_window_opens_on_the_balance_before_it(
    wallet_a: Account, key: Key
) -> None:
    for minute, amount in [(0, 10), (1, 20), (2, 30)]:
        with time_machine.travel(T0 + timedelta(minutes=minute), tick=False):
            services.buy_in(wallet=wallet_a, amount=amount, source="t", idempotency_key=key())
    window = list(
        selectors.account_statement(
            account=wallet_a, since=T0 + timedelta(minutes=1), until=T0 + timedelta(minutes=2)
        )
    )
    assert [(p.amount, p.balance_after) for p in window] == [(20, 30)]
    assert window[0].balance_after - window[0].amount == 10


def test_the_trial_balance_sums_to_zero_now_and_in_the_past(
    wallet_a: Account, wallet_b: Account, pot: Account, key: Key
) -> None:
    with time_machine.travel(T0, tick=False):
        services.buy_in(wallet=wallet_a, amount=100, source="t", idempotency_key=key())
    with time_machine.travel(T0 + timedelta(hours=1), tick=False):
        services.buy_in(wallet=wallet_b, amount=50, source="t", idempotency_key=key())
        services.transfer(
            payer=wallet_b, payee=pot, amount=5, memo="ante", source="t", idempotency_key=key()
        )
    now = selectors.trial_balance(club_key="club-a")
    assert now.total == 0
    assert {a.name: a.balance for a in now.accounts} == {
        "Bank of club-a": -150,
        "alice @ club-a": 100,
        "bob @ club-a": 45,
        "Pot partie:1 @ club-a": 5,
    }
    before = selectors.trial_balance(club_key="club-a", at=T0 + timedelta(minutes=30))
    assert before.total == 0
    assert {a.name: a.balance for a in before.accounts}["bob @ club-a"] == 0
    assert {a.name: a.balance for a in before.accounts}["alice @ club-a"] == 100


def play_a_soiree(
    wallets: list[Account], pot: Account, key: Key, source: str = "soiree:7/hand:1"
) -> None:
    """Everyone buys in 100; a and b each lose 30 into the pot, c wins it all."""
    a, b, c = wallets
    for wallet in wallets:
        services.buy_in(wallet=wallet, amount=100, source="soiree:7/buy-in", idempotency_key=key())
    for loser in (a, b):
        services.transfer(
            payer=loser, payee=pot, amount=30, memo="stake", source=source, idempotency_key=key()
        )
    services.transfer(
        payer=pot, payee=c, amount=60, memo="won", source=source, idempotency_key=key()
    )


def test_a_settlement_nets_the_play_and_says_who_pays_whom(
    wallet_a: Account, wallet_b: Account, wallet_c: Account, pot: Account, key: Key
) -> None:
    start = timezone.now()
    play_a_soiree([wallet_a, wallet_b, wallet_c], pot, key)
    result = selectors.settlement(
        club_key="club-a", since=start, until=timezone.now() + timedelta(seconds=1)
    )
    assert {n.account.name: n.net for n in result.nets} == {
        "carol @ club-a": 60,
        "alice @ club-a": -30,
        "bob @ club-a": -30,
    }
    assert sorted((t.payer.name, t.payee.name, t.amount) for t in result.transfers) == [
        ("alice @ club-a", "carol @ club-a", 30),
        ("bob @ club-a", "carol @ club-a", 30),
    ]


def test_a_settlement_is_narrowed_by_source_and_time(
    wallet_a: Account, wallet_b: Account, wallet_c: Account, pot: Account, key: Key
) -> None:
    start = timezone.now()
    play_a_soiree([wallet_a, wallet_b, wallet_c], pot, key)
    services.transfer(
        payer=wallet_c,
        payee=wallet_a,
        amount=10,
        memo="other table",
        source="soiree:8/hand:1",
        idempotency_key=key(),
    )
    end = timezone.now() + timedelta(seconds=1)
    soiree_7 = selectors.settlement(
        club_key="club-a", since=start, until=end, source_prefix="soiree:7/"
    )
    assert {n.account.name: n.net for n in soiree_7.nets}["carol @ club-a"] == 60
    everything = selectors.settlement(club_key="club-a", since=start, until=end)
    assert {n.account.name: n.net for n in everything.nets}["carol @ club-a"] == 50
    assert (
        selectors.settlement(club_key="club-a", since=end, until=end + timedelta(hours=1)).nets
        == ()
    )
    assert selectors.settlement(club_key="club-b", since=start, until=end).nets == ()


def test_a_settlement_counts_pots_that_were_not_paid_out(
    wallet_a: Account, wallet_b: Account, pot: Account, fund: Fund, key: Key
) -> None:
    start = timezone.now()
    fund(wallet_a, 10)
    services.transfer(
        payer=wallet_a, payee=pot, amount=10, memo="ante", source="t", idempotency_key=key()
    )
    result = selectors.settlement(
        club_key="club-a", since=start, until=timezone.now() + timedelta(seconds=1)
    )
    assert sum(n.net for n in result.nets) == 0
    assert [(t.payer.name, t.payee.name, t.amount) for t in result.transfers] == [
        ("alice @ club-a", "Pot partie:1 @ club-a", 10)
    ]


def test_a_player_reads_only_his_own_wallets(alice: object, key: Key) -> None:
    mine = WalletFactory(owner=alice)
    WalletFactory(owner=UserFactory())
    assert list(selectors.player_wallets(user=alice)) == [mine]
    assert selectors.wallet_of(user=alice, club_key="club-a") == mine
    assert selectors.wallet_of(user=alice, club_key="club-z") is None


def test_source_totals_sum_the_entries_of_the_sources_asked_in_the_database(
    wallet_a: Account, wallet_b: Account, key: Key
) -> None:
    services.buy_in(wallet=wallet_a, amount=50, source="soiree:1/buy-in", idempotency_key=key())
    services.buy_in(wallet=wallet_b, amount=50, source="soiree:1/buy-in", idempotency_key=key())
    for amount in (7, 3):
        services.transfer(payer=wallet_a, payee=wallet_b, amount=amount, memo="m",
                          source="hand:9/event:4", idempotency_key=key())
    services.transfer(payer=wallet_b, payee=wallet_a, amount=10, memo="m",
                      source="hand:10/event:4", idempotency_key=key())

    by_account = selectors.source_totals(prefixes=["hand:9/"])
    assert by_account == {wallet_a.pk: -10, wallet_b.pk: 10}
    # Both hands: each wallet's net is 0, and totals of 0 are left out.
    assert selectors.source_totals(prefixes=["hand:9/", "hand:10/"]) == {}
    owners = selectors.source_totals(sources=["soiree:1/buy-in"], by="owner", owned_only=True)
    assert owners == {wallet_a.owner.username: 50, wallet_b.owner.username: 50}
    pairs = selectors.source_totals(prefixes=["hand:"], sources=["soiree:1/buy-in"],
                                    by=("owner", "source"), owned_only=True)
    assert pairs[(wallet_a.owner.username, "hand:9/event:4")] == -10
    assert pairs[(wallet_b.owner.username, "soiree:1/buy-in")] == 50
    assert selectors.source_totals() == {}
