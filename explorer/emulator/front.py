"""The HTTP front: what one connection may hold before its request reaches the app.

uvicorn (0.54) bounds none of it with httptools: a request head may grow without limit, a
connection that sends half a request (or nothing) stays open forever, and ``limit_concurrency``
counts every connection alike, so one client holding thousands of half-sent requests turns
everyone else away with 503. ``h11_max_incomplete_event_size`` exists only for h11, and
``timeout_keep_alive`` only runs between requests (the first byte of the next one cancels it).
:func:`protocol` subclasses uvicorn's httptools protocol, through the hooks the parser calls
(``on_message_begin``, ``on_headers_complete``, ``on_message_complete``), to add three limits
(``Config``):

* ``header_limit`` bytes for a request line and headers together: past it, ``431`` and close;
* ``header_timeout`` seconds from a connection's opening, or a request's first byte, to the
  end of its headers: past it, ``408`` and close (slowloris); and ``body_timeout`` seconds
  from the end of the headers to the end of the body: past it the connection is closed (the
  handler waiting for the body sees the client gone);
* ``http_address_connections`` open connections per peer address: one more is ``503`` and
  closed at once, so one client cannot take the connection pool from the others;
* after any of these refusals, the address's new connections are held unread and dropped
  when ``header_penalty`` seconds have passed (at once past twice the per-address cap): an
  attacker reconnecting in a loop waits instead of costing the server a parse, or even an
  accept, per attempt, and the server's time stays with everyone else.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from explorer.emulator.context import Config

#: The end of a request head.
_HEAD_END = b"\r\n\r\n"
_REASONS = {408: "Request Timeout", 431: "Request Header Fields Too Large", 503: "Busy"}


def protocol(limits: Config) -> type[asyncio.Protocol]:
    """uvicorn's httptools protocol with the limits of ``limits``; the per-address counts are
    shared by the connections of one server."""
    open_by_address: Counter[str] = Counter()
    #: Loop time until which each refused address's connections are dropped unread.
    benched: dict[str, float] = {}

    class Guarded(HttpToolsProtocol):
        """One connection, refused or closed at the first limit it passes."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._address = ""
            self._head_bytes = 0
            self._in_head = True
            self._tail = b""
            self._deadline: asyncio.TimerHandle | None = None
            self._tarpit = False
            self._counted = False

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._address = self.client[0] if self.client else ""
            open_by_address[self._address] += 1
            self._counted = True
            until = benched.get(self._address, 0.0)
            if until > self.loop.time():
                if open_by_address[self._address] > 2 * limits.http_address_connections:
                    transport.abort()
                    return
                # A tarpit: read nothing and drop it when the penalty ends, so a client
                # reconnecting in a loop waits instead of making the server accept again.
                # (uvloop starts reading after this method returns: pause just after.)
                self._tarpit = True
                self.loop.call_soon(transport.pause_reading)
                self._deadline = self.loop.call_at(until, transport.abort)
                return
            benched.pop(self._address, None)
            if open_by_address[self._address] > limits.http_address_connections:
                self._refuse(503, "Too many connections from this address.")
                return
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._release()
            super().connection_lost(exc)

        def handle_websocket_upgrade(self) -> None:
            # The websocket protocol takes the connection over (the live service counts its
            # own sockets): this one's deadline and count end here.
            self._release()
            super().handle_websocket_upgrade()

        def _release(self) -> None:
            """Stop the deadline and give the connection's slot back, once."""
            self._disarm()
            if self._counted:
                self._counted = False
                open_by_address[self._address] -= 1
                if open_by_address[self._address] <= 0:
                    del open_by_address[self._address]

        def data_received(self, data: bytes) -> None:
            if self._tarpit:
                return
            if self._in_head:
                # Count head bytes only: the body that may follow in the same read is not head.
                end = (self._tail + data).find(_HEAD_END)
                counted = len(data) if end < 0 else max(0, end + 4 - len(self._tail))
                self._head_bytes += counted
                self._tail = data[-3:]
                if self._head_bytes > limits.header_limit:
                    self._refuse(431, "The request line and headers are too large.")
                    return
            super().data_received(data)

        def on_message_begin(self) -> None:
            if self._deadline is None:
                self._arm()
            super().on_message_begin()

        def on_headers_complete(self) -> None:
            self._in_head = False
            self._disarm()
            # Until the body ends (at once for a request without one, in this same read).
            self._deadline = self.loop.call_later(limits.body_timeout, self._body_too_slow)
            super().on_headers_complete()

        def on_message_complete(self) -> None:
            # What comes next on this connection is the head of another request.
            self._in_head, self._head_bytes, self._tail = True, 0, b""
            self._disarm()
            super().on_message_complete()

        def _arm(self) -> None:
            self._deadline = self.loop.call_later(limits.header_timeout, self._too_slow)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _too_slow(self) -> None:
            self._deadline = None
            if self._in_head and not self.transport.is_closing():
                self._refuse(408, "The request headers took too long.")

        def _body_too_slow(self) -> None:
            self._deadline = None
            benched[self._address] = self.loop.time() + limits.header_penalty
            self.transport.close()

        def _refuse(self, status: int, message: str) -> None:
            """Answer ``status`` with a JSON error body, close the connection and bench its
            address."""
            self._disarm()
            benched[self._address] = self.loop.time() + limits.header_penalty
            body = (
                f'{{"statusCode":{status},"error":"{_REASONS[status]}","message":"{message}"}}'
            ).encode()
            head = (
                f"HTTP/1.1 {status} {_REASONS[status]}\r\ncontent-type: application/json\r\n"
                f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
            ).encode()
            self.transport.write(head + body)
            self.transport.close()

    return Guarded
