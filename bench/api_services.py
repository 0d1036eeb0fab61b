"""Services-only part of bench/api_bench.py: moves through ``games.services`` without HTTP, side
by side with the ``eventsourcing`` library appending one event per command to the same
PostgreSQL; optionally a cProfile of the services path and query counts per command.

    api_services.py --out services.json [--duration 10] [--profile services.prof]

One process, one database connection, commands one after another (no concurrency), on both
sides. Our side: ``--tables`` parties of people (the HTTP run's settings); each step picks the
next table in turn, reads its hand (not timed: that is the client's read), chooses one of the
awaited player's legal moves at random and times ``services.move_play`` (one transaction:
lock the hand, replay its events, decide, append, post chips, let forced moves play, set the
deadline, store the command). A finished hand's successor is dealt with ``partie_tick`` (timed
apart, not counted as moves). The eventsourcing side: an ``Application`` with one aggregate per
table, one event (the move) per command, ``app.save``; the aggregate is replaced by a new one
every ``--es-stream`` events, like a hand's stream. Two variants: ``append`` (the aggregate
stays in memory: one append per command) and ``get_append`` (``repository.get`` replays the
aggregate before each command, as our service replays the hand).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import random
import time
import uuid
from typing import Any

from api_django import django_setup, make_tables


class Services:
    def __init__(self, tables: list[dict[str, Any]], seed: int) -> None:
        self.tables = tables
        self.rng = random.Random(seed)
        self.i = 0
        self.move_s = 0.0
        self.deal_s = 0.0
        self.moves = 0
        self.events = 0
        self.deals = 0
        self.queries: list[int] | None = None  # set to a list: count move_play's queries

    def step(self) -> None:
        from django.utils import timezone

        from games.models import Hand
        from games.services import move_play, partie_tick
        from games.services import store

        t = self.tables[self.i % len(self.tables)]
        self.i += 1
        hand = Hand.objects.select_related("partie", "secret").get(pk=t["hand"].pk)
        if hand.status == Hand.Status.OVER:
            began = time.perf_counter()
            new = partie_tick(partie_id=hand.partie_id, at=timezone.now())
            self.deal_s += time.perf_counter() - began
            assert new is not None, "the next hand was not dealt"
            self.deals += 1
            t["hand"] = new
            return
        loaded = store.load(hand)
        seat = loaded.game.to_act(loaded.state)[0]
        move = self.rng.choice(loaded.game.legal_moves(loaded.state)[seat])
        began = time.perf_counter()
        if self.queries is None:
            answer = move_play(hand_id=hand.pk, user=t["users"][seat], move=move,
                               seq=hand.last_seq, command_id=uuid.uuid4(), at=timezone.now())
        else:
            from django.db import connection
            from django.test.utils import CaptureQueriesContext

            connection.queries_log.clear()  # the log keeps 9,000 queries at most
            with CaptureQueriesContext(connection) as q:
                answer = move_play(hand_id=hand.pk, user=t["users"][seat], move=move,
                                   seq=hand.last_seq, command_id=uuid.uuid4(),
                                   at=timezone.now())
            self.queries.append(len(q.captured_queries))
        self.move_s += time.perf_counter() - began
        self.moves += 1
        self.events += answer["seq"] - hand.last_seq

    def run(self, seconds: float) -> None:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            self.step()

    def reset(self) -> None:
        self.move_s = self.deal_s = 0.0
        self.moves = self.events = self.deals = 0


def services_bench(tables: list[dict[str, Any]], duration: float, warmup: float,
                   seed: int) -> dict[str, Any]:
    svc = Services(tables, seed)
    svc.run(warmup)
    svc.reset()
    wall0 = time.perf_counter()
    svc.run(duration)
    wall = time.perf_counter() - wall0
    return {
        "moves": svc.moves, "events": svc.events, "hands_dealt": svc.deals,
        "move_play_s": round(svc.move_s, 3), "wall_s": round(wall, 3),
        "moves_per_s": round(svc.moves / svc.move_s, 1),
        "events_per_s": round(svc.events / svc.move_s, 1),
        "ms_per_move": round(1000 * svc.move_s / svc.moves, 3),
        "ms_per_deal": round(1000 * svc.deal_s / max(1, svc.deals), 3),
        "moves_per_s_wall_with_reads_and_deals": round(svc.moves / wall, 1),
    }


def query_counts(tables: list[dict[str, Any]], samples: int, seed: int) -> dict[str, Any]:
    """Queries per ``move_play`` and per HTTP request (Django's test client, in process)."""
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from api_django import session_key

    svc = Services(tables, seed)
    svc.queries = []
    for _ in range(samples):
        svc.step()
    out: dict[str, Any] = {
        "move_play_queries_mean": round(sum(svc.queries) / len(svc.queries), 1),
        "move_play_queries_max": max(svc.queries),
    }

    # The HTTP path in process: GET the hand as the awaited player, POST his move.
    t = tables[0]
    clients = []
    for user in t["users"]:
        c = Client()
        c.cookies["sessionid"] = session_key(user)
        clients.append(c)
    gets, posts, get_ms, post_ms, get_cpu, post_cpu = [], [], [], [], [], []
    rng = random.Random(seed)
    for _ in range(samples):
        hand = t["hand"]
        hand.refresh_from_db()
        if hand.status == "over":
            from django.utils import timezone

            from games.services import partie_tick

            t["hand"] = partie_tick(partie_id=hand.partie_id, at=timezone.now())
            continue
        for c in clients:
            connection.queries_log.clear()
            with CaptureQueriesContext(connection) as q:
                began, cpu = time.perf_counter(), time.process_time()
                v = c.get(f"/api/hands/{hand.pk}/").json()
                elapsed, cpu = time.perf_counter() - began, time.process_time() - cpu
            if v["your_seat"] in v["to_act"] and v["legal_moves"]:
                gets.append(len(q.captured_queries))
                get_ms.append(elapsed)
                get_cpu.append(cpu)
                body = {"command_id": str(uuid.uuid4()), "seq": v["seq"],
                        "move": rng.choice(v["legal_moves"])}
                connection.queries_log.clear()
                with CaptureQueriesContext(connection) as q:
                    began, cpu = time.perf_counter(), time.process_time()
                    r = c.post(f"/api/hands/{hand.pk}/moves", body,
                               content_type="application/json")
                    elapsed, cpu = time.perf_counter() - began, time.process_time() - cpu
                assert r.status_code == 201, r.content
                posts.append(len(q.captured_queries))
                post_ms.append(elapsed)
                post_cpu.append(cpu)
                break

    def mean(xs: list[float]) -> float:
        return round(sum(xs) / len(xs), 2) if xs else 0.0

    # The trivial endpoint the same way (CPU of this process: Django + DRF + the ORM).
    trivial_q, trivial_ms, trivial_cpu = [], [], []
    c = clients[0]
    for i in range(samples):
        connection.queries_log.clear()
        with CaptureQueriesContext(connection) as q:
            began, cpu = time.perf_counter(), time.process_time()
            r = c.post("/bench/trivial/", {"value": i}, content_type="application/json")
            elapsed, cpu = time.perf_counter() - began, time.process_time() - cpu
        assert r.status_code == 201, r.content
        trivial_q.append(len(q.captured_queries))
        trivial_ms.append(elapsed)
        trivial_cpu.append(cpu)

    def ms(xs: list[float]) -> float:
        return mean([x * 1000 for x in xs])

    out.update({
        "note": "in process (Django's test client, no server, no new connection per request)",
        "http_get_hand_queries": mean(gets), "http_post_move_queries": mean(posts),
        "trivial_post_queries": mean(trivial_q),
        "http_get_hand_ms": ms(get_ms), "http_get_hand_cpu_ms": ms(get_cpu),
        "http_post_move_ms": ms(post_ms), "http_post_move_cpu_ms": ms(post_cpu),
        "trivial_post_ms": ms(trivial_ms), "trivial_post_cpu_ms": ms(trivial_cpu),
    })
    return out


def profile_services(tables: list[dict[str, Any]], seconds: float, path: str,
                     seed: int) -> dict[str, Any]:
    svc = Services(tables, seed)
    prof = cProfile.Profile()
    prof.enable()
    svc.run(seconds)
    prof.disable()
    prof.dump_stats(path)
    total = svc.move_s
    stats = pstats.Stats(prof)
    # Cumulative time of the functions that tell where a command's time goes.
    wanted = {
        ("moves.py", "move_play"): "move_play",
        ("store.py", "load"): "store.load (events query + replay)",
        ("store.py", "hand_deck"): "store.hand_deck (seats count + deal from seed)",
        ("store.py", "append"): "store.append (seal + bulk insert)",
        ("advance.py", "advance"): "advance (forced moves, deadline)",
        ("advance.py", "apply_move"): "apply_move (decide + append + chips)",
        ("advance.py", "table_for"): "table_for (seats query)",
        ("chips.py", "post_payments"): "chips.post_payments (ledger)",
        ("base.py", "_execute"): "django cursor execute (all SQL)",
        ("transaction.py", "__exit__"): "transaction exit (COMMIT)",
        ("query.py", "_fetch_all"): "ORM fetch + model building",
    }
    found: dict[str, float] = {}
    for (filename, _line, name), (_cc, _nc, _tt, ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        key = (os.path.basename(filename), name)
        if key in wanted and ("games" in filename or "django" in filename):
            label = wanted[key]
            found[label] = max(found.get(label, 0.0), ct)
    per_move = {label: round(1000 * ct / max(1, svc.moves), 3) for label, ct in found.items()}
    text = io.StringIO()
    pstats.Stats(prof, stream=text).sort_stats("tottime").print_stats(25)
    with open(path + ".txt", "w") as fh:
        fh.write(text.getvalue())
        text = io.StringIO()
        pstats.Stats(prof, stream=text).sort_stats("cumulative").print_stats(45)
        fh.write(text.getvalue())
    return {"moves": svc.moves, "move_play_s_under_profiler": round(total, 3),
            "ms_per_move_by_function": dict(sorted(per_move.items(), key=lambda kv: -kv[1])),
            "stats_file": path, "text_file": path + ".txt"}


_ES_CLASSES: tuple[Any, Any] | None = None


def _es_classes() -> tuple[Any, Any]:
    """The aggregate and application classes, defined once (eventsourcing registers topics)."""
    global _ES_CLASSES
    if _ES_CLASSES is None:
        from eventsourcing.application import Application
        from eventsourcing.domain import Aggregate, event

        class TableHand(Aggregate):
            def __init__(self, table: int) -> None:
                self.table = table
                self.moves = 0

            @event("Moved")
            def move(self, seat: int, move: dict[str, Any], command_id: str) -> None:
                self.moves += 1

        class Tables(Application):
            pass

        _ES_CLASSES = (TableHand, Tables)
    return _ES_CLASSES


def eventsourcing_bench(db: dict[str, str], tables: int, duration: float, warmup: float,
                        stream: int, get_first: bool, seed: int) -> dict[str, Any]:
    TableHand, Tables = _es_classes()
    env = {
        "PERSISTENCE_MODULE": "eventsourcing.postgres",
        "POSTGRES_DBNAME": db["name"], "POSTGRES_HOST": db["host"],
        "POSTGRES_PORT": db["port"], "POSTGRES_USER": db["user"],
        "POSTGRES_PASSWORD": db["password"] or "unused-trust-auth",
        "POSTGRES_SCHEMA": "public", "CREATE_TABLE": "y",
    }
    app = Tables(env=env)
    rng = random.Random(seed)
    moves = [{"type": "offer", "card": c} for c in ("7S", "KD", "AH", "2C")]
    aggs = [TableHand(i) for i in range(tables)]
    for a in aggs:
        app.save(a)
    counts = [0] * tables
    state = {"n": 0, "s": 0.0}

    def command(i: int) -> None:
        began = time.perf_counter()
        agg = app.repository.get(aggs[i].id) if get_first else aggs[i]
        agg.move(seat=rng.randrange(4), move=rng.choice(moves), command_id=str(uuid.uuid4()))
        app.save(agg)
        state["s"] += time.perf_counter() - began
        state["n"] += 1
        aggs[i] = agg
        counts[i] += 1
        if counts[i] >= stream:  # the next hand: a new stream
            counts[i] = 0
            aggs[i] = TableHand(i)
            app.save(aggs[i])

    def run(seconds: float) -> None:
        end = time.perf_counter() + seconds
        i = 0
        while time.perf_counter() < end:
            command(i % tables)
            i += 1

    run(warmup)
    state.update(n=0, s=0.0)
    wall0 = time.perf_counter()
    run(duration)
    wall = time.perf_counter() - wall0
    app.close()
    return {"commands": state["n"], "command_s": round(state["s"], 3), "wall_s": round(wall, 3),
            "events_per_s": round(state["n"] / state["s"], 1),
            "ms_per_command": round(1000 * state["s"] / state["n"], 3)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--tables", type=int, default=50)
    parser.add_argument("--game", default="commere")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--warmup", type=float, default=1.0)
    parser.add_argument("--es-stream", type=int, default=14,
                        help="eventsourcing events per aggregate (a hand's moves)")
    parser.add_argument("--profile", default="", help="write a cProfile of the services path")
    parser.add_argument("--profile-seconds", type=float, default=5.0)
    parser.add_argument("--query-samples", type=int, default=60)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    django_setup()
    from django.conf import settings

    dbs = settings.DATABASES["default"]
    db = {"name": dbs["NAME"], "host": dbs["HOST"] or "127.0.0.1", "port": str(dbs["PORT"] or 5432),
          "user": dbs["USER"], "password": dbs["PASSWORD"]}
    out: dict[str, Any] = {"tables": args.tables, "game": args.game, "players": args.players}
    tables = make_tables("svc", args.tables, args.game, args.players)
    # Side by side, alternating so that both sides meet the same weather (other processes on
    # the machine): ours, eventsourcing (append, get+append), ours, eventsourcing append.
    # The best run of each is reported; every run is kept.
    def es(get_first: bool, seed: int) -> dict[str, Any]:
        return eventsourcing_bench(db, args.tables, args.duration, args.warmup,
                                   args.es_stream, get_first, seed)

    runs: dict[str, list[dict[str, Any]]] = {"services": [], "eventsourcing_append": [],
                                             "eventsourcing_get_append": []}
    runs["services"].append(services_bench(tables, args.duration, args.warmup, args.seed))
    runs["eventsourcing_append"].append(es(False, args.seed))
    runs["eventsourcing_get_append"].append(es(True, args.seed))
    runs["services"].append(services_bench(tables, args.duration, args.warmup, args.seed + 1))
    runs["eventsourcing_append"].append(es(False, args.seed + 1))
    out["runs"] = runs
    out["services"] = max(runs["services"], key=lambda r: r["moves_per_s"])
    out["eventsourcing_append"] = max(runs["eventsourcing_append"],
                                      key=lambda r: r["events_per_s"])
    out["eventsourcing_get_append"] = runs["eventsourcing_get_append"][0]
    out["queries"] = query_counts(tables, args.query_samples, args.seed)
    if args.profile:
        out["profile"] = profile_services(tables, args.profile_seconds, args.profile, args.seed)
    with open(args.out, "w") as fh:
        json.dump(out, fh)


if __name__ == "__main__":
    main()
