"""Two revisions of the service side by side, over HTTP, in alternate short phases.

    .venv/bin/python bench/api_ab.py --a /tmp/base --b . [--cycles 4]

Each revision (a source tree: a ``git worktree`` of a commit, or this checkout) gets its own
database, its own Redis database and its own gunicorn (2 sync workers, as api_bench.py), both
started before the first phase. Then, cycle after cycle, each server in turn (the first one
alternating) meets the same three phases of api_load.py: moves at saturation, the trivial
endpoint at saturation, and moves offered at ``--paced-rate``. An idle server takes no CPU, so
both meet the same weather within a minute of each other: this machine's speed changed by up
to a fifth between two full runs of api_bench.py a few minutes apart (bench/api_bench.md,
seventh round), more than the changes measured. The report gives, per cycle, each side's
figures and B's ratio to A's, then the medians.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from api_bench import (
    HERE,
    PY,
    CpuWatch,
    Server,
    log,
    recreate_database,
    run_json,
    service_env,
    wait_quiet,
)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--a", required=True, help="source tree of revision A")
    parser.add_argument("--b", required=True, help="source tree of revision B")
    parser.add_argument("--admin-url", default="postgres://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379")
    parser.add_argument("--cycles", type=int, default=4)
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--paced-rate", type=float, default=300.0)
    parser.add_argument("--tables", type=int, default=50)
    parser.add_argument("--work-dir", default="/tmp/academie_api_ab")
    args = parser.parse_args()
    import redis

    work = Path(args.work_dir)
    work.mkdir(parents=True, exist_ok=True)
    sides: dict[str, dict[str, Any]] = {}
    try:
        for i, name in enumerate(("a", "b")):
            root = Path(getattr(args, name)).resolve()
            db, redis_url = f"academie_ab_{name}", f"{args.redis}/{10 + i}"
            recreate_database(args.admin_url, db)
            redis.Redis.from_url(redis_url).flushdb()
            db_url = f"{args.admin_url.rsplit('/', 1)[0]}/{db}?conn_max_age=60"
            env = service_env(db_url, redis_url, root)
            subprocess.run([PY, "manage.py", "migrate", "--verbosity", "0"], env=env, cwd=root,
                           check=True, timeout=300)
            tables = work / f"tables_{name}.json"
            subprocess.run([PY, str(root / "bench" / "api_setup.py"), "--out", str(tables),
                            "--tables", str(args.tables), "--game", "commere", "--players",
                            "4"], env=env, cwd=root, check=True, timeout=600,
                           capture_output=True)
            server = Server(dict(env, ACADEMIE_TIMERS="thread"), 2, "sync", 1,
                            work / f"gunicorn_{name}.log", root=root)
            server.wait_ready()
            sides[name] = {"root": str(root), "db": db, "env": env, "tables": tables,
                           "server": server, "runs": []}
        load = [PY, str(HERE / "api_load.py")]
        for cycle in range(args.cycles):
            order = ("a", "b") if cycle % 2 == 0 else ("b", "a")
            for name in order:
                side = sides[name]
                server, env = side["server"], side["env"]
                common = ["--tables-file", str(side["tables"]), "--base-url", server.url,
                          "--warmup", "2", "--seed", str(cycle + 1)]
                run: dict[str, Any] = {"cycle": cycle}
                for phase, extra in (
                        ("moves", ["moves", "--duration", str(args.duration)]),
                        ("trivial", ["trivial", "--duration", str(args.duration),
                                     "--clients", str(args.tables)]),
                        ("paced", ["moves", "--duration", str(args.duration),
                                   "--rate", str(args.paced_rate)])):
                    wait_quiet(0.15, 20)
                    with CpuWatch(side["db"], server.proc.pid) as watch:
                        result = run_json(load + extra + common, env,
                                          timeout=args.duration + 120)
                    key = "moves" if phase != "trivial" else "requests"
                    ops = result["counts_with_warmup"].get(key, 0) or 1
                    cpu = watch.result["server_cpu_s"] + watch.result["db_cpu_s"]
                    run[phase] = {
                        "per_s": result.get("moves_per_s", result.get("requests_per_s")),
                        "cpu_ms_per_op": round(1000 * cpu / ops, 3),
                        "post_p99_ms": (result.get("move_post") or {}).get("p99_ms"),
                        "failed": result["counts_with_warmup"].get("failed", 0)}
                side["runs"].append(run)
                log(f"cycle {cycle} {name}: " + json.dumps(run))
    finally:
        for side in sides.values():
            side["server"].stop()
    report: dict[str, Any] = {"a": sides["a"]["root"], "b": sides["b"]["root"], "cycles": []}
    ratios: dict[str, list[float]] = {}
    for ra, rb in zip(sides["a"]["runs"], sides["b"]["runs"], strict=True):
        row = {"a": ra, "b": rb}
        for phase, field in (("moves", "per_s"), ("trivial", "per_s"), ("moves", "cpu_ms_per_op"),
                             ("trivial", "cpu_ms_per_op"), ("paced", "post_p99_ms")):
            if ra[phase][field] and rb[phase][field]:
                ratio = rb[phase][field] / ra[phase][field]
                row[f"b/a {phase} {field}"] = round(ratio, 3)
                ratios.setdefault(f"{phase} {field}", []).append(ratio)
        report["cycles"].append(row)
    report["median b/a"] = {k: round(statistics.median(v), 3) for k, v in ratios.items()}
    for name in ("a", "b"):
        runs = sides[name]["runs"]
        report[f"median {name}"] = {
            f"{phase} {field}": statistics.median(r[phase][field] for r in runs)
            for phase, field in (("moves", "per_s"), ("trivial", "per_s"),
                                 ("moves", "cpu_ms_per_op"), ("trivial", "cpu_ms_per_op"),
                                 ("paced", "post_p99_ms"), ("paced", "per_s"))}
    (work / "ab.json").write_text(json.dumps(report, indent=2))
    print(json.dumps({k: v for k, v in report.items() if k != "cycles"}, indent=2))


if __name__ == "__main__":
    sys.exit(main())
