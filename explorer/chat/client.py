"""Live chat over websockets, the async core: join a channel, stay joined across node failures,
call methods, and stream every event into an :class:`~explorer.events.log.EventLog`.

:class:`ChatClient` is the async core (``chat = await api.chat(channel)``, or ``async with``);
its blocking twin :class:`~explorer.chat.Chat` lives in ``chat/blocking.py``. What a frame
or a lost connection means is decided by the sans-I/O
:class:`~explorer.chat.session.ChatState`; this module owns the timers and the connections
(each a :class:`~explorer.chat.socket.ChatSocket`).

Joining (platform.md, "Chat interface"): fetch ``GET /chats/{id}`` (endpoints, permissions, an
authkey when signed in), open a websocket to a random endpoint, call ``auth`` (``[channel]``
without an authkey, else ``[channel, user, key]``), then ``history`` (see below). A refused key
(``UNOTFOUND``) is replaced once per join by fetching the details again: keys expire, and the
client re-sends its key on every reconnect as official clients do (reference.md fact 6). An
anonymous ``auth`` refused as too fast (``THROTTLED``: many joins from one address, as
``api.watch`` makes) is tried again after the reconnect backoff below, like a node that did not
answer; signed in, ``THROTTLED`` is the user's connection cap, and the join fails at once.

Staying joined: when the connection drops, the state turns ``reconnecting`` and the client
tries again after a jittered exponential backoff (``reconnect_delay`` doubling up to
``max_reconnect_delay``, each delay times 0.5-1, so the clients of a failed node spread out),
each attempt to a different endpoint than the one just lost or failed. An endpoint that cannot
be reached (a dead node refuses the connection) is dropped from the cached list at once and
another is tried without waiting; once every listed endpoint has failed the details are fetched
again, as nodes come and go, so with a live node left a reconnect takes about a second.
When no node has answered for ``give_up_after`` seconds the client gives up with
:class:`~explorer.errors.ConnectionFailed` naming every attempt: the state turns ``closed``,
:attr:`ChatClient.error` holds the error, and waiting calls, iterators and later calls raise
it. A node that closes the connection because the credential behind the authkey ended (code
4001: signed out, token revoked, ...) ends the client the same way with
:class:`~explorer.errors.CredentialLost` at once, without retrying a key that cannot work.
Methods pending when a connection drops fail with ``ConnectionFailed`` (they may or may not
have run); methods called while reconnecting wait for the next join within their timeout.

Gapless: after every reconnect the client asks ``history`` and adds the messages it missed,
deduplicated by id, before the events that arrived meanwhile (``chat/session.py`` has the rule), so
the log and the event stream equal what the channel said. ``history`` returns at most 100
messages; :attr:`ChatClient.gaps` counts reconnects that may have missed more, and
:attr:`ChatClient.outages` lists every time the client was away, with what may be lost there
(``chat/session.py``): an analyst can exclude or flag those intervals.

The ingest path: a busy channel must never outrun the client, or the server drops it as too
slow. The connection is a :class:`~explorer.chat.socket.ChatSocket`, on websockets' documented
sans-I/O protocol, that hands the messages of one socket read to the session together, instead
of queueing each for a ``recv()`` whose queue and futures cost more per message than decoding
the JSON does. The session decodes each frame once (orjson),
the event log keeps the frame's bytes as the packet, and the DataFrame rows are built later:
when read, or while the socket is quiet (:func:`~explorer.events.log.tidy`).
``benchmarks/chat_ingest.py`` measures this path against a bare websockets client. The client
does not offer permessage-deflate unless asked (``compression="deflate"``): on the loopback it
costs more than it saves.

Errors: a method's error reply raises :class:`~explorer.errors.ChatError` (its ``code`` a
:class:`~explorer.errors.ChatErrorCode`), a method without a reply in time
:class:`~explorer.errors.ChatTimeout` (also a ``TimeoutError``); all are
:class:`~explorer.errors.ExplorerError`.

Events: ``async for event in chat`` (or ``chat.events("ChatMessage")``) yields
:class:`~explorer.wire.packets.Event` objects, each iterator from the moment it is made; a consumer
more than ``max_pending`` events behind loses the oldest (counted in its ``dropped``).
Callbacks registered with :meth:`ChatClient.on` run on the loop, in the order events arrive;
an exception in one is logged and does not stop the others. :meth:`ChatClient.on_state` is
called with each new :class:`~explorer.chat.session.State`.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Self

from explorer.chat.session import (
    HISTORY_LIMIT,
    Answer,
    ChatState,
    Outage,
    State,
    backoff,
    next_endpoint,
)
from explorer.chat.socket import ChatSocket, Compression, Message
from explorer.core.closing import AsyncClosing
from explorer.core.renames import Renamed
from explorer.errors import (
    ChatError,
    ChatErrorCode,
    ChatTimeout,
    ClientClosed,
    ConnectionFailed,
    CredentialLost,
)
from explorer.events.feeds import Subscribers
from explorer.events.log import EventLog, tidy
from explorer.views.twins import facts_table
from explorer.wire import chatmethods as chat_methods

log = logging.getLogger("explorer.chat")

#: Time the last attempt gets to open and join when it starts at the give-up deadline.
_LAST_TRY = 0.5
#: What a failed attempt to reach or join a node raises (ChatTimeout is a TimeoutError).
_NODE_FAILURES = (ConnectionFailed, TimeoutError)


@dataclass(frozen=True, slots=True)
class ChatDetails:
    """Where and how to join a channel's chat (``GET /chats/{channelId}``).

    ``authkey`` is None for an anonymous caller, who may read but not talk.
    """

    channel_id: int
    endpoints: tuple[str, ...]
    permissions: tuple[str, ...]
    authkey: str | None = None


class ChatClient(Subscribers, AsyncClosing):
    """One channel's live chat, joined over websockets (see the module docstring).

    ``details`` fetches the chat connection details (``AsyncClient.chat_details`` for the
    channel); ``user_id`` fetches the signed-in user's id, needed to authenticate with the
    authkey (without it, or without an authkey, the client joins anonymously). ``log`` is the
    :class:`~explorer.events.log.EventLog` to fill (a new one with ``max_rows`` otherwise;
    ``tidy=False`` leaves building its rows while quiet to whoever shares it: :func:`tidy`,
    which ``api.watch`` runs once for all its chats); ``backlog`` adds that many earlier
    messages (at most 100) to it on joining. Timeouts are in
    seconds: ``call_timeout`` per method, ``open_timeout`` per connection attempt (connection
    and handshake), ``close_timeout`` for the close handshake, ``give_up_after`` without any
    node answering; the socket pings every ``ping_interval`` seconds (None: never) and drops a
    node that answers none within ``ping_timeout``. ``seed`` makes endpoint choice and backoff
    jitter repeatable (tests). ``base_url`` is the platform's REST base, where the live views
    find the emoticon sprite sheets. ``clock`` (epoch seconds) dates events and outages: the
    platform's world clock for a chat made from a client (:mod:`explorer.core.worldclock`).

    Use ``await client.start()`` (or ``await client``, or ``async with client``) to join and
    :meth:`aclose` to leave.
    """

    def __init__(
        self,
        details: Callable[[], Awaitable[ChatDetails]],
        *,
        user_id: Callable[[], Awaitable[int]] | None = None,
        log: EventLog | None = None,
        max_rows: int | None = None,
        tidy: bool = True,
        backlog: int = 0,
        call_timeout: float = 10.0,
        open_timeout: float = 10.0,
        reconnect_delay: float = 0.5,
        max_reconnect_delay: float = 10.0,
        give_up_after: float = 60.0,
        close_timeout: float = 10.0,
        ping_interval: float | None = 20.0,
        ping_timeout: float = 20.0,
        compression: Compression = None,
        max_pending: int = 10_000,
        seed: int | None = None,
        base_url: str | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        Subscribers.__init__(self, max_pending)
        self._clock = clock
        self._fetch_details = details
        self.base_url = base_url
        self._fetch_user_id = user_id
        self.log = log if log is not None else EventLog(max_rows=max_rows)
        self.backlog = min(max(backlog, 0), HISTORY_LIMIT)
        self.call_timeout = call_timeout
        self.open_timeout = open_timeout
        self.reconnect_delay = reconnect_delay
        self.max_reconnect_delay = max_reconnect_delay
        self.give_up_after = give_up_after
        self.close_timeout = close_timeout
        self.ping_interval = ping_interval
        self.ping_timeout = ping_timeout
        self.compression = compression
        self._tidies = tidy
        self._rng = random.Random(seed)
        self._session = ChatState(self.log)
        self._details: ChatDetails | None = None
        self._user_id: int | None = None
        self._ws: ChatSocket | None = None
        self._ready = asyncio.Event()
        self._waiting: dict[int, asyncio.Future[Any]] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._closing = False
        #: Why the client gave up (None while it runs or after a normal close).
        self.error: BaseException | None = None
        #: Connections lost and re-established.
        self.reconnects = 0
        #: Authkeys replaced after the platform refused one.
        self.key_refreshes = 0

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self._summary()}>"

    def _repr_html_(self) -> str:
        """A small table of the channel, state, endpoint and event counts (Jupyter)."""
        return self._html(type(self).__name__)

    def _html(self, title: str) -> str:
        return facts_table(title, self._facts())

    def _summary(self) -> str:
        """One line: channel, state, endpoint, events."""
        facts = self._facts()
        return (
            f"channel {facts['channel']} {facts['state']} {facts['endpoint']}, "
            f"{facts['events']} events"
        )

    def _facts(self) -> dict[str, str]:
        """What the reprs show; the event counts are the five most frequent types."""
        counts = sorted(self.log.counts.items(), key=lambda item: (-item[1], item[0]))
        shown = ", ".join(f"{name} {count:,}" for name, count in counts[:5])
        more = ", ..." if len(counts) > 5 else ""
        return {
            "channel": "?" if self.channel_id is None else str(self.channel_id),
            "state": str(self.state),
            "endpoint": self.endpoint or "(none yet)",
            "events": f"{self.log.total:,}" + (f" ({shown}{more})" if shown else ""),
        }

    # What the client knows.

    @property
    def state(self) -> State:
        """``connecting``, ``connected``, ``authenticated``, ``reconnecting`` or ``closed``."""
        return self._session.state

    @property
    def endpoint(self) -> str | None:
        """The chat node of the current (or last) connection."""
        return self._session.endpoint

    @property
    def channel_id(self) -> int | None:
        """The channel's id (known once the details were fetched)."""
        return self._details.channel_id if self._details else None

    @property
    def authenticated(self) -> bool:
        """Whether the client joined as a user (False: anonymously, read-only)."""
        return self._session.authenticated

    @property
    def roles(self) -> tuple[str, ...]:
        """The user's chat roles, from the ``auth`` reply."""
        return self._session.roles

    @property
    def permissions(self) -> tuple[str, ...]:
        """The caller's chat permissions, from the connection details."""
        return self._details.permissions if self._details else ()

    @property
    def recovered(self) -> int:
        """Messages added from ``history`` after reconnects."""
        return self._session.recovered

    @property
    def gaps(self) -> int:
        """Reconnects after which more messages may have been missed than ``history`` holds."""
        return self._session.gaps

    @property
    def outages(self) -> list[Outage]:
        """Every time the client was away (lost to filled), with what may be lost there."""
        return list(self._session.outages)

    @property
    def removed(self) -> int:
        """Messages recorded earlier that ``history`` no longer returned after a reconnect
        (removed by moderation while the client was away)."""
        return self._session.removed

    @property
    def recorded(self) -> int:
        """Rows this client added to its log (others may feed a shared log too)."""
        return self._session.recorded

    @property
    def recorded_messages(self) -> int:
        """ChatMessage rows among :attr:`recorded`."""
        return self._session.recorded_messages

    # Joining and leaving.

    async def start(self) -> Self:
        """Join the chat; returns once joined. Raises ConnectionFailed when no node answers
        within ``give_up_after`` seconds, ChatError when the platform refuses the join."""
        if self._tasks or self._closing:
            raise RuntimeError("start() was already called on this chat client.")
        try:
            await self._fetch()
            ws = await self._establish(None)
        except BaseException as exc:
            self._fail(exc)
            raise
        running = asyncio.get_running_loop()
        self._tasks = [running.create_task(self._supervise(ws))]
        if self._tidies:
            self._tasks.append(running.create_task(tidy(self.log, self._behind)))
        return self

    connect = Renamed("start")

    def _behind(self) -> bool:
        """Whether the node sent more than this client has read yet (see :func:`tidy`)."""
        return self._ws is not None and self._ws.unread() > 0

    async def aclose(self) -> None:
        """Leave the chat: close the connection (close handshake, at most ``close_timeout``
        seconds), end iterators, fail waiting calls."""
        if self._closing:
            return
        self._closing = True
        current = asyncio.current_task()
        tasks = [task for task in self._tasks if task is not current]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        ws, self._ws = self._ws, None
        if ws is not None:
            await ws.close()
        closed = self._session.closed(self._clock())
        self._end(None, ClientClosed("This chat client is closed."), closed)

    async def _fetch(self) -> None:
        """Fetch the connection details, and the user's id when there is an authkey."""
        self._details = await self._fetch_details()
        self._session.channel = self._details.channel_id
        if self._details.authkey and self._user_id is None and self._fetch_user_id:
            self._user_id = await self._fetch_user_id()

    async def _establish(self, lost: str | None) -> ChatSocket:
        """Open a connection to some node and join there, trying until ``give_up_after``
        seconds pass without success (see the module docstring).

        An endpoint that cannot be reached (refused, or no handshake in time) leaves the
        cached list at once and the next is tried without waiting; once no listed endpoint
        is left untried the details are fetched again. The backoff applies to the first
        attempt after a loss (spreading a failed node's clients) and after a whole list
        failed, or a node refused the join as too fast."""
        running = asyncio.get_running_loop()
        deadline = running.time() + self.give_up_after
        delays = backoff(self.reconnect_delay, self.max_reconnect_delay, self._rng)
        failures: list[str] = []
        refused: set[str] = set()
        failed: set[str] = set()
        avoid = lost
        wait = lost is not None
        while True:
            if wait:
                left = deadline - running.time()
                if left <= 0:
                    break
                await asyncio.sleep(min(next(delays), left))
            wait = True
            endpoints = self._untried(refused | failed)
            if not endpoints:
                failed.clear()
                await self._refetch(failures)
                endpoints = self._untried(refused)
                if not endpoints:
                    refused.clear()  # every listed node failed: try them again after a wait
                    if not self._details or not self._details.endpoints:
                        failures.append("the platform listed no live chat node")
                    continue
            endpoint = next_endpoint(endpoints, avoid, self._rng)
            ws: ChatSocket | None = None
            try:
                left = deadline - running.time()
                async with asyncio.timeout(min(self.open_timeout, max(left, _LAST_TRY))):
                    ws = await self._open(endpoint)
                    await self._join(ws, endpoint)
                return ws
            except ChatError as exc:
                self._discard(ws)
                if exc.code != ChatErrorCode.THROTTLED or len(self._auth_arguments()) > 1:
                    raise  # the platform refused the join itself: another node would too
                failures.append(f"{endpoint}: {_describe(exc)}")  # joining too fast: wait
            except _NODE_FAILURES as exc:
                self._discard(ws)
                failures.append(f"{endpoint}: {_describe(exc)}")
                if ws is None:  # unreachable: forget it, and try another one now
                    refused.add(endpoint)
                    self._forget_endpoint(endpoint)
                    wait = False
            avoid = endpoint
            failed.add(endpoint)
            if running.time() >= deadline:
                break
        channel = self._details.channel_id if self._details else "?"
        raise ConnectionFailed(
            f"No chat node of channel {channel} answered within {self.give_up_after:g} s; "
            f"gave up after {len(failures)} attempts: "
            + "; ".join(list(dict.fromkeys(failures))[-5:])
        )

    def _untried(self, excluded: set[str]) -> list[str]:
        """The cached endpoints not in ``excluded``."""
        assert self._details is not None
        return [e for e in self._details.endpoints if e not in excluded]

    def _forget_endpoint(self, endpoint: str) -> None:
        """Drop an unreachable ``endpoint`` from the cached details."""
        details = self._details
        if details is not None:
            kept = tuple(e for e in details.endpoints if e != endpoint)
            self._details = dataclasses.replace(details, endpoints=kept)

    async def _refetch(self, failures: list[str]) -> None:
        """Fetch the details again (nodes come and go); a failure is one more attempt."""
        try:
            await self._fetch()
        except ConnectionFailed as exc:
            failures.append(f"chat details: {exc}")

    async def _open(self, endpoint: str) -> ChatSocket:
        return await ChatSocket.open(
            endpoint,
            open_timeout=self.open_timeout,
            close_timeout=self.close_timeout,
            ping_interval=self.ping_interval,
            ping_timeout=self.ping_timeout,
            compression=self.compression,
        )

    def _discard(self, ws: ChatSocket | None) -> None:
        """Drop a connection that failed to join, as if lost: the events it got meanwhile
        (held for a resync that will not come) are recorded, not dropped."""
        if ws is not None:
            if ws.lost is not None:
                self._lost(ws)
            ws.abort()

    async def _join(self, ws: ChatSocket, endpoint: str) -> None:
        """Authenticate on a fresh connection, then take ``history`` to stay gapless."""
        session = self._session
        rejoin = session.rejoining
        session.opened(endpoint)
        ws.attach(self._on_messages, self._lost)
        session.joined(await self._auth(ws))
        self._ws = ws
        try:
            messages = await self._call_on(
                ws, chat_methods.HISTORY.name, [HISTORY_LIMIT], self.call_timeout
            )
        except (ChatError, ChatTimeout):
            if rejoin:
                self._deliver_all(session.resync_failed(self._clock()))
            messages = None
        if messages is not None:
            history = messages if isinstance(messages, list) else []
            if rejoin:
                self._deliver_all(session.resync(history, self._clock()))
            else:
                session.baseline(history, self._clock(), self.backlog)
        self._ready.set()

    async def _auth(self, ws: ChatSocket) -> Any:
        """``auth``; a refused authkey is replaced by a fresh one, once."""
        try:
            return await self._call_on(
                ws, chat_methods.AUTH.name, self._auth_arguments(), self.call_timeout
            )
        except ChatError as refused:
            if refused.code != ChatErrorCode.UNOTFOUND or len(self._auth_arguments()) == 1:
                raise
        await self._fetch()  # the key expired (or was meant for another channel): a new one
        self.key_refreshes += 1
        return await self._call_on(
            ws, chat_methods.AUTH.name, self._auth_arguments(), self.call_timeout
        )

    def _auth_arguments(self) -> list[Any]:
        assert self._details is not None
        details = self._details
        return self._session.auth_arguments(details.channel_id, self._user_id, details.authkey)

    def _lost(self, ws: ChatSocket) -> None:
        """A connection being joined or in use closed (called by the socket, on the loop)."""
        if self._closing:
            return
        if self._ws is ws:
            self._ws = None
        self._ready.clear()
        lost = ConnectionFailed(
            f"The connection to {self.endpoint} was lost before the reply came; the method "
            "may or may not have run."
        )
        self._fail_waiting(self._session.lost(self._clock()), lost)

    async def _supervise(self, ws: ChatSocket) -> None:
        """Wait for the connection to drop, then re-establish one (see the module docstring)."""
        try:
            while True:
                await ws.wait_closed()
                if self._closing:
                    return
                if ws.close_code == CredentialLost.CLOSE_CODE:
                    raise CredentialLost(
                        f"{self.endpoint} closed the chat: the credential behind its authkey "
                        "ended (signed out, token revoked, password changed or suspended). "
                        "Sign in again and join anew."
                    )
                self.reconnects += 1
                ws = await self._establish(self.endpoint)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            self._fail(exc)

    def _fail(self, error: BaseException) -> None:
        """Give up: remember ``error`` and raise it to everyone waiting."""
        self._closing = True
        self.error = error
        for task in self._tasks:
            if task is not asyncio.current_task():
                task.cancel()
        ws, self._ws = self._ws, None
        if ws is not None:
            ws.abort()
        self._end(error, error, self._session.closed(self._clock()))

    def _end(self, error: BaseException | None, waiting: BaseException, pending: list[int]) -> None:
        self._fail_waiting(pending, waiting)
        for feed in self._feeds:
            feed.end(error)
        self._ready.set()

    def _fail_waiting(self, ids: list[int], error: BaseException) -> None:
        for id in ids:
            future = self._waiting.pop(id, None)
            if future is not None and not future.done():
                future.set_exception(error)

    # Frames in, events out.

    def _on_messages(self, messages: list[Message]) -> None:
        """The messages of one socket read, as websockets parses them (the hot path)."""
        session = self._session
        malformed = session.malformed
        wanted = self._feeds or self._callbacks
        try:
            answers = session.receive(messages, self._clock(), self._deliver if wanted else None)
        except Exception:
            log.exception("explorer chat: failed to handle %d messages", len(messages))
            return
        if session.malformed != malformed:
            log.warning(
                "explorer chat: ignored a frame that is not a packet: %s", session.last_malformed
            )
        for answer in answers:
            self._answer(answer)

    def _answer(self, answer: Answer) -> None:
        future = self._waiting.pop(answer.id, None)
        if future is None or future.done():
            return
        if answer.error is not None:
            future.set_exception(answer.error)
        else:
            future.set_result(answer.data)

    def on_state(self, callback: Callable[[State], object]) -> Callable[[], None]:
        """Call ``callback(state)`` on the loop at every state change; returns a function that
        stops it."""
        listeners = self._session.listeners
        listeners.append(callback)
        return lambda: listeners.remove(callback) if callback in listeners else None

    # Methods.

    async def _ready_connection(self) -> ChatSocket:
        """The joined connection, waiting while the client (re)connects."""
        while True:
            if self.error is not None:
                raise self.error
            if self._closing:
                raise ClientClosed("This chat client is closed.")
            ws = self._ws
            if ws is not None and self._ready.is_set():
                return ws
            await self._ready.wait()

    async def call(
        self, method: str, arguments: Sequence[Any] = (), timeout: float | None = None
    ) -> Any:
        """Call chat method ``method`` with ``arguments``; its reply data (None when absent).

        Raises :class:`~explorer.errors.ChatError` for an error reply,
        :class:`~explorer.errors.ChatTimeout` when no reply comes within ``timeout`` seconds
        (``call_timeout`` by default), ConnectionFailed when the connection drops first. While
        reconnecting, waits for the next join.
        """
        timeout = self.call_timeout if timeout is None else timeout
        async with _deadline(method, timeout):
            ws = await self._ready_connection()
            return await self._call_on(ws, method, arguments, None)

    async def _call_on(
        self, ws: ChatSocket, method: str, arguments: Sequence[Any], timeout: float | None
    ) -> Any:
        id, packet = self._session.request(method, arguments)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[id] = future
        try:
            async with _deadline(method, timeout):
                await ws.send(packet)
                return await future
        finally:
            self._waiting.pop(id, None)
            self._session.cancel(id)

    async def send(self, text: str, timeout: float | None = None) -> Any:
        """Send a chat message (``msg``); the message data as the channel sees it."""
        return await self.call(chat_methods.MSG.name, [text], timeout)

    async def whisper(self, user: str, text: str, timeout: float | None = None) -> Any:
        """Whisper ``text`` to ``user`` (who must be in the chat); the message data."""
        return await self.call(chat_methods.WHISPER.name, [user, text], timeout)

    async def start_poll(
        self, question: str, answers: Sequence[str], duration: float, timeout: float | None = None
    ) -> Any:
        """Start a poll (``vote:start``) lasting ``duration`` seconds; the confirmation."""
        return await self.call(
            chat_methods.VOTE_START.name, [question, list(answers), duration], timeout
        )

    async def vote(self, option: int, timeout: float | None = None) -> Any:
        """Vote for answer number ``option`` (from 0) of the running poll (``vote:choose``)."""
        return await self.call(chat_methods.VOTE_CHOOSE.name, [option], timeout)

    async def timeout_user(
        self, user: str, duration: str | float, timeout: float | None = None
    ) -> Any:
        """Time ``user`` out for ``duration`` (``"30s"``, ``"5m"``, seconds; ``"clear"``
        lifts it); the confirmation. (``timeout``, as on every method, bounds the wait for
        the reply.)"""
        return await self.call(chat_methods.TIMEOUT.name, [user, duration], timeout)

    timeout = Renamed("timeout_user")

    async def purge(self, user: str, timeout: float | None = None) -> Any:
        """Remove ``user``'s messages without timing them out."""
        return await self.call(chat_methods.PURGE.name, [user], timeout)

    async def delete_message(self, message_id: str, timeout: float | None = None) -> Any:
        """Delete one message by id; the confirmation."""
        return await self.call(chat_methods.DELETE_MESSAGE.name, [message_id], timeout)

    async def clear_messages(self, timeout: float | None = None) -> Any:
        """Remove every message of the channel; the confirmation."""
        return await self.call(chat_methods.CLEAR_MESSAGES.name, [], timeout)

    async def history(self, count: int = HISTORY_LIMIT, timeout: float | None = None) -> Any:
        """The channel's latest ``count`` messages (at most 100), oldest first, as message
        data."""
        return await self.call(chat_methods.HISTORY.name, [count], timeout)

    async def start_giveaway(self, timeout: float | None = None) -> Any:
        """Pick a recently active chatter and announce them in chat; the confirmation."""
        return await self.call(chat_methods.GIVEAWAY_START.name, [], timeout)

    async def ping(self, timeout: float | None = None) -> Any:
        """Ask the node for a reply (``ping``); None."""
        return await self.call(chat_methods.PING.name, [], timeout)

    async def attach_emotes(self, timeout: float | None = None) -> Any:
        """Have later ChatMessage events carry ``meta.emoticons`` images; None."""
        return await self.call(chat_methods.ATTACH_EMOTES.name, [], timeout)


def _describe(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


@contextlib.asynccontextmanager
async def _deadline(method: str, timeout: float | None) -> AsyncIterator[None]:
    """Bound the body to ``timeout`` seconds (None: no bound), raising ChatTimeout after."""
    scope = asyncio.timeout(timeout)
    try:
        async with scope:
            yield
    except TimeoutError:
        if not scope.expired():
            raise
        raise ChatTimeout(f"chat method {method} got no reply within {timeout:g} s") from None
