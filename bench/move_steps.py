"""Where a move's time goes, on one connection: the usual moves against the moves that end a
hand (and deal the next), each step of the latter timed, and the statements of one of them.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/academie_steps \
        .venv/bin/python bench/move_steps.py [--seconds 15] [--game commere]

The database must exist and be migrated (``manage.py migrate``); 50 tables of people are
added to it, as api_services.py plays them. Each step is wrapped in a timer, which adds a few
microseconds per call. The figures of bench/api_bench.md's sixth round come from this script.
"""

from __future__ import annotations

import argparse
import collections
import functools
import statistics
import time
from typing import Any

from api_django import django_setup, make_tables

STEPS = [
    ("store", "lock_hand"), ("store", "read_hand"), ("store", "lock_partie_row"),
    ("store", "lock_partie"), ("store", "seats"), ("store", "accounts"), ("store", "load"),
    ("store", "save"), ("store", "insert"), ("store", "update"), ("store", "freeze"),
    ("chips", "post_payments"), ("parties", "_deal"), ("moves", "_deal_at_once"),
    ("moves", "_in_one_statement"), ("moves", "_in_guarded"), ("advance", "advance"),
]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--game", default="commere")
    parser.add_argument("--tables", type=int, default=50)
    args = parser.parse_args()
    django_setup()
    from api_services import Services
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    import games.services as services
    from games.services import advance, chips, moves, parties, store

    modules = {"store": store, "chips": chips, "parties": parties, "moves": moves,
               "advance": advance}
    spent: dict[str, float] = collections.defaultdict(float)
    calls: collections.Counter[str] = collections.Counter()
    for module_name, name in STEPS:
        module = modules[module_name]
        step = getattr(module, name, None)
        if step is None:  # an older revision, measured for comparison, may lack a step
            continue
        label = f"{module_name}.{name}"

        def timed(*a: Any, _step: Any = step, _label: str = label, **k: Any) -> Any:
            began = time.perf_counter()
            try:
                return _step(*a, **k)
            finally:
                spent[_label] += time.perf_counter() - began
                calls[_label] += 1

        setattr(module, name, functools.wraps(step)(timed))

    svc = Services(make_tables("steps", args.tables, args.game, 4), seed=1)
    svc.run(2.0)  # warm-up: every table's hand kept, every statement prepared
    usual: list[float] = []
    ending: list[float] = []
    ending_spent: dict[str, float] = collections.defaultdict(float)
    ending_calls: collections.Counter[str] = collections.Counter()
    statements: list[str] = []
    play = services.move_play

    def observed(**kwargs: Any) -> Any:
        before, before_calls = dict(spent), dict(calls)
        began = time.perf_counter()
        played = play(**kwargs)
        elapsed = time.perf_counter() - began
        if played.response["next_hand"] is None:
            usual.append(elapsed)
            return played
        ending.append(elapsed)
        for label, total in spent.items():
            ending_spent[label] += total - before.get(label, 0.0)
            ending_calls[label] += calls[label] - before_calls.get(label, 0)
        return played

    def captured(**kwargs: Any) -> Any:  # after the timed loop: the statements, untimed
        connection.queries_log.clear()
        with CaptureQueriesContext(connection) as queries:
            played = play(**kwargs)
        if played.response["next_hand"] is not None:
            statements.extend(q["sql"] for q in queries.captured_queries)
        return played

    services.move_play = observed
    end = time.perf_counter() + args.seconds
    while time.perf_counter() < end:
        svc.step()
    services.move_play = captured
    while not statements:
        svc.step()

    def ms(xs: list[float]) -> str:
        return (f"mean {1000 * statistics.mean(xs):.3f}, "
                f"median {1000 * statistics.median(xs):.3f} ms")

    n = len(ending)
    rate = (len(usual) + n) / (sum(usual) + sum(ending))
    print(f"usual moves: {len(usual)}, {ms(usual)}")
    print(f"moves that end a hand and deal the next: {n}, {ms(ending)}")
    print(f"moves per second (move_play's time only): {rate:.1f}")
    print("the ending moves' steps (they nest: a deal holds its own steps):")
    for label, total in sorted(ending_spent.items(), key=lambda kv: -kv[1]):
        if ending_calls[label]:
            print(f"  {label:28s} {1000 * total / n:7.3f} ms per ending move, "
                  f"{ending_calls[label] / n:.2f} calls")
    print(f"the statements of one ending move ({len(statements)}, BEGIN and COMMIT included):")
    for sql in statements:
        print("  " + " ".join(sql.split())[:110])


if __name__ == "__main__":
    main()
