"""Our move service against the ``eventsourcing`` library's append, on the same PostgreSQL.

    python bench/run.py services [--processes 4] [--seconds 15] [--tables 10] [--rounds 2]

Database ``<name>_services``. Ours: each of ``--processes`` processes plays ``--tables`` Ma
commère tables of its own through ``games.services.move_play`` (lock the hand, replay,
decide, append, post the chips, commit), one command after another, each a random legal move
of the awaited player. Theirs: as many processes, each with an ``Application`` of its own on
``eventsourcing.postgres`` and ``--tables`` aggregates, one event per command (``save``), a new
aggregate every 14 events (a hand's moves). The sides run in turn, ``--rounds`` times each.
Figures: commands per second of each side and their ratio (ours over theirs). Exits non-zero
if either side played no command (or ``--rounds`` is 0).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
import uuid
from typing import Any
from urllib.parse import urlparse

import common

_ES: Any = None


def es_application(url: str, create: bool = False) -> Any:
    global _ES
    if _ES is None:
        from eventsourcing.application import Application
        from eventsourcing.domain import Aggregate, event

        class TableHand(Aggregate):
            def __init__(self, table: int) -> None:
                self.table = table
                self.moves = 0

            @event("Moved")
            def move(self, seat: int, move: dict[str, Any], command_id: str) -> None:
                self.moves += 1

        _ES = (TableHand, Application)
    u = urlparse(url)
    return _ES[1](env={
        "PERSISTENCE_MODULE": "eventsourcing.postgres", "POSTGRES_DBNAME": u.path.lstrip("/"),
        "POSTGRES_HOST": u.hostname, "POSTGRES_PORT": str(u.port or 5432),
        "POSTGRES_USER": u.username or "postgres", "POSTGRES_PASSWORD": u.password or "trust",
        "CREATE_TABLE": "y" if create else "n"})


def ours(url: str, tables: list[dict[str, Any]], seconds: float, seed: int, start: Any,
         out: Any) -> None:
    common.django_setup(url, migrate=False)
    from django.contrib.auth import get_user_model

    users = get_user_model().objects.in_bulk([pk for t in tables for pk in t["users"]])
    for t in tables:
        t["users"] = [users[pk] for pk in t["users"]]
    players = [common.Player(t, random.Random(f"{seed}:{i}")) for i, t in enumerate(tables)]
    start.wait(timeout=300)
    end, commands, i = time.perf_counter() + seconds, 0, 0
    while time.perf_counter() < end:
        commands += players[i % len(players)].step()[1]
        i += 1
    out.put(commands)


def theirs(url: str, count: int, seconds: float, seed: int, start: Any, out: Any) -> None:
    app = es_application(url)
    new = _ES[0]
    rng = random.Random(seed)
    aggregates = [new(i) for i in range(count)]
    app.save(*aggregates)
    moves = [{"type": "offer", "card": c} for c in ("7S", "KD", "AH", "2C")]
    start.wait(timeout=300)
    end, commands = time.perf_counter() + seconds, 0
    while time.perf_counter() < end:
        k = commands % count
        aggregate = aggregates[k]
        aggregate.move(seat=rng.randrange(4), move=rng.choice(moves), command_id=str(uuid.uuid4()))
        app.save(aggregate)
        commands += 1
        if aggregate.moves >= 14:  # the next hand: a new stream
            aggregates[k] = new(k)
            app.save(aggregates[k])
    out.put(commands)


def side(target: Any, args_of: Any, processes: int, seconds: float) -> float:
    counts, elapsed = common.in_processes(
        target, [(*args_of(i), seconds, i) for i in range(processes)])
    return sum(counts) / max(seconds, elapsed)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="run.py services")
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--tables", type=int, default=10, help="tables (aggregates) a process")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    url = common.database_url("services")
    common.ensure_database(url)
    common.django_setup(url)
    tables = [{"hand": t["hand"], "users": [u.pk for u in t["users"]]}
              for t in common.make_tables(args.processes * args.tables, 4, seed=3)]
    es_application(url, create=True)  # its tables, once: created concurrently they fail
    rates: dict[str, list[float]] = {"services": [], "eventsourcing": []}
    for _ in range(args.rounds):
        rates["services"].append(side(
            ours, lambda i: (url, tables[i * args.tables:(i + 1) * args.tables]),
            args.processes, args.seconds))
        rates["eventsourcing"].append(side(
            theirs, lambda i: (url, args.tables), args.processes, args.seconds))
        print(json.dumps(rates), file=sys.stderr)
    mine, lib = (sum(r) / len(r) if r else 0.0
                 for r in (rates["services"], rates["eventsourcing"]))
    if not (mine and lib):
        common.nothing_measured(f"commands/s: services {rates['services']}, "
                                f"eventsourcing {rates['eventsourcing']}")
    print(json.dumps({"services_per_s": round(mine, 1), "eventsourcing_per_s": round(lib, 1),
                      "ratio": round(mine / lib, 3), "processes": args.processes,
                      "rounds": rates}))
