"""Growth: a move's p99 with ``hand_events`` at 10,000 rows and again at 10,000,000.

    python bench/run.py growth [--small 10000] [--large 10000000] [--moves 2000] [--tables 20]

Database ``<name>_growth``, made afresh. ``--tables`` Ma commère tables are played through
``games.services.move_play`` (one process, one command after another) and each move timed,
first with ``hand_events`` filled to ``--small`` rows, then to ``--large``. The filling is the
benchmark's own bulk load, not a write path of the service: finished filler hands of one
filler partie, each given 10,000 events by one INSERT ... SELECT over generate_series (copies
of a real event's columns), then VACUUM ANALYZE, as autovacuum would leave a table in service.
Figures: both p99s and their difference (large over small, minus one).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from typing import Any

import common

EVENTS_PER_FILLER = 10_000


def filler_hands(count: int) -> list[Any]:
    """``count`` more finished hands of one filler partie, created with bulk_create."""
    from django.utils import timezone

    from games.models import Hand, Partie
    from games.services import partie_start

    partie = Partie.objects.filter(table_label="filler").first()
    if partie is None:
        partie = partie_start(players=common.make_users(4), table_label="filler",
                              at=timezone.now(), deal_first_hand=False,
                              **common.partie_settings("commere"))
    first = (Hand.objects.filter(partie=partie).order_by("-number").values_list(
        "number", flat=True).first() or 0) + 1
    return Hand.objects.bulk_create([
        Hand(partie=partie, number=n, dealer=0, commitment="0" * 64, status=Hand.Status.OVER,
             last_seq=EVENTS_PER_FILLER) for n in range(first, first + count)])


def fill(rows: int) -> float:
    """Bring hand_events to at least ``rows`` rows; the seconds it took."""
    from django.db import connection, transaction

    from games.models import HandEvent

    began = time.perf_counter()
    have = HandEvent.objects.count()
    template = HandEvent.objects.order_by("pk").first()
    table = HandEvent._meta.db_table
    hands = filler_hands(max(0, -(-(rows - have) // EVENTS_PER_FILLER)))
    for k in range(0, len(hands), 50):
        with transaction.atomic(), connection.cursor() as cursor:
            for hand in hands[k:k + 50]:
                cursor.execute(
                    f"INSERT INTO {table} (hand_id, seq, type, payload, by, actor_id,"
                    " command_id, at, prev, hash)"
                    " SELECT %s, g, type, payload, by, actor_id, NULL, at, prev, hash"
                    f" FROM {table}, generate_series(1, %s) g WHERE id = %s",
                    [hand.pk, EVENTS_PER_FILLER, template.pk])
        done = have + min(k + 50, len(hands)) * EVENTS_PER_FILLER
        print(f"hand_events: {done:,} rows, {time.perf_counter() - began:.0f} s", file=sys.stderr)
    with connection.cursor() as cursor:
        cursor.execute(f"VACUUM ANALYZE {table}")
    return time.perf_counter() - began


def measure(players: list[common.Player], moves: int) -> dict[str, Any]:
    times: list[float] = []
    while len(times) < moves:
        took, moved = players[len(times) % len(players)].step()
        if moved:
            times.append(took)
    times = times[moves // 10:]  # the first tenth warms the caches
    return {"p50_ms": round(1000 * common.percentile(times, 0.5), 2),
            "p99_ms": round(1000 * common.percentile(times, 0.99), 2), "moves": len(times)}


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="run.py growth")
    parser.add_argument("--small", type=int, default=10_000)
    parser.add_argument("--large", type=int, default=10_000_000)
    parser.add_argument("--moves", type=int, default=2000)
    parser.add_argument("--tables", type=int, default=20)
    args = parser.parse_args(argv)
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
