"""Django side of bench/api_bench.py: tables of people on the bench database.

Imported by the helpers that need Django (api_setup.py, api_services.py); the orchestrator and
the load generator never import Django. ``django_setup()`` must run first; the environment
(DATABASE_URL, DJANGO_SETTINGS_MODULE, DJANGO_SECRET_KEY) is set by the orchestrator.
"""

from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BENCH_PASSWORD = "bench-password"


def django_setup(timers: str = "off") -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    # As api_bench.service_env runs the service: a script started by hand (move_steps.py) would
    # otherwise get local settings' DEBUG, whose cursor logs every statement.
    os.environ.setdefault("DJANGO_DEBUG", "false")
    # This process drives the clock itself (or only sets up): no timer thread may play.
    os.environ["ACADEMIE_TIMERS"] = timers
    import django

    django.setup()


def partie_settings(game: str, players: int) -> dict[str, Any]:
    from datetime import timedelta

    # RULES.md §3: a zero forced_move_delay and comet_window make the service play a person's
    # only move at once (advance.py); move_timeout is far beyond the run so that no time-out
    # plays a move; no pause between hands, so the next hand is dealt as the last one ends.
    options = {"ante": 1}
    return dict(
        game=game, options=options, buy_in=1_000_000,
        move_timeout=timedelta(hours=1), forced_move_delay=timedelta(0),
        comet_window=timedelta(0), pause_between_hands=timedelta(0),
    )


def make_users(prefix: str, count: int) -> list[Any]:
    """``count`` people with a usable password (one PBKDF2 hash shared by all: hashing 200
    passwords at 1,000,000 iterations would take a minute)."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password

    User = get_user_model()
    prefix = f"{prefix}{uuid.uuid4().hex[:6]}"  # a fresh set of people on every call
    hashed = make_password(BENCH_PASSWORD)
    users = [User(username=f"{prefix}-{i:04d}", password=hashed) for i in range(count)]
    User.objects.bulk_create(users)
    made = list(User.objects.filter(username__startswith=f"{prefix}-").order_by("username"))
    # bulk_create sends no post_save: drop what the cache may hold under these ids (a user of
    # an earlier database of the same name, with the same Redis), as a save would
    # (tournaments/auth.py). Without it a standalone run after another signed nobody in.
    from tournaments.auth import forget_user

    for user in made:
        forget_user(User, user)
    return made


def session_key(user: Any) -> str:
    """A logged-in session for ``user``, as ``django.contrib.auth.login`` would store it."""
    from importlib import import_module

    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY

    store = import_module(settings.SESSION_ENGINE).SessionStore()
    store[SESSION_KEY] = user._meta.pk.value_to_string(user)
    store[BACKEND_SESSION_KEY] = settings.AUTHENTICATION_BACKENDS[0]
    store[HASH_SESSION_KEY] = user.get_session_auth_hash()
    store.create()
    return str(store.session_key)


def make_tables(prefix: str, tables: int, game: str, players: int) -> list[dict[str, Any]]:
    """``tables`` parties of ``players`` people each, first hand dealt; returns, per table, the
    partie, its current hand and each seat's user."""
    from django.utils import timezone

    from games.models import Hand
    from games.services import partie_start, partie_tick

    users = make_users(prefix, tables * players)
    out = []
    for t in range(tables):
        seated = users[t * players:(t + 1) * players]
        partie = partie_start(players=seated, table_label=f"bench {t}", at=timezone.now(),
                              **partie_settings(game, players))
        hand = partie.hands.order_by("-number").first()
        # A first hand that ended at its deal (a compulsory announcement, one in ten) waits
        # for the next-hand timer, and this process runs none: deal on as that timer would.
        # Left waiting, the table's client asked the finished hand ten times a second all
        # through the run, and never moved (up to 8 tables of 50, until the fifth round).
        while hand.status == Hand.Status.OVER:
            dealt = partie_tick(partie_id=partie.pk, at=timezone.now())
            assert dealt is not None, f"bench {t}: no next hand was dealt"
            hand = dealt
        out.append({"partie": partie, "hand": hand, "users": seated})
    analyze()
    return out


def analyze() -> None:
    """Statistics for the rows just loaded, as a database in service has them (autovacuum
    analyzes a table once enough of it changed, within a minute or so). Without them the
    planner takes the freshly filled tables for nearly empty ones: a lookup of four wallets by
    club read all the club's accounts, 1.4 ms instead of 0.1 at 5,000 accounts."""
    from django.db import connection

    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
