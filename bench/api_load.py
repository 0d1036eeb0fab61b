"""Load generator of bench/api_bench.py (asyncio, uvloop when installed; no Django here).

    api_load.py moves   --tables-file T --base-url http://127.0.0.1:PORT --duration 20
    api_load.py trivial --tables-file T --base-url ... --clients 50 --duration 20

``moves``: one task per table plays its hands as the people seated there, as a person's client
would: read the hand as the awaited player (GET /api/hands/<id>/), choose one of his legal moves
at random, POST it to /api/hands/<id>/moves; the answer is the mover's view, so the next GET is
skipped when the same player moves again. Every view names the awaited seat (public), so a
task asks as that seat; only a new hand's first GET is made as seat 0, not knowing who opens.
When a hand ends, the answer names the next hand (a partie without a pause between hands deals
it in the command that ended the last one); without it the task asks the finished hand until it
names the next one.

``trivial``: ``--clients`` tasks POST /bench/trivial/ (one row inserted per request).

``current``: rewrites the tables file with each partie's last hand (asked of the partie's
detail). ``moves`` does the same before its clock starts, unless ``--hands-current`` says the
file is current; api_bench.py runs ``current`` before each phase, outside its CPU watch.
Without it every phase after the first walked the hands played before it, one GET each.

``--rate 0`` (default): closed loop, every task sends its next request as soon as it has an
answer (saturation: latency is then mostly queueing, concurrency / throughput). ``--rate R``:
each task paces its moves (its POSTs; the reads before them wait for nothing) so that the
tasks together offer R moves (or requests) per second.

Authentication: a logged-in session cookie (and a CSRF cookie and header for POST), as a
browser has; HTTP Basic would hash the password (PBKDF2, 1,000,000 iterations) on every request.
Only the requests that end inside the measuring window (after ``--warmup``) are counted.
Prints one JSON document.

The client is a few lines of HTTP/1.1 over asyncio's streams (``Http``), a connection per
request as gunicorn's sync workers close each one, on uvloop's event loop when it is installed.
A request ends when the server closes the connection (aiohttp stopped at the last byte of
``Content-Length``): its latency includes what the sync worker does between the two, Django's
``request_finished`` handlers, tens of µs.
It runs on the same two cores as the server, so its own CPU is taken from the server's: with
aiohttp and the default loop it took 0.57 ms per trivial request and 1.1 ms per move (its TCP
connector and happy-eyeballs set-up per connection), a fifth of a move's whole budget.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import time
import uuid
from collections import Counter, defaultdict
from typing import Any
from urllib.parse import urlsplit

CSRF = "benchbenchbenchbenchbenchbench00"  # 32 characters: an unmasked CSRF secret
#: What ``Http.request`` raises when no whole answer came: no connection, a timeout, an
#: answer cut short or without a status line.
NO_WHOLE_ANSWER = (TimeoutError, OSError, ValueError, IndexError)


class Recorder:
    def __init__(self, start: float, warmup: float, duration: float) -> None:
        self.t0 = start + warmup
        self.t1 = self.t0 + duration
        self.latency: dict[str, list[float]] = defaultdict(list)
        self.status: Counter[str] = Counter()
        self.counts: Counter[str] = Counter()
        self.all_counts: Counter[str] = Counter()  # warm-up included (CPU per operation)
        #: (kind, end in seconds from the window's start, latency) of every answer counted,
        #: when asked for (``--trace FILE``): where in the window the slow answers fall.
        self.trace: list[tuple[str, float, float]] | None = None

    def inside(self, t: float) -> bool:
        return self.t0 <= t <= self.t1

    def add(self, kind: str, began: float, ended: float, status: int,
            latency_only: bool = False) -> None:
        """An answer inside the window: its status counted, its latency kept if it succeeded.
        ``latency_only``: a second look at an answer already added (its part of a split), whose
        latency alone is kept, so that statuses and the trace count each answer once."""
        if not self.inside(ended):
            return
        if not latency_only:
            self.status[f"{kind} {status}"] += 1
        if 200 <= status < 300:
            self.latency[kind].append(ended - began)
            if self.trace is not None and not latency_only:
                self.trace.append((kind, round(ended - self.t0, 4), round(ended - began, 4)))

    def count(self, what: str, n: int = 1, at: float | None = None) -> None:
        self.all_counts[what] += n
        if self.inside(time.perf_counter() if at is None else at):
            self.counts[what] += n


def headers(session: str, post: bool = False) -> dict[str, str]:
    h = {"Cookie": f"sessionid={session}; csrftoken={CSRF}"}
    if post:
        h["X-CSRFToken"] = CSRF
        h["Content-Type"] = "application/json"
    return h


class Http:
    """A connection per request, HTTP/1.1 with ``Connection: close``: the request is written
    whole, the answer read to the end of the stream (the server closes), its status and body
    taken apart. Enough for this server's answers (a ``Content-Length``, or chunks)."""

    def __init__(self, base_url: str, timeout: float) -> None:
        url = urlsplit(base_url)
        self.host, self.port = url.hostname or "127.0.0.1", url.port or 80
        self.timeout = timeout

    async def request(self, method: str, path: str, head: dict[str, str],
                      body: bytes | None) -> tuple[int, bytes]:
        return await asyncio.wait_for(self._request(method, path, head, body), self.timeout)

    async def _request(self, method: str, path: str, head: dict[str, str],
                       body: bytes | None) -> tuple[int, bytes]:
        reader, writer = await asyncio.open_connection(self.host, self.port)
        try:
            lines = [f"{method} {path} HTTP/1.1", f"Host: {self.host}:{self.port}",
                     "Connection: close", *(f"{k}: {v}" for k, v in head.items())]
            if body is not None:
                lines.append(f"Content-Length: {len(body)}")
            writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (body or b""))
            raw = await reader.read(-1)
        finally:
            writer.close()
        header, _, content = raw.partition(b"\r\n\r\n")
        status = int(header[9:12])
        fields = dict(line.split(b":", 1) for line in header.lower().split(b"\r\n")[1:]
                      if b":" in line)
        if fields.get(b"transfer-encoding", b"").strip() == b"chunked":
            content = _unchunked(content)
        elif b"content-length" in fields and int(fields[b"content-length"]) != len(content):
            raise ValueError("an answer cut short")  # a worker that died mid-answer: 599
        return status, content


def _unchunked(data: bytes) -> bytes:
    out, i = [], 0
    while True:
        end = data.index(b"\r\n", i)
        size = int(data[i:end].split(b";")[0], 16)
        if size == 0:
            return b"".join(out)
        out.append(data[end + 2:end + 2 + size])
        i = end + 2 + size + 2


async def call(http: Http, rec: Recorder, kind: str, method: str, path: str,
               session: str, body: Any = None) -> tuple[int, Any]:
    began = time.perf_counter()
    data = json.dumps(body).encode() if body is not None else None
    try:
        status, raw = await http.request(method, path, headers(session, post=method == "POST"),
                                         data)
    except NO_WHOLE_ANSWER:
        # No answer, or not a whole one: counted apart (``failed``) and, as every answer
        # outside 2xx, left out of the latencies.
        status, raw = 599, b""
        rec.count("failed")
    ended = time.perf_counter()
    try:
        body = json.loads(raw) if raw else None
    except ValueError:
        body = None
    if 200 <= status < 300 and not isinstance(body, dict):
        rec.count("failed")  # a success without its JSON object: the loops cannot go on
        status, body = 599, None
    rec.add(kind, began, ended, status)
    return status, body


class Pacer:
    """Paces a task's steps at ``interval`` seconds, from a random phase; never bursts."""

    def __init__(self, interval: float, rng: random.Random) -> None:
        self.interval = interval
        self.next = time.perf_counter() + rng.random() * interval if interval else 0.0

    async def wait(self) -> None:
        if not self.interval:
            return
        now = time.perf_counter()
        if self.next > now:
            await asyncio.sleep(self.next - now)
        self.next = max(self.next + self.interval, time.perf_counter())


async def next_hand(http: Http, rec: Recorder, base: str, table: dict,
                    over: dict, stop: float) -> tuple[str, int] | None:
    """The partie's next hand: named by the answer that ended ``over`` (a partie without a
    pause deals it in that command), else asked of the finished hand until it names it."""
    if over.get("next_hand"):
        return over["next_hand"]["id"], over["next_hand"]["number"]
    delay = 0.002
    session = table["seats"][0]["session"]
    while time.perf_counter() < stop:
        rec.count("next_hand_asked")  # only when the answer did not name it: should stay rare
        status, body = await call(http, rec, "hand_get", "GET",
                                  f"{base}/api/hands/{over['hand']}/", session)
        if status == 200 and body.get("next_hand"):
            return body["next_hand"]["id"], body["next_hand"]["number"]
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.1)
    return None


def _next_to_ask(view: dict | None, asked: set[int], seats: int) -> int | None:
    awaited = list(view["to_act"]) if view is not None and view["to_act"] else []
    return next((s for s in [*awaited, *range(seats)] if s not in asked), None)


async def table_loop(http: Http, rec: Recorder, base: str, table: dict,
                     rng: random.Random, interval: float, stop: float) -> None:
    seats = table["seats"]
    hand, number = table["hand"], 0
    pacer = Pacer(interval, rng)
    view: dict | None = None
    while time.perf_counter() < stop:
        if view is not None and view["status"] == "over":
            rec.count("hands_finished")
            found = await next_hand(http, rec, base, table, view, stop)
            if found is None:
                return
            hand, number = found
            view = None
        actor = None
        if view is not None and view["your_seat"] in view["to_act"] and view["legal_moves"]:
            actor = view
        else:
            # Ask as the seat the last view says is awaited (whose turn it is is public), else
            # as the first seat not asked yet; each answer names the awaited seat again.
            asked: set[int] = set()
            seat: int | None = _next_to_ask(view, asked, len(seats))
            while seat is not None:
                asked.add(seat)
                status, v = await call(http, rec, "hand_get", "GET", f"{base}/api/hands/{hand}/",
                                       seats[seat]["session"])
                if status != 200:
                    rec.count("errors")
                    await asyncio.sleep(0.01)
                    break
                view = v
                if v["status"] == "over" or (v["your_seat"] in v["to_act"] and v["legal_moves"]):
                    actor = v
                    break
                seat = _next_to_ask(v, asked, len(seats))
        if actor is None or actor["status"] == "over":
            if actor is None:
                view = None
            continue
        # The pace is of moves: reading a hand, or finding the next one, waits for nothing.
        await pacer.wait()
        if time.perf_counter() >= stop:
            return
        seat = actor["your_seat"]
        move = rng.choice(actor["legal_moves"])
        body = {"command_id": str(uuid.uuid4()), "seq": actor["seq"], "move": move}
        began = time.perf_counter()
        status, answer = await call(http, rec, "move_post", "POST",
                                    f"{base}/api/hands/{hand}/moves", seats[seat]["session"], body)
        if status == 201:
            # Apart too (the figures above count every POST): the moves that end a hand, and
            # with it deal the next, against the others.
            rec.add("move_post_ending" if answer["status"] == "over" else "move_post_usual",
                    began, time.perf_counter(), status, latency_only=True)
            rec.count("moves")
            rec.count("events", answer["seq"] - actor["seq"])
            view = answer
        else:
            rec.count("rejected_moves")
            view = None


async def trivial_loop(http: Http, rec: Recorder, base: str, session: str,
                       rng: random.Random, interval: float, stop: float) -> None:
    pacer = Pacer(interval, rng)
    i = 0
    while True:
        await pacer.wait()
        if time.perf_counter() >= stop:
            return
        status, _ = await call(http, rec, "trivial_post", "POST", f"{base}/bench/trivial/",
                               session, {"value": i})
        rec.count("requests" if status == 201 else "errors")
        if status != 201:
            await asyncio.sleep(0.01)  # not a spin on a server that refuses connections
        i += 1


def pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    s = sorted(values)
    k = min(len(s) - 1, max(0, round(q * (len(s) - 1))))
    return round(s[k] * 1000, 2)


async def current_hands(http: Http, base: str, tables: list[dict]) -> list[dict]:
    """Each table as it is now: its partie's last hand instead of the hand the setup dealt.

    A phase after the first would otherwise start every table at the setup's hand, long over,
    and walk the hands the earlier phases played, one GET each (about 13 per table and phase
    of 20 s at saturation): in the warm-up, and in the measured window as the walk grew, where
    those GETs queued ahead of the moves. Asked before the clock starts; a table whose
    partie cannot be read keeps the setup's hand."""
    async def one(table: dict) -> dict:
        try:
            status, raw = await http.request(
                "GET", f"{base}/api/parties/{table['partie']}/",
                headers(table["seats"][0]["session"]), None)
        except NO_WHOLE_ANSWER:
            return table
        if status != 200:
            return table
        hands = json.loads(raw).get("hands") or []
        if not hands:
            return table
        last = max(hands, key=lambda h: h["number"])
        return dict(table, hand=last["id"])

    found: list[dict] = []
    for start in range(0, len(tables), 10):  # ten at a time: no burst at the server
        found.extend(await asyncio.gather(*(one(t) for t in tables[start:start + 10])))
    return found


async def run(args: argparse.Namespace) -> dict[str, Any]:
    with open(args.tables_file) as fh:
        doc = json.load(fh)
    base = urlsplit(args.base_url).path.rstrip("/")  # the paths' prefix ("" at the root)
    http = Http(args.base_url, args.request_timeout)
    if args.mode == "current":  # the tables file brought up to date, for the next phase
        doc["tables"] = await current_hands(http, base, doc["tables"])
        with open(f"{args.tables_file}.new", "w") as fh:
            json.dump(doc, fh)
        os.replace(f"{args.tables_file}.new", args.tables_file)  # never half written
        return {"mode": "current", "tables": len(doc["tables"])}
    if args.mode == "moves":
        tables = doc["tables"][: args.tables] if args.tables else doc["tables"]
        if not args.hands_current:
            tables = await current_hands(http, base, tables)
    start = time.perf_counter()
    rec = Recorder(start, args.warmup, args.duration)
    if args.trace:
        rec.trace = []
    stop = rec.t1
    cpu0 = time.process_time()
    if args.mode == "moves":
        interval = len(tables) / args.rate if args.rate else 0.0
        tasks = [table_loop(http, rec, base, t, random.Random(args.seed * 1000 + i),
                            interval, stop) for i, t in enumerate(tables)]
        concurrency = len(tables)
    else:
        interval = args.clients / args.rate if args.rate else 0.0
        tasks = [trivial_loop(http, rec, base, doc["trivial"]["session"],
                              random.Random(args.seed * 1000 + i), interval, stop)
                 for i in range(args.clients)]
        concurrency = args.clients
    await asyncio.wait_for(asyncio.gather(*tasks), timeout=args.warmup + args.duration + 30)
    out: dict[str, Any] = {
        "mode": args.mode, "concurrency": concurrency, "offered_rate": args.rate or None,
        "window_s": args.duration, "warmup_s": args.warmup,
        "load_generator_cpu_s": round(time.process_time() - cpu0, 2),
        "counts": dict(rec.counts), "counts_with_warmup": dict(rec.all_counts),
        "statuses": dict(rec.status),
    }
    for kind, values in sorted(rec.latency.items()):
        out[kind] = {"n": len(values), "per_s": round(len(values) / args.duration, 1),
                     "p50_ms": pct(values, 0.50), "p90_ms": pct(values, 0.90),
                     "p99_ms": pct(values, 0.99), "max_ms": pct(values, 1.0)}
    if args.trace:
        with open(args.trace, "w") as fh:
            json.dump({"window_start_unix": time.time() - (time.perf_counter() - rec.t0),
                       "answers": rec.trace}, fh)
    key = "moves" if args.mode == "moves" else "requests"
    out[f"{key}_per_s"] = round(rec.counts[key] / args.duration, 1)
    if args.mode == "moves":
        out["events_per_s"] = round(rec.counts["events"] / args.duration, 1)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["moves", "trivial", "current"])
    parser.add_argument("--hands-current", action="store_true",
                        help="moves: the file's hands are current (``current`` was run), "
                             "skip asking each partie for its last hand")
    parser.add_argument("--tables-file", required=True)
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--tables", type=int, default=0, help="0: every table of the file")
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--rate", type=float, default=0.0)
    parser.add_argument("--duration", type=float, default=20.0)
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--request-timeout", type=float, default=30.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--trace", default="",
                        help="write every counted answer's kind, end time and latency (JSON)")
    args = parser.parse_args()
    try:  # a faster event loop: less of the load generator's CPU taken from the server's
        from uvloop import run as run_loop
    except ImportError:
        run_loop = asyncio.run
    print(json.dumps(run_loop(run(args))))


if __name__ == "__main__":
    main()
