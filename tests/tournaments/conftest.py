"""Fixtures of the soirée and timer tests: a club and its members, a stopped clock, the stored
timeline of a hand, and a real Celery worker and beat on Redis.

``organiser`` (olga) comes from tests/conftest.py.

The Celery tests (``celery_rig``) need PostgreSQL and Redis (mark them ``postgres`` and
``redis``): the worker and beat are subprocesses that connect to the same test database as the
test process (pytest-django's ``test_<name>`` database, one per xdist worker), so the test must
use ``transactional_db`` for them to see its rows. Each xdist worker has its own Redis database
(10 + its index), held with a Redis lock for the length of the test so that two test runs on
one machine take turns rather than taking each other's tasks; it is emptied before and after.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import time_machine

from games.engine.base import Event
from games.models import Hand, Partie
from games.services import store
from tests.seeding import SEED_BASE_ENV
from tournaments import services
from tournaments.models import Club, Soiree

ROOT = Path(__file__).resolve().parents[2]
CELERY = ROOT / ".venv" / "bin" / "celery"
REDIS = "redis://127.0.0.1:6379"
CLOCK_SECONDS = 0.5  # the beat period of the workers the tests start (ACADEMIE_CLOCK_SECONDS)

# A fixed evening for the clock tests (the stopped clock starts here; always in the future of
# the wall clock, so that travelling to it only ever moves time forward).
START = datetime(2031, 3, 14, 18, 0, tzinfo=UTC)


# -- a club and its members --------------------------------------------------------------------


@pytest.fixture
def club(organiser: Any) -> Club:
    return services.club_create(name="Le Cercle", slug="cercle", organiser=organiser)


@pytest.fixture
def members(club: Club, django_user_model: Any) -> Callable[..., list[Any]]:
    """``members(n, prefix)``: n new players of the club."""

    def make(n: int, prefix: str = "member") -> list[Any]:
        users = []
        for i in range(n):
            user = django_user_model.objects.create_user(f"{prefix}{i + 1}")
            services.membership_add(club=club, user=user, role="player")
            users.append(user)
        return users

    return make


# -- the stopped clock -------------------------------------------------------------------------


@pytest.fixture
def clock() -> Iterator[time_machine.Coordinates]:
    """The wall clock stopped at START; ``clock.move_to(t)`` / ``clock.shift(s)`` move it."""
    with time_machine.travel(START, tick=False) as traveller:
        yield traveller


# -- what the stored events say about the timers -----------------------------------------------


def parse_at(at: str) -> datetime:
    return datetime.strptime(at, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)


@dataclass
class Batch:
    """The events one transaction appended (they share their ``at``)."""

    hand_id: Any
    at: datetime
    bys: list[str]
    seqs: list[int]


@dataclass
class Answer:
    """A time-out move and the deadline it answered."""

    hand_id: Any
    seq: int
    deadline: datetime
    at: datetime

    @property
    def lag(self) -> float:
        return (self.at - self.deadline).total_seconds()


@dataclass
class Timeline:
    batches: dict[Any, list[Batch]] = field(default_factory=dict)
    answers: list[Answer] = field(default_factory=list)

    def problems(self, *, timeout: timedelta) -> list[str]:
        """At tables where nobody ever moves in time, every batch after a hand's deal must be
        exactly one time-out move (and what follows from it), never played before its deadline:
        the deadline is the previous batch's time + the move time-out (the service sets it in the
        transaction that appended that batch). Two time-outs for one decision would show as a
        batch less than a time-out after the one before, or as two time-outs in one batch."""
        out = []
        for hand_id, batches in self.batches.items():
            for prev, batch in zip(batches, batches[1:], strict=False):
                if batch.bys[0] != "timeout":
                    out.append(f"hand {hand_id} seq {batch.seqs[0]}: a {batch.bys[0]} move where "
                               f"only a time-out was due")
                if batch.bys.count("timeout") != 1:
                    out.append(f"hand {hand_id} seq {batch.seqs[0]}: {batch.bys.count('timeout')} "
                               f"time-outs in one transaction")
                if batch.at < prev.at + timeout:
                    out.append(f"hand {hand_id} seq {batch.seqs[0]}: played "
                               f"{(prev.at + timeout - batch.at).total_seconds():.3f} s before "
                               f"its deadline")
        return out


def timeline(parties: Any) -> Timeline:
    """The batches of every hand of ``parties``, and each time-out with its deadline: the move
    time-out, or the Comet window where the Comet could be played (games/services/advance.py)."""
    waits = {p.pk: (p.move_timeout, max(p.comet_window, p.forced_move_delay))
             for p in Partie.objects.filter(pk__in=parties)}
    line = Timeline()
    for hand in Hand.objects.filter(partie__in=parties).select_related("partie", "secret"):
        game, start = store.start(hand)
        window_open = getattr(game, "comet_window_open", None)
        stream = store.events(hand)
        batches = line.batches.setdefault(hand.pk, [])
        for i, event in enumerate(stream):
            at, by, seq = parse_at(event["at"]), event["by"], event["seq"]
            if batches and batches[-1].at == at:
                batches[-1].bys.append(by)
                batches[-1].seqs.append(seq)
                continue
            if by == "timeout" and batches:
                timeout, comet = waits[hand.partie_id]
                state = start
                for e in stream[:i]:
                    state = game.apply(state, Event.from_dict(e))
                wait = (comet if comet and window_open is not None and window_open(state)
                        else timeout)
                line.answers.append(Answer(hand_id=hand.pk, seq=seq,
                                           deadline=batches[-1].at + wait, at=at))
            batches.append(Batch(hand_id=hand.pk, at=at, bys=[by], seqs=[seq]))
    return line


def soiree_parties(soiree: Soiree) -> list[Any]:
    return list(Partie.objects.filter(soiree_table__soiree=soiree).values_list("pk", flat=True))


def playing_hands(soiree: Soiree) -> Any:
    return Hand.objects.filter(partie__soiree_table__soiree=soiree, status=Hand.Status.PLAYING)


# -- bounded waits -----------------------------------------------------------------------------


def wait_for(condition: Callable[[], Any], *, timeout: float, what: str,
             explain: Callable[[], str] = lambda: "", interval: float = 0.1) -> Any:
    """Poll ``condition`` until it is truthy (returned) or ``timeout`` seconds pass (fail)."""
    end = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > end:
            pytest.fail(f"{what}: not after {timeout} s\n{explain()}")
        time.sleep(interval)


# -- a real Celery worker and beat ---------------------------------------------------------


@dataclass
class CeleryRig:
    """Celery workers and a beat, started as subprocesses on this test's Redis database and
    test database; each in its own process group, so that killing one kills its pool too."""

    redis_url: str
    env: dict[str, str]
    logdir: Path
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    def _start(self, name: str, args: list[str]) -> subprocess.Popen[bytes]:
        assert name not in self.procs or self.procs[name].poll() is not None, name
        log = self.logdir / f"{name}.log"
        with open(log, "ab") as out:
            # tests.seeded_celery: the project's app, dealing from seeds this test fixes.
            env = {**self.env, SEED_BASE_ENV: f"{self.env[SEED_BASE_ENV]}/{name}"}
            proc = subprocess.Popen([str(CELERY), "-A", "tests.seeded_celery", *args], cwd=ROOT,
                                    env=env, stdout=out, stderr=subprocess.STDOUT,
                                    start_new_session=True)
        self.procs[name] = proc
        return proc

    def start_worker(self, name: str = "worker", *, pool: str = "solo",
                     concurrency: int = 1) -> float:
        """Start a worker and wait until it consumes; returns the (monotonic) time it was
        ready."""
        self._start(name, ["worker", "--pool", pool, "--concurrency", str(concurrency),
                           "-n", f"{name}-{uuid.uuid4().hex[:8]}@%h", "--loglevel", "info",
                           "--without-gossip", "--without-mingle", "--without-heartbeat"])
        wait_for(lambda: " ready." in self.log(name) or self.procs[name].poll() is not None,
                 timeout=60, what=f"celery {name} ready", explain=self.tails)
        assert self.procs[name].poll() is None, f"celery {name} died:\n{self.tails()}"
        return time.monotonic()

    def start_beat(self) -> None:
        self._start("beat", ["beat", "--loglevel", "info",
                             "--schedule", str(self.logdir / "beat-schedule")])

    def kill(self, name: str, sig: int = signal.SIGKILL) -> None:
        proc = self.procs[name]
        os.killpg(proc.pid, sig)
        proc.wait(timeout=30)

    def stop_all(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        end = time.monotonic() + 15
        for proc in self.procs.values():
            try:
                proc.wait(timeout=max(0.1, end - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=30)

    def log(self, name: str) -> str:
        path = self.logdir / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def logs(self, prefix: str = "worker") -> str:
        return "".join(self.log(name) for name in self.procs if name.startswith(prefix))

    def tails(self, lines: int = 40) -> str:
        return "\n".join(f"--- {name} (last {lines} lines)\n"
                         + "\n".join(self.log(name).splitlines()[-lines:])
                         for name in self.procs)


def _redis_db(worker_id: str) -> int:
    return 10 + (int(worker_id[2:]) if worker_id.startswith("gw") else 0)


def _point_app_at(broker_url: str) -> None:
    """Make this process publish to ``broker_url``: Celery reads its configuration once and
    keeps a connection and producer pool for the old broker. Those pools live in kombu's
    registry, keyed by the broker's address: closed but left there, a later test publishing to
    the same address would get them back closed ("Acquire on closed pool")."""
    from kombu import pools

    from config.celery import app

    app.conf.broker_url = broker_url
    pools.reset()  # closes every pool and empties the registry
    app._pool = None
    amqp = app.__dict__.get("amqp")
    if amqp is not None:
        amqp._producer_pool = None


@pytest.fixture
def celery_rig(transactional_db: None, test_database_url: str, worker_id: str, settings: Any,
               tmp_path: Path) -> Iterator[CeleryRig]:
    """A Redis database of this xdist worker, this process publishing to it
    (ACADEMIE_TIMERS=celery), and a rig to start a worker and beat on the test database."""
    import redis

    from config.celery import app

    db = _redis_db(worker_id)
    url = f"{REDIS}/{db}"
    client = redis.Redis.from_url(url)
    lock = client.lock("academie-tests:celery-rig", timeout=600, blocking_timeout=300)
    if not lock.acquire():
        pytest.fail(f"Redis database {db} stayed busy with another test run for 300 s")

    def empty() -> None:
        for key in client.scan_iter():
            if key != b"academie-tests:celery-rig":
                client.delete(key)

    empty()
    old_broker = app.conf.broker_url
    settings.ACADEMIE_TIMERS = "celery"
    settings.CELERY_BROKER_URL = settings.REDIS_URL = url
    _point_app_at(url)
    with app.connection_for_write() as conn:
        assert conn.as_uri().endswith(f"/{db}"), conn.as_uri()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": test_database_url,
        "REDIS_URL": url,
        "ACADEMIE_TIMERS": "celery",
        "ACADEMIE_CLOCK_SECONDS": str(CLOCK_SECONDS),
        "PYTHONUNBUFFERED": "1",
    }
    rig = CeleryRig(redis_url=url, env=env, logdir=tmp_path)
    try:
        yield rig
    finally:
        rig.stop_all()
        _point_app_at(old_broker)
        empty()
        lock.release()


def nets_by_player(settle: Any) -> dict[str, int]:
    """A ledger settlement's nets by player, not by account (a bot has a wallet at each table
    it sat at); pots left out, and zero nets."""
    nets: dict[str, int] = {}
    for n in settle.nets:
        if n.account.owner_id:
            name = n.account.owner.get_username()
            nets[name] = nets.get(name, 0) + n.net
    return {name: net for name, net in nets.items() if net}
