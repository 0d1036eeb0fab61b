"""HTTP load test: Ma commère moves against the trivial endpoint, in one run.

    python bench/run.py http [--quick | --smoke] [--tables 50] [--players 4] [--workers 2]

Serves bench.settings (production's stack plus /bench/trivial/) with gunicorn's sync workers
on PostgreSQL (database ``<name>_http``) and Redis, timers queued to Celery as deployed (no
worker runs: every time-out is an hour away). The client is asyncio over plain sockets, one
connection per request (sync workers close each), each person logged in by a session cookie.

1. Trivial saturation: one client per table POSTs /bench/trivial/ back to back.
2. Move saturation: one client per table plays its hands as the people seated there: it reads
   the hand as the awaited player (GET, skipped when the last answer is already his view),
   chooses one of his legal moves at random and POSTs it. Only the POSTs are counted (a
   forced move the service plays after one is not), its reads loading the server uncounted.
3. The same, each table pacing its POSTs so that together they offer half the saturation
   rate of (2): the POST p99 there.

Prints, as its last line, one JSON object: posts_per_s, trivial_per_s, share, p99_ms_half.
Exits non-zero if a phase measured nothing.

``--smoke`` (scripts/test.sh runs it after the tests): 10 tables, the move phase (2) alone, on a
database made afresh, until 50 moves have been answered (a few seconds) or for 45 s at most
(a machine loaded by other work); it exits non-zero saying how many it played if fewer than
50. The JSON line gives the run's seconds, set-up (migrations) included.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import subprocess
import sys
import time
import uuid
from typing import Any

import common

SMOKE_MOVES = 50  # what --smoke must play at least
CSRF = "benchbenchbenchbenchbenchbench00"  # 32 characters: an unmasked CSRF secret


class Client:
    def __init__(self, port: int, session: str) -> None:
        self.port = port
        self.cookie = f"sessionid={session}; csrftoken={CSRF}"

    async def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        data = b"" if body is None else json.dumps(body).encode()
        head = (f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                f"Cookie: {self.cookie}\r\nX-CSRFToken: {CSRF}\r\nAccept: application/json\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n")
        reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
        try:
            writer.write(head.encode() + data)
            answer = await reader.read()  # to the end: the worker closes the connection
        finally:
            writer.close()
        status = int(answer[9:12])
        payload = answer.split(b"\r\n\r\n", 1)[1]
        return status, json.loads(payload) if payload[:1] in (b"{", b"[") else None


class Window:
    """Counts the answers ending inside [start + warmup, start + warmup + duration]."""

    def __init__(self, warmup: float, duration: float, enough: int | None = None) -> None:
        self.t0 = time.perf_counter() + warmup
        self.t1 = self.t0 + duration
        self.enough = enough  # the window closes early once this many have been answered
        self.ok: list[float] = []
        self.failed = 0
        self.total = 0  # every answer with the expected status, in the window or not

    def add(self, began: float, status: int, expected: int) -> None:
        ended = time.perf_counter()
        self.total += status == expected
        if self.enough is not None and self.total >= self.enough and ended < self.t1:
            self.t1 = ended
        if self.t0 <= ended <= self.t1:
            if status == expected:
                self.ok.append(ended - began)
            else:
                self.failed += 1

    def result(self) -> dict[str, Any]:
        p99 = common.percentile(self.ok, 0.99)
        p50 = common.percentile(self.ok, 0.50)
        return {"per_s": round(len(self.ok) / (self.t1 - self.t0), 1), "all": self.total,
                "p50_ms": p50 and round(1000 * p50, 1), "p99_ms": p99 and round(1000 * p99, 1),
                "failed": self.failed}


async def trivial_client(client: Client, window: Window) -> None:
    while time.perf_counter() < window.t1:
        began = time.perf_counter()
        status, _ = await client.call("POST", "/bench/trivial/", {})
        window.add(began, status, 200)


async def table_client(table: dict[str, Any], clients: list[Client], window: Window,
                       rng: random.Random, interval: float | None) -> None:
    hand, view = table["hand"], None
    shared: set[str] = set()
    due = time.perf_counter() + (rng.random() * interval if interval else 0)
    while time.perf_counter() < window.t1:
        if view is not None and view["status"] != "over" and not view["to_act"] \
                and hand not in shared:
            # A new hand waits for its people's shares of randomness (HAND_RECORD.md), as a
            # browser at the table sends them: each seat once (a late one is refused, 409).
            shared.add(hand)
            for client in clients:
                await client.call("POST", f"/api/hands/{hand}/share",
                                  {"share": rng.randbytes(32).hex()})
            view = None
            continue
        if view is None or (view["status"] != "over" and view["your_seat"] not in view["to_act"]):
            seat = view["to_act"][0] if view and view["to_act"] else 0
            status, view = await clients[seat].call("GET", f"/api/hands/{hand}/")
            if status != 200:
                view = None
                await asyncio.sleep(0.05)
            continue  # until the view is the awaited player's
        if view["status"] == "over":
            if not view["next_hand"]:  # a fifth hand in a row ended at its deal: timer's work
                return
            hand, view = view["next_hand"]["id"], None
            continue
        if interval:  # a steady pace; one late POST does not make the next ones burst
            await asyncio.sleep(due - time.perf_counter())
            due = max(due, time.perf_counter() - interval) + interval
        move = rng.choice(view["legal_moves"])
        body = {"command_id": str(uuid.uuid4()), "seq": view["seq"], "move": move}
        began = time.perf_counter()
        status, answer = await clients[view["your_seat"]].call(
            "POST", f"/api/hands/{hand}/moves", body)
        window.add(began, status, 201)
        view = answer if status == 201 else None


async def phase(kind: str, tables: list[dict[str, Any]], warmup: float, duration: float,
                seed: int, rate: float | None = None, enough: int | None = None
                ) -> dict[str, Any]:
    window = Window(warmup, duration, enough)
    if kind == "trivial":
        tasks = [trivial_client(t["clients"][0], window) for t in tables]
    else:
        interval = len(tables) / rate if rate else None
        tasks = [table_client(t, t["clients"], window, random.Random(f"{seed}:{i}"), interval)
                 for i, t in enumerate(tables)]
    await asyncio.gather(*tasks)
    return window.result()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve(url: str, workers: int, seed: int) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    env = {**os.environ, **common.django_env(url, timers="celery"), "BENCH_SEED": str(seed)}
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "config.wsgi:application", "--workers", str(workers),
         "--bind", f"127.0.0.1:{port}", "--log-level", "warning", "--backlog", "2048"],
        cwd=common.ROOT, env=env)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return server, port
        except OSError:
            time.sleep(0.2)
    server.kill()
    raise SystemExit("gunicorn did not start")


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="run.py http")
    parser.add_argument("--quick", action="store_true", help="short phases: well within 90 s")
    parser.add_argument("--smoke", action="store_true",
                        help="the move phase alone, 10 tables, under 30 s: at least 50 moves")
    parser.add_argument("--tables", type=int, default=None, help="50 (--smoke: 10)")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    if args.tables is None:
        args.tables = 10 if args.smoke else 50
    warmup, duration = (0.0, 45.0) if args.smoke else (2.0, 8.0) if args.quick else (5.0, 30.0)
    began = time.perf_counter()
    import redis

    redis.Redis.from_url(common.redis_url()).flushdb()  # the bench's own db: old timers, sessions
    url = common.database_url("http")
    # The smoke run's database afresh: it checks the code as it is, migrations included.
    common.ensure_database(url, fresh=args.smoke)
    common.django_setup(url)
    from django.db import connections

    tables = common.make_tables(args.tables, args.players, seed=args.seed)
    for t in tables:
        t["hand"] = str(t["hand"])
    server, port = serve(url, args.workers, args.seed)
    for t in tables:
        t["clients"] = [Client(port, common.session_key(u)) for u in t["users"]]
    connections.close_all()
    if args.smoke:
        try:
            moves = asyncio.run(phase("moves", tables, warmup, duration, args.seed,
                                      enough=SMOKE_MOVES))
        finally:
            server.terminate()
            server.wait(timeout=30)
        took = time.perf_counter() - began
        print("moves, saturated:", json.dumps(moves), file=sys.stderr)
        if moves["all"] < SMOKE_MOVES:
            sys.exit(f"http --smoke: {moves['all']} moves played in {warmup + duration:.0f} s "
                     f"on {args.tables} tables, fewer than {SMOKE_MOVES} ({moves['failed']} "
                     f"POSTs failed)")
        print(json.dumps({"smoke": True, "moves": moves["all"], "posts_per_s": moves["per_s"],
                          "p50_ms": moves["p50_ms"], "p99_ms": moves["p99_ms"],
                          "failed": moves["failed"], "tables": args.tables,
                          "seconds": round(took, 1)}))
        return
    try:
        trivial = asyncio.run(phase("trivial", tables, warmup, duration, args.seed))
        print("trivial, saturated:", json.dumps(trivial), file=sys.stderr)
        moves = asyncio.run(phase("moves", tables, warmup, duration, args.seed))
        print("moves, saturated:", json.dumps(moves), file=sys.stderr)
        half = asyncio.run(phase("moves", tables, warmup, duration, args.seed + 1,
                                 rate=moves["per_s"] / 2))
        print(f"moves at {moves['per_s'] / 2:.1f} POSTs/s offered:", json.dumps(half),
              file=sys.stderr)
    finally:
        server.terminate()
        server.wait(timeout=30)
    if not (moves["per_s"] and half["per_s"] and trivial["per_s"]):
        # A benchmark that measured nothing fails: no figure is printed as if it were one.
        sys.exit(f"nothing measured: trivial {trivial}, moves {moves}, half {half}")
    print(json.dumps({
        "posts_per_s": moves["per_s"], "trivial_per_s": trivial["per_s"],
        "share": round(moves["per_s"] / trivial["per_s"], 3), "p99_ms_half": half["p99_ms"],
        "half_rate_served": half["per_s"], "p50_ms_half": half["p50_ms"],
        "failed": trivial["failed"] + moves["failed"] + half["failed"],
        "tables": args.tables, "workers": args.workers, "quick": args.quick,
    }))
