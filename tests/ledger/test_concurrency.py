"""Several processes at once, each with its own connection, on the same accounts: no wallet
goes below zero, no update is lost, the books stay balanced, and a key posts one entry."""

from __future__ import annotations

import multiprocessing
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection

from ledger import selectors, services
from ledger.audit import books_audit
from ledger.models import Account, JournalEntry
from tests.ledger import _workers
from tests.ledger.factories import UserFactory, WalletFactory

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

PROCESSES = 4


def database_url() -> str:
    """The test database, for the other processes to connect to."""
    s = connection.settings_dict
    password = f":{s['PASSWORD']}" if s.get("PASSWORD") else ""
    host, port = s["HOST"] or "127.0.0.1", s["PORT"] or 5432
    return f"postgres://{s['USER']}{password}@{host}:{port}/{s['NAME']}"


def run_processes(
    target: Callable[..., None], args_for: Callable[[int, Any, Any], tuple[Any, ...]]
) -> list[Any]:
    context = multiprocessing.get_context("spawn")
    start, out = context.Barrier(PROCESSES), context.Queue()
    processes = [
        context.Process(target=target, args=args_for(i, start, out)) for i in range(PROCESSES)
    ]
    for process in processes:
        process.start()
    results = [out.get(timeout=120) for _ in processes]
    for process in processes:
        process.join(timeout=30)
        assert process.exitcode == 0
    return results


def funded_wallets(count: int, chips: int) -> list[Account]:
    wallets = [WalletFactory(owner=UserFactory()) for _ in range(count)]
    for wallet in wallets:
        services.buy_in(
            wallet=wallet, amount=chips, source="setup", idempotency_key=f"setup:{wallet.pk}"
        )
    return wallets


def test_processes_moving_chips_between_the_same_wallets_lose_nothing_and_never_go_negative() -> (
    None
):
    wallets = funded_wallets(4, 100)
    pot = services.pot_get_or_create(club_key="club-a", ref="partie:race")
    ids = [w.pk for w in wallets] + [pot.pk]
    results = run_processes(
        _workers.move_chips, lambda i, start, out: (database_url(), ids, 1000 + i, 60, start, out)
    )

    moved: Counter[int] = Counter()
    for result in results:
        moved.update(result["moved"])
    for account in Account.objects.filter(pk__in=ids):
        start = 0 if account.pk == pot.pk else 100
        assert account.balance == start + moved[account.pk]  # no lost update
        assert account.balance >= 0
        lines = list(selectors.account_statement(account=account))
        assert sum(p.amount for p in lines) == account.balance
    assert sum(r["written"] for r in results) == JournalEntry.objects.filter(source="race").count()
    assert sum(r["refused"] for r in results) > 0  # the race did reach empty wallets
    assert selectors.trial_balance().total == 0
    assert all(finding.ok for finding in books_audit())


def test_concurrent_retries_of_the_same_key_post_one_entry() -> None:
    [payer] = funded_wallets(1, 1000)
    payee = WalletFactory(owner=UserFactory())
    keys = [f"hand:1:{seq}" for seq in range(15)]
    results = run_processes(
        _workers.retry_same_keys,
        lambda i, start, out: (database_url(), payer.pk, payee.pk, 10, keys, start, out),
    )
    for key in keys:
        assert len({answers[key] for answers in results}) == 1  # every process got the same entry
    assert JournalEntry.objects.filter(source="race").count() == len(keys)
    assert selectors.account_balance(account=payee) == 10 * len(keys)
    assert all(finding.ok for finding in books_audit())


def test_concurrent_writers_of_one_key_with_different_postings_get_one_entry_and_conflicts() -> (
    None
):
    """Different accounts, so no account lock orders them: the unique key decides."""
    wallets = funded_wallets(PROCESSES, 1000)
    payees = [WalletFactory(owner=UserFactory()) for _ in range(PROCESSES)]
    keys = [f"clash:{n}" for n in range(15)]
    results = run_processes(
        _workers.retry_same_keys,
        lambda i, start, out: (database_url(), wallets[i].pk, payees[i].pk, 10, keys, start, out),
    )
    for key in keys:
        answers = [answers[key] for answers in results]
        assert answers.count("conflict") == PROCESSES - 1
        assert JournalEntry.objects.filter(idempotency_key=key).count() == 1
    moved = sum(selectors.account_balance(account=p) for p in payees)
    assert moved == 10 * len(keys)
    assert all(finding.ok for finding in books_audit())


def test_writers_of_one_key_through_every_path_get_one_entry_and_answers() -> None:
    """Alone, inside a caller's transaction, or in a batch: a writer beaten to the unique key
    rolls back its savepoint only, and is answered as a retry would be (here a conflict, the
    postings differing): one entry per key, the caller's transaction still usable."""
    wallets = funded_wallets(PROCESSES, 1000)
    payees = [WalletFactory(owner=UserFactory()) for _ in range(PROCESSES)]
    keys = [f"mixed:{n}" for n in range(15)]
    paths = ["transfer", "transfer-in-transaction", "batch", "batch"]
    results = run_processes(
        _workers.retry_same_keys,
        lambda i, start, out: (
            database_url(),
            wallets[i].pk,
            payees[i].pk,
            10,
            keys,
            start,
            out,
            paths[i],
        ),
    )
    for key in keys:
        answers = [answers[key] for answers in results]
        assert answers.count("conflict") == PROCESSES - 1
        assert JournalEntry.objects.filter(idempotency_key=key).count() == 1
    assert sum(selectors.account_balance(account=p) for p in payees) == 10 * len(keys)
    assert all(finding.ok for finding in books_audit())
