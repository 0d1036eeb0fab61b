"""Code run in other processes by the concurrency tests (spawned, so each process sets up
Django afresh and opens its own connection to the test database)."""

from __future__ import annotations

import os
import random
from contextlib import nullcontext
from typing import Any


def setup_django(database_url: str) -> None:
    os.environ["DATABASE_URL"] = database_url
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.test"
    import django

    django.setup()


def move_chips(
    database_url: str, account_ids: list[int], seed: int, rounds: int, start: Any, out: Any
) -> None:
    """Random transfers and payments between the same accounts; report what moved."""
    setup_django(database_url)
    from django.db import connection

    from ledger import services
    from ledger.exceptions import InsufficientChips
    from ledger.models import Account

    rng = random.Random(seed)
    accounts = list(Account.objects.filter(pk__in=account_ids))
    moved = dict.fromkeys(account_ids, 0)
    written = refused = 0
    start.wait(timeout=60)
    for n in range(rounds):
        payer, payee = rng.sample(accounts, 2)
        amount = rng.randint(1, 60)
        key = f"move:{seed}:{n}"
        try:
            if rng.random() < 0.3:
                entry, shortfall = services.pay_what_you_have(
                    payer=payer,
                    payee=payee,
                    amount=amount,
                    memo="pay",
                    source="race",
                    idempotency_key=key,
                )
                paid = amount - shortfall
            else:
                entry = services.transfer(
                    payer=payer,
                    payee=payee,
                    amount=amount,
                    memo="move",
                    source="race",
                    idempotency_key=key,
                )
                paid = amount
        except InsufficientChips:
            refused += 1
            continue
        if entry is not None:
            written += 1
            moved[payer.pk] -= paid
            moved[payee.pk] += paid
    connection.close()
    out.put({"moved": moved, "written": written, "refused": refused})


def retry_same_keys(
    database_url: str,
    payer_id: int,
    payee_id: int,
    amount: int,
    keys: list[str],
    start: Any,
    out: Any,
    how: str = "transfer",
) -> None:
    """Post one transfer per key, every process at the same moment; report each answer.

    ``how``: "transfer" alone (its own transaction), or inside a caller's transaction (like the
    game service) through "transfer-in-transaction" or "batch" (entries_post of one entry)."""
    setup_django(database_url)
    from django.db import connection, transaction

    from ledger import services
    from ledger.exceptions import IdempotencyConflict
    from ledger.models import Account

    payer, payee = Account.objects.get(pk=payer_id), Account.objects.get(pk=payee_id)
    answers: dict[str, int | str] = {}
    for key in keys:
        start.wait(timeout=60)  # a process that died fails the test instead of hanging it
        try:
            if how == "batch":
                with transaction.atomic():
                    request = services.EntryRequest(
                        postings=[(payer, -amount), (payee, amount)],
                        memo="retry",
                        source="race",
                        idempotency_key=key,
                    )
                    [entry] = services.entries_post(entries=[request])
            else:
                with transaction.atomic() if how == "transfer-in-transaction" else nullcontext():
                    entry = services.transfer(
                        payer=payer,
                        payee=payee,
                        amount=amount,
                        memo="retry",
                        source="race",
                        idempotency_key=key,
                    )
            answers[key] = entry.pk
        except IdempotencyConflict:
            answers[key] = "conflict"
    connection.close()
    out.put(answers)
