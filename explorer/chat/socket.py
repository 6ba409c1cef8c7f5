"""One websocket connection to a chat node, on websockets' documented sans-I/O API.

Why its own socket: a busy channel sends a hundred or so frames per socket read, and the chat
client must take them all at once to keep up (``chat/blocking.py``). websockets' asyncio connection
queues each message for ``recv()``, and reaching into it for the frames of one read means
overriding undocumented methods that any release may rename, leaving a client that silently
sees no events. So websockets' sans-I/O :class:`~websockets.client.ClientProtocol` does the
protocol (handshake, framing, masking, permessage-deflate, pongs, the close handshake) and this
module does the I/O, as websockets' guide "Integrate the Sans-I/O layer" describes: an
:class:`asyncio.Protocol` feeds each read to ``receive_data``, passes the data frames that
``events_received`` returns to :attr:`ChatSocket.deliver` in one list, and writes whatever
``data_to_send`` returns (pongs included: the protocol queues one for every ping).

What it uses of websockets, all public (its tests pass on websockets 14.0 and 17.4; the
project requires 17 for the platform's chat node): ``websockets.uri.parse_uri``;
``websockets.client.ClientProtocol(uri, extensions=, max_size=)`` with ``connect``,
``send_request``, ``receive_data``, ``receive_eof``, ``events_received``, ``data_to_send``,
``close_expected``, ``send_text``, ``send_ping``, ``send_close``, ``handshake_exc``, ``state``,
``close_code``;
``websockets.protocol.State``; ``websockets.frames.Frame`` and ``Opcode``;
``websockets.extensions.permessage_deflate.ClientPerMessageDeflateFactory``;
``websockets.exceptions.InvalidURI``. This is the toolkit's only importer of websockets.

Errors are the toolkit's own: :class:`~explorer.errors.ConnectionFailed` when the node cannot
be reached, refuses the handshake or the connection is closed, and
:class:`~explorer.errors.ChatTimeout` when the handshake does not finish within
``open_timeout``. Each phase has its own timeout: ``open_timeout`` (TCP connection and
handshake), ``ping_interval`` and ``ping_timeout`` (keepalive: a node that answers no ping
within ``ping_timeout`` is dropped, as websockets' own client does), ``close_timeout`` (the
close handshake; then the socket is aborted). Writes honour the transport's flow control:
:meth:`ChatSocket.send` waits while the write buffer is above its high-water mark.
"""

from __future__ import annotations

import asyncio
import logging
import os
import struct
import sys
from collections.abc import Callable
from typing import Literal

from websockets.client import ClientProtocol
from websockets.exceptions import InvalidURI
from websockets.extensions.permessage_deflate import ClientPerMessageDeflateFactory
from websockets.frames import Frame, Opcode
from websockets.protocol import State
from websockets.uri import parse_uri

from explorer.errors import ChatTimeout, ConnectionFailed

log = logging.getLogger(__name__)

#: The ``User-Agent`` of the handshake request.
USER_AGENT = "explorer"
#: Largest message accepted, in bytes (websockets' default).
MAX_SIZE = 2**20

Compression = Literal["deflate"] | None
#: A message's bytes, as websockets' frames carry them.
Message = bytes | bytearray | memoryview
Deliver = Callable[[list[Message]], None]

_TEXT, _BINARY, _CONT, _PONG = Opcode.TEXT, Opcode.BINARY, Opcode.CONT, Opcode.PONG
_OPEN = State.OPEN


class ChatSocket(asyncio.Protocol):
    """A websocket client connection that hands the data frames of each socket read to
    :attr:`deliver` in one list (messages, reassembled when fragmented) and
    tells :attr:`lost` when it closes. Open one with :meth:`open`.

    Messages that arrive before :meth:`attach` (a node's ``WelcomeEvent`` may come in the same
    read as the handshake response) are kept until then.
    """

    def __init__(
        self,
        endpoint: str,
        protocol: ClientProtocol,
        *,
        ping_interval: float | None,
        ping_timeout: float,
        close_timeout: float,
    ) -> None:
        self.endpoint = endpoint
        self.ping_interval = ping_interval
        self.ping_timeout = ping_timeout
        self.close_timeout = close_timeout
        #: Called with the messages of each read, once attached.
        self.deliver: Deliver | None = None
        #: Called with this socket when the connection closes, once attached.
        self.lost: Callable[[ChatSocket], object] | None = None
        self._ws = protocol
        self._loop = asyncio.get_running_loop()
        self._transport: asyncio.Transport | None = None
        self._handshake: asyncio.Future[None] = self._loop.create_future()
        self._closed: asyncio.Future[None] = self._loop.create_future()
        self._open = False
        self._batch: list[Message] = []
        self._parts: list[Message] = []
        self._drained: asyncio.Future[None] | None = None
        self._ping: bytes | None = None
        self._keepalive: asyncio.TimerHandle | None = None
        self._closing: asyncio.TimerHandle | None = None

    @classmethod
    async def open(
        cls,
        endpoint: str,
        *,
        open_timeout: float | None = 10.0,
        ping_interval: float | None = 20.0,
        ping_timeout: float = 20.0,
        close_timeout: float = 10.0,
        compression: Compression = None,
        max_size: int | None = MAX_SIZE,
    ) -> ChatSocket:
        """Connect to ``endpoint`` (``ws://`` or ``wss://``) and finish the handshake.

        ``compression="deflate"`` offers permessage-deflate (off by default: on the loopback
        it costs more than it saves). Raises ConnectionFailed or ChatTimeout (see the module
        docstring), ValueError for an unknown ``compression``.
        """
        if compression not in (None, "deflate"):
            raise ValueError(f"Unknown compression {compression!r}; use None or 'deflate'.")
        try:
            uri = parse_uri(endpoint)
        except InvalidURI as exc:
            raise ConnectionFailed(f"{endpoint} is not a websocket address: {exc}") from None
        extensions = (
            [ClientPerMessageDeflateFactory(compress_settings={"memLevel": 5})]
            if compression == "deflate"
            else None
        )
        protocol = ClientProtocol(uri, extensions=extensions, max_size=max_size)
        loop = asyncio.get_running_loop()
        socket: ChatSocket | None = None

        def made() -> ChatSocket:
            nonlocal socket
            socket = cls(
                endpoint,
                protocol,
                ping_interval=ping_interval,
                ping_timeout=ping_timeout,
                close_timeout=close_timeout,
            )
            return socket

        try:
            async with asyncio.timeout(open_timeout):
                await loop.create_connection(
                    made, uri.host, uri.port, ssl=True if uri.secure else None
                )
                assert socket is not None
                await socket._handshake
        except BaseException as exc:
            _drop(socket)
            if isinstance(exc, ConnectionFailed):
                raise
            if isinstance(exc, TimeoutError):
                raise ChatTimeout(f"{endpoint}: no handshake within {open_timeout:g} s") from None
            if isinstance(exc, OSError):
                raise ConnectionFailed(f"{endpoint}: {exc.strerror or exc}") from exc
            raise
        assert socket is not None
        return socket

    def attach(self, deliver: Deliver, lost: Callable[[ChatSocket], object]) -> None:
        """Send every message, from the first, to ``deliver``; call ``lost`` on closing."""
        self.deliver, self.lost = deliver, lost
        if self._batch:
            batch, self._batch = self._batch, []
            deliver(batch)

    def unread(self) -> int:
        """Bytes the node sent that the operating system holds for this socket, not read yet
        (``FIONREAD``): more than none means the client is behind its chat, however few
        events it counts (on a busy machine a flood arrives slowly). 0 when closed, and on
        Windows, which has no such count for a stream socket."""
        if sys.platform == "win32" or self._transport is None or self.closed:
            return 0
        import fcntl
        import termios

        socket = self._transport.get_extra_info("socket")
        if socket is None:
            return 0
        waiting = fcntl.ioctl(socket.fileno(), termios.FIONREAD, b"\0\0\0\0")
        count: int = struct.unpack("i", waiting)[0]
        return count

    @property
    def closed(self) -> bool:
        """Whether the connection has closed."""
        return self._closed.done()

    @property
    def close_code(self) -> int | None:
        """The code of the node's close frame once closed: 1006 when none came, None while
        the connection is open."""
        return self._ws.close_code

    async def wait_closed(self) -> None:
        """Return once the connection has closed."""
        await asyncio.shield(self._closed)

    async def send(self, data: bytes) -> None:
        """Send ``data`` (UTF-8) as one Text frame; wait while the write buffer is full.

        Raises ConnectionFailed when the connection is closed or closes meanwhile.
        """
        if self._ws.state is not _OPEN:
            raise ConnectionFailed(f"The connection to {self.endpoint} is closed.")
        self._ws.send_text(data)
        self._send_pending()
        if self._drained is not None:
            await asyncio.shield(self._drained)
            if self.closed:
                raise ConnectionFailed(f"The connection to {self.endpoint} closed.")

    async def close(self) -> None:
        """Close with the close handshake (code 1000), waiting at most ``close_timeout``
        seconds for the node's part before aborting; return once closed. Does not call
        :attr:`lost`."""
        self.lost = None
        if self._ws.state is _OPEN:
            self._ws.send_close(1000)
            self._send_pending()
        if self._ws.state is State.CLOSING:
            self._expect_close()
        elif self._transport is not None:
            self._transport.abort()
        await self.wait_closed()

    def abort(self) -> None:
        """Drop the connection at once, without a close handshake or a call to :attr:`lost`."""
        self.lost = None
        if self._transport is not None:
            self._transport.abort()

    # asyncio.Protocol.

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport
        request = self._ws.connect()
        request.headers["User-Agent"] = USER_AGENT
        self._ws.send_request(request)
        self._send_pending()

    def data_received(self, data: bytes) -> None:
        """Parse one read and deliver its messages together (the hot path)."""
        ws = self._ws
        ws.receive_data(data)
        batch = self._batch
        for event in ws.events_received():
            if type(event) is not Frame:
                continue  # the handshake response: see _opened below
            opcode = event.opcode
            if opcode is _TEXT or opcode is _BINARY:
                if event.fin:
                    batch.append(event.data)
                else:
                    self._parts = [event.data]
            elif opcode is _CONT:
                self._parts.append(event.data)
                if event.fin:
                    batch.append(b"".join(self._parts))
                    self._parts = []
            elif opcode is _PONG and event.data == self._ping:
                self._pong()
        self._send_pending()
        if not self._open:
            self._opened()
        if ws.close_expected():
            self._expect_close()
        if batch and self.deliver is not None:
            self._batch = []
            self.deliver(batch)

    def eof_received(self) -> None:
        self._ws.receive_eof()
        self._send_pending()  # half-closes our side too; then the transport closes

    def connection_lost(self, exc: Exception | None) -> None:
        self._ws.receive_eof()
        for timer in (self._keepalive, self._closing):
            if timer is not None:
                timer.cancel()
        if not self._handshake.done():
            self._handshake.set_exception(
                ConnectionFailed(f"{self.endpoint} closed the connection during the handshake")
            )
        self._closed.set_result(None)
        self.resume_writing()
        if self.lost is not None:
            self.lost(self)

    def pause_writing(self) -> None:
        if self._drained is None:
            self._drained = self._loop.create_future()

    def resume_writing(self) -> None:
        drained, self._drained = self._drained, None
        if drained is not None and not drained.done():
            drained.set_result(None)

    # Internals.

    def _opened(self) -> None:
        """Settle the handshake once the protocol has decided it."""
        ws = self._ws
        if self._handshake.done():
            return
        if ws.handshake_exc is not None:
            error = ConnectionFailed(
                f"{self.endpoint} refused the websocket handshake: {ws.handshake_exc}"
            )
            error.__cause__ = ws.handshake_exc
            self._handshake.set_exception(error)
        elif ws.state is _OPEN:
            self._open = True
            self._handshake.set_result(None)
            self._schedule_ping()

    def _send_pending(self) -> None:
        """Write what the protocol wants sent; an empty chunk means half-close."""
        transport = self._transport
        for chunk in self._ws.data_to_send():
            if transport is None or transport.is_closing():
                return
            if chunk:
                transport.write(chunk)
            elif transport.can_write_eof():
                transport.write_eof()
            else:
                transport.close()

    def _expect_close(self) -> None:
        """The node should close the TCP connection now: abort it if it has not in time."""
        if self._closing is None and self._transport is not None:
            self._closing = self._loop.call_later(self.close_timeout, self._transport.abort)

    def _schedule_ping(self) -> None:
        if self.ping_interval is not None:
            self._keepalive = self._loop.call_later(self.ping_interval, self._send_ping)

    def _send_ping(self) -> None:
        if self._ws.state is not _OPEN:
            return
        self._ping = os.urandom(4)
        self._ws.send_ping(self._ping)
        self._send_pending()
        self._keepalive = self._loop.call_later(self.ping_timeout, self._ping_timed_out)

    def _pong(self) -> None:
        self._ping = None
        if self._keepalive is not None:
            self._keepalive.cancel()
        self._schedule_ping()

    def _ping_timed_out(self) -> None:
        log.warning(
            "explorer chat: %s answered no ping within %g s; dropping it",
            self.endpoint,
            self.ping_timeout,
        )
        if self._transport is not None:
            self._transport.abort()


def _drop(socket: ChatSocket | None) -> None:
    """Abort a socket whose opening failed (its handshake's outcome is nobody's to read)."""
    if socket is not None:
        socket._handshake.cancel()
        socket.abort()
