"""Random sequences of buy-ins, transfers, payments, payouts, reversals, retries and cash-outs
keep every invariant of the books, checked against a plain model of the balances."""

from __future__ import annotations

import itertools

import pytest
from django.db import transaction
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from ledger import selectors, services
from ledger.audit import books_audit
from ledger.exceptions import AlreadyReversed, InsufficientChips
from ledger.models import Account, AccountKind, JournalEntry
from tests.ledger.conftest import check_deferred_constraints
from tests.ledger.factories import UserFactory

pytestmark = pytest.mark.django_db

CLUB = "club-h"
PLAYERS = 3
player = st.integers(0, PLAYERS - 1)
chips = st.integers(1, 150)


class Books(RuleBasedStateMachine):
    """Each example runs in a savepoint of the test's transaction, rolled back at its end."""

    def __init__(self) -> None:
        super().__init__()
        self.savepoint = transaction.savepoint()
        self.keys = itertools.count()
        self.bank = services.bank_get_or_create(club_key=CLUB)
        self.wallets = [
            services.wallet_get_or_create(club_key=CLUB, owner=UserFactory(username=f"h{i}"))
            for i in range(PLAYERS)
        ]
        self.pot = services.pot_get_or_create(club_key=CLUB, ref="partie:h")
        self.model = {a.pk: 0 for a in [self.bank, self.pot, *self.wallets]}
        self.reversible: list[JournalEntry] = []
        self.calls: list[tuple[str, dict[str, object], int]] = []  # (service, kwargs, entry id)

    def key(self) -> str:
        return f"h:{next(self.keys)}"

    def move(self, payer: Account, payee: Account, amount: int) -> None:
        self.model[payer.pk] -= amount
        self.model[payee.pk] += amount

    def holds(self, account: Account) -> int:
        return self.model[account.pk]

    @rule(who=player, amount=chips)
    def buy_in(self, who: int, amount: int) -> None:
        kwargs = {
            "wallet": self.wallets[who],
            "amount": amount,
            "source": "h",
            "idempotency_key": self.key(),
        }
        entry = services.buy_in(**kwargs)  # type: ignore[arg-type]
        self.move(self.bank, self.wallets[who], amount)
        self.reversible.append(entry)
        self.calls.append(("buy_in", kwargs, entry.pk))

    @rule(payer=player, payee=player, amount=chips)
    def transfer(self, payer: int, payee: int, amount: int) -> None:
        if payer == payee:
            return
        a, b = self.wallets[payer], self.wallets[payee]
        kwargs = {
            "payer": a,
            "payee": b,
            "amount": amount,
            "memo": "m",
            "source": "h",
            "idempotency_key": self.key(),
        }
        if self.holds(a) < amount:
            with pytest.raises(InsufficientChips):
                services.transfer(**kwargs)  # type: ignore[arg-type]
            return
        entry = services.transfer(**kwargs)  # type: ignore[arg-type]
        self.move(a, b, amount)
        self.reversible.append(entry)
        self.calls.append(("transfer", kwargs, entry.pk))

    @rule(who=player, amount=chips)
    def pay_into_the_pot(self, who: int, amount: int) -> None:
        wallet = self.wallets[who]
        paid = min(amount, self.holds(wallet))
        entry, shortfall = services.pay_what_you_have(
            payer=wallet,
            payee=self.pot,
            amount=amount,
            memo="ante",
            source="h",
            idempotency_key=self.key(),
        )
        assert shortfall == amount - paid
        assert (entry is None) == (paid == 0)
        if entry is not None:
            self.move(wallet, self.pot, paid)
            self.reversible.append(entry)

    @rule(who=player, amount=chips)
    def the_pot_pays_out(self, who: int, amount: int) -> None:
        paid = min(amount, self.holds(self.pot))
        entry, shortfall = services.pay_what_you_have(
            payer=self.pot,
            payee=self.wallets[who],
            amount=amount,
            memo="won",
            source="h",
            idempotency_key=self.key(),
        )
        assert shortfall == amount - paid
        if entry is not None:
            self.move(self.pot, self.wallets[who], paid)

    @rule(data=st.data())
    def reverse(self, data: st.DataObject) -> None:
        if not self.reversible:
            return
        entry = data.draw(st.sampled_from(self.reversible))
        lines = list(entry.postings.values_list("account_id", "amount"))
        if any(self.model[pk] - amount < 0 for pk, amount in lines if pk != self.bank.pk):
            with pytest.raises(InsufficientChips):
                services.entry_reverse(entry=entry, reason="random")
            return
        services.entry_reverse(entry=entry, reason="random")
        for pk, amount in lines:
            self.model[pk] -= amount
        self.reversible.remove(entry)
        with pytest.raises(AlreadyReversed):
            services.entry_reverse(entry=entry, reason="twice", idempotency_key=self.key())

    @rule(who=player, everything=st.booleans(), amount=chips)
    def cash_out(self, who: int, everything: bool, amount: int) -> None:
        wallet = self.wallets[who]
        if everything:
            held = self.holds(wallet)
            entry = services.cash_out(wallet=wallet, source="h", idempotency_key=self.key())
            assert (entry is None) == (held == 0)
            self.move(wallet, self.bank, held)
        elif amount > self.holds(wallet):
            with pytest.raises(InsufficientChips):
                services.cash_out(
                    wallet=wallet, amount=amount, source="h", idempotency_key=self.key()
                )
        else:
            services.cash_out(wallet=wallet, amount=amount, source="h", idempotency_key=self.key())
            self.move(wallet, self.bank, amount)

    @rule(moves=st.lists(st.tuples(player, player, chips), min_size=1, max_size=4))
    def a_batch_of_transfers(self, moves: list[tuple[int, int, int]]) -> None:
        moves = [(a, b, n) for a, b, n in moves if a != b]
        if not moves:
            return
        requests = [
            services.EntryRequest(
                postings=[(self.wallets[a], -n), (self.wallets[b], n)],
                memo="batch",
                source="h",
                idempotency_key=self.key(),
            )
            for a, b, n in moves
        ]
        after = dict(self.model)
        for a, b, n in moves:
            after[self.wallets[a].pk] -= n
            after[self.wallets[b].pk] += n
            if after[self.wallets[a].pk] < 0:
                with pytest.raises(InsufficientChips):
                    services.entries_post(entries=requests)
                return
        self.reversible.extend(services.entries_post(entries=requests))
        self.model = after

    @rule(data=st.data())
    def retry(self, data: st.DataObject) -> None:
        if not self.calls:
            return
        name, kwargs, entry_id = data.draw(st.sampled_from(self.calls))
        assert getattr(services, name)(**kwargs).pk == entry_id  # and nothing moves

    @invariant()
    def balances_follow_the_model_and_the_books_balance(self) -> None:
        balances = dict(Account.objects.filter(club_key=CLUB).values_list("pk", "balance"))
        assert balances == self.model
        assert all(b >= 0 for pk, b in balances.items() if pk != self.bank.pk)
        assert selectors.trial_balance(club_key=CLUB).total == 0

    @invariant()
    def every_statement_adds_up_to_its_balance(self) -> None:
        for account in Account.objects.filter(club_key=CLUB):
            running = 0
            for line in selectors.account_statement(account=account):
                running += line.amount
                assert line.balance_after == running
                if account.kind != AccountKind.BANK:
                    assert running >= 0
            assert running == account.balance

    def teardown(self) -> None:
        try:
            check_deferred_constraints()
            assert all(finding.ok for finding in books_audit()), books_audit()
        finally:
            transaction.savepoint_rollback(self.savepoint)


def test_random_play_keeps_the_books() -> None:
    run_state_machine_as_test(
        Books,
        settings=settings(
            max_examples=25,
            stateful_step_count=25,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],
        ),
    )
