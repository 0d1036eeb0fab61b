"""What the benchmarks share: their databases, Django's set-up, seeded tables of people.

Every benchmark runs on a database of its own on the server of ``BENCH_DATABASE_URL``
(default postgres://postgres@127.0.0.1:5432/academie_bench), named ``<name>_<kind>``, created
when missing and migrated with the project's migrations (every trigger in place). Redis, for
the HTTP server's sessions, timers and live messages, is ``BENCH_REDIS_URL`` (db 11).
"""

from __future__ import annotations

import os
import random
import sys
import time
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import urlparse, urlunparse

import psycopg

ROOT = Path(__file__).resolve().parent.parent
PASSWORD = "bench-password"


def database_url(kind: str) -> str:
    base = urlparse(os.environ.get("BENCH_DATABASE_URL",
                                   "postgres://postgres@127.0.0.1:5432/academie_bench"))
    return urlunparse(base._replace(path=f"/{base.path.lstrip('/')}_{kind}"))


def redis_url() -> str:
    return os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/11")


def ensure_database(url: str, *, fresh: bool = False) -> None:
    u = urlparse(url)
    name = u.path.lstrip("/")
    with psycopg.connect(host=u.hostname, port=u.port or 5432, user=u.username or "postgres",
                         password=u.password, dbname="postgres", autocommit=True) as admin:
        if fresh:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        if admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone() is None:
            admin.execute(f'CREATE DATABASE "{name}"')


def django_env(url: str, timers: str = "off") -> dict[str, str]:
    """The environment of a Django process of the benchmark (the server's or this one's)."""
    return {"DJANGO_SETTINGS_MODULE": "bench.settings", "DATABASE_URL": url,
            "REDIS_URL": redis_url(), "ACADEMIE_TIMERS": timers, "DJANGO_DEBUG": "false",
            "PYTHONPATH": str(ROOT)}


def django_setup(url: str, *, migrate: bool = True) -> None:
    os.environ.update(django_env(url))
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    if migrate:
        from django.core.management import call_command

        call_command("migrate", verbosity=0)


def partie_settings(game: str) -> dict[str, Any]:
    # RULES.md §3: zero forced_move_delay and comet_window let the service play a person's only
    # move at once; move_timeout is far beyond any run, so no time-out plays; no pause between
    # hands, so a move that ends a hand deals the next one.
    return dict(game=game, options={"ante": 1}, buy_in=1_000_000,
                move_timeout=timedelta(hours=1), forced_move_delay=timedelta(0),
                comet_window=timedelta(0), pause_between_hands=timedelta(0))


def make_users(count: int) -> list[Any]:
    """``count`` new people sharing one password hash (hashing each would take minutes)."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password

    user_model = get_user_model()
    prefix = f"b{uuid.uuid4().hex[:8]}"
    hashed = make_password(PASSWORD)
    user_model.objects.bulk_create(
        [user_model(username=f"{prefix}-{i:04d}", password=hashed) for i in range(count)])
    return list(user_model.objects.filter(username__startswith=prefix).order_by("username"))


def make_tables(count: int, players: int, *, game: str = "commere", seed: int = 0,
                settings: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """``count`` parties of ``players`` people, dealt from ``seed``; per table its partie, the
    hand being played and the seated users. ``settings`` replace some of ``partie_settings``."""
    from django.db import connection
    from django.utils import timezone

    from bench.apps import seed_deals
    from games.models import Hand
    from games.services import partie_start, partie_tick

    seed_deals(f"tables:{seed}")
    users = make_users(count * players)
    tables = []
    for t in range(count):
        seated = users[t * players:(t + 1) * players]
        partie = partie_start(players=seated, table_label=f"bench {t}", at=timezone.now(),
                              **{**partie_settings(game), **(settings or {})})
        hand = partie.hands.order_by("-number").first()
        while hand.status == Hand.Status.OVER:  # ended at its deal: deal on as the timer would
            hand = partie_tick(partie_id=partie.pk, at=timezone.now())
        tables.append({"partie": partie, "hand": hand.pk, "users": seated})
    with connection.cursor() as cursor:
        # Statistics for the rows just loaded, as autovacuum would soon gather them: without
        # them the planner takes the fresh tables for empty ones.
        cursor.execute("ANALYZE")
    return tables


def session_key(user: Any) -> str:
    """A logged-in session for ``user``, as ``django.contrib.auth.login`` stores it."""
    from importlib import import_module

    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY

    store = import_module(settings.SESSION_ENGINE).SessionStore()
    store[SESSION_KEY] = str(user.pk)
    # The backend a sign-in records: the project's own, after django-axes' (which only counts).
    store[BACKEND_SESSION_KEY] = settings.AUTHENTICATION_BACKENDS[-1]
    store[HASH_SESSION_KEY] = user.get_session_auth_hash()
    store.create()
    return str(store.session_key)


def following_hand(table: dict[str, Any], hand: Any) -> Any:
    """The id of the hand a table plays after ``hand``, which is over: the next one if the
    partie dealt it, else the one the timer would deal; when the partie has played all its
    hands, the first of a new partie of the same people."""
    from django.utils import timezone

    from games.selectors import next_hand_of
    from games.services import partie_start, partie_tick

    following = next_hand_of(hand)
    if following is not None:
        return following["id"]
    dealt = partie_tick(partie_id=hand.partie_id, at=timezone.now())
    if dealt is None:
        partie = partie_start(players=table["users"], table_label=hand.partie.table_label,
                              at=timezone.now(), **partie_settings(hand.partie.game))
        dealt = partie.hands.order_by("-number").first()
    return dealt.pk


class Player:
    """Plays a table's hands through ``games.services.move_play``, one command at a time, as
    its people would: each move one of the awaited seat's legal moves, chosen at random."""

    def __init__(self, table: dict[str, Any], rng: random.Random) -> None:
        self.table = table
        self.rng = rng
        self.kept: Any = None  # the last command's answer while its hand is being played

    def step(self) -> tuple[float, bool]:
        """Play one move (or deal the next hand); (seconds move_play took, whether a move)."""
        from django.utils import timezone

        from games.engine.shares import is_shuffling
        from games.models import Hand
        from games.services import move_play, share_send, store

        if self.kept is None:
            hand = Hand.objects.select_related("partie", "secret").get(pk=self.table["hand"])
            if hand.status == Hand.Status.OVER:  # ended at its deal: the next one, or the timer's
                self.table["hand"] = following_hand(self.table, hand)
                return 0.0, False
            self.kept = (hand, store.load(hand))
        hand, loaded = self.kept
        if is_shuffling(loaded.state):
            # A new hand waits for its people's shares of randomness (HAND_RECORD.md): each
            # sends his, as their pages would; the last one deals it.
            for user in self.table["users"]:
                share_send(hand_id=hand.pk, user=user, share=self.rng.randbytes(32).hex(),
                           at=timezone.now())
            self.kept = None
            return 0.0, False
        seat = loaded.game.to_act(loaded.state)[0]
        move = self.rng.choice(loaded.game.legal_moves(loaded.state)[seat])
        began = time.perf_counter()
        answer = move_play(hand_id=hand.pk, user=self.table["users"][seat], move=move,
                           seq=hand.last_seq, command_id=uuid.uuid4(), at=timezone.now())
        took = time.perf_counter() - began
        self.kept = None
        if answer.response["next_hand"]:
            self.table["hand"] = answer.response["next_hand"]["id"]
        elif answer.hand.status == Hand.Status.PLAYING:
            self.kept = (answer.hand, answer.loaded)
        return took, True


def in_processes(target: Any, arg_lists: list[tuple[Any, ...]]) -> tuple[list[Any], float]:
    """Run ``target(*args, start, out)`` in a process per ``args``, spawned (each sets up
    Django and its connections of its own); what each put in ``out``, and the seconds from
    the moment all passed ``start`` (a barrier) until the last answered."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    start, out = context.Barrier(len(arg_lists) + 1), context.Queue()
    workers = [context.Process(target=target, args=(*a, start, out)) for a in arg_lists]
    for w in workers:
        w.start()
    start.wait(timeout=300)  # one that failed to start breaks the barrier
    began = time.perf_counter()
    import queue

    results: list[Any] = []
    while len(results) < len(workers):
        try:
            results.append(out.get(timeout=1))
        except queue.Empty:
            # A process that died answers nothing: say so now rather than wait for it.
            failed = [w.exitcode for w in workers if w.exitcode not in (None, 0)]
            if failed:
                for w in workers:
                    w.terminate()
                sys.exit(f"a benchmark process failed (exit codes {failed}): nothing measured")
    elapsed = time.perf_counter() - began
    for w in workers:
        w.join()
    return results, elapsed


def nothing_measured(what: str) -> NoReturn:
    """Stop with a non-zero exit: a benchmark that measured nothing prints no figure as if it
    were one (bench/README.md)."""
    sys.exit(f"nothing measured: {what}")


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]
