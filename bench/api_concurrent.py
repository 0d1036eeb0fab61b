"""Services with several clients at once (part of bench/api_bench.py): ``--clients`` processes,
each with its own connection and its own tables, play moves through ``games.services`` for
``--duration`` seconds; then as many processes append one event per command with the
``eventsourcing`` library to the same PostgreSQL, each with its own aggregates. Throughput is
every process's commands over the same wall-clock window, on both sides.

    api_concurrent.py --out concurrent.json [--clients 4] [--tables 12] [--duration 10]

Our side keeps no read outside the command: each process chooses the next move from the state
that the previous ``move_play`` answered (``MovePlayed.loaded``), and follows ``next_hand``
when a hand ends (a partie without a pause deals it in the command that ended the last); a
hand's first state is read once (``store.read_hand``; about one step in thirteen). The
library's side is its ``append`` variant of api_services.py (the aggregate stays in memory).

Commands of one hand are serialised by the hand's row lock, commands of different hands are
not; the library takes an EXCLUSIVE lock on its events table for every append (so that its
notification ids commit in order), so its appends queue behind one another whatever the
number of clients.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import random
import time
import uuid
from typing import Any


def ours(worker: int, tables: int, start_at: float, duration: float, seed: int,
         out: Any) -> None:
    from api_django import django_setup, make_tables

    django_setup()
    from django.utils import timezone

    from games.models import Hand
    from games.selectors import next_hand_of
    from games.services import move_play, partie_tick, store

    made = make_tables(f"c{worker}x{uuid.uuid4().hex[:6]}", tables, "commere", 4)
    rng = random.Random(seed * 100 + worker)
    state: list[Any] = []
    for t in made:
        hand, _ = store.read_hand(t["hand"].pk)
        state.append([hand, store.load(hand)])
    moves = deals_read = 0
    while time.time() < start_at:
        time.sleep(0.001)
    end = start_at + duration
    i = 0
    while time.time() < end:
        k = i % len(made)
        i += 1
        hand, loaded = state[k]
        if hand.status == Hand.Status.OVER:
            # It ended at its deal: its successor was dealt with it (up to
            # moves.CHAINED_DEALS); else the timer's work, done here.
            following = next_hand_of(hand)
            new_id = following["id"] if following else None
            if new_id is None:
                dealt = partie_tick(partie_id=hand.partie_id, at=timezone.now())
                if dealt is None:
                    continue
                new_id = dealt.pk
            hand, _ = store.read_hand(new_id)
            state[k] = [hand, store.load(hand)]
            deals_read += 1
            continue
        seat = loaded.game.to_act(loaded.state)[0]
        move = rng.choice(loaded.game.legal_moves(loaded.state)[seat])
        played = move_play(hand_id=hand.pk, user=made[k]["users"][seat], move=move,
                           seq=hand.last_seq, command_id=uuid.uuid4(), at=timezone.now())
        if time.time() <= end:
            moves += 1
        if played.hand.status == Hand.Status.OVER and played.response["next_hand"]:
            hand, _ = store.read_hand(played.response["next_hand"]["id"])
            state[k] = [hand, store.load(hand)]
            deals_read += 1
        else:
            state[k] = [played.hand, played.loaded]
    out.put({"worker": worker, "commands": moves, "hand_reads": deals_read})


def _library_app(create_table: bool) -> Any:
    from api_django import django_setup

    django_setup()
    from api_services import _es_classes
    from django.conf import settings

    dbs = settings.DATABASES["default"]
    _, Tables = _es_classes()
    return Tables(env={
        "PERSISTENCE_MODULE": "eventsourcing.postgres",
        "POSTGRES_DBNAME": dbs["NAME"], "POSTGRES_HOST": dbs["HOST"] or "127.0.0.1",
        "POSTGRES_PORT": str(dbs["PORT"] or 5432), "POSTGRES_USER": dbs["USER"],
        "POSTGRES_PASSWORD": dbs["PASSWORD"] or "unused-trust-auth",
        "POSTGRES_SCHEMA": "public", "CREATE_TABLE": "y" if create_table else "n",
    })


def library(worker: int, tables: int, start_at: float, duration: float, seed: int,
            out: Any) -> None:
    # The table exists (main): several processes creating it at once collide in the catalog.
    app = _library_app(create_table=False)
    from api_services import _es_classes

    TableHand, _ = _es_classes()
    rng = random.Random(seed * 100 + worker)
    cards = [{"type": "offer", "card": c} for c in ("7S", "KD", "AH", "2C")]
    aggs = [TableHand(i) for i in range(tables)]
    for a in aggs:
        app.save(a)
    counts = [0] * tables
    commands = 0
    while time.time() < start_at:
        time.sleep(0.001)
    end = start_at + duration
    i = 0
    while time.time() < end:
        k = i % tables
        i += 1
        agg = aggs[k]
        agg.move(seat=rng.randrange(4), move=rng.choice(cards), command_id=str(uuid.uuid4()))
        app.save(agg)
        if time.time() <= end:
            commands += 1
        counts[k] += 1
        if counts[k] >= 14:  # a hand's stream, as in api_services.py
            counts[k] = 0
            aggs[k] = TableHand(k)
            app.save(aggs[k])
    app.close()
    out.put({"worker": worker, "commands": commands})


def side(target: Any, clients: int, tables: int, duration: float, seed: int,
         setup_s: float) -> dict[str, Any]:
    ctx = mp.get_context("spawn")  # a fresh Django per process, no shared connection
    out = ctx.Queue()
    start_at = time.time() + setup_s
    procs = [ctx.Process(target=target, args=(w, tables, start_at, duration, seed, out))
             for w in range(clients)]
    for p in procs:
        p.start()
    results = [out.get(timeout=setup_s + duration + 300) for _ in procs]
    for p in procs:
        p.join(timeout=60)
    total = sum(r["commands"] for r in results)
    return {"clients": clients, "tables_per_client": tables, "window_s": duration,
            "commands": total, "per_s": round(total / duration, 1), "workers": results}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--tables", type=int, default=12, help="per client")
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--setup-seconds", type=float, default=20.0,
                        help="time given to every process to start and seat its tables")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    _library_app(create_table=True).close()
    runs: dict[str, list[dict[str, Any]]] = {"services": [], "eventsourcing_append": []}
    for round_ in range(2):  # alternating, as api_services.py does; the best of each is kept
        runs["services"].append(side(ours, args.clients, args.tables, args.duration,
                                     args.seed + round_, args.setup_seconds))
        runs["eventsourcing_append"].append(side(library, args.clients, args.tables,
                                                 args.duration, args.seed + round_,
                                                 args.setup_seconds))
    result = {"runs": runs,
              "services": max(runs["services"], key=lambda r: r["per_s"]),
              "eventsourcing_append": max(runs["eventsourcing_append"],
                                          key=lambda r: r["per_s"])}
    with open(args.out, "w") as fh:
        json.dump(result, fh)


if __name__ == "__main__":
    main()
