"""The fault suite's short run (scripts/faults.py --short): gunicorn, a Celery worker and beat and
a bots' soirée on a PostgreSQL database and a Redis database of the script's own, taking a
Celery worker SIGKILL, dropped Redis clients, a web worker SIGKILL and terminated database
backends in turn. Its table must say every phase and check passed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [pytest.mark.postgres, pytest.mark.redis]

PHASES = ["no fault", "celery worker SIGKILL", "redis clients dropped", "web worker SIGKILL",
          "db backends terminated", "after the faults"]
CHECKS = ["no hand overdue > 2x time-out", "verify_hands", "check_books",
          "event seqs: no gap, no duplicate", "ledger keys: no duplicate"]


def test_the_short_fault_suite_passes() -> None:
    env = {k: v for k, v in os.environ.items()
           if k not in {"DATABASE_URL", "TEST_DATABASE_URL", "DJANGO_SETTINGS_MODULE"}}
    # Its own database, one per xdist worker, so that two runs on one machine never share one.
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    env.setdefault("FAULTS_DB", f"academie_faults_test_{worker}")
    env.setdefault("FAULTS_REDIS_DB", str(7 - int(worker[2:] or 0) % 2))
    # A hang guard only: on a loaded machine the processes start and migrate slowly.
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "faults.py"), "--short"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    out = done.stdout
    assert done.returncode == 0, f"{out}\n{done.stderr[-4000:]}"
    rows = {line.split("  ")[0]: line for line in out.splitlines()}
    for name in PHASES + CHECKS:
        assert name in rows, f"no row {name!r} in\n{out}"
        assert rows[name].rstrip().endswith(" ok"), f"{name}: {rows[name]}\n{out}"
    assert out.splitlines()[-1] == "PASS", out
