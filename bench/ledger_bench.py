"""Ledger benchmark on PostgreSQL: posting rate and read times at 1,000,000 postings.

    .venv/bin/python bench/ledger_bench.py [--postings 1000000] [--entries 3000] [--keep]

It uses the server of DATABASE_URL (default postgres://postgres@127.0.0.1:5432/academie), in a
throwaway database of its own (``<name>_ledger_bench``, dropped at the end unless --keep), migrated
with the project's migrations so that every trigger is in place.

1. History: a club with a bank, 1,000 wallets and 100 pots, and N/2 entries of two postings
   (buy-ins bank -> wallet, stakes wallet -> pot), loaded in bulk with INSERT ... SELECT over
   generate_series; running balances come from a window function, with the triggers suspended
   for the load only. ``check_books`` then proves the loaded books consistent.
2. Reads through ledger.selectors (ORM included), over random accounts: balance now, balance as
   of a random past time, a statement page (100 lines), a whole wallet statement; p50 and p99.
3. Writes through ledger.services.transfer (locks, triggers, deferred checks, commit): from one
   client with one commit per entry, the transfer alone (autocommit: its own transaction, as
   the baseline's insert) and in ``transaction.atomic()`` (as a service calls it), both
   measured in chunks alternating with the baseline's insert, so that their ratio to it holds
   whatever else loads the machine; with 10 entries per transaction, and through
   ledger.services.entries_post in batches of 100; from 4 client processes on separate
   wallets, and on the same 4 wallets (contended).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlparse, urlunparse

import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

WALLETS, POTS, CLUB = 1000, 100, "bench"


# -- set-up ----------------------------------------------------------------------------------


def bench_url(base_url: str) -> tuple[str, str]:
    url = urlparse(base_url)
    name = f"{url.path.lstrip('/') or 'academie'}_ledger_bench"
    return urlunparse(url._replace(path=f"/{name}")), name


def admin_connection(base_url: str) -> psycopg.Connection[Any]:
    url = urlparse(base_url)
    return psycopg.connect(
        host=url.hostname or "127.0.0.1",
        port=url.port or 5432,
        user=url.username or "postgres",
        password=url.password or None,
        dbname="postgres",
        autocommit=True,
    )


def setup_django(database_url: str) -> None:
    os.environ["DATABASE_URL"] = database_url
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.test"  # DEBUG off: no query log
    import django

    django.setup()


def load_history(postings: int) -> float:
    """Bulk-load ``postings`` postings (half as many entries); return the seconds it took."""
    from django.db import connection, transaction

    entries = postings // 2
    started = time.perf_counter()
    with transaction.atomic(), connection.cursor() as cursor:
        for table in ("ledger_posting", "ledger_journalentry", "ledger_account"):
            cursor.execute(f"ALTER TABLE {table} DISABLE TRIGGER USER")
        cursor.execute(
            "INSERT INTO auth_user (password, is_superuser, username, first_name, last_name,"
            " email, is_staff, is_active, date_joined)"
            " SELECT '!', false, 'bench' || g, '', '', '', false, true, now()"
            " FROM generate_series(1, %s) g",
            [WALLETS],
        )
        cursor.execute(
            "INSERT INTO ledger_account (kind, club_key, owner_id, ref, name, balance, created_at)"
            " SELECT 'bank', %s, NULL, '', 'Bank of bench', 0, now()"
            " UNION ALL SELECT 'wallet', %s, id, '', username || ' @ bench', 0, now()"
            "   FROM auth_user WHERE username LIKE 'bench%%'"
            " UNION ALL SELECT 'pot', %s, NULL, 'partie:' || g, 'Pot ' || g, 0, now()"
            "   FROM generate_series(1, %s) g",
            [CLUB, CLUB, CLUB, POTS],
        )
        cursor.execute(
            "CREATE TEMP TABLE w AS SELECT row_number() OVER (ORDER BY id) - 1 AS n, id"
            " FROM ledger_account WHERE kind = 'wallet' AND club_key = %s",
            [CLUB],
        )
        cursor.execute(
            "CREATE TEMP TABLE p AS SELECT row_number() OVER (ORDER BY id) - 1 AS n, id"
            " FROM ledger_account WHERE kind = 'pot' AND club_key = %s",
            [CLUB],
        )
        cursor.execute(
            "SELECT id FROM ledger_account WHERE kind = 'bank' AND club_key = %s", [CLUB]
        )
        [bank] = cursor.fetchone()
        # Entry i touches wallet (i-1) % 1000; in even rounds of 1,000 entries the bank buys
        # it 10 chips, in odd rounds it stakes 5 in a pot: wallets never go below zero.
        cursor.execute(
            "CREATE TEMP TABLE moves AS"
            " SELECT i AS entry_id, now() - interval '30 days' + i * interval '1 second' AS at,"
            "   CASE WHEN ((i - 1) / %s) %% 2 = 0 THEN %s ELSE w.id END AS payer,"
            "   CASE WHEN ((i - 1) / %s) %% 2 = 0 THEN w.id ELSE p.id END AS payee,"
            "   CASE WHEN ((i - 1) / %s) %% 2 = 0 THEN 10 ELSE 5 END AS amount"
            " FROM generate_series(1, %s) i"
            " JOIN w ON w.n = (i - 1) %% %s"
            " JOIN p ON p.n = ((i - 1) %% %s) %% %s",
            [WALLETS, bank, WALLETS, WALLETS, entries, WALLETS, WALLETS, POTS],
        )
        cursor.execute(
            "INSERT INTO ledger_journalentry (id, idempotency_key, club_key, at, memo, source,"
            " shortfall)"
            " SELECT entry_id, 'bench:' || entry_id, %s, at,"
            "   CASE WHEN amount = 10 THEN 'Buy-in' ELSE 'Stake' END,"
            "   'bench:round:' || ((entry_id - 1) / %s), 0"
            " FROM moves ORDER BY entry_id",
            [CLUB, WALLETS],
        )
        cursor.execute(
            "SELECT setval(pg_get_serial_sequence('ledger_journalentry', 'id'), %s)", [entries]
        )
        cursor.execute(
            "INSERT INTO ledger_posting (entry_id, account_id, amount, balance_after, at)"
            " SELECT entry_id, account_id, amount,"
            "   sum(amount) OVER (PARTITION BY account_id ORDER BY at, entry_id), at"
            " FROM (SELECT entry_id, payer AS account_id, -amount AS amount, at FROM moves"
            "       UNION ALL SELECT entry_id, payee, amount, at FROM moves) lines"
            " ORDER BY entry_id, amount"
        )
        cursor.execute(
            "UPDATE ledger_account a SET balance = s.total, last_posted_at = s.last"
            " FROM (SELECT account_id, sum(amount) AS total, max(at) AS last"
            "       FROM ledger_posting GROUP BY account_id) s"
            " WHERE a.id = s.account_id"
        )
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        for table in ("ledger_posting", "ledger_journalentry", "ledger_account"):
            cursor.execute(f"ALTER TABLE {table} ENABLE TRIGGER USER")
    with connection.cursor() as cursor:
        for table in ("ledger_posting", "ledger_journalentry", "ledger_account"):
            cursor.execute(f"VACUUM ANALYZE {table}")
    return time.perf_counter() - started


# -- reads -----------------------------------------------------------------------------------


def timings(run: Callable[[], object], repeat: int) -> dict[str, float]:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        samples.append((time.perf_counter() - started) * 1000)
    samples.sort()
    return {
        "p50": statistics.median(samples),
        "p99": samples[min(len(samples) - 1, int(len(samples) * 0.99))],
    }


def measure_reads(repeat: int) -> dict[str, dict[str, float]]:
    from django.db.models import Max, Min

    from ledger import selectors
    from ledger.models import Account, Posting

    rng = random.Random(7)
    wallets = list(Account.objects.filter(club_key=CLUB, kind="wallet"))
    bank = Account.objects.get(club_key=CLUB, kind="bank")
    span = Posting.objects.aggregate(first=Min("at"), last=Max("at"))
    first, seconds = span["first"], (span["last"] - span["first"]).total_seconds()

    def some_time() -> Any:
        return first + (span["last"] - first) * rng.random() if seconds else first

    return {
        "balance now (wallet)": timings(
            lambda: selectors.account_balance(account=rng.choice(wallets)), repeat
        ),
        "balance as of a past time (wallet)": timings(
            lambda: selectors.account_balance(account=rng.choice(wallets), at=some_time()), repeat
        ),
        "balance as of a past time (bank, half of all postings)": timings(
            lambda: selectors.account_balance(account=bank, at=some_time()), repeat
        ),
        "statement page, 100 lines (wallet)": timings(
            lambda: list(selectors.account_statement(account=rng.choice(wallets))[:100]), repeat
        ),
        "whole statement (wallet)": timings(
            lambda: list(selectors.account_statement(account=rng.choice(wallets))), repeat // 4
        ),
    }


# -- writes ----------------------------------------------------------------------------------


def funded_wallets(club: str, count: int) -> list[int]:
    from django.contrib.auth.models import User

    from ledger import services

    ids = []
    for n in range(count):
        owner, _ = User.objects.get_or_create(username=f"{club}-{n}")
        wallet = services.wallet_get_or_create(club_key=club, owner=owner)
        services.buy_in(
            wallet=wallet, amount=10**9, source="bench", idempotency_key=f"{club}:fund:{n}"
        )
        ids.append(wallet.pk)
    return ids


def post_entries(
    wallet_ids: list[int], count: int, per_transaction: int, tag: str, *, alone: bool = False
) -> float:
    """Post ``count`` transfers between random wallets; return the seconds it took.

    Each group of ``per_transaction`` runs in ``transaction.atomic()``, as a service calls the
    ledger; ``alone``: no surrounding block, each transfer is its own transaction (autocommit),
    as the machine baseline's ``create()`` is."""
    from contextlib import nullcontext

    from django.db import transaction

    from ledger import services
    from ledger.models import Account

    rng = random.Random(tag)
    wallets = list(Account.objects.filter(pk__in=wallet_ids))
    started = time.perf_counter()
    for batch in range(0, count, per_transaction):
        with nullcontext() if alone else transaction.atomic():
            for n in range(batch, min(count, batch + per_transaction)):
                payer, payee = rng.sample(wallets, 2)
                services.transfer(
                    payer=payer,
                    payee=payee,
                    amount=rng.randint(1, 10),
                    memo="bench",
                    source="bench:write",
                    idempotency_key=f"{tag}:{n}",
                )
    return time.perf_counter() - started


def post_batches(wallet_ids: list[int], count: int, size: int, tag: str) -> float:
    """Post ``count`` transfers with ledger.services.entries_post, ``size`` per call."""
    from ledger import services
    from ledger.models import Account

    rng = random.Random(tag)
    wallets = list(Account.objects.filter(pk__in=wallet_ids))
    started = time.perf_counter()
    for batch in range(0, count, size):
        requests = []
        for n in range(batch, min(count, batch + size)):
            payer, payee = rng.sample(wallets, 2)
            amount = rng.randint(1, 10)
            requests.append(
                services.EntryRequest(
                    postings=[(payer, -amount), (payee, amount)],
                    memo="bench",
                    source="bench:write",
                    idempotency_key=f"{tag}:{n}",
                )
            )
        services.entries_post(entries=requests)
    return time.perf_counter() - started


def client_process(
    database_url: str, wallet_ids: list[int], count: int, tag: str, start: Any, out: Any
) -> None:
    setup_django(database_url)
    from django.db import connection

    start.wait()
    out.put(post_entries(wallet_ids, count, 1, tag))
    connection.close()


def concurrent_rate(database_url: str, wallet_sets: list[list[int]], count: int, tag: str) -> float:
    context = multiprocessing.get_context("spawn")
    start, out = context.Barrier(len(wallet_sets) + 1), context.Queue()
    processes = [
        context.Process(
            target=client_process, args=(database_url, ids, count, f"{tag}:{i}", start, out)
        )
        for i, ids in enumerate(wallet_sets)
    ]
    for process in processes:
        process.start()
    start.wait()
    began = time.perf_counter()
    for _ in processes:
        out.get()
    elapsed = time.perf_counter() - began
    for process in processes:
        process.join()
    return count * len(wallet_sets) / elapsed


def orm_inserts(count: int, tag: str) -> float:
    """The baseline's plain ORM single-row insert, each its own transaction; seconds taken."""
    from django.contrib.auth.models import Group

    started = time.perf_counter()
    for n in range(count):
        Group.objects.create(name=f"bench-{tag}-{n}")
    return time.perf_counter() - started


def interleaved_rates(wallet_ids: list[int], count: int, chunk: int = 250) -> dict[str, float]:
    """One commit per entry, next to the ORM baseline in the same minutes: chunks of each
    alternate, so that the load other jobs put on the machine weighs on all of them alike."""
    runs: dict[str, Callable[[str], float]] = {
        "orm": lambda tag: orm_inserts(chunk, tag),
        "alone": lambda tag: post_entries(wallet_ids, chunk, 1, tag, alone=True),
        "atomic": lambda tag: post_entries(wallet_ids, chunk, 1, tag),
    }
    seconds = dict.fromkeys(runs, 0.0)
    for round_ in range(count // chunk):
        for name, run in runs.items():
            seconds[name] += run(f"{name}:{round_}")
    return {name: (count // chunk) * chunk / spent for name, spent in seconds.items()}


def machine_baseline(count: int) -> tuple[float, float]:
    """The same machine's floor, measured in the same run (figures drift between runs):
    a plain Django ORM single-row insert per transaction (rows/s), and a SELECT 1 (ms)."""
    from django.contrib.auth.models import Group
    from django.db import connection

    started = time.perf_counter()
    for n in range(count):
        Group.objects.create(name=f"bench-baseline-{n}")
    inserts = count / (time.perf_counter() - started)
    with connection.cursor() as cursor:
        select = timings(lambda: cursor.execute("SELECT 1"), count)["p50"]
    return inserts, select


# -- main ------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--postings", type=int, default=1_000_000)
    parser.add_argument("--entries", type=int, default=3000, help="entries posted per write test")
    parser.add_argument("--reads", type=int, default=2000, help="samples per read test")
    parser.add_argument("--keep", action="store_true", help="keep the benchmark database")
    args = parser.parse_args()

    base_url = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/academie")
    if not base_url.startswith(("postgres://", "postgresql://")):
        sys.exit("The ledger benchmark runs on PostgreSQL: set DATABASE_URL to a postgres:// URL.")
    database_url, name = bench_url(base_url)
    with admin_connection(base_url) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        run(database_url, args)
    finally:
        if not args.keep:
            from django.db import connections

            connections.close_all()
            with admin_connection(base_url) as admin:
                admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def run(database_url: str, args: argparse.Namespace) -> None:
    setup_django(database_url)
    from django.core.management import call_command
    from django.db import connection

    from ledger.audit import books_audit
    from ledger.models import Posting

    call_command("migrate", verbosity=0)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT version(), current_setting('fsync'), current_setting('synchronous_commit')"
        )
        version, fsync, sync_commit = cursor.fetchone()
    print(
        f"# Ledger benchmark: {version.split(' on ')[0]}, fsync={fsync}, "
        f"synchronous_commit={sync_commit}, {os.cpu_count()} CPUs\n"
    )

    inserts, select = machine_baseline(args.entries // 3)
    print(
        f"Machine baseline in this run: a plain ORM single-row insert per transaction "
        f"{inserts:,.0f}/s; SELECT 1 round trip {select:.2f} ms; load average "
        f"{os.getloadavg()[0]:.1f}.\n"
    )
    load = load_history(args.postings)
    total = Posting.objects.count()
    print(f"Loaded {total:,} postings ({total // 2:,} entries) in {load:.1f} s.")
    started = time.perf_counter()
    findings = books_audit()
    audit = time.perf_counter() - started
    assert all(f.ok for f in findings), [f for f in findings if not f.ok]
    print(f"check_books on {total:,} postings: all {len(findings)} checks pass in {audit:.1f} s.\n")

    print(f"## Reads at {total:,} postings (ms, through ledger.selectors)\n")
    print("| read | p50 | p99 |\n|---|---:|---:|")
    for label, figures in measure_reads(args.reads).items():
        print(f"| {label} | {figures['p50']:.2f} | {figures['p99']:.2f} |")

    print(f"\n## Writes ({args.entries:,} entries per test, table at {total:,}+ postings)\n")
    print("| clients | entries/s |\n|---|---:|")
    single = funded_wallets("bench-one", 200)
    rates = interleaved_rates(single, args.entries)
    print(
        f"| 1 client, transfer alone (its own transaction), one commit per entry | "
        f"{rates['alone']:,.0f} |"
    )
    print(
        f"| 1 client, transfer in transaction.atomic(), one commit per entry | "
        f"{rates['atomic']:,.0f} |"
    )
    rate = args.entries / post_entries(single, args.entries, 10, "batch")
    print(f"| 1 client, transfer, 10 entries per transaction | {rate:,.0f} |")
    rate = args.entries * 5 / post_batches(single, args.entries * 5, 100, "bulk")
    print(f"| 1 client, entries_post of 100 entries (one transaction each) | {rate:,.0f} |")
    connection.close()
    separate = [funded_wallets(f"bench-four-{i}", 50) for i in range(4)]
    connection.close()
    rate = concurrent_rate(database_url, separate, args.entries // 4, "four")
    print(f"| 4 client processes, transfer, separate wallets, one commit per entry | {rate:,.0f} |")
    shared = funded_wallets("bench-shared", 4)
    connection.close()
    rate = concurrent_rate(database_url, [shared] * 4, args.entries // 4, "shared")
    print(f"| 4 client processes, transfer, the same 4 wallets (contended) | {rate:,.0f} |")
    print(
        f"\nOne commit per entry, measured in alternating chunks of 250 with the plain ORM "
        f"single-row insert per transaction ({rates['orm']:,.0f}/s in the same minutes): "
        f"transfer alone {rates['alone'] / rates['orm']:.0%} of it, in transaction.atomic() "
        f"{rates['atomic'] / rates['orm']:.0%}."
    )
    findings = books_audit()
    assert all(f.ok for f in findings), [f for f in findings if not f.ok]
    print(
        f"\nAfter the writes, check_books: all {len(findings)} checks pass "
        f"(load average {os.getloadavg()[0]:.1f})."
    )


if __name__ == "__main__":
    main()
