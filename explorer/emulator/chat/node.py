"""One chat endpoint: a websockets server whose connections authenticate and join rooms.

Each connection gets ``WelcomeEvent {server}`` as soon as it opens (before or regardless of
``auth``) and then exactly one reply per frame, carrying the method's id (0 when no id could be
read). The node itself answers the connection-level methods:

* ``auth``: ``[ch]`` or ``[ch, null, null(, null)]`` joins anonymously; ``[ch, user, key]``
  with an optional 4th access-key argument joins as that user when the key was issued for
  exactly that channel and user and is live. Channel and user ids may be numbers or numeric
  strings, as the historical platform took them (old clients send strings; our spec said
  numbers only); anything else, or a key that is not a string, answers ``UNOTFOUND`` (code
  1) and leaves the connection as it was. Calling
  ``auth`` again moves the connection (anonymous to signed in, or to another channel).
* ``ping`` (a reply without data), ``attachEmotes``, and ``optOutEvents [names...]``: that
  connection no longer receives those events (the reply's data is ``{}`` as in the developer
  docs; unknown names are ignored).

Every other method goes to the connection's :class:`~explorer.emulator.chat.rooms.Room`
through :mod:`~explorer.emulator.chat.dispatch`.

Protection (each connection alone pays for its misbehaviour):

* frames over ``Config.chat_max_frame`` bytes close the connection with 1009 (websockets'
  ``max_size``); frames are read with a bounded queue (``max_queue``), so a fast writer is
  held back by TCP, not buffered;
* a token bucket per connection (``chat_rate`` per second, ``chat_burst``) answers excess
  methods with 4004 and slows reading that connection; so do the allowances per user and per
  address, and the connection caps (closed with 4008), of :mod:`~explorer.emulator.chat.limits`;
* a connection signed in with an authkey whose credential ended (see
  :func:`~explorer.emulator.chat.authkeys.end`) is closed with :data:`CREDENTIAL_ENDED`;
* events go out with ``websockets.broadcast`` (no awaiting, so one slow reader cannot stall a
  room); the kernel holds at most ``KERNEL_SEND_BUFFER`` bytes per connection, and a
  connection whose unsent data passes ``chat_send_buffer`` bytes is closed with 1008 ("too
  slow") by a watchdog (:class:`NodeConnection` reads the backlog);
* a frame that is not JSON answers ``UNOTJSON``; an unexpected error inside a method is
  logged and answered, never raised into the server.

Binary frames carrying JSON are treated like text frames; everything the node sends is a text
frame. Any path and query string is accepted (``?version=1.0&Client-ID=...``), and
permessage-deflate is negotiated when the client offers it.

Only websockets' documented API is used (``tests/test_websockets_api.py`` checks): ``serve``
with ``create_connection``, ``ServerConnection``'s ``send``, ``recv``, ``close``, ``request``,
``remote_address`` and ``state``, ``broadcast``, ``Server.close``/``wait_closed``/``sockets``.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import socket
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, cast

from websockets.asyncio.server import Server, ServerConnection, broadcast, serve
from websockets.exceptions import ConnectionClosed

from explorer.emulator import addresses, plaintext
from explorer.emulator.brokers.broker import Broker, Delivery
from explorer.emulator.chat import authkeys, dispatch, presence, settings
from explorer.emulator.chat.limits import TOO_MANY_CONNECTIONS, Limits
from explorer.emulator.chat.members import Member, member_of, refresh
from explorer.emulator.chat.methods import NO_DATA
from explorer.emulator.chat.rooms import Room, Rooms
from explorer.emulator.config import Config
from explorer.emulator.context import lenient_id
from explorer.wire import chatmethods as chat_methods
from explorer.wire.codes import (
    CLOSE_CREDENTIAL_ENDED,
    UNOTFOUND,
    ChatErrorCode,
    Refusal,
    error_object,
)
from explorer.wire.packets import Method, PacketError, decode, encode_event, encode_reply

log = logging.getLogger("explorer.emulator.chat")

#: Close code and reason for a connection that does not read what it is sent.
TOO_SLOW = (1008, "Too slow: send buffer full.")
#: Close code and reason for a connection whose authkey's credential ended.
CREDENTIAL_ENDED = (CLOSE_CREDENTIAL_ENDED, "Credential ended: sign in again for a new authkey.")
#: Kernel send buffer per connection: caps what the kernel holds for a reader that stalls,
#: so a slow connection shows up in the user-space buffer the watchdog checks.
KERNEL_SEND_BUFFER = 256 * 1024
_WATCH_INTERVAL = 0.5
_DROP_GRACE = 2.0
_connection_ids = itertools.count(1)


class NodeConnection(ServerConnection):
    """A node's connection, which also knows its TCP backlog and can be cut at once.

    websockets documents ``serve(create_connection=...)`` for subclasses that customise
    connection handling; the TCP transport comes from asyncio's ``connection_made`` callback
    (the connection is the asyncio protocol of its socket), so no undocumented websockets
    attribute is read.
    """

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        self.tcp = cast(asyncio.WriteTransport, transport)  # uvloop's does not subclass it
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, KERNEL_SEND_BUFFER)

    @property
    def unsent(self) -> int:
        """Bytes written but not yet handed to the kernel."""
        return self.tcp.get_write_buffer_size()

    def abort(self) -> None:
        """Cut the TCP connection now, without a close handshake."""
        self.tcp.abort()


#: Event names one connection may opt out of (more than the platform has).
_MAX_OPT_OUTS = 32


#: Ids a record can have: SQLite's positive integers (a larger one would overflow the query).
_IDS = range(1, 2**63)


def parse_auth(args: list[Any]) -> tuple[int, int | None, str | None]:
    """``(channel, user, key)`` of ``auth`` arguments (user and key None: anonymous).

    Raises ``UNOTFOUND`` for every shape the spec lists as matching no record.
    """
    refused = Refusal(ChatErrorCode.UNOTFOUND, UNOTFOUND)
    if len(args) not in (1, 3, 4):
        raise refused
    channel = lenient_id(args[0])
    if len(args) == 1 or all(arg is None for arg in args[1:]):
        if type(channel) is not int or channel not in _IDS:
            raise refused
        return channel, None, None
    user, key = lenient_id(args[1]), args[2]
    if type(channel) is not int or type(user) is not int or type(key) is not str:
        raise refused
    if channel not in _IDS or user not in _IDS:
        raise refused
    return channel, user, key


@dataclass(eq=False, slots=True)
class NodeSession:
    """One open connection: where it is, as whom, and its method allowance."""

    ws: NodeConnection
    key: str
    tokens: float
    refilled: float
    address: str = ""
    room: Room | None = None
    member: Member = field(default_factory=lambda: Member(None))
    emotes: bool = False
    opted_out: frozenset[str] = frozenset()
    #: The authkey the connection signed in with (None: anonymous).
    authkey: str | None = None
    #: Close code and reason to end the connection with after the current reply.
    closing: tuple[int, str] | None = None


class ChatNode:
    """One websocket chat server; several nodes share rooms through the broker."""

    def __init__(
        self,
        index: int,
        rooms: Rooms,
        broker: Broker,
        limits: Limits,
        config: Config,
        host: str,
        port: int = 0,
    ) -> None:
        self.index = index
        self.rooms = rooms
        self.broker = broker
        self.limits = limits
        self.config = config
        self.host = host
        self.port = port
        self.server_id = ""
        self._server: Server | None = None
        self._watchdog: asyncio.Task[None] | None = None
        self._welcome = b""
        self._sessions: dict[NodeConnection, NodeSession] = {}
        self._channels: dict[int, dict[NodeConnection, NodeSession]] = {}
        self._dropping: set[NodeConnection] = set()
        #: Set once any connection opted out of events (keeps the usual delivery path lean).
        self._opting_out = False

    @property
    def running(self) -> bool:
        """True while the node accepts connections."""
        return self._server is not None

    @property
    def url(self) -> str:
        """The node's websocket address."""
        shown = f"[{self.host}]" if ":" in self.host else self.host
        return f"ws://{shown}:{self.port}"

    @property
    def connections(self) -> int:
        """Open connections on this node."""
        return len(self._sessions)

    async def start(self) -> None:
        """Listen (on the same port as before, after a restart) with a new server id."""
        if self._server is not None:
            return
        self.server_id = str(uuid.uuid4())
        self._welcome = encode_event("WelcomeEvent", {"server": self.server_id})
        self._server = await serve(
            self._handle,
            self.host,
            self.port,
            max_size=self.config.chat_max_frame,
            max_queue=16,
            write_limit=64 * 1024,
            close_timeout=_DROP_GRACE,
            server_header=None,
            create_connection=NodeConnection,
        )
        self.port = self._server.sockets[0].getsockname()[1]
        self._watchdog = asyncio.get_running_loop().create_task(self._watch())

    async def stop(self) -> None:
        """Stop listening and close every connection with 1001 (going away)."""
        server, self._server = self._server, None
        if server is None:
            return
        if self._watchdog is not None:
            self._watchdog.cancel()
        server.close()
        try:
            await asyncio.wait_for(server.wait_closed(), 2 * _DROP_GRACE)
        except TimeoutError:  # a client that never reads cannot hold the node open
            for ws in list(self._sessions):
                ws.abort()
            await server.wait_closed()

    # --- delivery ---------------------------------------------------------------------

    def deliver(self, channel_id: int, delivery: Delivery) -> None:
        """Write ``delivery`` to this node's members of ``channel_id`` (broker callback)."""
        if delivery.event == settings.SETTINGS_CHANGED:
            room = self.rooms.get(channel_id)
            if room is not None:
                settings.forget(room)
            return
        members = self._channels.get(channel_id)
        if not members:
            return
        if delivery.event == authkeys.REVOKED:
            self._end_revoked(members, delivery.payload.decode())
            return
        if delivery.refresh_user is not None:
            for session in members.values():
                if session.member.user_id == delivery.refresh_user:
                    refresh(self.rooms.store, session.member, channel_id)
        targets: Iterable[NodeConnection] = members
        if self._opting_out and any(delivery.event in s.opted_out for s in members.values()):
            targets = [ws for ws, s in members.items() if delivery.event not in s.opted_out]
            members = {ws: members[ws] for ws in targets}
        if delivery.users is not None:
            users = delivery.users
            targets = [ws for ws, s in members.items() if s.member.user_id in users]
        elif delivery.skip is not None:
            skip = delivery.skip
            targets = [ws for ws, s in members.items() if s.key != skip]
        if delivery.emotes_payload is None:
            broadcast(targets, delivery.payload, text=True)
            return
        attached = [ws for ws in targets if members[ws].emotes]
        if attached:
            chosen = set(attached)
            broadcast([ws for ws in targets if ws not in chosen], delivery.payload, text=True)
            broadcast(attached, delivery.emotes_payload, text=True)
        else:
            broadcast(targets, delivery.payload, text=True)

    def _end_revoked(self, members: dict[NodeConnection, NodeSession], key: str) -> None:
        """Take the connections signed in with ``key`` out of their room at once and close
        them with :data:`CREDENTIAL_ENDED`."""
        for session in [s for s in members.values() if s.authkey == key]:
            self._leave(session)
            session.member, session.authkey = Member(None), None
            asyncio.get_running_loop().create_task(session.ws.close(*CREDENTIAL_ENDED))

    async def _watch(self) -> None:
        """Drop connections that fall too far behind (see ``Config.chat_send_buffer``)."""
        limit = self.config.chat_send_buffer
        while True:
            await asyncio.sleep(_WATCH_INTERVAL)
            for ws in list(self._sessions):
                if ws not in self._dropping and ws.unsent > limit:
                    self._dropping.add(ws)
                    asyncio.get_running_loop().create_task(self._drop(ws))

    def drop_as_slow(self, user_id: int | None) -> int:
        """Drop ``user_id``'s connections (every anonymous one for None) as the watchdog drops
        one too far behind, with 1008: the slow-client drill. How many were dropped."""
        chosen = [
            ws
            for ws, session in list(self._sessions.items())
            if session.member.user_id == user_id and ws not in self._dropping
        ]
        for ws in chosen:
            self._dropping.add(ws)
            asyncio.get_running_loop().create_task(self._drop(ws))
        return len(chosen)

    async def _drop(self, ws: NodeConnection) -> None:
        """Queue a 1008 close frame behind the backlog, then cut the connection if it has not
        closed within the grace (``close`` waits for a drain that may never come)."""
        try:
            await asyncio.wait_for(ws.close(*TOO_SLOW), _DROP_GRACE)
        except TimeoutError:
            ws.abort()
        finally:
            self._dropping.discard(ws)

    # --- connections ------------------------------------------------------------------

    async def _handle(self, connection: ServerConnection) -> None:
        assert isinstance(connection, NodeConnection)
        ws = connection
        loop = asyncio.get_running_loop()
        session = NodeSession(
            ws, f"{self.server_id}:{next(_connection_ids)}", self.config.chat_burst, loop.time()
        )
        peer = ws.remote_address[0] if ws.remote_address else None
        session.address = addresses.client(
            peer,
            ws.request.headers.get if ws.request else lambda _: None,
            self.config.forwarded_allow_ips,
        )
        if not self.limits.open(session.address):
            await ws.close(*TOO_MANY_CONNECTIONS)
            return
        self._sessions[ws] = session
        try:
            await ws.send(self._welcome, text=True)
            while session.closing is None:
                frame = await ws.recv(decode=False)
                identity = self.limits.identity(session.member.user_id, session.address)
                if self._allow(session, loop.time()) and await self.limits.allow(identity):
                    await ws.send(self._answer(session, frame), text=True)
                else:
                    await ws.send(self._throttled(frame), text=True)
                    await asyncio.sleep(1 / self.config.chat_rate)
            await ws.close(*session.closing)
        except ConnectionClosed:
            pass
        finally:
            del self._sessions[ws]
            self.limits.close(session.address)
            self._leave(session)

    def _allow(self, session: NodeSession, now: float) -> bool:
        """Take one token from the connection's bucket, if there is one."""
        rate, burst = self.config.chat_rate, self.config.chat_burst
        session.tokens = min(burst, session.tokens + (now - session.refilled) * rate)
        session.refilled = now
        if session.tokens < 1:
            return False
        session.tokens -= 1
        return True

    @staticmethod
    def _throttled(frame: bytes) -> bytes:
        try:
            packet = decode(frame)
            reply_id = packet.id if isinstance(packet, Method) else 0
        except PacketError as malformed:
            reply_id = malformed.id
        slow_down = error_object(ChatErrorCode.THROTTLED, "You are sending too fast; slow down.")
        return encode_reply(reply_id, error=slow_down)

    def _answer(self, session: NodeSession, frame: bytes) -> bytes:
        """The one reply to one frame."""
        try:
            packet = decode(frame)
        except PacketError as malformed:
            return encode_reply(malformed.id, error=malformed.to_object())
        if not isinstance(packet, Method):
            wrong = error_object(ChatErrorCode.BAD_REQUEST, "Only method packets are accepted.")
            return encode_reply(getattr(packet, "id", 0), error=wrong)
        if plaintext.holds_nul((packet.method, packet.arguments)):
            return encode_reply(
                packet.id, error=error_object(ChatErrorCode.BAD_REQUEST, plaintext.MESSAGE)
            )
        try:
            result = self._call(session, packet)
        except Refusal as refused:
            return encode_reply(packet.id, error=refused.to_object())
        except Exception:
            log.exception("chat method %r failed", packet.method)  # a client's text: escaped
            failed = error_object(ChatErrorCode.BAD_REQUEST, "Internal error; please retry.")
            return encode_reply(packet.id, error=failed)
        if result is NO_DATA:
            return encode_reply(packet.id, omit_data=True)
        return encode_reply(packet.id, result)

    def _call(self, session: NodeSession, packet: Method) -> Any:
        name, args = packet.method, packet.arguments
        if name == chat_methods.AUTH.name:
            return self._auth(session, args)
        if name == chat_methods.PING.name:
            return NO_DATA
        if name == chat_methods.ATTACH_EMOTES.name:
            session.emotes = session.member.emotes = True
            return NO_DATA
        if name == chat_methods.OPT_OUT_EVENTS.name:
            names = [arg for arg in args if type(arg) is str]
            opted_out = session.opted_out | frozenset(names)
            if len(names) != len(args) or len(opted_out) > _MAX_OPT_OUTS:
                raise Refusal(
                    ChatErrorCode.BAD_REQUEST,
                    f"optOutEvents takes at most {_MAX_OPT_OUTS} event names.",
                )
            session.opted_out = opted_out
            self._opting_out = True
            return {}
        if name not in dispatch.METHODS:
            raise Refusal(ChatErrorCode.UNKNOWN_METHOD, f"Unknown method {name!r}.")
        if session.room is None:
            raise Refusal(ChatErrorCode.NOT_AUTHENTICATED, "Call auth first to join a chat.")
        return dispatch.call(session.room, session.member, name, args)

    def _auth(self, session: NodeSession, args: list[Any]) -> dict[str, Any]:
        channel_id, user_id, key = parse_auth(args)
        room = self.rooms.get(channel_id)
        if room is None:
            raise Refusal(ChatErrorCode.UNOTFOUND, UNOTFOUND)
        if user_id is None or key is None:
            member = Member(None)
        else:
            grant = authkeys.verify(self.rooms.store, key, channel_id, user_id, self.rooms.clock())
            if grant is None:
                raise Refusal(ChatErrorCode.UNOTFOUND, UNOTFOUND)
            if session.member.user_id != user_id and self.limits.user_full(
                self.rooms.store, user_id
            ):
                session.closing = TOO_MANY_CONNECTIONS
                raise Refusal(ChatErrorCode.THROTTLED, TOO_MANY_CONNECTIONS[1])
            member = member_of(self.rooms.store, channel_id, user_id, grant.scopes)
        member.emotes = session.emotes
        session.authkey = key if member.user_id is not None else None
        self._enter(session, room, member)
        return {"authenticated": member.user_id is not None, "roles": member.roles}

    def _enter(self, session: NodeSession, room: Room, member: Member) -> None:
        """Move ``session`` into ``room`` as ``member`` (leaving where it was)."""
        if session.room is room and session.member.user_id == member.user_id:
            session.member = member  # same identity, fresh roles: no leave/join events
            return
        self._leave(session)
        session.room, session.member = room, member
        members = self._channels.get(room.channel_id)
        if members is None:
            members = self._channels[room.channel_id] = {}
            self.broker.subscribe(room.channel_id, self)
            settings.forget(room)  # changes made while no node here served the room
        members[session.ws] = session
        presence.join(room, member, session.key)

    def _leave(self, session: NodeSession) -> None:
        room = session.room
        if room is None:
            return
        members = self._channels.get(room.channel_id)
        if members is not None:
            members.pop(session.ws, None)
            if not members:
                del self._channels[room.channel_id]
                self.broker.unsubscribe(room.channel_id, self)
        session.room = None
        presence.leave(room, session.member)
