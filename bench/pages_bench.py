"""A soirée's reads at 50 and at 5,000 finished hands: the standings API, the soirée page, the
room screen (its page and the three API reads it makes), the results page and its PDF.

    python bench/run.py pages [--quick] [--hands 50,5000] [--tables 10] [--samples 20]
                              [--processes 2] [--game commere]

Database ``<name>_pages``, made afresh; no timer runs (``ACADEMIE_TIMERS=off``). For each
size a soirée is built through the services as an evening is: ``club_create``,
``soiree_create`` (heuristic bots, no pause between hands, no share window, 100 hands a
partie), one person checked in at the door, ``soiree_open`` with ``--tables`` tables (bots
fill them); the person leaves his table (``seat_away``: the time-out rule plays for him at
once). Its hands are then played by ``games.services.partie_tick`` (a table of bots deals and
plays a whole hand in one command), the next parties started by ``soiree_tick``, in
``--processes`` processes (tables shared among them), until the soirée has that many hands
over; how long the building took is reported. The clock's verifier then verifies every
finished hand's record once (``games.services.verdicts``), as it does within seconds of each
hand's end during an evening; its cost per hand is reported.

Each URL is then read with Django's test client in this process (the whole middleware
stack, signed in as the club's organiser by a session cookie), ``--samples`` times (at most
60 s a URL), first while the soirée is open, then again once it is closed
(``soiree_close_now``: the standings and the settlement computed and stored). Figures per
size and state: the p95 and the median in ms of each URL, and the room screen's page load (its
page and its three reads one after the other, as room.js makes them). Exits non-zero if a
read failed (a status other than 200) or none was timed.

Each URL is read once untimed first (templates compiled, caches warmed). The results PDF is
timed twice: as downloads that follow the first (``results_pdf``: the sheet kept in the cache
for this state of the soirée), and made afresh each time (``results_pdf_made``: the cache
emptied before each sample), what the first download after a hand or a ruling costs. The hands are
built at about 110 ms each in one process on this machine (Comet or Ma commère alike, each
event an INSERT of its own): 5,000 hands take some minutes.

``--quick``: soirées of 50 and 500 hands, 5 samples a URL and at most 15 s each.
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

BUY_IN = 100_000  # no bot goes broke in 100 hands


def hands_over(soiree_id: int) -> int:
    from games.models import Hand

    return Hand.objects.filter(partie__soiree_table__soiree_id=soiree_id,
                               status=Hand.Status.OVER).count()


def make_soiree(club: Any, organiser: Any, tables: int, game: str, label: str) -> tuple[int, int]:
    """An open soirée of ``tables`` tables and one person (away); (its id, the person's id)."""
    from django.utils import timezone

    from tournaments import services

    (person,) = common.make_users(1)
    services.membership_add(club=club, user=person, role="player")
    now = timezone.now()
    soiree = services.soiree_create(
        club=club, name=f"Soirée de {label} mains", game=game, starts_at=now,
        ends_at=now + timedelta(hours=12), buy_in=BUY_IN, bots_allowed=True, min_tables=tables,
        bot_kind="heuristic", deals_per_partie=100, move_timeout=timedelta(hours=1),
        pause_between_hands=timedelta(0), forced_move_delay=timedelta(0),
        comet_window=timedelta(0), share_window=timedelta(0), created_by=organiser)
    services.checkin(soiree=soiree, user=person, at=timezone.now())
    services.soiree_open(soiree=soiree, at=timezone.now())
    return soiree.pk, person.pk


def play(url: str, soiree_id: int, person_id: int, target: int, index: int, processes: int,
         start: Any, out: Any) -> None:
    """Play the hands of this process's tables (number % processes == index) until the soirée
    has ``target`` hands over."""
    common.django_setup(url, migrate=False)
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from games.models import Partie, Seat
    from games.services import partie_tick, seat_away
    from tournaments.models import Soiree, SoireeTable
    from tournaments.services import soiree_tick

    person = get_user_model().objects.get(pk=person_id)
    soiree = Soiree.objects.get(pk=soiree_id)
    start.wait(timeout=300)
    ticks = 0
    while True:
        latest: dict[int, Any] = {}
        for t in SoireeTable.objects.filter(soiree_id=soiree_id).select_related("partie") \
                .order_by("number", "round"):
            latest[t.number] = t
        mine = [t for n, t in latest.items() if n % processes == index]
        ended = False
        for t in mine:  # a hand a table, then a look at the count
            if t.partie.status != Partie.Status.PLAYING:
                ended = True
                continue
            if Seat.objects.filter(partie_id=t.partie_id, player_id=person_id,
                                   away=False).exists():
                seat_away(partie_id=t.partie_id, user=person, away=True, at=timezone.now())
            partie_tick(partie_id=t.partie_id, at=timezone.now())
            ticks += 1
            t.partie.refresh_from_db(fields=["status"])
        if ended or any(t.partie.status != Partie.Status.PLAYING for t in mine):
            soiree_tick(soiree=soiree, at=timezone.now())
        if hands_over(soiree_id) >= target:
            break
    out.put(ticks)


def build(url: str, club: Any, organiser: Any, target: int, tables: int, game: str,
          processes: int) -> dict[str, Any]:
    from django.db import connection, connections

    began = time.perf_counter()
    soiree_id, person_id = make_soiree(club, organiser, tables, game, f"{target:,}")
    connections.close_all()
    common.in_processes(play, [(url, soiree_id, person_id, target, i, processes)
                               for i in range(processes)])
    took = time.perf_counter() - began
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")  # as autovacuum soon would, for the rows just made
    n = hands_over(soiree_id)
    print(f"soirée {soiree_id}: {n} hands over in {took:.1f} s", file=sys.stderr)
    # What the clock does within seconds of each hand's end during the evening (verify its
    # record once, keep the verdict), done here in one go before the reads.
    from games.services.verdicts import verify_ended_hands

    began = time.perf_counter()
    verified = 0
    while done := verify_ended_hands():
        verified += done
    verify_s = time.perf_counter() - began
    print(f"{verified} records verified in {verify_s:.1f} s", file=sys.stderr)
    return {"soiree": soiree_id, "hands": n, "built_s": round(took, 1),
            "hands_per_s": round(n / took, 1),
            "verify_ms_per_hand": round(1000 * verify_s / max(verified, 1), 2)}


def close(soiree_id: int) -> None:
    from django.utils import timezone

    from games.services import partie_tick
    from tournaments.models import Soiree, SoireeTable
    from tournaments.services import soiree_close_now, soiree_tick

    soiree = Soiree.objects.get(pk=soiree_id)
    soiree_close_now(soiree=soiree, at=timezone.now())
    for _ in range(50):  # a hand still being played finishes, then its partie closes
        soiree.refresh_from_db()
        if soiree.status == Soiree.Status.CLOSED:
            return
        for partie_id in SoireeTable.objects.filter(soiree=soiree).values_list("partie_id",
                                                                              flat=True):
            partie_tick(partie_id=partie_id, at=timezone.now())
        soiree_tick(soiree=soiree, at=timezone.now())
    sys.exit(f"soirée {soiree_id} did not close")


def urls(soiree_id: int) -> dict[str, str]:
    s = soiree_id
    return {"standings_api": f"/api/soirees/{s}/standings", "soiree_page": f"/soirees/{s}/",
            "room_page": f"/soirees/{s}/room", "tables_api": f"/api/soirees/{s}/tables",
            "announcements_api": f"/api/soirees/{s}/announcements",
            "results_page": f"/soirees/{s}/results", "results_pdf": f"/soirees/{s}/results.pdf",
            "results_pdf_made": f"/soirees/{s}/results.pdf"}


#: Read with the cache emptied before each sample: what the first download after a change
#: costs (the sheet made), where ``results_pdf`` times the downloads that follow it.
AFRESH = {"results_pdf_made"}


#: What the room screen loads: its page, then room.js's reads one after the other.
ROOM = ("room_page", "tables_api", "standings_api", "announcements_api")


def read_all(client: Any, soiree_id: int, samples: int, budget: float) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    failed: list[str] = []
    from django.core.cache import cache

    for name, path in urls(soiree_id).items():
        client.get(path)  # untimed: the first read compiles templates, warms caches
        times: list[float] = []
        end = time.perf_counter() + budget
        while len(times) < samples and (len(times) < 2 or time.perf_counter() < end):
            if name in AFRESH:
                cache.clear()
            began = time.perf_counter()
            response = client.get(path)
            if response.status_code != 200:
                failed.append(f"{path}: {response.status_code}")
                break
            b"".join(response) if response.streaming else response.content  # noqa: B018
            times.append(1000 * (time.perf_counter() - began))
        if times:
            figures[name] = {"p95_ms": round(common.percentile(times, 0.95) or 0, 1),
                             "median_ms": round(statistics.median(times), 1),
                             "samples": len(times)}
    if all(name in figures for name in ROOM):
        figures["room_screen_load_median_ms"] = round(
            sum(figures[name]["median_ms"] for name in ROOM), 1)
    if failed:
        figures["failed"] = failed
    return figures


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="run.py pages")
    parser.add_argument("--quick", action="store_true",
                        help="50 and 500 hands, 5 samples a URL, 15 s at most")
    parser.add_argument("--hands", default=None, help="hands over in each soirée (50,5000)")
    parser.add_argument("--tables", type=int, default=10)
    parser.add_argument("--samples", type=int, default=None, help="reads a URL (20)")
    parser.add_argument("--processes", type=int, default=2, help="processes that play hands")
    parser.add_argument("--game", default="commere", choices=["commere", "comet"])
    args = parser.parse_args(argv)
    samples = args.samples if args.samples is not None else 5 if args.quick else 20
    budget = 15.0 if args.quick else 60.0
    sizes = [int(h) for h in (args.hands or ("50,500" if args.quick else "50,5000")).split(",")]
    if samples < 1 or not sizes or min(sizes) < 1:
        common.nothing_measured(f"--samples {samples}, --hands {args.hands}: nothing to read")
    url = common.database_url("pages")
    common.ensure_database(url, fresh=True)
    common.django_setup(url)
    import logging

    logging.getLogger("fontTools").setLevel(logging.WARNING)  # a line per table of the PDF's font
    from django.contrib.auth import get_user_model
    from django.test import Client

    from tournaments import services

    organiser = get_user_model().objects.create_user("olga-pages")
    club = services.club_create(name="Cercle des pages", slug="pages", organiser=organiser)
    client = Client(HTTP_HOST="127.0.0.1", HTTP_ACCEPT_LANGUAGE="fr")
    client.cookies["sessionid"] = common.session_key(organiser)
    out: dict[str, Any] = {"game": args.game, "tables": args.tables, "samples": samples}
    failed = []
    timed = 0
    for size in sizes:
        built = build(url, club, organiser, size, args.tables, args.game, args.processes)
        figures: dict[str, Any] = {"build": built}
        for state in ("open", "closed"):
            if state == "closed":
                close(built["soiree"])
            read = read_all(client, built["soiree"], samples, budget)
            failed += read.pop("failed", [])
            timed += sum(1 for v in read.values() if isinstance(v, dict))
            figures[state] = read
            print(f"{built['hands']} hands, {state}: {json.dumps(read)}", file=sys.stderr)
        out[str(size)] = figures
    if failed or not timed:
        common.nothing_measured(f"reads failed: {failed}" if failed else "no read timed")
    print(json.dumps(out))
    return 0
