"""A client of Constellation, the platform's live-events service: one websocket that stays
subscribed to event names across reconnects.

The protocol is the historical one (docs/live.md): the service sends ``hello``; a method
``{"type": "method", "method": "livesubscribe", "params": {"events": [...]}, "id"}`` gets a
reply with the same id, ``error`` null or ``{code, message}``; subscribed events arrive as
``{"type": "event", "event": "live", "data": {"channel": name, "payload": ...}}``.

:class:`LiveSocket` subscribes in batches of :data:`BATCH` names. The service subscribes a
batch whole or not at all, so a refused batch is tried name by name and each refused name is
kept in :attr:`LiveSocket.refused` with the service's message (an unknown event, a private one
of someone else) instead of failing the others. When the connection drops, the state turns
``reconnecting`` and the socket dials again after a jittered exponential backoff (as the chat
client does), then subscribes to every name again; events sent while it was away are not
replayed (the service keeps none for a client). It rides on the toolkit's websocket
(:class:`~explorer.chat.socket.ChatSocket`). A socket is anonymous unless its address carries
an OAuth token (:func:`address`), which private events (``user:{id}:notify``) need.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import random
import time
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import urlencode, urlsplit

import orjson

from explorer.chat.session import backoff
from explorer.chat.socket import ChatSocket, Message
from explorer.errors import ChatTimeout, ConnectionFailed
from explorer.wire.topics import SUBSCRIBE, UNSUBSCRIBE

#: Event names per ``livesubscribe`` call.
BATCH = 500
#: Seconds to wait for a reply.
REPLY_TIMEOUT = 10.0
#: The service's code for "already subscribed" (harmless after a reconnect race).
ALREADY_SUBSCRIBED = 4108

#: Called with each live event's data (``{channel, payload}``) and when it arrived (epoch s).
OnEvent = Callable[[dict[str, Any], float], None]


def address(base_url: str, token: str | None = None) -> str:
    """The live-events address of the platform whose REST base is ``base_url``: its web root,
    as a websocket address (``http://host:8000/api/v1`` -> ``ws://host:8000/``); with an OAuth
    ``token``, carrying it as the ``authorization`` query parameter the service reads (so the
    socket is signed in, for private events)."""
    parts = urlsplit(base_url)
    root = f"{'wss' if parts.scheme == 'https' else 'ws'}://{parts.netloc}/"
    return root if token is None else f"{root}?{urlencode({'authorization': f'Bearer {token}'})}"


class LiveSocket:
    """One Constellation connection (see the module docstring); ``on_event`` gets each live
    event on the loop's thread. :meth:`start` connects, :meth:`aclose` disconnects."""

    def __init__(
        self,
        url: str,
        on_event: OnEvent,
        *,
        reconnect_delay: float = 0.5,
        max_reconnect_delay: float = 10.0,
        open_timeout: float = 10.0,
        seed: int | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.url = url
        self.reconnect_delay = reconnect_delay
        self.max_reconnect_delay = max_reconnect_delay
        self.open_timeout = open_timeout
        self._on_event = on_event
        self._clock = clock
        self._rng = random.Random(seed)
        #: Event names subscribed to (or to be, after a reconnect), in order.
        self.wanted: dict[str, None] = {}
        #: Event names the service refused, with its message.
        self.refused: dict[str, str] = {}
        #: ``connecting``, ``connected``, ``reconnecting`` or ``closed``.
        self.state = "connecting"
        self.reconnects = 0
        #: Live events received.
        self.received = 0
        self._socket: ChatSocket | None = None
        self._ids = itertools.count()
        self._replies: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._lost = asyncio.Event()
        self._runner: asyncio.Task[None] | None = None

    async def start(self) -> LiveSocket:
        """Connect (raising ConnectionFailed or ChatTimeout when the service cannot be
        reached), then keep the connection up in the background."""
        await self._open()
        self._runner = asyncio.get_running_loop().create_task(self._run())
        return self

    async def aclose(self) -> None:
        """Disconnect and stop reconnecting (idempotent)."""
        self.state = "closed"
        if self._runner is not None:
            self._runner.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._runner
        if self._socket is not None:
            await self._socket.close()
        self._fail_replies()

    async def subscribe(self, names: Iterable[str]) -> None:
        """Subscribe to ``names`` (those held or refused already are skipped); names the
        service refuses go to :attr:`refused`. While reconnecting, they are subscribed to
        once the connection is back."""
        new = [n for n in dict.fromkeys(names) if n not in self.wanted and n not in self.refused]
        self.wanted.update(dict.fromkeys(new))
        if self.state == "connected":
            with contextlib.suppress(ConnectionFailed):
                await self._subscribe(new)

    async def unsubscribe(self, names: Iterable[str]) -> None:
        """Stop receiving ``names``."""
        gone = [n for n in dict.fromkeys(names) if self.wanted.pop(n, False) is None]
        if self.state == "connected":
            for start in range(0, len(gone), BATCH):
                with contextlib.suppress(ConnectionFailed):
                    await self._call(UNSUBSCRIBE, gone[start : start + BATCH])

    # The connection.

    async def _open(self) -> None:
        socket = await ChatSocket.open(self.url, open_timeout=self.open_timeout)
        self._socket = socket
        self._lost.clear()
        socket.attach(self._deliver, self._drop)
        self.state = "connected"

    def _drop(self, socket: ChatSocket) -> None:
        if socket is self._socket and self.state != "closed":
            self.state = "reconnecting"
            self._fail_replies()
            self._lost.set()

    def _fail_replies(self) -> None:
        replies, self._replies = self._replies, {}
        for waiting in replies.values():
            if not waiting.done():
                waiting.set_exception(ConnectionFailed(f"The connection to {self.url} closed."))

    async def _run(self) -> None:
        """Reconnect after every drop, with backoff, and subscribe to everything again."""
        while True:
            await self._lost.wait()
            delays = backoff(self.reconnect_delay, self.max_reconnect_delay, self._rng)
            while self.state == "reconnecting":
                await asyncio.sleep(next(delays))
                try:
                    await self._open()
                    await self._subscribe(list(self.wanted))
                except (ConnectionFailed, ChatTimeout, OSError):
                    self.state = "reconnecting"
                    continue
                self.reconnects += 1

    # Methods and events.

    async def _subscribe(self, names: list[str]) -> None:
        for start in range(0, len(names), BATCH):
            batch = names[start : start + BATCH]
            error = await self._call(SUBSCRIBE, batch)
            if error is None or error.get("code") == ALREADY_SUBSCRIBED:
                continue
            if len(batch) > 1:
                for name in batch:
                    await self._subscribe([name])
                continue
            self.wanted.pop(batch[0], None)
            self.refused[batch[0]] = str(error.get("message", error))

    async def _call(self, method: str, events: list[str]) -> dict[str, Any] | None:
        """Send one method and return its reply's error (None: it succeeded)."""
        socket = self._socket
        if socket is None or socket.closed:
            raise ConnectionFailed(f"The connection to {self.url} is closed.")
        ident = next(self._ids)
        waiting: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._replies[ident] = waiting
        packet = {"type": "method", "method": method, "params": {"events": events}, "id": ident}
        try:
            await socket.send(orjson.dumps(packet))
            async with asyncio.timeout(REPLY_TIMEOUT):
                reply = await waiting
        except TimeoutError:
            raise ChatTimeout(
                f"{self.url}: no reply to {method} within {REPLY_TIMEOUT:g} s"
            ) from None
        finally:
            self._replies.pop(ident, None)
        error = reply.get("error")
        return error if isinstance(error, dict) else None

    def _deliver(self, messages: list[Message]) -> None:
        now = self._clock()
        for message in messages:
            try:
                packet = orjson.loads(message)
            except orjson.JSONDecodeError:
                continue
            if not isinstance(packet, dict):
                continue
            if packet.get("type") == "reply":
                ident = packet.get("id")
                waiting = self._replies.get(ident) if type(ident) is int else None
                if waiting is not None and not waiting.done():
                    waiting.set_result(packet)
            elif packet.get("event") == "live" and isinstance(packet.get("data"), dict):
                self.received += 1
                self._on_event(packet["data"], now)
