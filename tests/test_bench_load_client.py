"""The benchmark's load generator speaks HTTP/1.1 by itself (bench/api_load.py, ``Http``): what
it sends, and how it reads an answer with a length, in chunks, or none at all."""

from __future__ import annotations

import asyncio
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

_spec = importlib.util.spec_from_file_location(
    "api_load", Path(__file__).resolve().parent.parent / "bench" / "api_load.py")
assert _spec is not None and _spec.loader is not None
api_load: Any = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(api_load)


async def _answer_and_close(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                            answer: bytes, received: list[bytes] | None = None) -> None:
    """The test server: reads one request (into ``received``, if given), writes ``answer``
    and closes; with no answer, it leaves the client waiting."""
    head = await reader.readuntil(b"\r\n\r\n")
    length = [int(line.split(b":")[1]) for line in head.split(b"\r\n")
              if line.lower().startswith(b"content-length:")]
    request = head + (await reader.readexactly(length[0]) if length else b"")
    if received is not None:
        received.append(request)
    if answer:
        writer.write(answer)
        await writer.drain()
        writer.close()


async def _exchange(answer: bytes, method: str, body: bytes | None,
                    timeout: float = 5.0) -> tuple[int, bytes, bytes]:
    """One request through ``Http`` to a server that records it and writes ``answer``."""
    received: list[bytes] = []
    server = await asyncio.start_server(
        lambda r, w: _answer_and_close(r, w, answer, received), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        http = api_load.Http(f"http://127.0.0.1:{port}", timeout)
        status, content = await http.request(method, "/api/x/", {"Cookie": "sessionid=s"}, body)
    finally:
        server.close()
    return status, content, received[0]


def test_a_post_is_sent_whole_and_an_answer_with_a_length_is_read() -> None:
    body = json.dumps({"seq": 3}).encode()
    answer = (b"HTTP/1.1 201 Created\r\nContent-Type: application/json\r\n"
              b"Content-Length: 9\r\nConnection: close\r\n\r\n{\"ok\": 1}")

    status, content, sent = asyncio.run(_exchange(answer, "POST", body))

    assert (status, content) == (201, b'{"ok": 1}')
    head, _, sent_body = sent.partition(b"\r\n\r\n")
    assert head.startswith(b"POST /api/x/ HTTP/1.1\r\n")
    assert b"\r\nConnection: close" in head and b"\r\nCookie: sessionid=s" in head
    assert b"\r\nContent-Length: %d" % len(body) in head
    assert sent_body == body


def test_an_answer_in_chunks_is_put_together() -> None:
    answer = (b"HTTP/1.1 409 Conflict\r\nTransfer-Encoding: chunked\r\n\r\n"
              b"4\r\n{\"a\"\r\n5;ext=1\r\n: 12}\r\n0\r\n\r\n")

    status, content, _ = asyncio.run(_exchange(answer, "GET", None))

    assert (status, content) == (409, b'{"a": 12}')


def test_an_answer_cut_short_of_its_length_is_refused() -> None:
    answer = b"HTTP/1.1 200 OK\r\nContent-Length: 40\r\n\r\n{\"status\": "

    with pytest.raises(ValueError, match="cut short"):
        asyncio.run(_exchange(answer, "GET", None))


def test_a_call_without_a_whole_answer_is_a_failure_left_out_of_the_latencies() -> None:
    rec = api_load.Recorder(start=0.0, warmup=0.0, duration=1e9)

    async def call_with(answer: bytes) -> tuple[int, Any]:
        server = await asyncio.start_server(
            lambda r, w: _answer_and_close(r, w, answer), "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        try:
            return await api_load.call(api_load.Http(f"http://127.0.0.1:{port}", 5.0), rec,
                                       "hand_get", "GET", "/api/x/", "s")
        finally:
            server.close()

    cut = asyncio.run(call_with(b"HTTP/1.1 200 OK\r\nContent-Length: 40\r\n\r\n{}"))
    not_json = asyncio.run(call_with(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
    whole = asyncio.run(call_with(b"HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\n{\"a\": 1}"))

    assert (cut, not_json, whole) == ((599, None), (599, None), (200, {"a": 1}))
    assert rec.all_counts["failed"] == 2
    assert len(rec.latency["hand_get"]) == 1


def test_a_server_that_never_answers_is_a_timeout() -> None:
    with pytest.raises(TimeoutError):
        asyncio.run(_exchange(b"", "GET", None, timeout=0.2))


def test_each_table_starts_at_its_parties_last_hand() -> None:
    """A phase after the first starts at the hands being played, not at the setup's hands
    (which it would walk, finished hand after finished hand, inside its measured window)."""
    parties = {
        "p-played": {"hands": [{"id": "h1", "number": 1}, {"id": "h3", "number": 3},
                               {"id": "h2", "number": 2}]},
        "p-new": {"hands": []},
    }
    asked: list[bytes] = []

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        asked.append(head)
        partie = head.split(b" ")[1].decode().split("/")[3]
        if partie in parties:
            body = json.dumps(parties[partie]).encode()
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
        else:
            writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 2\r\n\r\n{}")
        await writer.drain()
        writer.close()

    def table(partie: str) -> dict[str, Any]:
        return {"partie": partie, "hand": "setup-hand", "seats": [{"session": f"s-{partie}"}]}

    async def run() -> list[dict[str, Any]]:
        server = await asyncio.start_server(answer, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        try:
            return await api_load.current_hands(
                api_load.Http(f"http://127.0.0.1:{port}", 5.0), "",
                [table("p-played"), table("p-new"), table("p-gone")])
        finally:
            server.close()

    found = asyncio.run(run())

    assert [t["hand"] for t in found] == ["h3", "setup-hand", "setup-hand"]
    assert found[0]["seats"] == [{"session": "s-p-played"}]
    assert len(asked) == 3
    assert all(b"Cookie: sessionid=s-p-" in head for head in asked)
