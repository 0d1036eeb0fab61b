"""Services-only part of bench/api_bench.py: moves through ``games.services`` without HTTP, side
by side with the ``eventsourcing`` library appending one event per command to the same
PostgreSQL; optionally a cProfile of the services path and query counts per command.

    api_services.py --out services.json [--duration 10] [--profile services.prof]

``DATABASE_URL`` names the database (migrated here, with the benchmark's trivial endpoint).

One process, one database connection, commands one after another (no concurrency), on both
sides. Our side: ``--tables`` parties of people (the HTTP run's settings); each step picks the
next table in turn, chooses one of the awaited player's legal moves at random from the state
the table's last command answered (a hand's first state is read, untimed) and times
``services.move_play`` (one transaction:
lock and read the hand with its partie and seats, take its state from the snapshot on the hand
row, decide, seal the events, post chips, let forced moves play, set the deadline, then write
the events, the hand row with its new snapshot and the command). A finished hand's successor
is dealt by the command that ended the hand (no pause between hands), so it is timed with the
moves, and so are the ones after it while each new hand ends at its deal (a forced
announcement), up to ``moves.CHAINED_DEALS``; beyond, the next is dealt with ``partie_tick``,
as the timer would (timed apart, not counted as moves). The eventsourcing side: an
``Application`` with one aggregate per table, one event (the move) per command,
``app.save``; the aggregate is replaced by a new one every ``--es-stream`` events, like a
hand's stream. Two variants: ``append`` (the aggregate stays in memory: one append per
command) and ``get_append`` (``repository.get`` replays the aggregate before each command;
our service reads its hand's snapshot instead, a read-decide-write like this variant).

The headline comparison runs both sides in alternate quarter-second slices
(``interleaved_bench``), so that both meet the same machine, back to back; then again with a
read of a hand between two commands on both sides (``interleaved_reads_both``), and on ours
alone (``interleaved_reads_ours``: how this script compared until day 18, unfair to ours);
each side then runs a block of ``--duration`` seconds on its own, for reference.
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
from pathlib import Path
from typing import Any

from api_django import django_setup, make_tables


def read_hand(pk: Any) -> Any:
    """A table's hand as a client's read finds it (untimed on both sides of the comparison)."""
    from games.models import Hand

    return Hand.objects.select_related("partie", "secret").get(pk=pk)


class Services:
    """Our side: each step plays the next table's move through ``move_play`` (timed).

    The move is chosen from the state the table's last command answered (``MovePlayed``), as
    the library's side holds its aggregate: between two timed commands neither side does more
    than choose. A table's hand is read (untimed) only when it has none: at the start, and when
    a command dealt its next hand (the library's side makes its next aggregate then, untimed).
    ``read_each_step`` reads the hand before every move instead (untimed), as a client reads
    it before posting a move; that read makes the timed move slower (bench/api_bench.md,
    eighteenth round) although none of its time is counted."""

    def __init__(self, tables: list[dict[str, Any]], seed: int, *,
                 read_each_step: bool = False) -> None:
        self.tables = tables
        self.read_each_step = read_each_step
        self.played: dict[int, Any] = {}  # table index -> (hand, loaded) its last move answered
        self.rng = random.Random(seed)
        self.i = 0
        self.move_s = 0.0
        self.deal_s = 0.0
        self.moves = 0
        self.events = 0
        self.deals = 0
        self.dealt_in_moves = 0
        self.queries: list[int] | None = None  # set to a list: count move_play's queries
        self.stamps: list[Any] = []  # each counted move's time (moves_recorded)
        self.prof: cProfile.Profile | None = None  # profile_loop: only the commands

    def step(self) -> None:
        from django.utils import timezone

        from games.models import Hand
        from games.selectors import next_hand_of
        from games.services import partie_tick, store

        k = self.i % len(self.tables)
        t = self.tables[k]
        self.i += 1
        kept = None if self.read_each_step else self.played.pop(k, None)
        if kept is not None:
            hand, loaded = kept
            self._play(k, t, hand, loaded)
            return
        hand = read_hand(t["hand"].pk)
        if hand.status == Hand.Status.OVER:
            # This hand ended at its deal (a forced announcement). The command that dealt it
            # dealt the next ones too, up to moves.CHAINED_DEALS; beyond, the timer deals,
            # done (and timed) here.
            following = next_hand_of(hand)
            if following is not None:
                t["hand"] = Hand(pk=following["id"])
                return
            began = time.perf_counter()
            self.prof and self.prof.enable()
            new = partie_tick(partie_id=hand.partie_id, at=timezone.now())
            self.prof and self.prof.disable()
            self.deal_s += time.perf_counter() - began
            assert new is not None, "the next hand was not dealt"
            self.deals += 1
            t["hand"] = new
            return
        self._play(k, t, hand, store.load(hand))

    def _play(self, k: int, t: dict[str, Any], hand: Any, loaded: Any) -> None:
        from django.utils import timezone

        from games.models import Hand
        from games.services import move_play

        seat = loaded.game.to_act(loaded.state)[0]
        move = self.rng.choice(loaded.game.legal_moves(loaded.state)[seat])
        seq = hand.last_seq
        began = time.perf_counter()
        at = timezone.now()
        if self.queries is None:
            self.prof and self.prof.enable()
            answer = move_play(hand_id=hand.pk, user=t["users"][seat], move=move, seq=seq,
                               command_id=uuid.uuid4(), at=at)
            self.prof and self.prof.disable()
        else:
            from django.db import connection
            from django.test.utils import CaptureQueriesContext

            connection.queries_log.clear()  # the log keeps 9,000 queries at most
            with CaptureQueriesContext(connection) as q:
                answer = move_play(hand_id=hand.pk, user=t["users"][seat], move=move,
                                   seq=seq, command_id=uuid.uuid4(), at=at)
            self.queries.append(len(q.captured_queries))
        self.move_s += time.perf_counter() - began
        self.moves += 1
        self.stamps.append(at)
        self.events += answer.response["seq"] - seq
        if answer.response["next_hand"]:  # dealt by the command that ended the hand
            t["hand"] = Hand(pk=answer.response["next_hand"]["id"])
            self.dealt_in_moves += 1
        elif answer.hand.status == Hand.Status.PLAYING:  # else the next step reads it
            self.played[k] = (answer.hand, answer.loaded)

    def run(self, seconds: float) -> None:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            self.step()

    def reset(self) -> None:
        self.move_s = self.deal_s = 0.0
        self.moves = self.events = self.deals = self.dealt_in_moves = 0
        self.stamps = []

    def result(self) -> dict[str, Any]:
        return {
            "moves": self.moves, "events": self.events,
            "hands_dealt_by_moves": self.dealt_in_moves, "hands_dealt_apart": self.deals,
            "move_play_s": round(self.move_s, 3),
            "moves_per_s": round(self.moves / self.move_s, 1),
            "events_per_s": round(self.events / self.move_s, 1),
            "ms_per_move": round(1000 * self.move_s / self.moves, 3),
            "ms_per_deal": round(1000 * self.deal_s / max(1, self.deals), 3),
        }


#: The events that are moves (HAND_RECORD.md, Events): chosen by the player, played for him
#: as his only legal move, or played at his deadline; ``service`` events are not moves.
MOVE_AUTHORS = ("player", "forced", "timeout")


def moves_recorded(stamps: list[Any]) -> dict[str, Any]:
    """What the commands made at ``stamps`` (the ``at`` each was given) recorded, counted
    afterwards (untimed) from the events they appended: every event of a command carries its
    time, and only the forced moves' events carry no command id (they are the service's, played
    for the player). ``commands`` is what ``moves_per_s`` counts (one ``move_play`` each);
    ``moves`` are the events by ``MOVE_AUTHORS``: the person's move and the forced moves the
    service played after it in the same command (RULES.md §3: at once at these tables);
    ``by``: every event by its author (``service``: deals, payments, hands' ends)."""
    from django.db import connection

    from games.engine.record import iso_z

    by: dict[str, int] = {}
    with connection.cursor() as cursor:
        cursor.execute('SELECT "by", count(*) FROM games_handevent WHERE "at" = ANY(%s) '
                       'GROUP BY "by"', [[iso_z(at) for at in stamps]])
        for author, count in cursor.fetchall():
            by[author] = count
    moves = sum(by.get(author, 0) for author in MOVE_AUTHORS)
    commands = len(stamps)
    return {"commands": commands, "moves": moves, "by": by,
            "moves_per_command": round(moves / commands, 3) if commands else None}


def services_bench(tables: list[dict[str, Any]], duration: float, warmup: float,
                   seed: int) -> dict[str, Any]:
    svc = Services(tables, seed)
    svc.run(warmup)
    svc.reset()
    wall0 = time.perf_counter()
    svc.run(duration)
    wall = time.perf_counter() - wall0
    return {**svc.result(), "wall_s": round(wall, 3),
            "moves_per_s_wall_with_reads_and_deals": round(svc.moves / wall, 1)}


class InProcessHttp:
    """The HTTP path without a server: Django's test client plays the tables' moves as their
    people (GET the hand as the awaited player, POST his move), as api_load.py does."""

    def __init__(self, tables: list[dict[str, Any]], seed: int) -> None:
        from api_django import session_key
        from django.test import Client

        self.tables = tables
        self.rng = random.Random(seed)
        self.i = 0
        self.clients = {}
        for t in tables:
            for user in t["users"]:
                c = Client()
                c.cookies["sessionid"] = session_key(user)
                self.clients[user.pk] = c
        self.measure = False
        self.get_q: list[int] = []
        self.post_q: list[int] = []
        self.get_ms: list[float] = []
        self.post_ms: list[float] = []
        self.get_cpu: list[float] = []
        self.post_cpu: list[float] = []
        self.moves = 0
        self.prof: cProfile.Profile | None = None  # profile_loop: only GET + POST (+ deals)

    def _timed(self, call: Any, queries: list[int], ms: list[float], cpu: list[float]) -> Any:
        if not self.measure:
            return call()
        from django.db import connection
        from django.test.utils import CaptureQueriesContext

        connection.queries_log.clear()  # the log keeps 9,000 queries at most
        with CaptureQueriesContext(connection) as q:
            began, cpu0 = time.perf_counter(), time.process_time()
            out = call()
            ms.append(time.perf_counter() - began)
            cpu.append(time.process_time() - cpu0)
        queries.append(len(q.captured_queries))
        return out

    def step(self) -> None:
        from django.utils import timezone

        from games.models import Hand
        from games.selectors import next_hand_of
        from games.services import partie_tick, store

        t = self.tables[self.i % len(self.tables)]
        self.i += 1
        hand = read_hand(t["hand"].pk)
        if hand.status == Hand.Status.OVER:  # it ended at its deal: its successor, or the timer's
            following = next_hand_of(hand)
            if following is not None:
                t["hand"] = Hand(pk=following["id"])
                return
            self.prof and self.prof.enable()
            t["hand"] = partie_tick(partie_id=hand.partie_id, at=timezone.now())
            self.prof and self.prof.disable()
            return
        # Not measured: who is awaited (the load generator finds him by reading the hand).
        loaded = store.load(hand)
        seat = loaded.game.to_act(loaded.state)[0]
        c = self.clients[t["users"][seat].pk]
        url = f"/api/hands/{hand.pk}/"
        self.prof and self.prof.enable()
        v = self._timed(lambda: c.get(url).json(), self.get_q, self.get_ms, self.get_cpu)
        assert "seq" in v, (url, v)  # an answer, not a refusal (its reason in the message)
        body = {"command_id": str(uuid.uuid4()), "seq": v["seq"],
                "move": self.rng.choice(v["legal_moves"])}
        r = self._timed(lambda: c.post(f"{url}moves", body, content_type="application/json"),
                        self.post_q, self.post_ms, self.post_cpu)
        self.prof and self.prof.disable()
        assert r.status_code == 201, r.content
        self.moves += 1
        dealt = r.json()["command"]["next_hand"]
        if dealt:  # dealt by the command that ended the hand
            t["hand"] = Hand(pk=dealt["id"])

    def run(self, seconds: float) -> None:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            self.step()


def _mean(xs: list[float], scale: float = 1.0) -> float:
    return round(scale * sum(xs) / len(xs), 2) if xs else 0.0


def query_counts(tables: list[dict[str, Any]], samples: int, seed: int) -> dict[str, Any]:
    """Queries, time and CPU per ``move_play`` and per HTTP request (in process)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    svc = Services(tables, seed)
    svc.queries = []
    for _ in range(samples):
        svc.step()
    out: dict[str, Any] = {
        "move_play_queries_mean": round(sum(svc.queries) / len(svc.queries), 1),
        "move_play_queries_max": max(svc.queries),
    }
    http = InProcessHttp(tables[:10], seed)
    http.measure = True
    while len(http.post_q) < samples:
        http.step()
    # The trivial endpoint the same way (CPU of this process: Django + DRF + the ORM).
    trivial_q: list[int] = []
    trivial_ms: list[float] = []
    trivial_cpu: list[float] = []
    c = next(iter(http.clients.values()))
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
    out.update({
        "note": "in process: Django's test client, no server, the connection kept",
        "http_get_hand_queries": _mean(http.get_q), "http_post_move_queries": _mean(http.post_q),
        "trivial_post_queries": _mean(trivial_q),
        "http_get_hand_ms": _mean(http.get_ms, 1000),
        "http_get_hand_cpu_ms": _mean(http.get_cpu, 1000),
        "http_post_move_ms": _mean(http.post_ms, 1000),
        "http_post_move_cpu_ms": _mean(http.post_cpu, 1000),
        "trivial_post_ms": _mean(trivial_ms, 1000),
        "trivial_post_cpu_ms": _mean(trivial_cpu, 1000),
    })
    return out


# Where a move's CPU goes: cumulative time of these functions (file name ends with, name).
PROFILE_POINTS = {
    ("django/contrib/auth/__init__.py", "get_user"): "auth: session + user lookup",
    ("games/api/views.py", "get"): "GET /api/hands/<id>/ view",
    ("games/api/views.py", "post"): "POST /api/hands/<id>/moves view",
    ("games/selectors.py", "hand_view"): "selectors.hand_view (load + view)",
    ("games/services/moves.py", "move_play"): "services.move_play (the command)",
    ("games/services/store.py", "read_hand"): "store.read_hand (hand, partie, seats: 1 query)",
    ("games/services/store.py", "load"): "store.load (snapshot, or replay of the events)",
    ("games/services/store.py", "replay"): "store.replay (event rows + replay: fallback)",
    ("games/services/store.py", "append"): "store.append (seal; rows kept for save)",
    ("games/services/store.py", "save"): "store.save (events + hand + command: 1 statement)",
    ("games/services/store.py", "freeze"): "store.freeze (pickle the snapshot)",
    ("games/services/advance.py", "advance"): "advance (forced moves, deadline)",
    ("games/services/advance.py", "table_for"): "advance.table_for (a deal's seats query)",
    ("games/services/chips.py", "post_payments"): "chips.post_payments (ledger entries)",
    ("games/services/parties.py", "hand_deal"): "parties.hand_deal (next hand)",
    ("games/engine/commere.py", "replay"): "engine replay (Ma commère)",
    ("games/engine/comet.py", "replay"): "engine replay (Comet)",
    ("games/engine/commere.py", "decide"): "engine decide (Ma commère)",
    ("games/engine/comet.py", "decide"): "engine decide (Comet)",
    ("games/engine/deal.py", "deal_from_seed"): "engine deal_from_seed",
    ("django/db/models/sql/compiler.py", "as_sql"): "ORM: SQL compilation",
    ("django/db/backends/utils.py", "_execute"): "DB: execute (driver + round trip)",
    ("django/db/models/query.py", "_fetch_all"): "ORM: fetch + model building (with DB)",
    ("rest_framework/response.py", "rendered_content"): "DRF: JSON rendering",
}


def profile_loop(runner: Any, seconds: float, path: str) -> dict[str, Any]:
    """cProfile (CPU time of this process) of ``runner.run(seconds)``: each PROFILE_POINTS
    function's share of the CPU (cumulative; the shares overlap, callers include callees)."""
    prof = cProfile.Profile(timer=time.process_time)
    runner.prof = prof  # the runner profiles only what it measures (not its own reads)
    runner.run(seconds)
    prof.dump_stats(path)
    stats = pstats.Stats(prof)
    total = stats.total_tt  # type: ignore[attr-defined]
    found: dict[str, float] = {}
    for (filename, _line, name), (_cc, _nc, _tt, ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        for (suffix, fname), label in PROFILE_POINTS.items():
            if name == fname and filename.endswith(suffix):
                found[label] = found.get(label, 0.0) + ct
    moves = max(1, runner.moves)
    text = io.StringIO()
    pstats.Stats(prof, stream=text).sort_stats("tottime").print_stats(30)
    pstats.Stats(prof, stream=text).sort_stats("cumulative").print_stats(60)
    Path(path + ".txt").write_text(text.getvalue())
    return {
        "moves": runner.moves,
        "cpu_ms_per_move_under_profiler": round(1000 * total / moves, 2),
        "share_of_cpu": {label: round(ct / total, 3) for label, ct in
                         sorted(found.items(), key=lambda kv: -kv[1])} if total else {},
        "stats_file": path, "text_file": path + ".txt",
    }


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


class EventsourcingSide:
    """The library's side, run like ``Services``: an ``Application`` with one aggregate per
    table, one event (a move) per command, ``app.save``; the aggregate is replaced by a new one
    every ``stream`` events, like a hand's stream. ``get_first``: ``repository.get`` replays
    the aggregate before each command (else it stays in memory: one append per command).
    ``read_hands``: before each command, untimed, the table's hand is read from our tables
    (``read_hands[i]["hand"]``) as ``Services(read_each_step=True)`` reads it, so that both
    sides do the same between two timed commands."""

    def __init__(self, db: dict[str, str], tables: int, stream: int, get_first: bool,
                 seed: int, read_hands: list[dict[str, Any]] | None = None) -> None:
        TableHand, Tables = _es_classes()
        env = {
            "PERSISTENCE_MODULE": "eventsourcing.postgres",
            "POSTGRES_DBNAME": db["name"], "POSTGRES_HOST": db["host"],
            "POSTGRES_PORT": db["port"], "POSTGRES_USER": db["user"],
            "POSTGRES_PASSWORD": db["password"] or "unused-trust-auth",
            "POSTGRES_SCHEMA": "public", "CREATE_TABLE": "y",
        }
        self.new_aggregate = TableHand
        self.app = Tables(env=env)
        self.rng = random.Random(seed)
        self.moves = [{"type": "offer", "card": c} for c in ("7S", "KD", "AH", "2C")]
        self.aggs = [TableHand(i) for i in range(tables)]
        for a in self.aggs:
            self.app.save(a)
        self.counts = [0] * tables
        self.stream = stream
        self.get_first = get_first
        self.read_hands = read_hands
        self.i = 0
        self.n = 0
        self.s = 0.0

    def command(self, i: int) -> None:
        if self.read_hands is not None:
            read_hand(self.read_hands[i % len(self.read_hands)]["hand"].pk)
        began = time.perf_counter()
        agg = self.app.repository.get(self.aggs[i].id) if self.get_first else self.aggs[i]
        agg.move(seat=self.rng.randrange(4), move=self.rng.choice(self.moves),
                 command_id=str(uuid.uuid4()))
        self.app.save(agg)
        self.s += time.perf_counter() - began
        self.n += 1
        self.aggs[i] = agg
        self.counts[i] += 1
        if self.counts[i] >= self.stream:  # the next hand: a new stream
            self.counts[i] = 0
            self.aggs[i] = self.new_aggregate(i)
            self.app.save(self.aggs[i])

    def run(self, seconds: float) -> None:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            self.command(self.i % len(self.aggs))
            self.i += 1

    def reset(self) -> None:
        self.n, self.s = 0, 0.0

    def result(self, wall: float | None = None) -> dict[str, Any]:
        out = {"commands": self.n, "command_s": round(self.s, 3),
               "events_per_s": round(self.n / self.s, 1),
               "ms_per_command": round(1000 * self.s / self.n, 3)}
        if wall is not None:
            out["wall_s"] = round(wall, 3)
        return out


def eventsourcing_bench(db: dict[str, str], tables: int, duration: float, warmup: float,
                        stream: int, get_first: bool, seed: int) -> dict[str, Any]:
    side = EventsourcingSide(db, tables, stream, get_first, seed)
    side.run(warmup)
    side.reset()
    wall0 = time.perf_counter()
    side.run(duration)
    wall = time.perf_counter() - wall0
    side.app.close()
    return side.result(wall)


#: What each side does between two timed commands, besides choosing: ``none`` (the headline),
#: ``both`` (each reads a hand, untimed), ``ours`` (only our side reads: this script's way
#: until day 18, which made our timed moves slower while the library's ran back to back).
READS = ("none", "both", "ours")


def interleaved_bench(tables: list[dict[str, Any]], db: dict[str, str], duration: float,
                      warmup: float, stream: int, seed: int,
                      slice_s: float = 0.25, reads: str = "none") -> dict[str, Any]:
    """Our services and the library's appends in alternate slices of ``slice_s`` seconds, until
    each side has run ``duration`` seconds: both meet the same weather. Blocks of ten seconds
    one after the other did not: on 30 November (day 6) this machine's speed changed by up to
    three times from one block to the next (the library's appends alone: 122 to 496/s), so a
    ratio of two blocks measured the machine as much as the code. Reported: each side's rate
    over all its slices, and the median of the ratios of adjacent slices.

    ``reads`` (READS): what each side does, untimed, between two commands. Untimed work there
    still slows the next command on this machine, on either side (bench/api_bench.md,
    eighteenth round), so both sides must do the same."""
    import statistics

    svc = Services(tables, seed, read_each_step=reads in ("both", "ours"))
    es = EventsourcingSide(db, len(tables), stream, False, seed,
                           read_hands=tables if reads == "both" else None)
    svc.run(warmup)
    es.run(warmup)
    svc.reset()
    es.reset()
    ratios = []
    wall0 = time.perf_counter()
    while svc.move_s + svc.deal_s < duration or es.s < duration:
        moves, move_s = svc.moves, svc.move_s
        n, s = es.n, es.s
        svc.run(slice_s)
        es.run(slice_s)
        if svc.moves > moves and es.n > n:
            ours = (svc.moves - moves) / (svc.move_s - move_s)
            theirs = (es.n - n) / (es.s - s)
            ratios.append(ours / theirs)
    wall = time.perf_counter() - wall0
    es.app.close()
    ours_out, theirs_out = svc.result(), es.result()
    recorded = moves_recorded(svc.stamps)
    ours_out["recorded"] = recorded
    ours_out["recorded_moves_per_s"] = round(recorded["moves"] / svc.move_s, 1)
    return {"reads": reads, "slice_s": slice_s, "slices": len(ratios), "wall_s": round(wall, 3),
            "services": ours_out, "eventsourcing_append": theirs_out,
            "ratio_overall": round(ours_out["moves_per_s"] / theirs_out["events_per_s"], 3),
            # The same, our side's moves counted as the record counts them (MOVE_AUTHORS).
            "ratio_recorded_moves": round(
                ours_out["recorded_moves_per_s"] / theirs_out["events_per_s"], 3),
            "ratio_median_of_slices": round(statistics.median(ratios), 3) if ratios else None,
            "ratio_slices_p10_p90": ([round(q, 3) for q in statistics.quantiles(ratios, n=10)[::8]]
                                     if len(ratios) >= 10 else None)}


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
    parser.add_argument("--headline-only", action="store_true",
                        help="only the headline comparison (interleaved, back to back)")
    args = parser.parse_args()
    # query_counts times the trivial endpoint too, which the URLconf mounts only for
    # benchmarks (api_bench.py sets it; a run of this script alone needs it as well).
    os.environ.setdefault("ACADEMIE_BENCH_TRIVIAL", "1")
    django_setup()
    from django.conf import settings
    from django.core.management import call_command

    call_command("migrate", verbosity=0)  # the trivial endpoint's table, if not there yet

    dbs = settings.DATABASES["default"]
    db = {"name": dbs["NAME"], "host": dbs["HOST"] or "127.0.0.1", "port": str(dbs["PORT"] or 5432),
          "user": dbs["USER"], "password": dbs["PASSWORD"]}
    out: dict[str, Any] = {"tables": args.tables, "game": args.game, "players": args.players}
    tables = make_tables("svc", args.tables, args.game, args.players)
    # Side by side: ours and the library's appends in alternate quarter-second slices (the
    # headline figures: both meet the same weather), back to back, then with a read between
    # commands on both sides and on ours alone; then each side in a block of its own, for
    # reference, and the library's read-then-append variant.
    out["interleaved"] = interleaved_bench(tables, db, args.duration, args.warmup,
                                           args.es_stream, args.seed)
    out["services"] = out["interleaved"]["services"]
    out["eventsourcing_append"] = out["interleaved"]["eventsourcing_append"]
    if not args.headline_only:
        more_phases(out, args, tables, db)
    with open(args.out, "w") as fh:
        json.dump(out, fh)


def more_phases(out: dict[str, Any], args: argparse.Namespace, tables: list[dict[str, Any]],
                db: dict[str, str]) -> None:
    """The phases after the headline: a hand read between commands, each side in a block of
    its own, the library's read-then-append variant, query counts, and the profiles."""
    def es(get_first: bool, seed: int) -> dict[str, Any]:
        return eventsourcing_bench(db, args.tables, args.duration, args.warmup,
                                   args.es_stream, get_first, seed)

    for reads in READS[1:]:
        out[f"interleaved_reads_{reads}"] = interleaved_bench(
            tables, db, args.duration, args.warmup, args.es_stream, args.seed, reads=reads)
    runs: dict[str, list[dict[str, Any]]] = {
        "services": [services_bench(tables, args.duration, args.warmup, args.seed + 1)],
        "eventsourcing_append": [es(False, args.seed + 1)],
        "eventsourcing_get_append": [es(True, args.seed)],
    }
    out["runs"] = runs
    out["eventsourcing_get_append"] = runs["eventsourcing_get_append"][0]
    out["queries"] = query_counts(tables, args.query_samples, args.seed)
    if args.profile:
        out["profile_services"] = profile_loop(Services(tables, args.seed), args.profile_seconds,
                                               args.profile)
        out["profile_http_in_process"] = profile_loop(
            InProcessHttp(tables[:10], args.seed), args.profile_seconds,
            args.profile.replace(".prof", "") + "_http.prof")


if __name__ == "__main__":
    main()
