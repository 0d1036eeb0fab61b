"""The processes of a deployment that a benchmark starts (gunicorn, daphne, Celery), their
logs, and the CPU they and the machine use."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import common

TICK = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _stat(pid: int) -> tuple[int, float] | None:
    """(parent pid, CPU seconds of the process and of its children it has waited for)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()
    return int(fields[1]), sum(int(f) for f in fields[11:15]) / TICK


def tree_cpu(root: int) -> float:
    """CPU seconds used so far by ``root`` and every live process under it."""
    stats = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            found = _stat(int(entry))
            if found is not None:
                stats[int(entry)] = found
    total, todo, seen = 0.0, [root], set()
    while todo:
        pid = todo.pop()
        if pid in seen or pid not in stats:
            continue
        seen.add(pid)
        total += stats[pid][1]
        todo += [p for p, (ppid, _) in stats.items() if ppid == pid]
    return total


def machine_busy() -> tuple[float, float]:
    """(busy, total) jiffies of every core since boot (/proc/stat): the machine's whole load,
    other people's work included."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = values[3] + values[4]
    return sum(values) - idle, sum(values)


@dataclass
class Deployment:
    url: str
    logdir: Path
    env: dict[str, str] = field(default_factory=dict)
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    ports: dict[str, int] = field(default_factory=dict)
    ends: dict[str, int] = field(default_factory=dict)  # the logs' sizes when the run ended

    def __post_init__(self) -> None:
        self.env = {**os.environ, **common.django_env(self.url, timers="celery"),
                    "PYTHONUNBUFFERED": "1", **self.env}

    def start(self, name: str, args: list[str], **extra: str) -> subprocess.Popen[bytes]:
        with open(self.logdir / f"{name}.log", "ab") as out:
            proc = subprocess.Popen([sys.executable, "-m", *args], cwd=common.ROOT,
                                    env={**self.env, **extra}, stdout=out,
                                    stderr=subprocess.STDOUT, start_new_session=True)
        self.procs[name] = proc
        return proc

    def gunicorn(self, name: str, workers: int, seed: int) -> None:
        self.ports[name] = port = free_port()
        self.start(name, ["gunicorn", "config.wsgi:application", "--workers", str(workers),
                          "--bind", f"127.0.0.1:{port}", "--log-level", "warning",
                          "--backlog", "2048", "--timeout", "60"], BENCH_SEED=str(seed))

    def daphne(self, name: str, seed: int) -> None:
        self.ports[name] = port = free_port()
        # Verbosity 0: no access log line per request, warnings and errors kept.
        self.start(name, ["daphne", "-b", "127.0.0.1", "-p", str(port), "-v", "0",
                          "config.asgi:application"], BENCH_SEED=str(seed))

    def celery_worker(self, name: str, concurrency: int = 1) -> None:
        self.start(name, ["celery", "-A", "config", "worker", "--pool", "prefork",
                          "--concurrency", str(concurrency), "-n", f"{name}@%h",
                          "--loglevel", "warning", "--without-gossip", "--without-mingle",
                          "--without-heartbeat"])

    def celery_beat(self, name: str) -> None:
        self.start(name, ["celery", "-A", "config", "beat", "--loglevel", "warning",
                          "--schedule", str(self.logdir / f"{name}-schedule")])

    def wait_ports(self, timeout: float = 60) -> None:
        end = time.monotonic() + timeout
        for name, port in self.ports.items():
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    if self.procs[name].poll() is not None or time.monotonic() > end:
                        self.stop()
                        raise SystemExit(
                            f"{name} did not start:\n{self.log(name)[-3000:]}") from None
                    time.sleep(0.2)

    def log(self, name: str) -> str:
        path = self.logdir / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def mark_end(self) -> None:
        """What the logs hold now is the run's; what follows is their stopping."""
        for name in self.procs:
            path = self.logdir / f"{name}.log"
            self.ends[name] = path.stat().st_size if path.exists() else 0

    def cpu(self) -> dict[str, float]:
        return {name: tree_cpu(proc.pid) for name, proc in self.procs.items()}

    def dead(self) -> list[str]:
        return [f"{name} (exit {p.returncode})" for name, p in self.procs.items()
                if p.poll() is not None]

    def problems(self) -> tuple[dict[str, list[str]], dict[str, int]]:
        """Per process, the lines of its log that say something went wrong (errors, warnings,
        tracebacks, 5xx answers); and, apart, the counts of the requests answered 4xx that
        Django logged as warnings (a stale seq's 409, a late share's), by reason and path."""
        bad = re.compile(r"Traceback|\bERROR\b|\bCRITICAL\b|\bWARNING\b|Exception|"
                         r"\b50[0-4]\b")
        client = re.compile(r"WARNING django.request \[[^]]*\] ([A-Za-z ]+): (/\S*?)[0-9a-f-]{36}"
                            r"(/\S*)?$")
        out: dict[str, list[str]] = {}
        answers: dict[str, int] = {}
        for name in self.procs:
            text = self.log(name).encode()[:self.ends.get(name)].decode(errors="replace")
            lines = []
            for line in text.splitlines():
                if not bad.search(line) or "logfile ->" in line:
                    continue
                found = client.search(line)
                if found:
                    key = f"{found[1]}: {found[2]}<id>{found[3] or ''}"
                    answers[key] = answers.get(key, 0) + 1
                else:
                    lines.append(line)
            if lines:
                out[name] = lines
        return out, answers

    def stop(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGTERM)
        end = time.monotonic() + 20
        for proc in self.procs.values():
            try:
                proc.wait(timeout=max(0.1, end - time.monotonic()))
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=30)
