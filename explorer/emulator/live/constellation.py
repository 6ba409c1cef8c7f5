"""Constellation: the live-events websocket service, at the platform's web root.

The protocol is the historical one (developer docs, pages/02.reference/02.constellation;
the official client is the npm package ``carina``):

* a client opens a websocket to the web root (``ws://HOST:PORT/``, where the historical
  ``wss://constellation.mixer.com`` was), offering the subprotocol ``cnstl`` (or
  ``cnstl-gzip``; frames are sent as text either way, which the docs allow). Who it is comes
  from the upgrade request, as historically: an ``Authorization: Bearer``/``JWT`` header, or
  the session cookie (only from a page of this platform: a cookie sent with another site's
  ``Origin`` is ignored, so no other page can read a user's private events), or the same
  credential as an ``authorization`` or ``jwt`` query parameter (:func:`credentialed`). No
  credential is anonymous; ``Client-ID`` and ``X-Is-Bot`` are accepted and not required
  (published clients send neither). A credential that is not valid closes the socket with
  4011 (session expired).
* the server sends ``{"type": "event", "event": "hello", "data": {"authenticated": bool}}``;
* the client sends methods ``{"type": "method", "method", "params": {...}, "id"}``, each
  answered by ``{"type": "reply", "id", "result", "error"}``: ``livesubscribe`` and
  ``liveunsubscribe`` with ``params.events`` (all or none subscribed), ``ping``
  (``result: {}``);
* events arrive as ``{"type": "event", "event": "live", "data": {"channel": name,
  "payload": ...}}``.

Error codes are the docs': 4006 not JSON, 4007 not gzip, 4008 unknown packet type, 4009
unknown method, 4010 bad arguments, 4011 session expired (closes), 4106 unknown event, 4107
not permitted, 4108 already subscribed, 4110 too many subscriptions. Unsubscribing from an
event one is not subscribed to is no error (the docs say so; carina's 4109 is never sent).

Delivery: one task per process reads the :class:`~.outbox.Outbox` while anyone is connected
(every :data:`POLL` seconds on SQLite, when events are committed on PostgreSQL) and hands each
event to its subscribers' send queues.

What one client can make a process hold is bounded (SECURITY.md, "Live events"):

* no message over ``Config.chat_max_frame`` bytes (64 KiB) is read, counted after inflating:
  a larger frame closes the socket with 1009 (uvicorn's ``ws_max_size``, set by
  :mod:`~explorer.emulator.server`, which also turns permessage-deflate off: thousands of tiny
  deflated frames would each inflate to the limit in one read), and a gzipped frame
  is inflated only up to the limit (:func:`decode`) and answered 4007 past it, the socket
  kept (closing would make the server read, and drop, whatever the peer sends until it
  answers the close); so no JSON larger than 64 KiB is parsed;
* a reply echoes an ``id`` only when it is a number or a string of at most :data:`MAX_ID`
  characters (else the reply's id is null and its error 4010), and the names a message
  quotes are cut to 100 characters, so a reply is never much larger than a small packet;
* a connection whose unsent frames pass ``Config.chat_send_buffer`` bytes (1 MiB) is closed
  with 1008;
* the sockets of one address are read at :data:`RATE` units a second together (bursts of
  :data:`BURST`), a frame costing one unit and one more per KiB: past that, reading them
  waits (TCP holds the sender back), so a flood of methods or of large frames costs the loop
  what a slow client would;
* a socket holds at most :data:`MAX_SUBSCRIPTIONS` subscriptions and one address at most
  :data:`ADDRESS_SUBSCRIPTIONS` over all its sockets (4110); one address holds at most
  ``Config.chat_address_connections`` sockets per process (as for anonymous chat), one more
  is closed with 1008 at once.

A signed-in socket lives only as long as its credential: when a credential ends
(:mod:`~explorer.emulator.endings` writes :data:`~.outbox.ENDED` to the outbox, in the same
transaction) each process re-checks the credential of its sockets named by it, and every
:data:`RECHECK` seconds those of every signed-in socket (an expired token); a socket whose
credential no longer holds is closed with 4011.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson
from starlette.requests import HTTPConnection
from starlette.websockets import WebSocket, WebSocketDisconnect

from explorer.emulator import addresses
from explorer.emulator.context import Caller, Services
from explorer.emulator.db import channels
from explorer.emulator.live.outbox import ENDED, Outbox
from explorer.emulator.policy import identify
from explorer.emulator.responses import ApiError
from explorer.wire.topics import SUBSCRIBE, UNSUBSCRIBE, Topic, UnknownTopic, parse

log = logging.getLogger("explorer.emulator.live")

#: Seconds between reads of the outbox while anyone is connected (SQLite, or PostgreSQL while
#: its listener is down).
POLL = 0.05
#: Subscriptions one connection may hold (the historical limit was 1,000,000 per address).
MAX_SUBSCRIPTIONS = 10_000
#: Subscriptions the sockets of one address may hold together, per process.
ADDRESS_SUBSCRIPTIONS = 20_000
#: Longest string ``id`` a reply echoes.
MAX_ID = 100
#: Frames a second the sockets of one address are read at (together), and the burst allowed.
RATE = 200.0
BURST = 1000.0
#: Frame bytes worth one more unit of the allowance.
UNIT = 1024
#: Seconds (of the platform's clock) between re-checks of every signed-in socket's credential
#: (one that expired closes).
RECHECK = 30.0
#: Subprotocols, in order of preference.
SUBPROTOCOLS = ("cnstl", "cnstl-gzip")
SESSION_EXPIRED = 4011
TOO_SLOW = (1008, "Too slow: send queue full.")
TOO_BIG = (1009, "Frame too large.")
TOO_MANY = (1008, "Too many connections from this address.")
ENDED_CLOSE = (SESSION_EXPIRED, "The credential of this socket has ended.")


class TooBig(Exception):
    """A gzipped frame inflates past the frame limit."""


class MethodError(Exception):
    """A method's error reply: a code from the docs' table and a message."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(eq=False, slots=True)
class Connection:
    """One open socket: who it is, what it follows, what waits to be sent (at most
    ``limit`` bytes)."""

    ws: WebSocket
    caller: Caller | None
    address: str
    limit: int
    topics: set[str] = field(default_factory=set)
    queue: asyncio.Queue[bytes] = field(default_factory=asyncio.Queue)
    queued: int = 0

    def send(self, frame: bytes) -> bool:
        """Queue ``frame``; False when it would pass the byte limit."""
        if self.queued + len(frame) > self.limit:
            return False
        self.queued += len(frame)
        self.queue.put_nowait(frame)
        return True


def credentialed(ws: WebSocket) -> HTTPConnection:
    """The upgrade request with its credential where :func:`identify` reads it: the
    ``Authorization`` header, else the ``authorization`` or ``jwt`` query parameter (the docs let
    every header come as a query parameter; carina sends its ``jwt`` option so)."""
    query = ws.query_params
    if "authorization" in ws.headers:
        return ws
    value = query.get("authorization") or (f"JWT {query['jwt']}" if query.get("jwt") else None)
    if not value:
        return ws
    scope = dict(ws.scope)
    scope["headers"] = [
        *ws.scope["headers"],
        (b"authorization", value.encode("latin-1", "replace")),
    ]
    return HTTPConnection(scope)


def reply(ident: Any, result: Any = None, error: MethodError | None = None) -> bytes:
    """A reply packet."""
    problem = None if error is None else {"code": error.code, "message": error.message}
    return orjson.dumps({"type": "reply", "id": ident, "result": result, "error": problem})


def live_event(topic: str, payload: str) -> bytes:
    """A ``live`` event packet around an already encoded payload."""
    return b"".join(
        (
            b'{"type":"event","event":"live","data":{"channel":',
            orjson.dumps(topic),
            b',"payload":',
            payload.encode(),
            b"}}",
        )
    )


def _ident(packet: Mapping[str, Any]) -> Any:
    """The ``id`` a reply may echo: a number, null, or a short string (else a 4010)."""
    ident = packet.get("id")
    if ident is None or isinstance(ident, int | float):
        return ident
    if isinstance(ident, str) and len(ident) <= MAX_ID:
        return ident
    raise MethodError(4010, f"id must be a number or a string of at most {MAX_ID} characters.")


def _shown(value: Any) -> str:
    """``value`` as an error message quotes it, cut short."""
    return repr(value)[:100]


def inflate(raw: bytes, limit: int) -> bytes:
    """The first gzip member of ``raw``, inflated to at most ``limit`` bytes (:class:`TooBig`
    past it, a 4007 when it is no gzip)."""
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        data = inflater.decompress(raw, limit + 1)
    except zlib.error:
        raise MethodError(4007, "Error decompressing the payload.") from None
    if len(data) > limit:
        raise TooBig
    if not inflater.eof:
        raise MethodError(4007, "Error decompressing the payload.")
    return data


def decode(frame: Mapping[str, Any], limit: int) -> Any:
    """The JSON of a received frame (text, or binary that may be gzipped: inflated to at most
    ``limit`` bytes, :class:`TooBig` past it)."""
    raw: bytes | str | None = frame.get("text")
    if raw is None:
        raw = frame.get("bytes") or b""
        if raw[:2] == b"\x1f\x8b":
            raw = inflate(raw, limit)
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise MethodError(4006, "Error parsing payload as JSON.") from None


class Constellation:
    """The service of one platform process; :meth:`serve` is its websocket endpoint."""

    def __init__(self, services: Services) -> None:
        self.services = services
        #: Largest frame read (the chat nodes' limit, ``Config.chat_max_frame``); a larger one
        #: closes the socket with 1009.
        self.max_frame = services.config.chat_max_frame
        self.subscribers: dict[str, set[Connection]] = {}
        self.connections: set[Connection] = set()
        self._pump: asyncio.Task[None] | None = None
        self._per_address: dict[str, int] = {}
        #: Subscriptions held by each address's sockets.
        self._address_topics: dict[str, int] = {}
        self._closing: set[asyncio.Future[None]] = set()
        self._rechecked = 0.0
        #: Each address's allowance of frames: ``(tokens, loop time)``.
        self._allowance: dict[str, tuple[float, float]] = {}

    # --- the socket -------------------------------------------------------------------

    async def serve(self, ws: WebSocket) -> None:
        """Run one connection until it closes."""
        offered = ws.scope.get("subprotocols") or []
        chosen = next((p for p in SUBPROTOCOLS if p in offered), None)
        await ws.accept(subprotocol=chosen)
        config = self.services.config
        peer = ws.client.host if ws.client else None
        address = addresses.client(peer, ws.headers.get, config.forwarded_allow_ips)
        if self._per_address.get(address, 0) >= config.chat_address_connections:
            await ws.close(*TOO_MANY)
            return
        try:
            caller = self._caller(ws)
        except ApiError as refused:
            await ws.close(SESSION_EXPIRED, refused.message[:120])
            return
        conn = Connection(ws, caller, address, config.chat_send_buffer)
        self.connections.add(conn)
        self._per_address[address] = self._per_address.get(address, 0) + 1
        self._start_pump()
        writer = asyncio.ensure_future(self._write(conn))
        try:
            hello = {"authenticated": caller is not None}
            conn.send(orjson.dumps({"type": "event", "event": "hello", "data": hello}))
            while True:
                frame = await ws.receive()
                if frame["type"] == "websocket.disconnect":
                    break
                size = len(frame.get("text") or frame.get("bytes") or b"")
                await self._pace(address, 1 + size // UNIT)
                if size > self.max_frame:
                    await ws.close(*TOO_BIG)
                    break
                answer = self._answer(conn, frame)
                if not conn.send(answer):
                    self._forget(conn)
                    await ws.close(*TOO_SLOW)
                    break
        except WebSocketDisconnect:
            pass
        finally:
            self._drop(conn)
            left = self._per_address.pop(address, 0) - 1
            if left:
                self._per_address[address] = left
            writer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await writer

    async def _pace(self, address: str, cost: int) -> None:
        """Take ``cost`` from ``address``'s allowance, waiting while it is spent (its sockets
        queue behind each other, each waiting its turn)."""
        now = asyncio.get_running_loop().time()
        held = self._allowance.get(address)
        if held is None:
            held = (BURST, now)
            self._forget_full(now)
        tokens = min(BURST, held[0] + (now - held[1]) * RATE) - cost
        self._allowance[address] = (tokens, now)
        if tokens < 0:
            await asyncio.sleep(-tokens / RATE)

    def _forget_full(self, now: float) -> None:
        """Drop the allowances that have refilled (they hold nothing a new one would not)."""
        full = [a for a, (t, at) in self._allowance.items() if t + (now - at) * RATE >= BURST]
        for address in full:
            del self._allowance[address]

    def _caller(self, ws: WebSocket) -> Caller | None:
        """Who opened the socket (a 401 from :func:`identify` becomes :class:`ApiError`)."""
        caller, _, _ = identify(credentialed(ws), self.services)
        if caller is None or caller.kind != "session":
            return caller
        origin = ws.headers.get("origin")
        host = ws.headers.get("host", "")
        if origin is not None and origin.split("://", 1)[-1] != host:
            return None
        return caller

    async def _write(self, conn: Connection) -> None:
        while True:
            frame = await conn.queue.get()
            conn.queued -= len(frame)
            try:
                await conn.ws.send_text(frame.decode())
            except (WebSocketDisconnect, RuntimeError, OSError):
                return

    def _drop(self, conn: Connection) -> None:
        self.connections.discard(conn)
        self._release(conn, list(conn.topics))

    def _release(self, conn: Connection, names: list[str]) -> None:
        """Drop ``conn``'s subscriptions to ``names`` (those it does not hold are ignored)."""
        released = 0
        for name in names:
            if name not in conn.topics:
                continue
            conn.topics.discard(name)
            released += 1
            held = self.subscribers.get(name)
            if held is not None:
                held.discard(conn)
                if not held:
                    del self.subscribers[name]
        left = self._address_topics.get(conn.address, 0) - released
        if left > 0:
            self._address_topics[conn.address] = left
        else:
            self._address_topics.pop(conn.address, None)

    # --- methods ----------------------------------------------------------------------

    def _answer(self, conn: Connection, frame: Mapping[str, Any]) -> bytes:
        """The reply to one frame."""
        ident: Any = None
        try:
            packet = decode(frame, self.max_frame)
            if not isinstance(packet, dict):
                raise MethodError(4008, "A packet must be a JSON object.")
            ident = _ident(packet)
            if packet.get("type") != "method":
                raise MethodError(4008, f"Unknown packet type {_shown(packet.get('type'))}.")
            method = packet.get("method")
            params = packet.get("params")
            if method == "ping":
                return reply(ident, {})
            if method in (SUBSCRIBE, UNSUBSCRIBE):
                names = self._events(params)
                if method == SUBSCRIBE:
                    self.subscribe(conn, names)
                else:
                    self.unsubscribe(conn, names)
                return reply(ident)
            raise MethodError(4009, f"Unknown method {_shown(method)}.")
        except TooBig:
            return reply(
                ident, error=MethodError(4007, f"The payload inflates past {self.max_frame} bytes.")
            )
        except MethodError as error:
            return reply(ident, error=error)

    @staticmethod
    def _events(params: Any) -> list[str]:
        events = params.get("events") if isinstance(params, dict) else None
        if not isinstance(events, list) or not all(isinstance(e, str) for e in events):
            raise MethodError(4010, "params.events must be an array of event names.")
        return list(dict.fromkeys(events))

    def subscribe(self, conn: Connection, names: list[str]) -> None:
        """Subscribe ``conn`` to every event in ``names``, or to none (a MethodError)."""
        topics: list[Topic] = []
        for name in names:
            try:
                topic = parse(name)
            except UnknownTopic:
                raise MethodError(4106, f'Unknown event "{name[:100]}"') from None
            if not self._permitted(conn.caller, topic):
                raise MethodError(4107, f'You do not have permission to subscribe to "{name}"')
            if name in conn.topics:
                raise MethodError(4108, f'Attempt to duplicate subscription to "{name}"')
            topics.append(topic)
        if len(conn.topics) + len(topics) > MAX_SUBSCRIPTIONS:
            raise MethodError(4110, f"At most {MAX_SUBSCRIPTIONS} subscriptions per connection.")
        held = self._address_topics.get(conn.address, 0)
        if held + len(topics) > ADDRESS_SUBSCRIPTIONS:
            raise MethodError(
                4110, f"At most {ADDRESS_SUBSCRIPTIONS} subscriptions per client address."
            )
        self._address_topics[conn.address] = held + len(topics)
        for topic in topics:
            conn.topics.add(topic.name)
            self.subscribers.setdefault(topic.name, set()).add(conn)

    def unsubscribe(self, conn: Connection, names: list[str]) -> None:
        """Drop ``conn``'s subscriptions to ``names`` (those it does not hold are ignored)."""
        self._release(conn, names)

    def _permitted(self, caller: Caller | None, topic: Topic) -> bool:
        """Whether ``caller`` may follow ``topic``: a private event needs its owner, with the
        scope the REST route showing the same data needs (:data:`~.topics.SCOPES`)."""
        if topic.access == "public":
            return True
        if caller is None or (topic.scope is not None and topic.scope not in caller.scopes):
            return False
        if topic.kind == "user":
            return int(topic.id) == caller.user_id
        return channels.owner(self.services.store, int(topic.id)) == caller.user_id

    # --- delivery ---------------------------------------------------------------------

    def _start_pump(self) -> None:
        if self._pump is None or self._pump.done():
            self._pump = asyncio.ensure_future(self._run())

    async def _run(self) -> None:
        outbox = Outbox(self.services.store)
        while self.connections:
            await outbox.wait(POLL)
            try:
                events = outbox.read()
            except Exception:  # a locked or closing database: try again next time
                log.exception("reading the live-events outbox")
                continue
            for topic, payload in events:
                if topic == ENDED:
                    self._ended(payload)
                else:
                    self.deliver(topic, payload)
            now = self.services.clock()
            if now - self._rechecked >= RECHECK:
                self._rechecked = now
                self._recheck([c for c in self.connections if c.caller is not None])

    def _ended(self, payload: str) -> None:
        """Re-check the sockets signed in with the credential (or as the user) that ended."""
        ended = orjson.loads(payload)
        self._recheck(
            [
                conn
                for conn in self.connections
                if conn.caller is not None
                and (
                    conn.caller.credential == ended.get("credential")
                    or conn.caller.user_id == ended.get("user")
                )
            ]
        )

    def _recheck(self, conns: list[Connection]) -> None:
        """Close those of ``conns`` whose credential no longer signs them in as before."""
        for conn in conns:
            try:
                caller = self._caller(conn.ws)
            except ApiError:
                caller = None
            if caller is None or conn.caller is None or caller.user_id != conn.caller.user_id:
                self._close(conn, ENDED_CLOSE)

    def deliver(self, topic: str, payload: str) -> None:
        """Queue one event for each subscriber of ``topic``; close those too slow to take it."""
        held = self.subscribers.get(topic)
        if not held:
            return
        frame = live_event(topic, payload)
        for conn in list(held):
            if not conn.send(frame):
                self._close(conn, TOO_SLOW)

    def _forget(self, conn: Connection) -> None:
        """Stop delivering to ``conn`` and drop what waits to be sent to it (a peer that does
        not read may hold the close frame back until the keep-alive ping times it out)."""
        self._drop(conn)
        while not conn.queue.empty():
            conn.queue.get_nowait()
        conn.queued = 0

    def _close(self, conn: Connection, why: tuple[int, str]) -> None:
        """:meth:`_forget` ``conn`` and close it with ``why`` in the background."""
        self._forget(conn)
        closing = asyncio.ensure_future(conn.ws.close(*why))
        self._closing.add(closing)
        closing.add_done_callback(self._closing.discard)
