"""The HTTP front: what one connection may hold before its request reaches the app.

uvicorn (0.54) bounds none of it with httptools: a request head may grow without limit, a
connection that sends half a request (or nothing) stays open forever, and ``limit_concurrency``
counts every connection alike, so one client holding thousands of half-sent requests turns
everyone else away with 503. ``h11_max_incomplete_event_size`` exists only for h11, and
``timeout_keep_alive`` only runs between requests (the first byte of the next one cancels it).

:func:`protocol` is the class given to ``uvicorn.Config(http=...)``. It wraps uvicorn's
httptools protocol by composition over the public :class:`asyncio.Protocol` interface only:
it builds the inner protocol with the arguments uvicorn gives it, forwards every event to it,
and follows the raw bytes it forwards (:class:`Framing`) to add these limits (``Config``).
The inner class is the one uvicorn's documented ``http="httptools"`` setting names, resolved
by uvicorn's own ``Config`` (:func:`httptools_protocol`), never imported from its internal
modules, and only constructed; no uvicorn method is overridden or called beyond that
interface.

Limits:

* ``header_limit`` bytes for a request line and headers together: past it, ``431`` and close;
* ``header_timeout`` seconds from a connection's opening, or a request's first byte, to the
  end of its headers: past it, ``408`` and close (slowloris); and ``body_timeout`` seconds
  from the end of the headers to the end of the body: past it the connection is closed (the
  handler waiting for the body sees the client gone);
* ``http_address_connections`` open connections per peer address: one more is ``503`` and
  closed at once, so one client cannot take the connection pool from the others;
* after any of these refusals, the address is benched for ``header_penalty`` seconds (from
  its latest refusal) and its new connections are held unanswered: each is answered ``429``
  (a JSON body and ``Retry-After``: none of its requests ran) and closed at the first
  multiple of ``header_penalty`` after its opening at which the address is no longer
  benched, and at the latest ``header_timeout`` after its opening (at once when the address
  already holds twice ``http_address_connections``, or the server ``http_held_connections``
  from all addresses, which bounds the file descriptors held). A client sharing the address
  with the one refused (behind one proxy) so reads a refusal it can retry, never a hang-up.
  An attacker reconnecting in a loop waits instead of costing the server an accept and a
  parse per attempt, and the server's time stays with everyone else. A held connection gets
  no uvicorn protocol (its accept is all it costs) and its own deadline, so held connections
  do not all end, and come back, in one burst; what it sends is discarded, and one that
  sends more than ``header_limit`` or hangs up is dropped at once (held floods would
  otherwise fill the host's TCP memory with unread buffers).

A websocket upgrade leaves the guard: uvicorn hands the transport to its websocket protocol
(``transport.set_protocol``), which the guard sees as ``transport.get_protocol()`` no longer
being itself; the live service bounds its own sockets.
"""

from __future__ import annotations

import asyncio
import math
from collections import Counter
from typing import Any, Literal, cast

import uvicorn

from explorer.emulator.config import Config

#: The end of a request head (or of a chunked body's trailers).
_HEAD_END = b"\r\n\r\n"
_REASONS = {
    408: "Request Timeout",
    429: "Too Many Requests",
    431: "Request Header Fields Too Large",
    503: "Busy",
}
#: The bytes of blank lines, which may come before a request line.
_BLANK = b"\r\n"
#: Longest chunk-size line followed; a longer one is no client's.
_CHUNK_LINE_LIMIT = 4096

Phase = Literal["head", "body", "idle"]


class HeadTooLarge(Exception):
    """A request head (or a chunked body's trailers) passed the byte limit."""


class BadFraming(Exception):
    """Bytes no valid request has (the app's own parser answers them 400)."""


class Framing:
    """Where one connection's bytes stand among its HTTP/1.1 requests: in a ``head`` (from
    the connection's opening, or a request's first byte, to ``\\r\\n\\r\\n``), in a ``body``
    (by ``Content-Length`` or chunked framing), or ``idle`` between requests. Enough to time
    and size each part; the app's parser still validates everything."""

    def __init__(self, head_limit: int) -> None:
        self.head_limit = head_limit
        self.phase: Phase = "head"
        #: Phases entered so far: a change means the current phase started anew.
        self.entered = 0
        self._head = bytearray()
        #: Body bytes left (of the Content-Length, or of a chunk and its CRLF).
        self._left = 0
        #: Where a chunked body stands; None for a Content-Length body.
        self._chunk: Literal["size", "data", "trailers"] | None = None
        self._line = bytearray()
        self._trailer_tail = b""
        self._trailer_bytes = 0

    def feed(self, data: bytes) -> None:
        """Follow ``data``; raises :class:`HeadTooLarge` or :class:`BadFraming`."""
        if self._whole_head(data):
            return
        at, end = 0, len(data)
        while at < end:
            if self.phase == "idle":
                # Blank lines before a request line are no request yet (RFC 9112, 2.2).
                while at < end and data[at] in _BLANK:
                    at += 1
                if at == end:
                    return
                self._enter("head")
            if self.phase == "head":
                at = self._follow_head(data, at)
            elif self._chunk is None:
                taken = min(self._left, end - at)
                self._left -= taken
                at += taken
                if not self._left:
                    self._enter("idle")
            else:
                at = self._follow_chunks(data, at)

    def _whole_head(self, data: bytes) -> bool:
        """Follow ``data`` at once if it is exactly one request head with no body, between
        requests (most requests arrive so): the steps :meth:`feed` would take, in one."""
        phase = self.phase
        if phase == "body" or self._head or not data or data[0] in _BLANK:
            return False
        found = data.find(_HEAD_END, 0, self.head_limit)
        if found < 0 or found + 4 != len(data):
            return False
        lowered = data.lower()
        if b"\ntransfer-encoding:" in lowered or b"\ncontent-length:" in lowered:
            return False
        # From idle the head is entered and left; from the start of one, only left.
        self.entered += 2 if phase == "idle" else 1
        self.phase = "idle"
        self._chunk, self._left = None, 0
        return True

    def _enter(self, phase: Phase) -> None:
        self.phase = phase
        self.entered += 1

    def _follow_head(self, data: bytes, at: int) -> int:
        """Take head bytes from ``data[at:]``; return where the head's bytes end there."""
        held = len(self._head)
        if not held:
            # Most heads arrive whole: take them without a copy.
            found = data.find(_HEAD_END, at, at + self.head_limit)
            if found >= 0:
                self._start_body(data[at : found + 4])
                return found + 4
        # Never hold more than the limit and one byte: that much already decides it.
        self._head += data[at : at + self.head_limit + 1 - held]
        found = self._head.find(_HEAD_END, max(0, held - 3))
        if found < 0:
            if len(self._head) > self.head_limit:
                raise HeadTooLarge
            return len(data)
        size = found + 4
        if size > self.head_limit:
            raise HeadTooLarge
        head = bytes(self._head[:size])
        self._head.clear()
        self._start_body(head)
        return at + size - held

    def _start_body(self, head: bytes) -> None:
        """Enter the body ``head`` announces, or ``idle`` when it has none."""
        lowered = head.lower()
        if b"\ntransfer-encoding:" in lowered:
            codings = b",".join(_values(lowered, b"transfer-encoding")).split(b",")
            if codings[-1].strip() != b"chunked":
                raise BadFraming
            self._chunk, self._line = "size", bytearray()
            self._enter("body")
            return
        self._chunk = None
        self._left = 0
        if b"\ncontent-length:" in lowered:
            lengths = {value.strip() for value in _values(lowered, b"content-length")}
            length = lengths.pop() if len(lengths) == 1 else b""
            if not length.isdigit():
                raise BadFraming
            self._left = int(length)
        self._enter("body" if self._left else "idle")

    def _follow_chunks(self, data: bytes, at: int) -> int:
        """Take chunked-body bytes from ``data[at:]``; return where they end there."""
        end = len(data)
        if self._chunk == "size":
            newline = data.find(b"\n", at)
            if newline < 0:
                self._line += data[at:]
                if len(self._line) > _CHUNK_LINE_LIMIT:
                    raise BadFraming
                return end
            line = bytes(self._line) + data[at:newline]
            self._line.clear()
            try:
                size = int(line.split(b";", 1)[0].strip(), 16)
            except ValueError:
                raise BadFraming from None
            if size:
                self._chunk, self._left = "data", size + 2
            else:
                # The last chunk's line ended the line before any trailers.
                self._chunk, self._trailer_tail, self._trailer_bytes = "trailers", b"\r\n", 0
            return newline + 1
        if self._chunk == "data":
            taken = min(self._left, end - at)
            self._left -= taken
            if not self._left:
                self._chunk = "size"
            return at + taken
        window = self._trailer_tail + data[at:]
        found = window.find(_HEAD_END)
        if found < 0:
            self._trailer_tail = window[-3:]
            self._trailer_bytes += end - at
            if self._trailer_bytes > self.head_limit:
                raise HeadTooLarge
            return end
        self._enter("idle")
        return at + found + 4 - len(self._trailer_tail)


def _values(lowered_head: bytes, name: bytes) -> list[bytes]:
    """The values of header ``name`` in a lower-cased head."""
    values = []
    for line in lowered_head.split(b"\r\n")[1:]:
        key, _, value = line.partition(b":")
        if key == name:
            values.append(value)
    return values


class Front:
    """What the connections of one server share: connections served and held, and refusals,
    by address."""

    def __init__(self, limits: Config) -> None:
        self.limits = limits
        self.open_by_address: Counter[str] = Counter()
        #: Loop time until which each refused address's new connections are held unanswered.
        self.benched: dict[str, float] = {}
        #: Connections held unanswered, by address and in all.
        self.held_by_address: Counter[str] = Counter()
        self.held_total = 0
        wait = max(1, math.ceil(limits.header_penalty))
        #: The answer a held connection ends with (built once: the held may be many).
        self.turned_away = _answer(
            429,
            "A request from this address was refused a moment ago (too large, too slow or one "
            f"connection too many): this connection was held and not served; retry in {wait} s.",
            f"retry-after: {wait}\r\n",
        )

    def admit(self, address: str, now: float) -> Literal["serve", "busy", "hold"]:
        """Say what becomes of a new connection from ``address``, counting it when served."""
        if self.benched.get(address, 0.0) > now:
            return "hold"
        self.benched.pop(address, None)
        self.open_by_address[address] += 1
        return (
            "busy"
            if self.open_by_address[address] > self.limits.http_address_connections
            else "serve"
        )

    def bench(self, address: str, now: float) -> None:
        """Hold ``address``'s new connections unanswered for the penalty."""
        self.benched[address] = now + self.limits.header_penalty

    def release(self, address: str) -> None:
        """A served connection from ``address`` ended (or left the guard)."""
        self.open_by_address[address] -= 1
        if self.open_by_address[address] <= 0:
            del self.open_by_address[address]

    def hold(self, address: str) -> bool:
        """Count a connection from ``address`` held unanswered, unless the address already has
        twice as many held as it may have served, or the front holds all it may (then False:
        the connection is dropped, and a client in a loop reconnects at once: holding is
        cheaper)."""
        limits = self.limits
        if (
            self.held_by_address[address] >= 2 * limits.http_address_connections
            or self.held_total >= limits.http_held_connections
        ):
            return False
        self.held_by_address[address] += 1
        self.held_total += 1
        return True

    def unhold(self, address: str) -> None:
        """A held connection from ``address`` ended."""
        self.held_total -= 1
        self.held_by_address[address] -= 1
        if self.held_by_address[address] <= 0:
            del self.held_by_address[address]


class Guard(asyncio.Protocol):
    """One connection: uvicorn's httptools protocol inside, refused or closed at the first
    limit it passes. :func:`protocol` gives each server's subclass its :class:`Front`."""

    front: Front
    #: uvicorn's protocol class, built for each connection that is served.
    inner: type[asyncio.Protocol]
    _framing: Framing

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._arguments = (args, kwargs)
        #: uvicorn's protocol, built only for a connection that is served: one held under
        #: attack costs no parser, no server registration, no framing.
        self._inner: asyncio.Protocol | None = None
        self._address = ""
        self._deadline: asyncio.TimerHandle | None = None
        self._counted = False
        self._held = False
        #: Bytes a held connection sent, read and discarded.
        self._discarded = 0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.Transport, transport)
        self._loop = asyncio.get_running_loop()
        peer = transport.get_extra_info("peername")
        self._address = str(peer[0]) if isinstance(peer, (list, tuple)) and peer else ""
        verdict = self.front.admit(self._address, self._loop.time())
        if verdict == "hold":
            self._hold()
            return
        self._counted = True
        args, kwargs = self._arguments
        self._inner = self.inner(*args, **kwargs)
        self._inner.connection_made(self._transport)
        self._framing = Framing(self.front.limits.header_limit)
        if verdict == "busy":
            self._refuse(503, "Too many connections from this address.")
        else:
            self._arm()

    def _hold(self) -> None:
        """A tarpit: answer nothing until the penalty has passed (at once past the held share),
        then a 429 and close, so a client reconnecting in a loop waits instead of
        making the server accept again. Each connection has its own deadline, so held ones
        do not all end, and come back, at once. What a held connection sends is read and
        discarded, not left in the kernel: one that sends more than a head may hold (a flood)
        or hangs up is dropped at once, so held floods cannot pile megabytes of unread
        buffers into the host's TCP memory, slowing every connection on it."""
        if not self.front.hold(self._address):
            self._turn_away()
            return
        self._held = True
        self._opened = self._loop.time()
        self._deadline = self._loop.call_later(self.front.limits.header_penalty, self._held_late)

    def _held_late(self) -> None:
        """Keep holding while the address is still benched (a client reconnecting in a loop
        would only be held again), but never past the head deadline; else turn it away."""
        now = self._loop.time()
        limits = self.front.limits
        if (
            self.front.benched.get(self._address, 0.0) > now
            and now + limits.header_penalty - self._opened <= limits.header_timeout
        ):
            self._deadline = self._loop.call_later(limits.header_penalty, self._held_late)
        else:
            self._deadline = None
            self._turn_away()

    def data_received(self, data: bytes) -> None:
        if self._inner is None:
            self._discarded += len(data)
            if self._discarded > self.front.limits.header_limit:
                self._transport.abort()
            return
        framing = self._framing
        entered = framing.entered
        broken = False
        try:
            framing.feed(data)
        except HeadTooLarge:
            self._refuse(431, "The request line and headers are too large.")
            return
        except BadFraming:
            broken = True
        self._inner.data_received(data)
        if self._transport.get_protocol() is not self:
            # uvicorn handed the connection to its websocket protocol: this guard never
            # hears of it again, so its deadline and slot end here.
            self._release()
        elif broken:
            # The app's parser has answered 400; what follows cannot be followed.
            self._disarm()
            self._transport.close()
        elif framing.entered != entered:
            self._arm()

    def eof_received(self) -> bool | None:
        # A held connection's peer hung up: returning None closes it now, freeing its slot.
        return None if self._inner is None else self._inner.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        self._release()
        if self._inner is not None:
            self._inner.connection_lost(exc)

    def pause_writing(self) -> None:
        if self._inner is not None:
            self._inner.pause_writing()

    def resume_writing(self) -> None:
        if self._inner is not None:
            self._inner.resume_writing()

    def _release(self) -> None:
        """Stop the deadline and give the connection's slot back, once."""
        self._disarm()
        if self._counted:
            self._counted = False
            self.front.release(self._address)
        elif self._held:
            self._held = False
            self.front.unhold(self._address)

    def _arm(self) -> None:
        """Start the deadline of the phase the connection just entered."""
        self._disarm()
        limits = self.front.limits
        if self._framing.phase == "head":
            self._deadline = self._loop.call_later(limits.header_timeout, self._head_late)
        elif self._framing.phase == "body":
            self._deadline = self._loop.call_later(limits.body_timeout, self._body_late)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _head_late(self) -> None:
        self._deadline = None
        if not self._transport.is_closing():
            self._refuse(408, "The request headers took too long.")

    def _body_late(self) -> None:
        self._deadline = None
        self.front.bench(self._address, self._loop.time())
        self._transport.close()

    def _refuse(self, status: int, message: str) -> None:
        """Answer ``status`` with a JSON error body, close the connection and bench its
        address."""
        self._disarm()
        self.front.bench(self._address, self._loop.time())
        self._transport.write(_answer(status, message))
        self._transport.close()

    def _turn_away(self) -> None:
        """End a held connection with a 429 naming the wait (no request of it ran), so a
        client sharing the address (behind one proxy) reads a refusal, not a hang-up."""
        self._transport.write(self.front.turned_away)
        self._transport.close()


def _answer(status: int, message: str, headers: str = "") -> bytes:
    """A whole ``status`` response with the platform's JSON error body, closing."""
    body = f'{{"statusCode":{status},"error":"{_REASONS[status]}","message":"{message}"}}'
    return (
        f"HTTP/1.1 {status} {_REASONS[status]}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\n{headers}connection: close\r\n\r\n{body}"
    ).encode()


def httptools_protocol() -> type[asyncio.Protocol]:
    """The protocol class uvicorn serves HTTP with under ``http="httptools"``, as its own
    ``Config`` resolves the setting (no logging configured, no app loaded but a stub)."""
    config = uvicorn.Config(_no_app, http="httptools", lifespan="off", log_config=None)
    config.load()
    inner: type[asyncio.Protocol] = config.http_protocol_class
    return inner


async def _no_app(scope: Any, receive: Any, send: Any) -> None:
    """The app of the throwaway ``Config`` above (never called)."""


def protocol(limits: Config) -> type[asyncio.Protocol]:
    """The guard class for one server (``uvicorn.Config(http=...)``), its connections
    sharing the per-address counts and penalties of ``limits``."""
    return type("Guarded", (Guard,), {"front": Front(limits), "inner": httptools_protocol()})
