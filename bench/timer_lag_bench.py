"""Timer lag: how late does the time-out move come after its deadline, on real Celery?

    .venv/bin/python bench/timer_lag_bench.py --tables 100 --game commere --seats 4 \
        --duration 40 --workers 2 --pool solo --concurrency 1

Sets up its own PostgreSQL database (``--db``, dropped and re-created, migrated) and Redis
database (``--redis-db``, flushed), starts ``--workers`` Celery workers and one beat (deadline
sweeper and soirée clock every ``--clock`` seconds) as subprocesses, then starts ``--tables``
parties of "timeout" bots (games.engine.bots.TimeoutBot: they never move, so every decision
waits for its deadline and the Celery task ``games.tasks.fire_deadline`` plays the default move)
with a ``--timeout`` move time-out and ``--pause`` between hands, dealing until ``--duration``
seconds after the start. Once every partie is over (the hands in progress finish) it stops the
processes and measures, from the stored events:

- ``lag``: for every time-out move, its ``at`` minus the deadline it answered. The deadline is
  set by the batch of events before it (``at`` of that batch + the partie's move time-out: the
  service sets ``deadline = now + move_timeout`` in the transaction that appends that batch), so
  the lag is what the timers add: ETA scheduling, queueing behind other tasks, the sweeper;
- ``next_hand_lag``: the first event of each hand after the first minus (the previous hand's
  end + the pause), the partie's own rhythm (``games.tasks.deal_next_hand``);
- the task run times that the workers logged (``succeeded in …s``), and how many deadlines
  were still overdue when the run stopped (should be 0).

Prints one JSON document (also written to ``--out`` if given) with the command line.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BIN = ROOT / ".venv" / "bin"
PG = "postgres://postgres@127.0.0.1:5432"


def pct(values: list[float], p: float) -> float | None:
    if not values:
        return None
    s = sorted(values)
    k = min(len(s) - 1, max(0, int(round(p / 100 * len(s) + 0.5)) - 1))  # nearest rank
    return round(s[k], 4)


def summary(values: list[float]) -> dict[str, Any]:
    return {
        "count": len(values),
        "p50": pct(values, 50), "p90": pct(values, 90), "p99": pct(values, 99),
        "max": round(max(values), 4) if values else None,
        "mean": round(statistics.fmean(values), 4) if values else None,
        "min": round(min(values), 4) if values else None,
    }


def parse_at(s: str) -> datetime:
    return datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)


def recreate_database(name: str) -> None:
    import psycopg

    with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


class Procs:
    """The Celery processes of the run, each in its own session (killed by process group)."""

    def __init__(self, env: dict[str, str], logdir: Path) -> None:
        self.env = env
        self.logdir = logdir
        self.procs: list[tuple[str, subprocess.Popen[bytes], Path]] = []

    def start(self, name: str, args: list[str], profile: Path | None = None) -> Path:
        log = self.logdir / f"{name}.log"
        command = [str(BIN / "celery"), "-A", "config", *args]
        if profile is not None:  # written when the process exits (warm shutdown on SIGTERM)
            command = [str(BIN / "python"), "-m", "cProfile", "-o", str(profile), *command]
        with open(log, "wb") as out:
            p = subprocess.Popen(command, cwd=ROOT,
                                 env=self.env, stdout=out, stderr=subprocess.STDOUT,
                                 start_new_session=True)
        self.procs.append((name, p, log))
        return log

    def wait_ready(self, log: Path, timeout: float = 30) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if b" ready." in log.read_bytes():
                return
            for name, p, lg in self.procs:
                if lg == log and p.poll() is not None:
                    raise RuntimeError(f"{name} died at start:\n{log.read_text()[-3000:]}")
            time.sleep(0.1)
        raise RuntimeError(f"{log} not ready after {timeout} s:\n{log.read_text()[-3000:]}")

    def cpu_seconds(self, database: str) -> dict[str, float]:
        """CPU time (user + system) used so far by each process group (a worker and its pool),
        by the PostgreSQL backends still connected to ``database`` (the workers keep theirs)
        and by the Redis server (since it started: take differences)."""
        tick = os.sysconf("SC_CLK_TCK")
        groups = {p.pid: name for name, p, _ in self.procs}
        used = dict.fromkeys([*groups.values(), "postgres_backends", "redis_server"], 0.0)
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            seconds = (int(fields[11]) + int(fields[12])) / tick
            pgid = int(fields[2])
            if pgid in groups:
                used[groups[pgid]] += seconds
            elif cmdline.startswith("postgres: ") and f" {database} " in cmdline:
                used["postgres_backends"] += seconds
            elif cmdline.startswith("redis-server"):
                used["redis_server"] += seconds
        return {k: round(v, 2) for k, v in used.items()}

    def stop(self) -> None:
        for _, p, _ in self.procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        end = time.monotonic() + 10
        for _, p, _ in self.procs:
            try:
                p.wait(timeout=max(0.1, end - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=100)
    parser.add_argument("--game", choices=["comet", "commere"], default="commere")
    parser.add_argument("--seats", type=int, default=4)
    parser.add_argument("--options", default='{"max_turns": 2}',
                        help="RULES.md options as JSON (Ma commère's max_turns bounds a hand)")
    parser.add_argument("--timeout", type=float, default=1.0, help="move time-out, seconds")
    parser.add_argument("--pause", type=float, default=0.5, help="pause between hands, seconds")
    parser.add_argument("--duration", type=float, default=40, help="deal new hands this long")
    parser.add_argument("--warmup", type=float, default=5,
                        help="lag_seconds_after_warmup leaves out the deadlines of the first "
                             "seconds after the first deal (all tables dealt at once)")
    parser.add_argument("--drain", type=float, default=60,
                        help="at most this long after --duration for the hands to finish")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--pool", default="solo", choices=["solo", "prefork", "threads"])
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--clock", type=float, default=0.5,
                        help="ACADEMIE_CLOCK_SECONDS: beat period of the sweeper and soirée clock")
    parser.add_argument("--settings", default="config.settings.local",
                        help="DJANGO_SETTINGS_MODULE of the workers, beat and this process")
    parser.add_argument("--db", default="academie_timer_bench")
    parser.add_argument("--redis-db", type=int, default=15)
    parser.add_argument("--out", help="also write the JSON here")
    parser.add_argument("--keep-logs", action="store_true")
    parser.add_argument("--profile-dir",
                        help="run each worker under cProfile, writing DIR/workerN.prof "
                             "(use --pool solo: a prefork pool's tasks run in its children)")
    args = parser.parse_args()

    redis_url = f"redis://127.0.0.1:6379/{args.redis_db}"
    env = {
        **os.environ,
        "DATABASE_URL": f"{PG}/{args.db}",
        "REDIS_URL": redis_url,
        "DJANGO_SETTINGS_MODULE": args.settings,
        "DJANGO_DEBUG": "false",
        "ACADEMIE_TIMERS": "celery",
        "ACADEMIE_CLOCK_SECONDS": str(args.clock),
        "PYTHONUNBUFFERED": "1",
    }
    recreate_database(args.db)
    subprocess.run([str(BIN / "python"), "manage.py", "migrate", "--noinput", "-v", "0"],
                   cwd=ROOT, env=env, check=True)
    os.environ.update(env)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    import redis
    from django.db import connection
    from django.utils import timezone

    from games.models import Hand, HandEvent, Partie
    from games.services import hand_deal, partie_start

    redis.Redis.from_url(redis_url).flushdb()
    logdir = Path(tempfile.mkdtemp(prefix="timer-bench-"))
    procs = Procs(env, logdir)
    result: dict[str, Any] = {"command": " ".join([sys.executable, *sys.argv]),
                              "args": vars(args), "load_average_before": os.getloadavg()}
    redis_cpu_before = procs.cpu_seconds(args.db)["redis_server"]
    try:
        for i in range(args.workers):
            log = procs.start(f"worker{i}", [
                "worker", "--pool", args.pool, "--concurrency", str(args.concurrency),
                "-n", f"bench{i}@%h", "--loglevel", "info",
                "--without-gossip", "--without-mingle", "--without-heartbeat"],
                profile=Path(args.profile_dir) / f"worker{i}.prof" if args.profile_dir else None)
            procs.wait_ready(log)
        procs.start("beat", ["beat", "--loglevel", "info",
                             "--schedule", str(logdir / "beat-schedule")])
        options = json.loads(args.options)
        timeout = timedelta(seconds=args.timeout)
        # Seat every table first (no deadline yet), then deal them all: the timers are measured
        # from the first deal on, not while this process is still busy setting tables up.
        setup = time.monotonic()
        ids = []
        for i in range(args.tables):
            partie = partie_start(
                game=args.game, players=[], bots=["timeout"] * args.seats, options=options,
                club_key="timer-bench", table_label=f"bench {i}", buy_in=10_000,
                move_timeout=timeout, forced_move_delay=timedelta(0),
                comet_window=timedelta(0), pause_between_hands=timedelta(seconds=args.pause),
                deal_first_hand=False, at=timezone.now())
            ids.append(partie.pk)
        result["setup_seconds"] = round(time.monotonic() - setup, 2)
        started = time.monotonic()
        first_deal = timezone.now()
        Partie.objects.filter(pk__in=ids).update(
            deal_until=first_deal + timedelta(seconds=args.duration))
        for partie in Partie.objects.filter(pk__in=ids):
            hand_deal(partie=partie, at=timezone.now())
        result["deal_seconds"] = round(time.monotonic() - started, 2)
        end = started + args.duration + args.drain
        while time.monotonic() < end:
            playing = Partie.objects.filter(pk__in=ids, status=Partie.Status.PLAYING).count()
            if not playing:
                break
            time.sleep(1)
        result["run_seconds"] = round(time.monotonic() - started, 2)
        now = timezone.now()
        result["parties_still_playing"] = Partie.objects.filter(
            pk__in=ids, status=Partie.Status.PLAYING).count()
        result["overdue_deadlines_at_stop"] = Hand.objects.filter(
            partie__in=ids, status=Hand.Status.PLAYING, deadline__lt=now).count()
        cpu = procs.cpu_seconds(args.db)
        cpu["redis_server"] = round(cpu["redis_server"] - redis_cpu_before, 2)
        result["cpu_seconds"] = cpu
        result["load_average"] = os.getloadavg()
    finally:
        procs.stop()

    # Lags, from the stored events (batches: the events one transaction appended share "at").
    timeouts = {p: t.total_seconds() for p, t in
                Partie.objects.filter(pk__in=ids).values_list("pk", "move_timeout")}
    pauses = {p: t.total_seconds() for p, t in
              Partie.objects.filter(pk__in=ids).values_list("pk", "pause_between_hands")}
    lags: list[float] = []
    steady: list[float] = []  # deadlines from --warmup seconds after the first deal on
    warm = first_deal + timedelta(seconds=args.warmup)
    by_counts: Counter[str] = Counter()
    rows = (HandEvent.objects.filter(hand__partie__in=ids)
            .order_by("hand_id", "seq").values_list("hand_id", "hand__partie_id", "seq", "by",
                                                    "at"))
    prev_hand = None
    prev_batch_at: datetime | None = None
    cur_batch_at: datetime | None = None
    first_at: dict[Any, datetime] = {}
    for hand_id, partie_id, _seq, by, at_s in rows.iterator(chunk_size=5000):
        at = parse_at(at_s)
        by_counts[by] += 1
        if hand_id != prev_hand:
            prev_hand, prev_batch_at, cur_batch_at = hand_id, None, at
            first_at[hand_id] = at
            continue
        if at != cur_batch_at:  # a new batch: what answered the deadline the last one set
            prev_batch_at, cur_batch_at = cur_batch_at, at
            if by == "timeout":
                assert prev_batch_at is not None
                lag = (at - prev_batch_at).total_seconds() - timeouts[partie_id]
                lags.append(lag)
                if prev_batch_at >= warm:
                    steady.append(lag)
    next_hand_lags = []
    hands = (Hand.objects.filter(partie__in=ids).order_by("partie_id", "number")
             .values_list("id", "partie_id", "number", "ended_at"))
    last: tuple[Any, datetime | None] | None = None
    for hand_id, partie_id, _number, ended_at in hands:
        if last is not None and last[0] == partie_id and last[1] is not None:
            next_hand_lags.append((first_at[hand_id] - last[1]).total_seconds()
                                  - pauses[partie_id])
        last = (partie_id, ended_at)

    run_times: dict[str, list[float]] = {}
    fired: Counter[str] = Counter()
    pat = re.compile(rb"Task (\S+)\[[^\]]+\] succeeded in ([0-9.e-]+)s: (\S+)")
    errors = 0
    for log in logdir.glob("worker*.log"):
        data = log.read_bytes()
        errors += data.count(b"ERROR/") + data.count(b"Traceback")
        for name, secs, value in pat.findall(data):
            run_times.setdefault(name.decode(), []).append(float(secs))
            fired[f"{name.decode()}={value.decode()}"] += 1
    result.update({
        "hands": Hand.objects.filter(partie__in=ids).count(),
        "events_by": dict(by_counts),
        "lag_seconds": summary(lags),
        "lag_seconds_after_warmup": summary(steady),
        "lag_over_1s": sum(1 for x in lags if x > 1.0),
        "next_hand_lag_seconds": summary(next_hand_lags),
        "task_run_seconds": {k: summary(v) for k, v in sorted(run_times.items())},
        "task_results": dict(sorted(fired.items())),
        "worker_log_errors": errors,
        "database": connection.settings_dict["NAME"],
        "logs": str(logdir) if args.keep_logs else None,
    })
    if not args.keep_logs:
        for f in logdir.iterdir():
            f.unlink()
        logdir.rmdir()
    redis.Redis.from_url(redis_url).flushdb()
    text = json.dumps(result, indent=1)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
