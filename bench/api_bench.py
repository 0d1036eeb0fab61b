"""Game service benchmark (issue: performance): moves per second through the HTTP API on
PostgreSQL behind gunicorn, against a trivial DRF insert endpoint on the same stack, and moves
per second through the services alone against the ``eventsourcing`` library.

    .venv/bin/pip install uvloop 'eventsourcing[postgres]'   # for the benchmark only
    .venv/bin/python bench/api_bench.py [--duration 20] [--out summary.json]

What one run does (about 6 minutes on a quiet 2-core machine, bounded by --max-seconds):

1. drops and creates the database ``--db-name`` (default ``academie_bench``) on the local
   PostgreSQL and migrates it, the trivial app included (``ACADEMIE_BENCH_TRIVIAL=1``);
2. seats ``--tables`` parties of ``--players`` people (Ma commère by default; zero forced-move
   delay, Comet window and pause between hands, one-hour move time-out), each with a logged-in
   session (api_setup.py);
3. starts gunicorn (``--workers`` sync workers, ``config.settings.local``, DEBUG off, the
   project's embedded timers: a thread in the serving process deals the next hand; with
   ``--timers celery``, the deployment's: Celery tasks on Redis, with a worker and beat started
   beside gunicorn and counted as the server) on a free loopback port, and runs the load
   generator (api_load.py, asyncio on uvloop, another process):
   a. moves, closed loop: every table plays as fast as answers come (saturation throughput);
   b. the trivial endpoint, closed loop, as many clients as tables (the ceiling);
      (a and b alternate for ``--rounds`` rounds; each one's best round is reported)
   c. moves paced at ``--paced-rate`` POSTs/s in total (latency at the target rate), and the
      trivial endpoint paced at the same rate; then the POSTs paced so that they record
      ``--paced-rate`` moves/s as the hand record counts them (``moves_paced_recorded``);
   d. both paced at half the moves' saturation throughput (latency without queueing);
   then stops the server (its whole process group, also on Ctrl-C or an error);
4. runs api_services.py: ``move_play`` through the services, one connection, and the
   eventsourcing library appending one event per command to the same PostgreSQL, in alternate
   quarter-second slices, back to back and then with a hand read between commands on both
   sides and on ours alone (then each in a block of its own, for reference); query counts per
   command and per request; a cProfile of the services path;
5. runs api_concurrent.py: the same two sides with ``--concurrent-clients`` processes at once
   (each its own connection and tables), over the same wall-clock window;
6. runs api_services.py's headline comparison (interleaved, back to back) again for the other
   game (Comet when ``--game`` is Ma commère), whose commands play more forced moves each.

Our side's rate is given two ways: commands (``move_play`` calls: a person's move each) and
the moves they recorded (events by a player, forced or at a time-out: HAND_RECORD.md), the
forced moves that follow a person's move included (api_services.moves_recorded; over HTTP,
the events the phase appended, counted by author afterwards). ``targets_met`` judges the
targets by the moves recorded, the README's reading of the issue ("a move" as RULES.md §3 and
HAND_RECORD.md call one); ``targets_met_by_commands`` judges them by commands, for comparison.

Before each phase it waits (at most ``--max-idle-wait`` s) for the machine to be quiet, and it
records how much CPU other processes took during the phase (``others_cpu_share``): other
people's test runs on the same 2 cores change every figure. Prints and writes one JSON summary.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PY = sys.executable
TARGETS = {"http_moves_per_s": 300, "share_of_trivial": 0.40, "p99_ms": 50}


def log(msg: str) -> None:
    print(f"[api_bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# -- the machine -------------------------------------------------------------------------------


def cpu_times() -> tuple[float, float]:
    """(busy, total) jiffies of the whole machine."""
    with open("/proc/stat") as fh:
        fields = [float(x) for x in fh.readline().split()[1:]]
    idle = fields[3] + fields[4]
    return sum(fields) - idle, sum(fields)


def busy_share(seconds: float = 1.0) -> float:
    b0, t0 = cpu_times()
    time.sleep(seconds)
    b1, t1 = cpu_times()
    return (b1 - b0) / max(1.0, t1 - t0)


def wait_quiet(threshold: float, max_wait: float) -> dict[str, Any]:
    """Wait until the machine's busy share over 1 s is below ``threshold`` (bounded)."""
    began = time.monotonic()
    share = busy_share()
    while share > threshold and time.monotonic() - began < max_wait:
        log(f"machine busy ({share:.0%} of the cores), waiting for it to settle")
        share = busy_share(2.0)
    return {"busy_share_before": round(share, 2), "waited_s": round(time.monotonic() - began, 1)}


class CpuWatch:
    """CPU taken during a phase, by whom: the server (gunicorn's processes), the PostgreSQL
    backends serving the benchmark's database, and other processes (other people's work on the
    same machine). Read from /proc at both ends: a process that started during the phase counts
    whole, one that ended during it is missed (with conn_max_age 0 every request's backend
    is, so ``db_cpu_s`` then stays near zero); ``others`` is a lower bound."""

    TICK = os.sysconf("SC_CLK_TCK")

    def __init__(self, db_name: str, server_pid: int | None = None,
                 also_server: tuple[int, ...] = ()) -> None:
        self.db_name = db_name
        self.server_pids = {server_pid, *also_server} - {None}

    def _snapshot(self) -> dict[int, tuple[float, str]]:
        me = os.getpid()
        parents: dict[int, int] = {}
        cpu: dict[int, float] = {}
        names: dict[int, str] = {}
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            pid = int(entry.name)
            try:
                with open(f"/proc/{pid}/stat") as fh:
                    raw = fh.read()
                with open(f"/proc/{pid}/cmdline", "rb") as fh:
                    names[pid] = fh.read().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            rest = raw[raw.rindex(")") + 2:].split()
            parents[pid] = int(rest[1])
            cpu[pid] = (int(rest[11]) + int(rest[12])) / self.TICK

        def owner(pid: int) -> str:
            if f" {self.db_name} " in names[pid]:
                return "db"
            seen = 0
            while pid > 1 and seen < 64:
                if pid in self.server_pids:
                    return "server"
                if pid == me:
                    return "bench"
                pid = parents.get(pid, 0)
                seen += 1
            return "others"

        return {pid: (cpu[pid], owner(pid)) for pid in cpu}

    def __enter__(self) -> CpuWatch:
        self.start = self._snapshot()
        self.busy0 = cpu_times()
        self.t0 = time.monotonic()
        return self

    def __exit__(self, *exc: object) -> None:
        end = self._snapshot()
        busy1 = cpu_times()
        wall = time.monotonic() - self.t0
        used = {"server": 0.0, "db": 0.0, "bench": 0.0, "others": 0.0}
        for pid, (c, who) in end.items():
            used[who] += c - (self.start[pid][0] if pid in self.start else 0.0)
        cores = os.cpu_count() or 1
        self.result = {
            "others_cpu_share": round(used["others"] / (wall * cores), 3),
            "machine_busy_share": round(
                (busy1[0] - self.busy0[0]) / max(1.0, busy1[1] - self.busy0[1]), 3),
            "server_cpu_s": round(used["server"], 2), "db_cpu_s": round(used["db"], 2),
            "phase_wall_s": round(wall, 1),
        }


def service_env(db_url: str, redis_url: str, root: Path = ROOT) -> dict[str, str]:
    """The environment of the service's processes (setup, gunicorn, the services' benchmarks)
    for the source tree ``root``: this one's, without the caller's own Django settings."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("DJANGO_", "ACADEMIE_", "DATABASE_URL", "REDIS_URL"))}
    env.update({
        "DATABASE_URL": db_url, "DJANGO_SETTINGS_MODULE": "config.settings.local",
        "DJANGO_DEBUG": "false", "DJANGO_SECRET_KEY": "insecure-benchmark-only-key",
        # Redis as deployed (sessions and users from its cache); the timers stay in-process.
        "ACADEMIE_BENCH_TRIVIAL": "1", "ACADEMIE_TIMERS": "off", "REDIS_URL": redis_url,
        "PYTHONPATH": str(root),
    })
    return env


# -- the database ----------------------------------------------------------------------------


def recreate_database(admin_url: str, name: str) -> None:
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def pg_version(admin_url: str) -> str:
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as conn:
        row = conn.execute("SHOW server_version").fetchone()
        fsync = conn.execute("SHOW fsync").fetchone()
        sync_commit = conn.execute("SHOW synchronous_commit").fetchone()
    return (f"{row[0] if row else '?'} (fsync {fsync[0] if fsync else '?'}, "
            f"synchronous_commit {sync_commit[0] if sync_commit else '?'})")


def run_json(cmd: list[str], env: dict[str, str], timeout: float, out: Path | None = None) -> Any:
    log(" ".join(Path(c).name if c == PY else c for c in cmd))
    proc = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd[1]} failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    if out is not None:
        return json.loads(out.read_text())
    return json.loads(proc.stdout)


# -- the server ----------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """gunicorn in its own process group; stopped (group-wide, by its id) on exit."""

    def __init__(self, env: dict[str, str], workers: int, worker_class: str, threads: int,
                 logfile: Path, root: Path = ROOT) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        cmd = [str(Path(PY).parent / "gunicorn"), "config.wsgi:application",
               "--bind", f"127.0.0.1:{self.port}", "--workers", str(workers),
               "--worker-class", worker_class, "--timeout", "60", "--graceful-timeout", "5",
               "--log-level", "warning", "--error-logfile", "-"]
        if worker_class == "gthread":
            cmd += ["--threads", str(threads)]
        self.cmd = cmd
        self.log = open(logfile, "w")  # noqa: SIM115 - closed by stop()
        log(f"starting gunicorn on {self.url}: {workers} {worker_class} worker(s)")
        self.proc = subprocess.Popen(cmd, env=env, cwd=root, stdout=self.log,
                                     stderr=subprocess.STDOUT, start_new_session=True)

    def wait_ready(self, timeout: float = 30.0) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise RuntimeError(f"gunicorn exited with {self.proc.returncode}")
            try:
                urllib.request.urlopen(f"{self.url}/bench/trivial/", timeout=2)
            except urllib.error.HTTPError:
                return  # 403 without a session: Django answers, the server is up
            except OSError:
                time.sleep(0.2)
                continue
            return
        raise RuntimeError("gunicorn did not answer in time")

    def workers(self) -> list[dict[str, Any]]:
        """Threads and memory of each worker (the embedded timers start a thread per
        deadline)."""
        out = []
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                status = Path(f"/proc/{entry.name}/status").read_text()
            except OSError:
                continue
            fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
            if int(fields.get("PPid", "0").strip()) == self.proc.pid:
                out.append({"pid": int(entry.name), "threads": int(fields["Threads"].strip()),
                            "rss_mb": round(int(fields["VmRSS"].split()[0]) / 1024, 1)})
        return out

    def stop(self) -> None:
        if self.proc.poll() is None:
            log("stopping gunicorn")
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        self.log.close()


class CeleryProcesses:
    """The deployment's timers beside gunicorn (``--timers celery``): one Celery worker
    (prefork, 2 processes, as the README advises on 2 cores) and beat, each in its own process
    group, stopped with the server."""

    def __init__(self, env: dict[str, str], work: Path, root: Path = ROOT) -> None:
        celery = str(Path(PY).parent / "celery")
        common = ["--loglevel", "warning"]
        self.log = open(work / "celery.log", "w")  # noqa: SIM115 - closed by stop()
        log("starting a Celery worker (prefork, 2) and beat")
        self.procs = [
            subprocess.Popen([celery, "-A", "config", "worker", "--pool", "prefork",
                              "--concurrency", "2", "--prefetch-multiplier", "1",
                              "--without-gossip", "--without-mingle", "--without-heartbeat",
                              *common], env=env, cwd=root, stdout=self.log,
                             stderr=subprocess.STDOUT, start_new_session=True),
            subprocess.Popen([celery, "-A", "config", "beat", "--schedule",
                              str(work / "beat-schedule"), *common], env=env, cwd=root,
                             stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True),
        ]

    @property
    def pids(self) -> tuple[int, ...]:
        return tuple(p.pid for p in self.procs)

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
        self.log.close()


# -- the run -----------------------------------------------------------------------------------


def versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in ("Django", "djangorestframework", "gunicorn", "psycopg", "uvloop",
                 "eventsourcing"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


#: The authors of the events that are moves (HAND_RECORD.md): a player's, a forced one, a
#: time-out's; ``service`` events (a deal, a payment, a stop…) are not.
MOVE_AUTHORS = ("player", "forced", "timeout")


def recorded_between(db_url: str, began: datetime, ended: datetime) -> dict[str, Any]:
    """The events appended between ``began`` and ``ended`` (their ``at``, the ISO-8601 text
    every event of a command carries, compared as text: one format, so text order is time
    order), counted by author, and how many of them are moves."""
    import psycopg

    from games.engine.record import iso_z  # the events' own format (the project's install)

    iso = [iso_z(began), iso_z(ended)]
    with psycopg.connect(db_url) as conn:
        by = dict(conn.execute('SELECT "by", count(*) FROM games_handevent '
                               'WHERE "at" >= %s AND "at" <= %s GROUP BY 1', iso).fetchall())
    events = sum(by.values())
    moves = sum(by.get(author, 0) for author in MOVE_AUTHORS)
    return {"by": by, "events": events, "moves": moves}


def http_phases(args: argparse.Namespace, env: dict[str, str], work: Path,
                watch_db: str, db_url: str) -> dict[str, Any]:
    tables_file = work / "tables.json"
    run_json([PY, str(HERE / "api_setup.py"), "--out", str(tables_file), "--tables",
              str(args.tables), "--game", args.game, "--players", str(args.players)],
             env, timeout=600, out=tables_file)
    server_env = dict(env, ACADEMIE_TIMERS=args.timers)
    celery = CeleryProcesses(server_env, work) if args.timers == "celery" else None
    server = Server(server_env, args.workers, args.worker_class, args.threads,
                    work / "gunicorn.log")
    threads = args.threads if args.worker_class == "gthread" else 1
    timers = ("celery (a worker, prefork 2, and beat; counted as the server)"
              if celery else "thread (embedded default)")
    out: dict[str, Any] = {"server": {"workers": args.workers, "worker_class": args.worker_class,
                                      "threads": threads, "timers": timers,
                                      "conn_max_age": args.conn_max_age}}
    also_server = celery.pids if celery else ()
    try:
        server.wait_ready()
        base = [PY, str(HERE / "api_load.py")]
        common = ["--tables-file", str(tables_file), "--base-url", server.url,
                  "--warmup", str(args.warmup), "--seed", str(args.seed)]

        def phase(name: str, extra: list[str]) -> dict[str, Any]:
            if name.startswith("moves"):  # each table at its last hand, outside the CPU watch
                run_json(base + ["current"] + common, env, timeout=120)
                extra = [*extra, "--hands-current"]
            gate = wait_quiet(args.idle_threshold, args.max_idle_wait)
            began = datetime.now(UTC)
            with CpuWatch(watch_db, server.proc.pid, also_server) as watch:
                result = run_json(base + extra + common, env,
                                  timeout=args.duration + args.warmup + 120)
            ended = datetime.now(UTC)
            result.update(gate)
            result.update(watch.result)
            posts = result["counts_with_warmup"].get("moves", 0)
            if name.startswith("moves") and posts:
                # The moves the POSTs recorded, as the hand record counts them: the phase's
                # moves (its events by player, forced or timeout: at zero delays every forced
                # move is played in the command of the move before it) per POST answered,
                # warm-up included, times the window's POSTs per second. A POST still in
                # flight when the load generator stops is recorded but not answered: at most
                # one per table, well under 1 % of a phase.
                recorded = recorded_between(db_url, began, ended)
                result["recorded"] = recorded
                per_post = recorded["moves"] / posts
                result["recorded_moves_per_post"] = round(per_post, 3)
                result["recorded_moves_per_s"] = round(result["moves_per_s"] * per_post, 1)
            ops = result["counts_with_warmup"].get("moves" if name.startswith("moves")
                                                   else "requests", 0)
            if ops:  # CPU per operation: what the weather changes least
                result["server_cpu_ms_per_op"] = round(1000 * watch.result["server_cpu_s"] / ops,
                                                       2)
                result["db_cpu_ms_per_op"] = round(1000 * watch.result["db_cpu_s"] / ops, 2)
            out.setdefault(name, []).append(result)
            # Requests without a whole answer (refused, timed out, cut short): the phase's
            # figures do not count them, so a run that has any says so.
            result["failed_requests"] = result["counts_with_warmup"].get("failed", 0)
            log(f"{name}: " + ", ".join(f"{k} {result.get(k)}" for k in
                                        ("moves_per_s", "requests_per_s", "others_cpu_share",
                                         "machine_busy_share", "failed_requests")
                                        if k in result))
            if result["failed_requests"]:
                log(f"WARNING {name}: {result['failed_requests']} requests got no whole answer")
            return result

        def both(label: str, duration: float, rate: float) -> None:
            paced = ["--rate", str(rate)] if rate else []
            n = len(out.get(f"moves_{label}", []))
            trace = ["--trace", str(work / f"trace_{label}_{n}.json")]
            phase(f"moves_{label}", ["moves", "--duration", str(duration), *paced, *trace])
            phase(f"trivial_{label}", ["trivial", "--duration", str(duration),
                                       "--clients", str(args.tables), *paced])

        # Rounds alternate moves and trivial so that both meet the same weather (other
        # processes on the machine); the summary takes each one's best round.
        for _ in range(args.rounds):
            both("saturation", args.duration, 0)
        if args.paced_rate:  # latency at the target rate
            both("paced", args.paced_duration, args.paced_rate)
            # The same rate of moves as the hand record counts them: the POSTs paced at the
            # target over the moves each POST recorded at saturation (a Comet POST plays the
            # run's forced cards too).
            per_post = [r["recorded_moves_per_post"] for r in out["moves_saturation"]
                        if r.get("recorded_moves_per_post")]
            if per_post:
                rate = round(args.paced_rate / (sum(per_post) / len(per_post)), 1)
                out["paced_recorded_post_rate"] = rate
                phase("moves_paced_recorded",
                      ["moves", "--duration", str(args.paced_duration), "--rate", str(rate),
                       "--trace", str(work / "trace_paced_recorded_0.json")])
        # Latency without queueing: both at half the moves' saturation throughput.
        best = max(r["moves_per_s"] for r in out["moves_saturation"])
        out["light_rate"] = max(2.0, round(best / 2, 1))
        both("light", args.paced_duration, out["light_rate"])
        out["server"]["workers_at_end"] = server.workers()
    finally:
        server.stop()
        if celery:
            celery.stop()
    return out


def summarise(http: dict[str, Any] | None, svc: dict[str, Any] | None) -> dict[str, Any]:
    s: dict[str, Any] = {}
    ok: dict[str, bool] = {}  # a move counted as a command: a POST, a move_play call
    met: dict[str, bool] = {}  # a move counted as the hand record counts it (the reading)
    if http:
        ms = max(http["moves_saturation"], key=lambda r: r["moves_per_s"])
        ts = max(http["trivial_saturation"], key=lambda r: r["requests_per_s"])
        s["rounds"] = len(http["moves_saturation"])
        s["http_moves_per_s"] = ms["moves_per_s"]
        s["http_events_per_s"] = ms["events_per_s"]
        s["http_requests_per_s_during_moves"] = round(
            sum(ms[k]["per_s"] for k in ("hand_get", "move_post") if k in ms), 1)
        s["http_move_post_p50_ms_saturation"] = ms["move_post"]["p50_ms"]
        s["http_move_post_p99_ms_saturation"] = ms["move_post"]["p99_ms"]
        s["trivial_requests_per_s"] = ts["requests_per_s"]
        s["trivial_p50_ms_saturation"] = ts["trivial_post"]["p50_ms"]
        s["trivial_p99_ms_saturation"] = ts["trivial_post"]["p99_ms"]
        s["share_of_trivial"] = round(ms["moves_per_s"] / ts["requests_per_s"], 3)
        s["share_of_trivial_per_round"] = [
            round(m["moves_per_s"] / t["requests_per_s"], 3)
            for m, t in zip(http["moves_saturation"], http["trivial_saturation"], strict=False)]
        cpu_m = [r["server_cpu_ms_per_op"] + r["db_cpu_ms_per_op"]
                 for r in http["moves_saturation"] if "server_cpu_ms_per_op" in r]
        cpu_t = [r["server_cpu_ms_per_op"] + r["db_cpu_ms_per_op"]
                 for r in http["trivial_saturation"] if "server_cpu_ms_per_op" in r]
        if cpu_m and cpu_t:
            # CPU of gunicorn's workers and of the database's backends per move (its GETs
            # included) and per trivial request: the least weather-dependent comparison.
            s["server_db_cpu_ms_per_move"] = min(cpu_m)
            s["server_db_cpu_ms_per_trivial"] = min(cpu_t)
            s["share_of_trivial_by_cpu"] = round(min(cpu_t) / min(cpu_m), 3)
        ok["http_moves_per_s >= 300"] = ms["moves_per_s"] >= TARGETS["http_moves_per_s"]
        ok["share_of_trivial >= 0.40"] = s["share_of_trivial"] >= TARGETS["share_of_trivial"]
        if ms.get("recorded_moves_per_s"):
            s["http_recorded_moves_per_s"] = ms["recorded_moves_per_s"]
            s["http_recorded_moves_per_post"] = ms["recorded_moves_per_post"]
            s["share_of_trivial_by_recorded_moves"] = round(
                ms["recorded_moves_per_s"] / ts["requests_per_s"], 3)
            met["http recorded moves/s >= 300"] = (
                ms["recorded_moves_per_s"] >= TARGETS["http_moves_per_s"])
            met["share_of_trivial by recorded moves >= 0.40"] = (
                s["share_of_trivial_by_recorded_moves"] >= TARGETS["share_of_trivial"])
        s["others_cpu_share_max"] = max(r["others_cpu_share"] for k, v in http.items()
                                        if isinstance(v, list) for r in v)
    if http and "moves_paced" in http:
        mp, tp = http["moves_paced"][0], http["trivial_paced"][0]
        s["paced_rate"] = mp["offered_rate"]
        s["http_moves_per_s_paced"] = mp["moves_per_s"]
        s["http_move_post_p50_ms_paced"] = mp["move_post"]["p50_ms"]
        s["http_move_post_p99_ms_paced"] = mp["move_post"]["p99_ms"]
        for part in ("usual", "ending"):  # the moves that end a hand (and deal) apart
            if f"move_post_{part}" in mp:
                s[f"http_move_post_{part}_p50_p99_ms_paced"] = [
                    mp[f"move_post_{part}"]["p50_ms"], mp[f"move_post_{part}"]["p99_ms"]]
        s["http_hand_get_p99_ms_paced"] = mp.get("hand_get", {}).get("p99_ms")
        s["trivial_p50_ms_paced"] = tp["trivial_post"]["p50_ms"]
        s["trivial_p99_ms_paced"] = tp["trivial_post"]["p99_ms"]
        ok["p99 < 50 ms at the paced rate"] = (
            mp["move_post"]["p99_ms"] is not None and mp["move_post"]["p99_ms"] < TARGETS["p99_ms"]
            and mp["moves_per_s"] >= 0.95 * mp["offered_rate"])
    if http and "moves_paced_recorded" in http:
        mr = http["moves_paced_recorded"][0]
        offered = TARGETS["http_moves_per_s"]
        s["paced_recorded_post_rate"] = http["paced_recorded_post_rate"]
        s["http_recorded_moves_per_s_paced"] = mr.get("recorded_moves_per_s")
        s["http_move_post_p50_ms_paced_recorded"] = mr["move_post"]["p50_ms"]
        s["http_move_post_p99_ms_paced_recorded"] = mr["move_post"]["p99_ms"]
        s["http_hand_get_p99_ms_paced_recorded"] = mr.get("hand_get", {}).get("p99_ms")
        met["p99 < 50 ms at 300 recorded moves/s offered"] = (
            mr["move_post"]["p99_ms"] is not None and mr["move_post"]["p99_ms"] < TARGETS["p99_ms"]
            and mr["moves_per_s"] >= 0.95 * mr["offered_rate"]
            and (mr.get("recorded_moves_per_s") or 0) >= 0.95 * offered)
    if http and "moves_light" in http:
        ml, tl = http["moves_light"][0], http["trivial_light"][0]
        s["light_rate"] = ml["offered_rate"]
        s["http_moves_per_s_light"] = ml["moves_per_s"]
        s["http_move_post_p50_ms_light"] = ml["move_post"]["p50_ms"]
        s["http_move_post_p99_ms_light"] = ml["move_post"]["p99_ms"]
        s["http_hand_get_p50_ms_light"] = ml.get("hand_get", {}).get("p50_ms")
        s["http_hand_get_p99_ms_light"] = ml.get("hand_get", {}).get("p99_ms")
        s["trivial_p50_ms_light"] = tl["trivial_post"]["p50_ms"]
        s["trivial_p99_ms_light"] = tl["trivial_post"]["p99_ms"]
    if svc:
        s["services_moves_per_s"] = svc["services"]["moves_per_s"]
        s["services_ms_per_move"] = svc["services"]["ms_per_move"]
        s["eventsourcing_appends_per_s"] = svc["eventsourcing_append"]["events_per_s"]
        s["eventsourcing_get_append_per_s"] = svc["eventsourcing_get_append"]["events_per_s"]
        s["services_vs_eventsourcing_append"] = round(
            svc["services"]["moves_per_s"] / svc["eventsourcing_append"]["events_per_s"], 3)
        # Like our command, this variant reads before it writes (for information: the target
        # is the append alone).
        inter = svc.get("interleaved") or {}
        s["services_vs_eventsourcing_append_median_of_slices"] = inter.get(
            "ratio_median_of_slices")
        for reads in ("both", "ours"):  # a hand read between commands (api_services.READS)
            other = svc.get(f"interleaved_reads_{reads}") or {}
            s[f"services_vs_eventsourcing_append_reads_{reads}"] = other.get("ratio_overall")
        s["services_vs_eventsourcing_get_append"] = round(
            svc["services"]["moves_per_s"] / svc["eventsourcing_get_append"]["events_per_s"], 3)
        if "queries" in svc:
            s["services_queries_per_move"] = svc["queries"]["move_play_queries_mean"]
            s["http_get_hand_queries"] = svc["queries"]["http_get_hand_queries"]
            s["http_post_move_queries"] = svc["queries"]["http_post_move_queries"]
        ok["services moves/s > eventsourcing appends/s"] = (
            svc["services"]["moves_per_s"] > svc["eventsourcing_append"]["events_per_s"])
        if "recorded_moves_per_s" in svc["services"]:  # the moves as the record counts them
            s["services_recorded_moves_per_s"] = svc["services"]["recorded_moves_per_s"]
            s["services_moves_per_command"] = svc["services"]["recorded"]["moves_per_command"]
            s["services_recorded_moves_vs_eventsourcing_append"] = inter.get(
                "ratio_recorded_moves")
            met["services recorded moves/s > eventsourcing appends/s"] = (
                (inter.get("ratio_recorded_moves") or 0) > 1)
    if svc and "other_game" in svc:
        o = svc["other_game"]["interleaved"]
        s["other_game"] = svc["other_game"]["game"]
        s["other_game_services_moves_per_s"] = o["services"]["moves_per_s"]
        s["other_game_services_recorded_moves_per_s"] = o["services"]["recorded_moves_per_s"]
        s["other_game_moves_per_command"] = o["services"]["recorded"]["moves_per_command"]
        s["other_game_eventsourcing_appends_per_s"] = o["eventsourcing_append"]["events_per_s"]
        s["other_game_services_vs_eventsourcing_append"] = o["ratio_overall"]
        s["other_game_recorded_moves_vs_eventsourcing_append"] = o["ratio_recorded_moves"]
        met[f"{s['other_game']}: services recorded moves/s > eventsourcing appends/s"] = (
            o["ratio_recorded_moves"] > 1)
    if svc and "concurrent" in svc:
        c = svc["concurrent"]
        s["concurrent_clients"] = c["services"]["clients"]
        s["concurrent_services_moves_per_s"] = c["services"]["per_s"]
        s["concurrent_eventsourcing_appends_per_s"] = c["eventsourcing_append"]["per_s"]
        ok["services moves/s > eventsourcing appends/s, concurrent clients"] = (
            c["services"]["per_s"] > c["eventsourcing_append"]["per_s"])
        # api_concurrent.py counts commands; a command records one move or more, so its
        # commands beating the appends means its recorded moves do too.
        met["services recorded moves/s > eventsourcing appends/s, concurrent clients "
            "(by commands, a lower bound)"] = ok[
            "services moves/s > eventsourcing appends/s, concurrent clients"]
    s["targets_met"] = met
    s["targets_met_by_commands"] = ok
    return s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--admin-url", default="postgresql://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--db-name", default="academie_bench")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/9",
                        help="the deployment's Redis (sessions, users; emptied at the start); "
                             "'' for none")
    parser.add_argument("--tables", type=int, default=50)
    parser.add_argument("--game", default="commere", choices=["commere", "comet"])
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--worker-class", default="sync", choices=["sync", "gthread"])
    parser.add_argument("--threads", type=int, default=4, help="gthread only")
    parser.add_argument("--timers", default="thread", choices=["thread", "celery"],
                        help="the embedded timer thread, or the deployment's Celery worker and "
                             "beat (started beside gunicorn, counted as the server)")
    parser.add_argument("--conn-max-age", type=int, default=60,
                        help="DATABASE_URL's conn_max_age: persistent connections, as a "
                             "deployment on PostgreSQL sets; 0 is Django's default (a new "
                             "connection per request)")
    parser.add_argument("--duration", type=float, default=20.0, help="each saturation phase")
    parser.add_argument("--paced-duration", type=float, default=15.0)
    parser.add_argument("--paced-rate", type=float, default=300.0,
                        help="moves/s offered in the paced phases (0: no paced phases)")
    parser.add_argument("--rounds", type=int, default=2,
                        help="alternating rounds of the saturation phases")
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--services-duration", type=float, default=10.0)
    parser.add_argument("--profile-seconds", type=float, default=5.0)
    parser.add_argument("--other-game", action=argparse.BooleanOptionalAction, default=True,
                        help="the services' headline comparison for the other game too")
    parser.add_argument("--concurrent-clients", type=int, default=4,
                        help="services with this many processes at once, both sides; 0: skip")
    parser.add_argument("--idle-threshold", type=float, default=0.25)
    parser.add_argument("--max-idle-wait", type=float, default=120.0,
                        help="longest wait for a quiet machine before each phase")
    parser.add_argument("--skip-http", action="store_true")
    parser.add_argument("--skip-services", action="store_true")
    parser.add_argument("--keep-db", action="store_true", help="keep the database afterwards")
    parser.add_argument("--work-dir", default="/tmp/academie_api_bench")
    parser.add_argument("--out", default="", help="summary JSON (default: WORK_DIR/summary.json)")
    parser.add_argument("--max-seconds", type=float, default=1800.0,
                        help="hard limit of the whole run")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    import importlib.util

    missing = [m for m in ("uvloop", "eventsourcing") if importlib.util.find_spec(m) is None]
    if missing:
        sys.exit(f"api_bench: install {', '.join(missing)} first (for the benchmark only): "
                 ".venv/bin/pip install uvloop 'eventsourcing[postgres]'")
    work = Path(args.work_dir)
    work.mkdir(parents=True, exist_ok=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    signal.signal(signal.SIGALRM, lambda *_: sys.exit("api_bench: --max-seconds reached"))
    signal.alarm(int(args.max_seconds))

    base = args.admin_url.rsplit("/", 1)[0]
    db_url = f"{base}/{args.db_name}"
    if args.conn_max_age:
        db_url += f"?conn_max_age={args.conn_max_age}"
    env = service_env(db_url, args.redis_url)
    started = time.monotonic()
    summary: dict[str, Any] = {
        "command": " ".join([".venv/bin/python", "bench/api_bench.py", *sys.argv[1:]]),
        "machine": {"cpu_count": os.cpu_count(), "postgresql": pg_version(args.admin_url),
                    **versions()},
        "setup": {"tables": args.tables, "game": args.game, "players": args.players,
                  "database": args.db_name, "auth": "session cookie (+ CSRF for POST)",
                  "redis": args.redis_url or "none (sessions and users from the database)"},
        "targets": TARGETS,
    }
    http = svc = None
    try:
        log(f"recreating database {args.db_name}")
        recreate_database(args.admin_url, args.db_name)
        if args.redis_url:
            # Sessions and users cached for an earlier database of the same name would be
            # taken for this one's (same ids).
            import redis

            redis.Redis.from_url(args.redis_url).flushdb()
        subprocess.run([PY, "manage.py", "migrate", "--verbosity", "0"], env=env, cwd=ROOT,
                       check=True, timeout=300)
        if not args.skip_http:
            http = http_phases(args, env, work, args.db_name, f"{base}/{args.db_name}")
            summary["http"] = http
        if not args.skip_services:
            gate = wait_quiet(args.idle_threshold, args.max_idle_wait)
            svc_out = work / "services.json"
            with CpuWatch(args.db_name) as watch:
                svc = run_json([PY, str(HERE / "api_services.py"), "--out", str(svc_out),
                                "--tables", str(args.tables), "--game", args.game,
                                "--players", str(args.players),
                                "--duration", str(args.services_duration),
                                "--profile", str(work / "services.prof"),
                                "--profile-seconds", str(args.profile_seconds),
                                "--seed", str(args.seed)],
                               env, timeout=args.services_duration * 6 + 300, out=svc_out)
            svc.update(gate)
            svc.update(watch.result)
            if args.concurrent_clients:
                wait_quiet(args.idle_threshold, args.max_idle_wait)
                conc_out = work / "concurrent.json"
                svc["concurrent"] = run_json(
                    [PY, str(HERE / "api_concurrent.py"), "--out", str(conc_out),
                     "--clients", str(args.concurrent_clients),
                     "--duration", str(args.services_duration), "--seed", str(args.seed)],
                    env, timeout=args.services_duration * 4 + 400, out=conc_out)
            if args.other_game:
                wait_quiet(args.idle_threshold, args.max_idle_wait)
                other = "comet" if args.game == "commere" else "commere"
                other_out = work / f"services_{other}.json"
                svc["other_game"] = run_json(
                    [PY, str(HERE / "api_services.py"), "--out", str(other_out),
                     "--tables", str(args.tables), "--game", other,
                     "--players", str(args.players),
                     "--duration", str(args.services_duration), "--seed", str(args.seed),
                     "--headline-only"],
                    env, timeout=args.services_duration * 4 + 300, out=other_out)
            summary["services"] = svc
        summary["summary"] = summarise(http, svc)
    finally:
        if not args.keep_db:
            with contextlib.suppress(Exception):
                import psycopg

                with psycopg.connect(args.admin_url, autocommit=True) as conn:
                    conn.execute(f'DROP DATABASE IF EXISTS "{args.db_name}" WITH (FORCE)')
        summary["elapsed_s"] = round(time.monotonic() - started, 1)
        out = Path(args.out) if args.out else work / "summary.json"
        out.write_text(json.dumps(summary, indent=2))
        log(f"summary written to {out}")
    print(json.dumps(summary.get("summary", {}), indent=2))


if __name__ == "__main__":
    main()
