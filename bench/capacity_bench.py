"""Capacity: how many tables at human pace the deployment serves, moves and live frames.

    python bench/run.py capacity [--quick] [--two] [--tables 10,20,40,60,80,120,160]
                                 [--phase 60] [--interval 4] [--pause 3] [--limit 100]

Database ``<name>_capacity`` (made afresh) and the bench's Redis database (emptied). The
deployment, started here as bench/servers.py does: gunicorn (2 sync workers) for HTTP, daphne
for the WebSockets (config/asgi.py), a Celery worker (concurrency 1) for the timers and a beat
(the deadline sweeper and the soirée clock, every second), on bench.settings (production's
stack; throttles at rates no client reaches). ``--two``: two of each but the beat, the web
processes with 1 worker each (as many web workers in all), the clients spread over both web
and both live processes.

Tables are Ma commère parties of 4 people (100 hands a partie, so that none ends in a run),
no forced-move delay, every time-out an hour away, ``--pause`` seconds between hands (the next
hand dealt by the Celery timer) and the default share window. Each table is seen by five
pages: each seat's, on ``ws/parties/<id>/seats/<n>/`` (signed in by its session cookie, the
page's origin), and one spectator's (a staff member) on ``ws/parties/<id>/``. What a page does
is what frontend/static/frontend/table.js does:

- on its load: GET the table page (HTML), GET ``/api/hands/<id>/`` and ``/api/hands/<id>/events``,
  then open its socket (no ``after``: the partie's latest hand as it is now); the pages of the
  tables a step adds open at random moments of the first 60 % of its warm-up (10 s, or half a
  second per table added if longer);
- on a frame: nothing fetched; a frame of a hand still shuffling without the seat's share
  makes the seat's page POST its share (as ``sendShare`` and ``shareAhead`` do);
- on the first frame of the next hand once its hand is over: 6 s later it follows the table,
  that is it loads again (the three GETs) and opens a new socket.

Every ``--interval`` seconds (at a random offset per table) a table takes one decision: the
awaited player's page GETs the hand (``/api/hands/<id>/``) and POSTs one of his legal moves
(``/api/hands/<id>/moves``). A beat when nobody is awaited (a new hand waiting for its shares,
the pause between hands) takes no decision.

The run ramps: each step adds tables to reach the next number of ``--tables`` and measures
for ``--phase`` seconds after a warm-up; it stops after the first step whose move POST p99
is over ``--limit`` ms. Figures per step: the POST's p50/p99 (and the GET's), the decisions
taken and skipped, the live frames' lag (the time from the POST's answer at the client to
the frame of the command's last event at each of the table's five sockets: negative when the
frame came first; and from the POST's sending), the frames missing (a socket open from before
the POST until a second after its answer that never got the frame), the page loads' times,
the deadline lag (a next hand's deal by the timer minus its due time, from the stored
hands), the CPU of each server process (PostgreSQL's and Redis's not counted) and of this
load generator (one asyncio process), and the machine's busy share (everyone's work). Then
the largest number of tables whose POST p99 stayed under the limit, the answers Django logged
as 4xx (a late share's 409, ...), and each server log's other lines of warnings and errors
(the logs are kept, their folder named, when they hold any, or with ``--keep-logs``). Exits
non-zero if no POST was measured.

``--quick``: steps of 4 and 8 tables, 15 s each after 5 s of warm-up.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import common
from http_bench import Client
from servers import Deployment, machine_busy

FOLLOW_AFTER = 6.0  # table.js: the page follows the table this long after the next hand shows
RECONNECT = 2.0  # base.html's liveSocket: a dropped socket opens again after this


@dataclass
class Stats:
    posts: list[tuple[float, float, int]] = field(default_factory=list)  # (answered, s, status)
    gets: list[tuple[float, float, int]] = field(default_factory=list)
    loads: list[tuple[float, float]] = field(default_factory=list)  # page loads: (done, s)
    # each of a page load's GETs, by what it fetches: (done, s)
    fetches: dict[str, list[tuple[float, float]]] = field(default_factory=dict)
    decisions: list[float] = field(default_factory=list)  # when a decision was taken
    skipped: list[float] = field(default_factory=list)  # a beat with nobody awaited
    # (table, hand, seq, sent, answered) of every move answered 201
    expected: list[tuple[Table, str, int, float, float]] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)


class Page:
    """One browser tab on a table: a seat's (``seat`` a number) or the spectator's."""

    def __init__(self, table: Table, index: int, seat: int | None, http: Client,
                 ws_port: int, stats: Stats) -> None:
        self.table, self.index, self.seat, self.http = table, index, seat, http
        self.ws_port, self.stats = ws_port, stats
        self.hand: str = table.first_hand
        self.number = 0
        self.status = "playing"
        self.follow: tuple[str, int] | None = None  # the hand the page is about to load
        self.shared: set[str] = set()
        self.spans: list[list[float]] = []  # [opened, closed] of each socket
        self.socket: Any = None
        self.stopped = False

    async def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        try:
            return await self.http.call(method, path, body)
        except (OSError, ValueError, IndexError) as exc:
            self.stats.errors[f"{method} {path.split('/')[2]} {type(exc).__name__}"] += 1
            return 0, None

    async def load(self) -> None:
        """What the table page fetches on its load (table.js: the page, ``refresh``)."""
        began = time.perf_counter()
        for kind, path in (("page", f"/hands/{self.hand}/"), ("hand", f"/api/hands/{self.hand}/"),
                           ("events", f"/api/hands/{self.hand}/events")):
            fetched = time.perf_counter()
            status, body = await self.call("GET", path)
            self.stats.fetches.setdefault(kind, []).append(
                (time.perf_counter(), time.perf_counter() - fetched))
            if status != 200:
                self.stats.errors[f"GET {path.replace(self.hand, '<id>')} {status}"] += 1
            elif path.endswith(f"{self.hand}/") and path.startswith("/api/") and body:
                self.number, self.status = body["number"], body["status"]
                self.frame(body, live=False)
        self.stats.loads.append((time.perf_counter(), time.perf_counter() - began))

    async def run(self, stop: asyncio.Event, delay: float) -> None:
        from websockets.asyncio.client import connect
        from websockets.exceptions import InvalidStatus, WebSocketException

        await asyncio.sleep(delay)  # the pages of a step open over its warm-up, not at once
        await self.load()
        path = f"/ws/parties/{self.table.partie}/" + (
            "" if self.seat is None else f"seats/{self.seat}/")
        while not stop.is_set():
            try:
                async with connect(
                        f"ws://127.0.0.1:{self.ws_port}{path}", origin=f"http://127.0.0.1:{self.ws_port}",
                        additional_headers={"Cookie": self.http.cookie}, open_timeout=30,
                        ping_interval=None, max_size=None) as ws:
                    self.socket = ws
                    span = [time.perf_counter(), float("inf")]
                    self.spans.append(span)
                    try:
                        async for message in ws:
                            self.frame(json.loads(message))
                    finally:
                        span[1] = time.perf_counter()
                        self.socket = None
                    if ws.close_code is not None and ws.close_code >= 4000:
                        self.stats.errors[f"socket refused {ws.close_code}"] += 1
                        return
            except (TimeoutError, OSError, InvalidStatus, WebSocketException) as exc:
                self.stats.errors[f"socket {type(exc).__name__}"] += 1
            if stop.is_set():
                return
            if self.follow is not None:
                self.hand, self.number = self.follow
                self.follow, self.status = None, "playing"
                await self.load()
            else:
                if not self.stopped:
                    self.stats.errors["socket dropped"] += 1
                await asyncio.sleep(RECONNECT)

    def frame(self, f: dict[str, Any], live: bool = True) -> None:
        now = time.perf_counter()
        if f.get("kind") == "partie":
            return
        if live:
            self.table.arrivals.setdefault((f["hand"], f["seq"]), {}).setdefault(self.index, now)
        self.table.saw(f)
        if f["hand"] == self.hand:
            self.status = f["status"]
        elif f["number"] > self.number and self.status == "over" and self.follow is None:
            # table.js offerNext: the next hand shows while this one's result is on screen.
            self.follow = (f["hand"], f["number"])
            asyncio.get_running_loop().call_later(FOLLOW_AFTER, self.leave)
        view = f.get("view") or {}
        if (self.seat is not None and view.get("phase") == "shuffling"
                and self.seat not in (view.get("shares") or []) and f["hand"] not in self.shared
                and f["status"] != "over"):
            self.shared.add(f["hand"])
            task = asyncio.get_running_loop().create_task(self.share(f["hand"]))
            self.table.background.add(task)  # held until done: a task no one holds may vanish
            task.add_done_callback(self.table.background.discard)

    def leave(self) -> None:
        if self.socket is not None:
            task = asyncio.get_running_loop().create_task(self.socket.close())
            self.table.background.add(task)
            task.add_done_callback(self.table.background.discard)

    async def share(self, hand: str) -> None:
        status, body = await self.call("POST", f"/api/hands/{hand}/share",
                                       {"share": random.randbytes(32).hex()})
        if status != 201 and (body or {}).get("error") not in ("share_already_sent",
                                                               "already_dealt"):
            self.stats.errors[f"POST share {status}"] += 1


class Table:
    def __init__(self, index: int, partie: str, hand: str) -> None:
        self.index, self.partie, self.first_hand = index, partie, hand
        self.pages: list[Page] = []
        self.background: set[asyncio.Task[Any]] = set()
        self.arrivals: dict[tuple[str, int], dict[int, float]] = {}
        # The latest state any page has seen: (number, seq), and the frame.
        self.key: tuple[int, int] = (0, -1)
        self.latest: dict[str, Any] | None = None

    def saw(self, f: dict[str, Any]) -> None:
        key = (f["number"], f["seq"])
        if key > self.key:
            self.key, self.latest = key, f

    async def decide(self, stats: Stats, interval: float, rng: random.Random,
                     stop: asyncio.Event) -> None:
        due = time.perf_counter() + rng.random() * interval
        while not stop.is_set():
            await asyncio.sleep(max(0.0, due - time.perf_counter()))
            due += interval
            f = self.latest
            if (f is None or f["status"] != "playing" or not f["to_act"]
                    or (f.get("view") or {}).get("phase") == "shuffling"):
                stats.skipped.append(time.perf_counter())
                continue
            hand, page = f["hand"], self.pages[f["to_act"][0]]
            began = time.perf_counter()
            status, view = await page.call("GET", f"/api/hands/{hand}/")
            stats.gets.append((time.perf_counter(), time.perf_counter() - began, status))
            if status != 200 or view["your_seat"] not in view["to_act"] or not view["legal_moves"]:
                stats.skipped.append(time.perf_counter())
                if status != 200:
                    stats.errors[f"GET hand {status}"] += 1
                continue
            stats.decisions.append(time.perf_counter())
            body = {"command_id": str(uuid.uuid4()), "seq": view["seq"],
                    "move": rng.choice(view["legal_moves"])}
            began = time.perf_counter()
            status, answer = await page.call("POST", f"/api/hands/{hand}/moves", body)
            ended = time.perf_counter()
            stats.posts.append((ended, ended - began, status))
            if status == 201:
                stats.expected.append((self, hand, int(answer["seq"]), began, ended))
                self.saw({**answer, "kind": "hand"})
            else:
                stats.errors[f"POST move {status}"] += 1


def ms(values: list[float], q: float) -> float | None:
    found = common.percentile(values, q)
    return None if found is None else round(1000 * found, 1)


def window_figures(stats: Stats, t0: float, t1: float, grace: float) -> dict[str, Any]:
    posts = [p for p in stats.posts if t0 <= p[0] < t1]
    ok = [s for _, s, status in posts if status == 201]
    gets = [s for t, s, status in stats.gets if t0 <= t < t1 and status == 200]
    from_answer, from_post, missing, before = [], [], 0, 0
    for table, hand, seq, sent, answered in stats.expected:
        if not t0 <= answered < t1:
            continue
        got = table.arrivals.get((hand, seq), {})
        for page in table.pages:
            if not any(a <= sent and answered + grace <= b for a, b in page.spans):
                continue  # its socket was not open all along: a page being loaded again
            at = got.get(page.index)
            if at is None:
                missing += 1
                continue
            from_answer.append(at - answered)
            from_post.append(at - sent)
            before += at < answered
    loads = [s for t, s in stats.loads if t0 <= t < t1]
    return {
        "posts": len(posts), "posts_ok": len(ok), "posts_per_s": round(len(ok) / (t1 - t0), 2),
        "post_p50_ms": ms(ok, 0.5), "post_p99_ms": ms(ok, 0.99), "post_max_ms": ms(ok, 1.0),
        "get_p50_ms": ms(gets, 0.5), "get_p99_ms": ms(gets, 0.99),
        "decisions": sum(1 for t in stats.decisions if t0 <= t < t1),
        "skipped_beats": sum(1 for t in stats.skipped if t0 <= t < t1),
        "frames": len(from_answer), "frames_missing": missing,
        "frame_lag_from_answer_p50_ms": ms(from_answer, 0.5),
        "frame_lag_from_answer_p99_ms": ms(from_answer, 0.99),
        "frame_lag_from_post_p50_ms": ms(from_post, 0.5),
        "frame_lag_from_post_p99_ms": ms(from_post, 0.99),
        "frames_before_answer": before,
        "page_loads": len(loads), "page_load_p50_ms": ms(loads, 0.5),
        "page_load_p99_ms": ms(loads, 0.99),
        **{f"page_load_{kind}_p50_p99_ms": [ms(mine, 0.5), ms(mine, 0.99)]
           for kind, got in stats.fetches.items()
           for mine in [[s for t, s in got if t0 <= t < t1]]},
    }


def deadline_lags(parties: list[str], pause: float,
                  windows: list[tuple[float, float]]) -> list[dict[str, Any]]:
    """Per window (wall-clock times), the lag of each next hand's deal past its due time (the
    last hand's end plus the pause), from the stored hands."""
    from games.models import Hand

    rows = list(Hand.objects.filter(partie_id__in=parties).order_by("partie_id", "number")
                .values_list("partie_id", "number", "started_at", "ended_at"))
    lags: list[tuple[float, float]] = []
    for (pa, na, _, ended), (pb, nb, started, _) in zip(rows, rows[1:], strict=False):
        if pa == pb and nb == na + 1 and ended is not None and started is not None:
            due = ended + timedelta(seconds=pause)
            lags.append((started.timestamp(), (started - due).total_seconds()))
    out = []
    for w0, w1 in windows:
        mine = [lag for at, lag in lags if w0 <= at < w1]
        out.append({"deals": len(mine), "deal_lag_p50_ms": ms(mine, 0.5),
                    "deal_lag_p99_ms": ms(mine, 0.99), "deal_lag_max_ms": ms(mine, 1.0)})
    return out


async def ramp(tables: list[Table], steps: list[int], pages_of: Any, stats: Stats,
               args: argparse.Namespace, dep: Deployment) -> list[dict[str, Any]]:
    stop = asyncio.Event()
    tasks: list[asyncio.Task[Any]] = []
    results = []
    started = 0
    warmup, phase = (5.0, 15.0) if args.quick else (10.0, args.phase)
    rng = random.Random(args.seed)
    for n in steps:
        # The warm-up grows with the tables added: their pages load over its first 60 %.
        warm = max(warmup, 0.5 * (n - started)) if not args.quick else warmup
        for table in tables[started:n]:
            table.pages = pages_of(table)
            tasks += [asyncio.create_task(p.run(stop, rng.random() * warm * 0.6))
                      for p in table.pages]
            tasks.append(asyncio.create_task(table.decide(stats, args.interval,
                                                          random.Random(rng.random()), stop)))
        started = n
        print(f"{n} tables: warming up {warm:.0f} s", file=sys.stderr)
        await asyncio.sleep(warm)
        t0, w0 = time.perf_counter(), time.time()
        cpu0, me0, busy0 = dep.cpu(), time.process_time(), machine_busy()
        await asyncio.sleep(phase)
        t1, w1 = time.perf_counter(), time.time()
        cpu1, me1, busy1 = dep.cpu(), time.process_time(), machine_busy()
        await asyncio.sleep(2.0)  # the frames of the last answers arrive
        figures = {"tables": n, "sockets": 5 * n,
                   **window_figures(stats, t0, t1, grace=1.0),
                   "cpu_percent": {name: round(100 * (cpu1[name] - cpu0.get(name, 0)) / (t1 - t0))
                                   for name in cpu1},
                   "load_generator_cpu_percent": round(100 * (me1 - me0) / (t1 - t0)),
                   "machine_busy_percent": round(100 * (busy1[0] - busy0[0])
                                                 / max(1, busy1[1] - busy0[1])),
                   "wall": (w0, w1)}
        dead = dep.dead()
        if dead:
            figures["dead"] = dead
        results.append(figures)
        shown = {k: v for k, v in figures.items() if k != "wall"}
        print(json.dumps(shown), file=sys.stderr)
        if dead or not figures["posts_ok"] or (figures["post_p99_ms"] or 0) > args.limit:
            break
    stop.set()
    for page in (p for t in tables for p in t.pages):
        page.stopped = True
        page.leave()
    await asyncio.wait(tasks, timeout=10)
    for task in tasks:
        task.cancel()
    return results


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="run.py capacity")
    parser.add_argument("--quick", action="store_true", help="4 then 8 tables, 15 s each")
    parser.add_argument("--two", action="store_true",
                        help="two web, two daphne, two Celery workers (one beat)")
    parser.add_argument("--tables", default=None,
                        help="the steps (default 10,20,40,60,80,120,160; --quick 4,8)")
    parser.add_argument("--phase", type=float, default=60.0, help="seconds measured a step")
    parser.add_argument("--interval", type=float, default=4.0, help="seconds between decisions")
    parser.add_argument("--pause", type=float, default=3.0, help="seconds between hands")
    parser.add_argument("--limit", type=float, default=100.0, help="POST p99 limit, ms")
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--keep-logs", action="store_true")
    args = parser.parse_args(argv)
    steps = sorted({int(n) for n in (args.tables or ("4,8" if args.quick else
                                                     "10,20,40,60,80,120,160")).split(",")})
    if not steps or steps[0] < 1:
        common.nothing_measured(f"--tables {args.tables}: no table")
    import redis

    redis.Redis.from_url(common.redis_url()).flushdb()  # the bench's own db
    url = common.database_url("capacity")
    common.ensure_database(url, fresh=True)
    common.django_setup(url)
    from django.contrib.auth import get_user_model
    from django.db import connections

    print(f"making {steps[-1]} tables", file=sys.stderr)
    made = common.make_tables(steps[-1], 4, seed=args.seed, settings={
        "options": {"ante": 1, "rounds": 100}, "pause_between_hands": timedelta(
            seconds=args.pause), "share_window": None})
    spectators = common.make_users(steps[-1])
    get_user_model().objects.filter(pk__in=[u.pk for u in spectators]).update(is_staff=True)
    for user in spectators:
        user.refresh_from_db()
    sessions = [[common.session_key(u) for u in t["users"]] + [common.session_key(s)]
                for t, s in zip(made, spectators, strict=True)]
    tables = [Table(i, str(t["partie"].pk), str(t["hand"])) for i, t in enumerate(made)]
    connections.close_all()

    logdir = Path(tempfile.mkdtemp(prefix="academie-capacity-"))
    dep = Deployment(url=url, logdir=logdir)
    copies = 2 if args.two else 1
    web_workers = 1 if args.two else 2
    for k in range(copies):
        dep.gunicorn(f"web{k + 1}", web_workers, args.seed * 10 + k)
        dep.daphne(f"live{k + 1}", args.seed * 10 + 5 + k)
        dep.celery_worker(f"worker{k + 1}")
    dep.celery_beat("beat")
    stats = Stats()
    try:
        dep.wait_ports()
        webs = [dep.ports[f"web{k + 1}"] for k in range(copies)]
        lives = [dep.ports[f"live{k + 1}"] for k in range(copies)]

        def pages_of(table: Table) -> list[Page]:
            # The table's HTTP on one web process, its sockets spread over the live ones.
            web = webs[table.index % copies]
            return [Page(table, j, None if j == 4 else j, Client(web, sessions[table.index][j]),
                         lives[(table.index + j) % copies], stats) for j in range(5)]

        results = asyncio.run(ramp(tables, steps, pages_of, stats, args, dep))
    finally:
        dep.mark_end()
        dep.stop()
    lags = deadline_lags([t.partie for t in tables], args.pause, [r.pop("wall") for r in results])
    for r, lag in zip(results, lags, strict=True):
        r.update(lag)
    problems, answers_4xx = dep.problems()
    passed = [r["tables"] for r in results if r["posts_ok"]
              and (r["post_p99_ms"] or 0) <= args.limit and not r.get("dead")]
    best = next((r for r in results if passed and r["tables"] == max(passed)), None)
    headline = None if best is None else {k: best[k] for k in (
        "post_p50_ms", "post_p99_ms", "frame_lag_from_answer_p50_ms",
        "frame_lag_from_answer_p99_ms", "frames_missing", "deal_lag_p50_ms", "deal_lag_p99_ms",
        "load_generator_cpu_percent", "machine_busy_percent")}
    out = {"two": args.two, "interval_s": args.interval, "pause_s": args.pause,
           "limit_ms": args.limit, "largest_tables_under_limit": max(passed, default=None),
           "at_largest": headline,
           "steps": results, "client_errors": dict(stats.errors),
           "server_log_problems": {k: {"lines": len(v), "first": v[:5]}
                                   for k, v in problems.items()},
           "answers_4xx_logged": answers_4xx,
           "logs": str(logdir)}
    for name, lines in problems.items():
        print(f"{name}: {len(lines)} log line(s) of warnings or errors, e.g.:", file=sys.stderr)
        for line in lines[:5]:
            print(f"    {line[:300]}", file=sys.stderr)
    if stats.errors:
        print(f"client errors: {dict(stats.errors)}", file=sys.stderr)
    if not any(r["posts_ok"] for r in results):
        print(json.dumps(out))
        common.nothing_measured("no move POST was answered")
    if not args.keep_logs and not problems:
        for path in logdir.iterdir():
            path.unlink()
        logdir.rmdir()
        out["logs"] = None
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
