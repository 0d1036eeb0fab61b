"""Ledger benchmark on PostgreSQL: posting rates, and read times at 1,000,000 postings.

    python bench/run.py ledger [--postings 1000000] [--entries 2000] [--reads 1000]

Database ``<name>_ledger``, made afresh and migrated (every trigger in place).
1. History: a club with a bank, 1,000 wallets and 100 pots, and N/2 entries of two postings
   (buy-ins bank -> wallet, stakes wallet -> pot), the benchmark's own bulk load (INSERT ...
   SELECT over generate_series, running balances by a window function, the triggers suspended
   for the load only); ``books_audit`` then proves the loaded books consistent.
2. Reads through ledger.selectors over random wallets: balance now, balance at a past time, a
   statement page of 100 lines; p50 and p99 in ms.
3. Writes through ledger.services.transfer, one commit per entry: one client, beside a plain
   ORM single-row insert per transaction in the same minutes (the machine's floor), and 4
   client processes on separate wallets.
Exits non-zero if it has nothing to time (no posting loaded, no entry or read asked).
"""

from __future__ import annotations

import argparse
import json
import random
import time
from typing import Any

import common

WALLETS, POTS, CLUB = 1000, 100, "bench"


def load_history(postings: int) -> float:
    """Bulk-load ``postings`` postings (half as many entries); the seconds it took."""
    from django.db import connection, transaction

    from ledger.models import Account

    began = time.perf_counter()
    Account.objects.bulk_create(
        [Account(kind="bank", club_key=CLUB, name="Bank of bench")]
        + [Account(kind="wallet", club_key=CLUB, owner=u, name=u.username)
           for u in common.make_users(WALLETS)]
        + [Account(kind="pot", club_key=CLUB, ref=f"partie:{n}", name=f"Pot {n}")
           for n in range(POTS)])
    ids = {kind: list(Account.objects.filter(club_key=CLUB, kind=kind).order_by("pk")
                      .values_list("pk", flat=True)) for kind in ("bank", "wallet", "pot")}
    tables = ("ledger_posting", "ledger_journalentry", "ledger_account")
    with transaction.atomic(), connection.cursor() as cursor:
        for table in tables:
            cursor.execute(f"ALTER TABLE {table} DISABLE TRIGGER USER")
        # Entry i touches wallet i % 1000: in even rounds of 1,000 entries the bank buys it 10
        # chips in, in odd rounds it stakes 5 in a pot, so that no wallet goes below zero.
        cursor.execute(
            "CREATE TEMP TABLE moves AS SELECT i AS entry_id,"
            "  now() - interval '30 days' + i * interval '1 second' AS at,"
            "  CASE WHEN (i / %(w)s) %% 2 = 0 THEN %(bank)s ELSE w[i %% %(w)s + 1] END AS payer,"
            "  CASE WHEN (i / %(w)s) %% 2 = 0 THEN w[i %% %(w)s + 1]"
            "       ELSE p[i %% %(p)s + 1] END AS payee,"
            "  CASE WHEN (i / %(w)s) %% 2 = 0 THEN 10 ELSE 5 END AS amount"
            " FROM generate_series(1, %(n)s) i, (SELECT %(wallets)s::bigint[] AS w,"
            "  %(pots)s::bigint[] AS p) a",
            {"w": WALLETS, "p": POTS, "bank": ids["bank"][0], "n": postings // 2,
             "wallets": ids["wallet"], "pots": ids["pot"]})
        cursor.execute(
            "INSERT INTO ledger_journalentry (id, idempotency_key, club_key, at, memo, source,"
            " shortfall) SELECT entry_id, 'bench:' || entry_id, %s, at, 'bench',"
            " 'bench:' || (entry_id / 1000), 0 FROM moves ORDER BY entry_id", [CLUB])
        cursor.execute("SELECT setval(pg_get_serial_sequence('ledger_journalentry', 'id'),"
                       " (SELECT max(entry_id) FROM moves))")
        cursor.execute(
            "INSERT INTO ledger_posting (entry_id, account_id, amount, balance_after, at)"
            " SELECT entry_id, account_id, amount,"
            "   sum(amount) OVER (PARTITION BY account_id ORDER BY at, entry_id), at"
            " FROM (SELECT entry_id, payer AS account_id, -amount AS amount, at FROM moves"
            "       UNION ALL SELECT entry_id, payee, amount, at FROM moves) lines"
            " ORDER BY entry_id, amount")
        cursor.execute(
            "UPDATE ledger_account a SET balance = s.total, last_posted_at = s.last"
            " FROM (SELECT account_id, sum(amount) AS total, max(at) AS last"
            "       FROM ledger_posting GROUP BY account_id) s WHERE a.id = s.account_id")
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        for table in tables:
            cursor.execute(f"ALTER TABLE {table} ENABLE TRIGGER USER")
    with connection.cursor() as cursor:
        for table in tables:
            cursor.execute(f"VACUUM ANALYZE {table}")
    return time.perf_counter() - began


def timings(run: Any, repeat: int) -> dict[str, float]:
    samples = []
    for _ in range(repeat):
        began = time.perf_counter()
        run()
        samples.append(1000 * (time.perf_counter() - began))
    return {"p50_ms": round(common.percentile(samples, 0.5), 2),
            "p99_ms": round(common.percentile(samples, 0.99), 2)}


def reads(repeat: int) -> dict[str, dict[str, float]]:
    from django.db.models import Max, Min

    from ledger import selectors
    from ledger.models import Account, Posting

    rng = random.Random(7)
    wallets = list(Account.objects.filter(club_key=CLUB, kind="wallet"))
    span = Posting.objects.aggregate(first=Min("at"), last=Max("at"))

    def past() -> Any:
        return span["first"] + (span["last"] - span["first"]) * rng.random()

    return {
        "balance_now": timings(lambda: selectors.account_balance(account=rng.choice(wallets)),
                               repeat),
        "balance_past": timings(
            lambda: selectors.account_balance(account=rng.choice(wallets), at=past()), repeat),
        "statement_page": timings(
            lambda: list(selectors.account_statement(account=rng.choice(wallets))[:100]), repeat),
    }


def funded_wallets(prefix: str, count: int) -> list[int]:
    from ledger import services

    ids = []
    for n, owner in enumerate(common.make_users(count)):
        wallet = services.wallet_get_or_create(club_key=CLUB, owner=owner)
        services.buy_in(wallet=wallet, amount=10**9, source="bench",
                        idempotency_key=f"{prefix}:fund:{n}")
        ids.append(wallet.pk)
    return ids


def transfers(wallet_ids: list[int], count: int, tag: str) -> float:
    """Seconds ``count`` transfers between random wallets took, each its own transaction."""
    from django.db import transaction

    from ledger import services
    from ledger.models import Account

    rng = random.Random(tag)
    wallets = list(Account.objects.filter(pk__in=wallet_ids))
    began = time.perf_counter()
    for n in range(count):
        payer, payee = rng.sample(wallets, 2)
        with transaction.atomic():  # as a game's service calls it
            services.transfer(payer=payer, payee=payee, amount=rng.randint(1, 10), memo="bench",
                              source="bench:write", idempotency_key=f"{tag}:{n}")
    return time.perf_counter() - began


def orm_inserts(count: int, tag: str) -> float:
    from django.contrib.auth.models import Group

    began = time.perf_counter()
    for n in range(count):
        Group.objects.create(name=f"bench-{tag}-{n}")
    return time.perf_counter() - began


def client(url: str, wallet_ids: list[int], count: int, tag: str, start: Any, out: Any) -> None:
    common.django_setup(url, migrate=False)
    start.wait(timeout=300)
    out.put(transfers(wallet_ids, count, tag))


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="run.py ledger")
    parser.add_argument("--postings", type=int, default=1_000_000)
    parser.add_argument("--entries", type=int, default=2000, help="entries per write test")
    parser.add_argument("--reads", type=int, default=1000, help="samples per read test")
    args = parser.parse_args(argv)
    if args.entries < 4 or args.reads < 1 or args.postings < 2:
        common.nothing_measured(f"--postings {args.postings}, --entries {args.entries}, "
                                f"--reads {args.reads}: too few to time anything")
    url = common.database_url("ledger")
    common.ensure_database(url, fresh=True)
    common.django_setup(url)
    from django.db import connections

    from ledger.audit import books_audit
    from ledger.models import Posting

    load_s = load_history(args.postings)
    if not Posting.objects.exists():
        common.nothing_measured("no posting was loaded")
    assert all(f.ok for f in books_audit()), "the loaded books do not balance"
    out: dict[str, Any] = {"postings": Posting.objects.count(), "load_s": round(load_s, 1),
                           "reads": reads(args.reads)}
    single = funded_wallets("one", 200)
    spent = {"orm": 0.0, "transfer": 0.0}
    for r in range(4):  # alternating chunks: both meet the same load from other jobs
        spent["orm"] += orm_inserts(args.entries // 4, f"{r}")
        spent["transfer"] += transfers(single, args.entries // 4, f"one:{r}")
    out["orm_inserts_per_s"] = round(args.entries / spent["orm"])
    out["transfers_per_s"] = round(args.entries / spent["transfer"])
    separate = [funded_wallets(f"four-{i}", 50) for i in range(4)]
    connections.close_all()
    counts, seconds = common.in_processes(
        client, [(url, ids, args.entries // 4, f"four:{i}") for i, ids in enumerate(separate)])
    out["transfers_per_s_4_processes"] = round(len(counts) * (args.entries // 4) / seconds)
    assert all(f.ok for f in books_audit()), "the books do not balance after the writes"
    print(json.dumps(out))
