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

Delivery: one task per process reads the :class:`~.outbox.Outbox` every :data:`POLL` seconds
while anyone is connected and hands each event to its subscribers' send queues; a
connection that lets :data:`SEND_QUEUE` events pile up unsent is closed with 1008, and a frame
over ``Config.chat_max_frame`` bytes (64 KiB) closes it with 1009. One address holds at most
``Config.chat_address_connections`` sockets per process (as for anonymous chat); one more is
closed with 1008 at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
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
from explorer.emulator.live.outbox import Outbox
from explorer.emulator.live.topics import Topic, UnknownTopic, parse
from explorer.emulator.policy import identify
from explorer.emulator.responses import ApiError

log = logging.getLogger("explorer.emulator.live")

#: Seconds between reads of the outbox while anyone is connected.
POLL = 0.05
#: Events queued for one connection before it is closed as too slow.
SEND_QUEUE = 10_000
#: Subscriptions one connection may hold (the historical limit was 1,000,000 per address).
MAX_SUBSCRIPTIONS = 10_000
#: Subprotocols, in order of preference.
SUBPROTOCOLS = ("cnstl", "cnstl-gzip")
SESSION_EXPIRED = 4011
TOO_SLOW = (1008, "Too slow: send queue full.")
TOO_BIG = (1009, "Frame too large.")
TOO_MANY = (1008, "Too many connections from this address.")


class MethodError(Exception):
    """A method's error reply: a code from the docs' table and a message."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(eq=False, slots=True)
class Connection:
    """One open socket: who it is, what it follows, what waits to be sent."""

    ws: WebSocket
    caller: Caller | None
    topics: set[str] = field(default_factory=set)
    queue: asyncio.Queue[bytes] = field(default_factory=lambda: asyncio.Queue(SEND_QUEUE))

    def send(self, frame: bytes) -> bool:
        """Queue ``frame``; False when the queue is full."""
        try:
            self.queue.put_nowait(frame)
        except asyncio.QueueFull:
            return False
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


def decode(frame: Mapping[str, Any]) -> Any:
    """The JSON of a received frame (text, or binary that may be gzipped)."""
    raw: bytes | str | None = frame.get("text")
    if raw is None:
        raw = frame.get("bytes") or b""
        if raw[:2] == b"\x1f\x8b":
            try:
                raw = gzip.decompress(raw)
            except (OSError, EOFError, zlib.error):
                raise MethodError(4007, "Error decompressing the payload.") from None
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
        self._closing: set[asyncio.Future[None]] = set()

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
        conn = Connection(ws, caller)
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
                if len(frame.get("text") or frame.get("bytes") or b"") > self.max_frame:
                    await ws.close(*TOO_BIG)
                    break
                answer = self._answer(conn, frame)
                if answer is not None and not conn.send(answer):
                    await ws.close(*TOO_SLOW)
                    break
        except WebSocketDisconnect:
            pass
        finally:
            self._drop(conn)
            left = self._per_address.pop(address) - 1
            if left:
                self._per_address[address] = left
            writer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await writer

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
            try:
                await conn.ws.send_text(frame.decode())
            except (WebSocketDisconnect, RuntimeError, OSError):
                return

    def _drop(self, conn: Connection) -> None:
        self.connections.discard(conn)
        for topic in conn.topics:
            held = self.subscribers.get(topic)
            if held is not None:
                held.discard(conn)
                if not held:
                    del self.subscribers[topic]
        conn.topics.clear()

    # --- methods ----------------------------------------------------------------------

    def _answer(self, conn: Connection, frame: Mapping[str, Any]) -> bytes | None:
        """The reply to one frame."""
        ident: Any = None
        try:
            packet = decode(frame)
            if not isinstance(packet, dict):
                raise MethodError(4008, "A packet must be a JSON object.")
            ident = packet.get("id")
            if packet.get("type") != "method":
                raise MethodError(4008, f"Unknown packet type {packet.get('type')!r}.")
            method = packet.get("method")
            params = packet.get("params")
            if method == "ping":
                return reply(ident, {})
            if method in ("livesubscribe", "liveunsubscribe"):
                names = self._events(params)
                if method == "livesubscribe":
                    self.subscribe(conn, names)
                else:
                    self.unsubscribe(conn, names)
                return reply(ident)
            raise MethodError(4009, f"Unknown method {method!r}.")
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
        for topic in topics:
            conn.topics.add(topic.name)
            self.subscribers.setdefault(topic.name, set()).add(conn)

    def unsubscribe(self, conn: Connection, names: list[str]) -> None:
        """Drop ``conn``'s subscriptions to ``names`` (those it does not hold are ignored)."""
        for name in names:
            if name in conn.topics:
                conn.topics.discard(name)
                held = self.subscribers[name]
                held.discard(conn)
                if not held:
                    del self.subscribers[name]

    def _permitted(self, caller: Caller | None, topic: Topic) -> bool:
        if topic.access == "public":
            return True
        if caller is None:
            return False
        if topic.kind == "user":
            return int(topic.id) == caller.user_id
        owner = self.services.store.scalar(
            "SELECT userId FROM channels WHERE id = ?", (int(topic.id),)
        )
        return owner == caller.user_id

    # --- delivery ---------------------------------------------------------------------

    def _start_pump(self) -> None:
        if self._pump is None or self._pump.done():
            self._pump = asyncio.ensure_future(self._run())

    async def _run(self) -> None:
        outbox = Outbox(self.services.store)
        while self.connections:
            await asyncio.sleep(POLL)
            try:
                events = outbox.read()
            except Exception:  # a locked or closing database: try again next time
                log.exception("reading the live-events outbox")
                continue
            for topic, payload in events:
                self.deliver(topic, payload)

    def deliver(self, topic: str, payload: str) -> None:
        """Queue one event for each subscriber of ``topic``; close those too slow to take it."""
        held = self.subscribers.get(topic)
        if not held:
            return
        frame = live_event(topic, payload)
        for conn in list(held):
            if not conn.send(frame):
                self._drop(conn)
                closing = asyncio.ensure_future(conn.ws.close(*TOO_SLOW))
                self._closing.add(closing)
                closing.add_done_callback(self._closing.discard)
