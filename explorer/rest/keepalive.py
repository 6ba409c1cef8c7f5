"""A lean HTTP/1.1 transport for the toolkit's GETs: keep-alive connections parsed by httptools.

httpx's own transport (httpcore, h11 in pure Python, anyio) spends about 2.8 ms of CPU on a
126 KB listing page where the standard library's ``http.client`` spends 0.5; through this one a
ranking's 50 cold pages cost 37-49 ms of CPU against 130-159 (``python -m benchmarks
rest_client``, the latest round, the shared machine; ``docs/performance.md``). So this
:class:`httpx.AsyncBaseTransport` (httpx's documented seam for transports) answers GETs without
a body itself: asyncio connections kept open per origin, the request head written in one piece,
the answer parsed by httptools (llhttp in C, a dependency already: uvicorn's parser). The
client above it (``rest/transport.py``'s ``httpx.AsyncClient``: authentication, cookies,
headers, redirects, decoding) is unchanged, and every other request (a body, another method)
goes to httpx's own transport, as do clients behind a proxy (``Transport`` picks this transport
only where the environment names none).

Failures are httpx's exceptions, as its own transport raises them: no connection is
:class:`httpx.ConnectError` (or :class:`httpx.ConnectTimeout`), a connection closed before the
whole answer arrived :class:`httpx.RemoteProtocolError` (``Transport.send`` retries that once: a
keep-alive connection the server closed meanwhile), no answer in time
:class:`httpx.ReadTimeout`. An answer must say its length or be chunked (uvicorn's always do); one
that ends with its connection is refused as a protocol error.
"""

from __future__ import annotations

import asyncio
import os
import ssl
from typing import Any

import httptools
import httpx

#: Idle connections kept per origin, and connections open at once (httpx's defaults).
KEEP_IDLE = 20
MAX_OPEN = 100
_PORTS = {"http": 80, "https": 443}


class _Answer:
    """One answer, built by httptools' callbacks as its bytes are fed to ``parser``."""

    def __init__(self) -> None:
        self.parser = httptools.HttpResponseParser(self)
        self.status = 0
        self.reason = b""
        self.headers: list[tuple[bytes, bytes]] = []
        self.body: list[bytes] = []
        self.keep = False
        self.done = False

    def on_status(self, reason: bytes) -> None:
        self.reason += reason

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers.append((name, value))

    def on_headers_complete(self) -> None:
        self.status = self.parser.get_status_code()
        self.keep = self.parser.should_keep_alive()

    def on_body(self, body: bytes) -> None:
        self.body.append(body)

    def on_message_complete(self) -> None:
        self.done = True


class _Connection(asyncio.Protocol):
    """One keep-alive connection: one exchange at a time."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self._answer: _Answer | None = None
        self._waiter: asyncio.Future[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        answer, waiter = self._answer, self._waiter
        if answer is None or waiter is None or waiter.done():
            self.close()  # bytes nobody asked for: the connection cannot be trusted again
            return
        try:
            answer.parser.feed_data(data)
        except httptools.HttpParserError as exc:
            waiter.set_exception(exc)
            return
        if answer.done:
            waiter.set_result(None)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_exception(ConnectionResetError("the server closed the connection"))

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()

    async def exchange(self, head: bytes, timeout: float | None) -> _Answer:
        """Write ``head`` (a request without a body) and read its whole answer."""
        assert self.transport is not None
        self._answer = answer = _Answer()
        self._waiter = asyncio.get_running_loop().create_future()
        try:
            self.transport.write(head)
            # asyncio.timeout rather than wait_for, which (before Python 3.12) can swallow a
            # cancellation arriving as the answer completes: a cancelled listing went on.
            async with asyncio.timeout(timeout):
                await self._waiter
        finally:
            self._waiter = self._answer = None
        return answer


class KeepAliveTransport(httpx.AsyncBaseTransport):
    """GETs without a body over kept connections; anything else through ``other`` (see the
    module docstring). ``tls`` verifies https origins."""

    def __init__(self, tls: ssl.SSLContext, other: httpx.AsyncBaseTransport) -> None:
        self._tls = tls
        self._other = other
        self._idle: dict[tuple[str, str, int], list[_Connection]] = {}
        self._open = asyncio.Semaphore(MAX_OPEN)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        if (
            request.method != "GET"
            or url.scheme not in _PORTS
            or "content-length" in request.headers
            or "transfer-encoding" in request.headers
        ):
            return await self._other.handle_async_request(request)
        origin = (url.scheme, url.host, url.port or _PORTS[url.scheme])
        timeout: dict[str, Any] = request.extensions.get("timeout", {})
        async with self._open:
            connection = self._idle_connection(origin)
            if connection is None:
                connection = await self._connect(request, origin, timeout.get("connect"))
            answer = await self._exchange(connection, request, timeout.get("read"))
            if answer.keep and not connection.closed:
                idle = self._idle.setdefault(origin, [])
                if len(idle) < KEEP_IDLE:
                    idle.append(connection)
                    connection = None
            if connection is not None:
                connection.close()
        return httpx.Response(
            answer.status,
            headers=answer.headers,
            content=b"".join(answer.body),
            extensions={"http_version": b"HTTP/1.1", "reason_phrase": answer.reason},
        )

    def _idle_connection(self, origin: tuple[str, str, int]) -> _Connection | None:
        """A kept connection to ``origin`` the server has not closed meanwhile, if any."""
        idle = self._idle.get(origin, [])
        while idle:
            connection = idle.pop()
            if not connection.closed:
                return connection
        return None

    async def _connect(
        self, request: httpx.Request, origin: tuple[str, str, int], timeout: float | None
    ) -> _Connection:
        scheme, host, port = origin
        tls = self._tls if scheme == "https" else None
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                _, connection = await loop.create_connection(
                    _Connection, host, port, ssl=tls, server_hostname=host if tls else None
                )
        except TimeoutError:
            said = f"no connection in time to {host}:{port}"
            raise httpx.ConnectTimeout(said, request=request) from None
        except OSError as exc:
            raise httpx.ConnectError(_reason(exc), request=request) from None
        return connection

    async def _exchange(
        self, connection: _Connection, request: httpx.Request, timeout: float | None
    ) -> _Answer:
        url = request.url
        lines = [b"GET " + url.raw_path + b" HTTP/1.1"]
        if "host" not in request.headers:
            lines.append(b"Host: " + url.netloc)
        lines += [name + b": " + value for name, value in request.headers.raw]
        try:
            return await connection.exchange(b"\r\n".join(lines) + b"\r\n\r\n", timeout)
        except TimeoutError:
            connection.close()
            raise httpx.ReadTimeout("no answer in time", request=request) from None
        except (OSError, httptools.HttpParserError) as exc:
            connection.close()
            raise httpx.RemoteProtocolError(str(exc), request=request) from None
        except BaseException:
            connection.close()
            raise

    async def aclose(self) -> None:
        for idle in self._idle.values():
            for connection in idle:
                connection.close()
        self._idle.clear()
        await self._other.aclose()


def _reason(exc: OSError) -> str:
    """Why a connection failed, without the address (the caller's message names the URL)."""
    if exc.errno is not None and exc.errno > 0:
        return os.strerror(exc.errno)
    return str(exc.strerror or exc) or type(exc).__name__
