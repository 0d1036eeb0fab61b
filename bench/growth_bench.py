"""Growth: a move's p99 with ``hand_events`` at 10,000 rows and again at 10,000,000.

    python bench/run.py growth [--small 10000] [--large 10000000] [--moves 2000] [--tables 20]

Database ``<name>_growth``, made afresh. ``--tables`` Ma commère tables are played through
``games.services.move_play`` (one process, one command after another) and each move timed,
first with ``hand_events`` filled to ``--small`` rows, then to ``--large``. The filling is the
benchmark's own bulk load, not a write path of the service: finished filler hands of one
filler partie, 22 events each, copies of one real row by INSERT ... SELECT over
generate_series, then VACUUM ANALYZE, as autovacuum would leave a table in service.
Figures: both p99s and their difference (large over small, minus one). Exits non-zero if
either half played no move.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from typing import Any

import common

EVENTS_PER_HAND = 22  # a Ma commère hand's, about (the engine benchmark's 21.7)
CHUNK = 25_000  # filler hands a transaction


def fill(rows: int) -> float:
    """Bring hand_events to at least ``rows`` rows; the seconds it took. Filler hands of
    hands' usual length: a few hands of many events each would mislead the planner about
    how many rows one hand has (it planned a parallel bitmap scan for a hand's events)."""
    from django.db import connection, transaction
    from django.utils import timezone

    from games.models import Hand, HandEvent, Partie
    from games.services import partie_start

    began = time.perf_counter()
    have = HandEvent.objects.count()
    partie = Partie.objects.filter(table_label="filler").first() or partie_start(
        players=common.make_users(4), table_label="filler", at=timezone.now(),
        deal_first_hand=False, **common.partie_settings("commere"))
    last = partie.hands.order_by("-number").first() or Hand.objects.create(
        partie=partie, number=1, dealer=0, commitment="0" * 64, status=Hand.Status.OVER,
        last_seq=EVENTS_PER_HAND)
    event = HandEvent.objects.order_by("pk").first()
    hand_t, event_t = Hand._meta.db_table, HandEvent._meta.db_table
    copied = ", ".join(f.column for f in Hand._meta.concrete_fields
                       if f.column not in ("id", "number"))
    needed = max(0, -(-(rows - have) // EVENTS_PER_HAND))
    for first in range(last.number + 1, last.number + 1 + needed, CHUNK):
        end = min(first + CHUNK, last.number + 1 + needed) - 1
        with transaction.atomic(), connection.cursor() as cursor:
            # Copies of checked rows into hands just made: the foreign-key checks, a lookup
            # per row, would only double the load's time.
            cursor.execute("SET LOCAL session_replication_role = replica")
            cursor.execute(
                f"INSERT INTO {hand_t} (id, number, {copied}) SELECT gen_random_uuid(), g,"
                f" {copied} FROM {hand_t}, generate_series(%s, %s) g WHERE id = %s",
                [first, end, last.pk])
            cursor.execute(
                f"INSERT INTO {event_t} (hand_id, seq, type, payload, by, actor_id,"
                f" command_id, at, prev, hash) SELECT h.id, s, e.type, e.payload, e.by,"
                f" e.actor_id, NULL, e.at, e.prev, e.hash FROM {hand_t} h,"
                f" generate_series(1, %s) s, {event_t} e"
                f" WHERE h.partie_id = %s AND h.number BETWEEN %s AND %s AND e.id = %s",
                [EVENTS_PER_HAND, partie.pk, first, end, event.pk])
        done = have + (end - last.number) * EVENTS_PER_HAND
        print(f"hand_events: {done:,} rows, {time.perf_counter() - began:.0f} s", file=sys.stderr)
    with connection.cursor() as cursor:
        cursor.execute(f"VACUUM ANALYZE {hand_t}")
        cursor.execute(f"VACUUM ANALYZE {event_t}")
        # The load's gigabytes of dirty pages written out now, not while the moves are timed:
        # a table in service has no such backlog.
        cursor.execute("CHECKPOINT")
    return time.perf_counter() - began


def measure(players: list[common.Player], moves: int) -> dict[str, Any]:
    times: list[float] = []
    steps = 0
    while len(times) < moves and steps < 50 * moves:  # a step deals or shares at worst
        took, moved = players[steps % len(players)].step()
        steps += 1
        if moved:
            times.append(took)
    times = times[moves // 10:]  # the first tenth warms the caches
    if not times:
        common.nothing_measured(f"no move played in {steps} steps")
    return {"p50_ms": round(1000 * common.percentile(times, 0.5), 2),
            "p99_ms": round(1000 * common.percentile(times, 0.99), 2), "moves": len(times)}


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="run.py growth")
    parser.add_argument("--small", type=int, default=10_000)
    parser.add_argument("--large", type=int, default=10_000_000)
    parser.add_argument("--moves", type=int, default=2000)
    parser.add_argument("--tables", type=int, default=20)
    args = parser.parse_args(argv)
    if args.moves < 1 or args.tables < 1:
        common.nothing_measured(f"--moves {args.moves}, --tables {args.tables}: no move to time")
    url = common.database_url("growth")
    common.ensure_database(url, fresh=True)
    common.django_setup(url)
    from games.models import HandEvent

    players = [common.Player(t, random.Random(i))
               for i, t in enumerate(common.make_tables(args.tables, 4, seed=4))]
    fill(args.small)
    small = {"rows": HandEvent.objects.count(), **measure(players, args.moves)}
    print(json.dumps(small), file=sys.stderr)
    load_s = fill(args.large)
    large = {"rows": HandEvent.objects.count(), "load_s": round(load_s),
             **measure(players, args.moves)}
    print(json.dumps({"small": small, "large": large,
                      "p99_growth": round(large["p99_ms"] / small["p99_ms"] - 1, 3)}))
