"""The soirée clock's tick when nothing has changed, with 1, 10 and 100 open soirées.

    python bench/run.py clock [--quick] [--sizes 1,10,100] [--ticks 50] [--tables 5]

Database ``<name>_clock``, made afresh; no timer runs (``ACADEMIE_TIMERS=off``). The soirées
are built through ``tournaments.services`` as an evening is: ``club_create``,
``soiree_create`` (Comet, bots allowed, ``min_tables`` tables), one person checked in at the
door (``checkin``: a soirée nobody has arrived at does not open), ``soiree_open`` (the seating
drawn, every table's partie started and its first hand dealt). The bots are of kind
"timeout" and every time-out an hour away, so between two ticks nothing happens: no move, no
hand ends, no partie ends, no seat change.

For each size (the soirées are added to the ones already open), ``tournaments.tasks.
soiree_clock()`` (the task's function, called directly in this process, as the worker runs
it) is run twice untimed, then ``--ticks`` times, each timed. Figures per size: the median and
the p95 in ms, and per open soirée. It checks that the ticks changed nothing (the counts of
hands, hand events, parties, soirée tables, announcements and journal entries before and
after); a change is reported as such, with the figure. Exits non-zero if it timed no tick.

``--quick``: sizes 1, 10, 100 with 10 ticks each.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from datetime import timedelta
from typing import Any

import common


def counts() -> dict[str, int]:
    from games.models import Hand, HandEvent, Partie
    from ledger.models import JournalEntry
    from tournaments.models import Announcement, SoireeTable

    return {"hands": Hand.objects.count(), "hand_events": HandEvent.objects.count(),
            "parties": Partie.objects.count(), "tables": SoireeTable.objects.count(),
            "announcements": Announcement.objects.count(),
            "journal_entries": JournalEntry.objects.count()}


def open_soirees(club: Any, organiser: Any, count: int, tables: int, start: int) -> float:
    """``count`` more open soirées of ``tables`` tables each; the seconds it took."""
    from django.utils import timezone

    from tournaments import services
    from tournaments.models import Soiree

    began = time.perf_counter()
    people = common.make_users(count)
    now = timezone.now()
    for i, person in enumerate(people):
        services.membership_add(club=club, user=person, role="player")
        soiree = services.soiree_create(
            club=club, name=f"Soirée {start + i + 1}", game="comet", starts_at=now,
            ends_at=now + timedelta(hours=6), buy_in=100, bots_allowed=True, min_tables=tables,
            bot_kind="timeout", move_timeout=timedelta(hours=1),
            pause_between_hands=timedelta(seconds=5), forced_move_delay=timedelta(0),
            comet_window=timedelta(0), share_window=timedelta(0), created_by=organiser)
        services.checkin(soiree=soiree, user=person, at=timezone.now())
        opened = services.soiree_open(soiree=soiree, at=timezone.now())
        if len(opened) != tables:
            sys.exit(f"soirée {soiree.pk} opened {len(opened)} tables, not {tables}")
    assert Soiree.objects.filter(status=Soiree.Status.OPEN).count() == start + count
    return time.perf_counter() - began


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="run.py clock")
    parser.add_argument("--quick", action="store_true", help="10 ticks a size")
    parser.add_argument("--sizes", default="1,10,100", help="open soirées, in increasing order")
    parser.add_argument("--ticks", type=int, default=None, help="timed ticks a size (50)")
    parser.add_argument("--tables", type=int, default=5, help="tables of each soirée")
    args = parser.parse_args(argv)
    ticks = args.ticks if args.ticks is not None else 10 if args.quick else 50
    sizes = sorted({int(s) for s in args.sizes.split(",")})
    if ticks < 1 or not sizes or sizes[0] < 1:
        common.nothing_measured(f"--ticks {ticks}, --sizes {args.sizes}: no tick to time")
    url = common.database_url("clock")
    common.ensure_database(url, fresh=True)
    common.django_setup(url)
    from django.contrib.auth import get_user_model
    from django.db import connection

    from tournaments import services
    from tournaments.tasks import soiree_clock

    organiser = get_user_model().objects.create_user("olga-clock")
    club = services.club_create(name="Cercle de l'horloge", slug="horloge", organiser=organiser)
    out: dict[str, Any] = {"tables_per_soiree": args.tables, "ticks": ticks, "sizes": {}}
    have = 0
    for size in sizes:
        built = open_soirees(club, organiser, size - have, args.tables, have)
        have = size
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")  # as autovacuum soon would, for the rows just made
        for _ in range(2):  # untimed: the first ticks after an opening may have work
            soiree_clock()
        before = counts()
        times = []
        for _ in range(ticks):
            began = time.perf_counter()
            soiree_clock()
            times.append(1000 * (time.perf_counter() - began))
        after = counts()
        changed = {k: [before[k], after[k]] for k in before if before[k] != after[k]}
        p95 = common.percentile(times, 0.95)
        figures = {"median_ms": round(statistics.median(times), 2),
                   "p95_ms": round(p95 or 0.0, 2),
                   "median_ms_per_soiree": round(statistics.median(times) / size, 3),
                   "max_ms": round(max(times), 2), "built_s": round(built, 1),
                   "changed": changed or None}
        out["sizes"][str(size)] = figures
        print(f"{size} open soirée(s): {json.dumps(figures)}", file=sys.stderr)
    if not out["sizes"]:
        common.nothing_measured("no size timed")
    first, last = out["sizes"][str(sizes[0])], out["sizes"][str(sizes[-1])]
    out["median_growth"] = round(last["median_ms"] / max(first["median_ms"], 1e-9), 1)
    print(json.dumps(out))
    return 0
