"""The lean GET transport (``explorer/rest/keepalive.py``) against a scripted HTTP server on
127.0.0.1: kept connections, answers read whole, httpx's failures, other requests passed on."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import httpx
import pytest

from explorer.rest.keepalive import KeepAliveTransport

#: What the scripted server answers: the answer's bytes for the n-th request of a connection,
#: or None to close the connection without answering.
Script = Callable[[int, bytes], bytes | None]


def answer(body: bytes, *extra: bytes) -> bytes:
    """A 200 answer of ``body`` with a length and ``extra`` header lines."""
    head = [b"HTTP/1.1 200 OK", b"Content-Length: %d" % len(body), *extra]
    return b"\r\n".join(head) + b"\r\n\r\n" + body


@asynccontextmanager
async def server(script: Script) -> AsyncIterator[tuple[str, list[list[bytes]]]]:
    """A server answering each request head as ``script`` says: its base URL, and the
    request heads each connection received."""
    connections: list[list[bytes]] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        heads: list[bytes] = []
        connections.append(heads)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                heads.append(head)
                reply = script(len(heads), head)
                if reply is None:
                    break
                writer.write(reply)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    listening = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = listening.sockets[0].getsockname()[1]
    async with listening:
        yield f"http://127.0.0.1:{port}", connections


def client(base: str, other: httpx.AsyncBaseTransport | None = None) -> httpx.AsyncClient:
    """An httpx client on the lean transport, with a one-second timeout."""
    lean = KeepAliveTransport(ssl.create_default_context(), other or httpx.AsyncHTTPTransport())
    return httpx.AsyncClient(base_url=base, transport=lean, timeout=1.0)


def numbered(n: int, head: bytes) -> bytes:
    """The n-th request of a connection answered ``[n]``, with a total."""
    return answer(b"[%d]" % n, b"X-Total-Count: 7")


def test_gets_share_one_kept_connection() -> None:
    """Answers with a length come back whole, and the next GET reuses the connection."""

    async def run() -> tuple[list[httpx.Response], list[list[bytes]]]:
        async with server(numbered) as (base, seen), client(base) as http:
            got = [await http.get("/a", params={"page": 1}), await http.get("/b")]
        return got, seen

    got, seen = asyncio.run(run())
    assert [r.json() for r in got] == [[1], [2]] and got[0].headers["x-total-count"] == "7"
    assert len(seen) == 1 and seen[0][0].startswith(b"GET /a?page=1 HTTP/1.1\r\n")
    assert b"\r\nHost: 127.0.0.1:" in seen[0][0]


def test_a_chunked_answer_is_read_whole_and_close_is_obeyed() -> None:
    """A chunked body is joined; ``Connection: close`` makes the next GET connect again."""
    chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    chunked += b"3\r\n[1,\r\n2\r\n2]\r\n0\r\n\r\n"

    async def run() -> tuple[list[object], int]:
        async with server(lambda n, _: chunked) as (base, seen), client(base) as http:
            got = [(await http.get("/")).json(), (await http.get("/")).json()]
        return got, len(seen)

    assert asyncio.run(run()) == ([[1, 2], [1, 2]], 2)


def test_a_connection_closed_without_an_answer_is_a_protocol_error() -> None:
    """No answer before the server closes is httpx's RemoteProtocolError (retried once by the
    toolkit's transport), and the next GET opens a new connection."""

    asked: list[bytes] = []

    def first_unanswered(n: int, head: bytes) -> bytes | None:
        asked.append(head)
        return None if len(asked) == 1 else answer(b"1")

    async def run() -> tuple[type[Exception], int, list[list[bytes]]]:
        async with server(first_unanswered) as (base, seen), client(base) as http:
            with pytest.raises(httpx.TransportError) as failed:
                await http.get("/")
            status = (await http.get("/")).status_code
        return type(failed.value), status, seen

    kind, status, seen = asyncio.run(run())
    assert kind is httpx.RemoteProtocolError and status == 200 and len(seen) == 2


def test_no_answer_in_time_is_a_read_timeout() -> None:
    """A server that never answers gives httpx's ReadTimeout after the read timeout."""

    async def run() -> None:
        async with server(lambda n, _: b"") as (base, _), client(base) as http:
            await http.get("/", timeout=0.2)

    with pytest.raises(httpx.ReadTimeout):
        asyncio.run(run())


def test_other_requests_go_to_the_other_transport() -> None:
    """A request with a body (or another method) is handed to the transport given for them."""
    handled: list[str] = []

    def handle(request: httpx.Request) -> httpx.Response:
        handled.append(request.method)
        return httpx.Response(201, json={"ok": True})

    async def run() -> int:
        other = httpx.MockTransport(handle)
        async with server(lambda n, _: answer(b"{}")) as (base, _), client(base, other) as http:
            return (await http.post("/", json={"a": 1})).status_code

    assert asyncio.run(run()) == 201 and handled == ["POST"]
