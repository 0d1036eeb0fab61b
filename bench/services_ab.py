"""A/B of the services path on one connection: the usual moves and the moves that end a hand,
timed apart, for two source trees, alternately, each run on a database of its own.

    .venv/bin/python bench/services_ab.py --a /tmp/base --b . [--cycles 3] [--seconds 8]

Each revision is a source tree (a ``git worktree`` of a commit, or this checkout). Each run
recreates the database ``--db-name``, migrates it with the tree's own migrations, seats 50
tables of 4 people at Ma commère (``--game comet``: Comet; api_django.make_tables) and plays
them as api_services.py does (``Services``: each step chooses the next table's move from the
state its last command answered, and times ``move_play``), for ``--warmup`` then
``--seconds`` seconds. A move whose answer leaves its hand over is an ending move; its time
includes the one-statement attempt that found it so. Each side gets its mean wall time and CPU
time (``time.process_time``, this process only) per move, for both kinds. Run it on a quiet
machine: nothing else should be using the CPU.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PY = sys.executable


def child(seconds: float, warmup: float, seed: int, game: str) -> dict[str, Any]:
    """One run, in this tree (the caller's working directory): the figures as a dict."""
    sys.path.insert(0, str(Path.cwd() / "bench"))
    from api_django import django_setup, make_tables

    django_setup()
    import api_services

    import games.services
    from games.models import Hand

    real = games.services.move_play
    sums = {"ending": [0.0, 0.0, 0], "usual": [0.0, 0.0, 0]}
    measuring = [False]

    def timed(**kwargs: Any) -> Any:
        wall, cpu = time.perf_counter(), time.process_time()
        answer = real(**kwargs)
        if measuring[0]:
            kind = sums["ending" if answer.hand.status == Hand.Status.OVER else "usual"]
            kind[0] += time.perf_counter() - wall
            kind[1] += time.process_time() - cpu
            kind[2] += 1
        return answer

    games.services.move_play = timed  # api_services imports it from games.services at call
    tables = make_tables("ab", 50, game, 4)
    services = api_services.Services(tables, seed)
    services.run(warmup)
    services.reset()
    measuring[0] = True
    services.run(seconds)
    out: dict[str, Any] = {"ms_per_move": services.result()["ms_per_move"]}
    for kind, (wall, cpu, n) in sums.items():
        out[kind] = {"n": n, "ms": round(1000 * wall / max(n, 1), 3),
                     "cpu_ms": round(1000 * cpu / max(n, 1), 3)}
    return out


def run(root: Path, db_url: str, admin_url: str, db_name: str, seconds: float, warmup: float,
        seed: int, game: str) -> dict[str, Any]:
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{db_name}"')
        admin.execute(f'CREATE DATABASE "{db_name}"')
    env = dict(os.environ, DATABASE_URL=db_url, DJANGO_SETTINGS_MODULE="config.settings.local",
               DJANGO_DEBUG="false", ACADEMIE_TIMERS="off")
    subprocess.run([PY, "manage.py", "migrate", "--verbosity", "0"], env=env, cwd=root,
                   check=True, timeout=600)
    done = subprocess.run([PY, str(HERE / "services_ab.py"), "--child", "--seconds",
                           str(seconds), "--warmup", str(warmup), "--seed", str(seed),
                           "--game", game],
                          env=env, cwd=root, check=True, timeout=600, capture_output=True,
                          text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--a", type=Path)
    parser.add_argument("--b", type=Path)
    parser.add_argument("--cycles", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--warmup", type=float, default=1.5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--game", default="commere", choices=["commere", "comet"])
    parser.add_argument("--db-name", default="academie_services_ab")
    parser.add_argument("--admin-url", default="postgres://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.seconds, args.warmup, args.seed, args.game)))
        return
    if args.a is None or args.b is None:
        parser.error("--a and --b are required")
    db_url = f"postgres://postgres@127.0.0.1:5432/{args.db_name}"
    results: dict[str, list[dict[str, Any]]] = {"a": [], "b": []}
    for cycle in range(args.cycles):
        for side, root in (("a", args.a), ("b", args.b)):
            found = run(root.resolve(), db_url, args.admin_url, args.db_name, args.seconds,
                        args.warmup, args.seed + cycle, args.game)
            results[side].append(found)
            print(f"cycle {cycle + 1} {side.upper()}: {json.dumps(found)}", file=sys.stderr)
    ratios = [b["ending"]["ms"] / a["ending"]["ms"]
              for a, b in zip(results["a"], results["b"], strict=True) if a["ending"]["n"]]
    print(json.dumps({**results, "ending_ms_b_over_a": [round(r, 3) for r in ratios]}))


if __name__ == "__main__":
    main()
