"""Live table updates (ARCHITECTURE.md, command flow: "on commit, notify the table's watchers").

After a command commits, each hand it moved is announced on its partie's channel, and a partie
that closes is announced too. Pages watch a partie through a server-sent events stream
(``GET /api/parties/{id}/live``) and, on each announcement, read their own view of the hand
again (``GET /api/hands/{id}/``), which is redacted for them. So an announcement carries only
what every spectator may see: which hand moved, its number, its seq and its status, and the
partie's status (``announcement``). Never a card, a seed or a talon.

Two hubs, chosen by the settings:

- ``LocalHub`` (the embedded default, no Redis): the announcements of this process reach the
  watchers of this process. ``manage.py serve`` plays every command in its own process (the
  requests, the timers and the clock), so every announcement reaches every page.
- ``RedisHub`` (``REDIS_URL`` set): commands run in the web workers and in the Celery worker,
  and streams are served by the live server (``uvicorn config.asgi:application``), so
  announcements go through Redis pub/sub. A command only hands its announcement to a queue;
  a publisher thread sends it, so a move never waits on Redis. A process that has watchers
  runs one listener thread, subscribed to every partie's channel, which hands each
  announcement to the watchers of its partie in this process.

An announcement can be lost (Redis down, a stream reconnecting): it is a hint to read again,
not the evidence. A page that reconnects gets the partie's current hand as its first message,
and pages also read their hand again every few seconds whatever they hear.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import queue
import threading
import time
import weakref
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from typing import Any

from django.conf import settings

logger = logging.getLogger(__name__)

CHANNEL_PREFIX = "academie:live:partie:"


def announcement(*, partie: Any, hand: Any = None) -> dict[str, Any]:
    """What a watcher of ``partie`` is told: ``hand`` (a ``Hand``, or ``None`` for the partie
    alone) as the command leaves it. Only fields every spectator sees."""
    message: dict[str, Any] = {"partie": str(partie.pk), "partie_status": str(partie.status),
                               "hand": None, "number": None, "seq": None, "status": None}
    if hand is not None:
        message.update(hand=str(hand.pk), number=hand.number, seq=hand.last_seq,
                       status=str(hand.status))
    return message


class Watcher:
    """One stream's subscription to one or more parties: their announcements queue up here
    until read, with ``get`` (a thread) or ``aget`` (an event loop: the watcher was made with
    its ``loop``)."""

    def __init__(self, partie_ids: Iterable[Any],
                 loop: asyncio.AbstractEventLoop | None = None) -> None:
        self.partie_ids = tuple(dict.fromkeys(str(p) for p in partie_ids))
        self._loop = loop
        self._queue: queue.SimpleQueue[dict[str, Any]] = queue.SimpleQueue()
        self._aqueue: asyncio.Queue[dict[str, Any]] | None = asyncio.Queue() if loop else None

    def put(self, message: dict[str, Any]) -> None:
        if self._loop is None:
            self._queue.put(message)
        else:
            assert self._aqueue is not None
            with contextlib.suppress(RuntimeError):  # a closed loop: the stream is gone
                self._loop.call_soon_threadsafe(self._aqueue.put_nowait, message)

    def get(self, timeout: float) -> dict[str, Any] | None:
        try:
            return self._queue.get(timeout=timeout)
        except queue.Empty:
            return None

    async def aget(self, timeout: float) -> dict[str, Any] | None:
        assert self._aqueue is not None, "made without a loop: use get()"
        try:
            return await asyncio.wait_for(self._aqueue.get(), timeout)
        except TimeoutError:
            return None


class LocalHub:
    """Announcements delivered to the watchers of this process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._watchers: dict[str, set[Watcher]] = {}

    def publish(self, message: dict[str, Any]) -> None:
        self.deliver(message)

    def deliver(self, message: dict[str, Any]) -> None:
        watchers = self._watchers.get(message["partie"])
        if not watchers:
            return
        with self._lock:
            watchers = set(watchers)
        for watcher in watchers:
            watcher.put(message)

    def watch(self, partie_ids: Iterable[Any],
              loop: asyncio.AbstractEventLoop | None = None) -> Watcher:
        watcher = Watcher(partie_ids, loop)
        with self._lock:
            for partie_id in watcher.partie_ids:
                self._watchers.setdefault(partie_id, set()).add(watcher)
        return watcher

    def unwatch(self, watcher: Watcher) -> None:
        with self._lock:
            for partie_id in watcher.partie_ids:
                watchers = self._watchers.get(partie_id)
                if watchers is not None:
                    watchers.discard(watcher)
                    if not watchers:
                        del self._watchers[partie_id]

    def watching(self, partie_id: Any) -> int:
        """How many watchers of ``partie_id`` this process has."""
        return len(self._watchers.get(str(partie_id), ()))


class RedisHub(LocalHub):
    """Announcements through Redis pub/sub, between every process of a deployment."""

    #: How long the listener waits before subscribing again after Redis failed.
    RETRY_SECONDS = 1.0
    #: How long the publisher lets announcements gather before it writes them, in one write:
    #: a move is played and answered without waiting for it either way, and a page hears of it
    #: at most this much later.
    GATHER_SECONDS = 0.02

    def __init__(self, url: str) -> None:
        super().__init__()
        self.url = url
        self._outbox: queue.SimpleQueue[dict[str, Any]] = queue.SimpleQueue()
        self._threads: dict[str, threading.Thread] = {}
        self._started = threading.Lock()
        hub = weakref.ref(self)
        os.register_at_fork(after_in_child=lambda: (h := hub()) is not None and h._forked())
        #: Set once the listener is subscribed (tests wait for it).
        self.listening = threading.Event()

    def _forked(self) -> None:
        # The child has none of the parent's threads, streams or held locks.
        self._threads, self._watchers = {}, {}
        self._started, self._lock = threading.Lock(), threading.Lock()

    def publish(self, message: dict[str, Any]) -> None:
        self._outbox.put(message)
        self._ensure("publisher", self._publish_loop)

    def watch(self, partie_ids: Iterable[Any],
              loop: asyncio.AbstractEventLoop | None = None) -> Watcher:
        watcher = super().watch(partie_ids, loop)
        self._ensure("listener", self._listen_loop)
        return watcher

    def _ensure(self, name: str, target: Callable[[], None]) -> None:
        # One thread of each kind per process, started when first needed. Threads do not
        # survive a fork: a forked process (a Celery or gunicorn worker) forgets the parent's
        # (``__init__``) and starts its own.
        if name in self._threads:
            return
        with self._started:
            if name in self._threads:
                return
            thread = threading.Thread(target=target, name=f"academie-live-{name}", daemon=True)
            self._threads[name] = thread
            if name == "listener":
                self.listening.clear()
            thread.start()

    def _client(self) -> Any:
        import redis

        return redis.Redis.from_url(self.url, socket_connect_timeout=2, health_check_interval=30)

    def _connection(self) -> Any:
        import redis

        pool = redis.ConnectionPool.from_url(self.url, socket_connect_timeout=2)
        connection = pool.connection_class(**pool.connection_kwargs)
        connection.connect()
        return connection

    def _publish_loop(self) -> None:
        # One connection of its own, written to directly: a write of every announcement that
        # gathered, then their replies (redis-py's pipeline object cost 80 µs of CPU per batch
        # here, a bare write and read 30 µs; bench/api_bench.md, fifteenth round).
        connection = None
        while True:
            batch = [self._outbox.get()]
            time.sleep(self.GATHER_SECONDS)
            while len(batch) < 500:
                try:
                    batch.append(self._outbox.get_nowait())
                except queue.Empty:
                    break
            try:
                connection = connection or self._connection()
                connection.send_packed_command(connection.pack_commands(
                    [("PUBLISH", CHANNEL_PREFIX + m["partie"], json.dumps(m)) for m in batch]))
                for _ in batch:
                    connection.read_response()
            except Exception:  # an announcement is a hint (module docstring): log, go on
                logger.warning("live: %d announcement(s) not published", len(batch),
                               exc_info=True)
                if connection is not None:
                    connection.disconnect()
                connection = None

    def _listen_loop(self) -> None:
        while True:
            try:
                pubsub = self._client().pubsub(ignore_subscribe_messages=True)
                pubsub.psubscribe(CHANNEL_PREFIX + "*")
                pubsub.get_message(timeout=1.0)  # the subscription's confirmation
                self.listening.set()
                for raw in pubsub.listen():
                    if raw.get("type") == "pmessage":
                        self.deliver(json.loads(raw["data"]))
            except Exception:
                self.listening.clear()
                logger.warning("live: the subscription failed; subscribing again",
                               exc_info=True)
                time.sleep(self.RETRY_SECONDS)


_hub: LocalHub | None = None
_hub_lock = threading.Lock()


def hub() -> LocalHub:
    """This process's hub: Redis pub/sub when ``REDIS_URL`` is set, else the local one."""
    global _hub
    if _hub is None:
        with _hub_lock:
            if _hub is None:
                url = settings.REDIS_URL
                _hub = RedisHub(url) if url else LocalHub()
    return _hub


def use_hub(new: LocalHub | None) -> LocalHub | None:
    """Replace this process's hub (tests); ``None``: chosen again from the settings."""
    global _hub
    with _hub_lock:
        old, _hub = _hub, new
    return old


def announce(message: dict[str, Any]) -> None:
    """Hand ``message`` to the hub (called on commit)."""
    try:
        hub().publish(message)
    except Exception:  # never let a hint fail a command that has committed
        logger.warning("live: an announcement was dropped", exc_info=True)


# -- the stream: server-sent events --------------------------------------------------------


def event(message: dict[str, Any]) -> bytes:
    """One server-sent event whose data is ``message`` as JSON."""
    return f"data: {json.dumps(message, separators=(',', ':'))}\n\n".encode()


KEEPALIVE = b": keep-alive\n\n"


def retry_field(ms: int) -> bytes:
    return f"retry: {ms}\n\n".encode()


def stream(hub: LocalHub, partie_ids: Sequence[Any],
           current: Callable[[], list[dict[str, Any]]], *, seconds: float,
           keepalive: float) -> Iterator[bytes]:
    """The events of a stream served by a thread: the parties' ``current`` hands (read once
    subscribed, so that nothing committed in between is missed), then each announcement, a
    comment every ``keepalive`` seconds without one, until ``seconds`` have passed (the
    browser then connects again, after the ``retry`` the stream set)."""
    watcher = hub.watch(partie_ids)
    try:
        yield retry_field(settings.ACADEMIE_LIVE_RETRY_MS)
        for message in current():
            yield event(message)
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            message = watcher.get(min(keepalive, left))
            yield KEEPALIVE if message is None else event(message)
    finally:
        hub.unwatch(watcher)


async def astream(hub: LocalHub, partie_ids: Sequence[Any],
                  current: Callable[[], list[dict[str, Any]]], *, seconds: float,
                  keepalive: float) -> AsyncIterator[bytes]:
    """``stream`` for an event loop (the live server, ASGI)."""
    from asgiref.sync import sync_to_async

    watcher = hub.watch(partie_ids, loop=asyncio.get_running_loop())
    try:
        yield retry_field(settings.ACADEMIE_LIVE_RETRY_MS)
        for message in await sync_to_async(current)():
            yield event(message)
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            message = await watcher.aget(min(keepalive, left))
            yield KEEPALIVE if message is None else event(message)
    finally:
        hub.unwatch(watcher)


def publish_hand(*, partie: Any, hand: Any, events: Sequence[Any]) -> None:
    """After a command commits: tell the partie's watchers where it left ``hand``."""
    announce(announcement(partie=partie, hand=hand))


def publish_partie(*, partie: Any) -> None:
    """After a partie closes: tell its watchers."""
    announce(announcement(partie=partie))
