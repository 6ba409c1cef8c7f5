"""The chat client's websocket (``explorer.chat.socket``) against a scripted node on 127.0.0.1:
reads delivered whole, fragments, pongs, keepalive, the close handshake, flow control and
every way opening can fail, as the toolkit's own errors."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
from websockets.frames import Frame, Opcode
from websockets.http11 import Request
from websockets.server import ServerProtocol

from explorer.chat.socket import ChatSocket, Message
from explorer.errors import ChatTimeout, ConnectionFailed, ExplorerError
from tests.chatkit import run


class Node(asyncio.Protocol):
    """A chat node stand-in on websockets' sans-I/O server: answers the handshake as told
    (``status`` 101 accepts, None stays silent; ``welcome`` is written with the response),
    keeps every frame it receives, and writes what its protocol wants sent (pongs, the close
    echo) unless ``answer`` is False."""

    def __init__(
        self, status: int | None = 101, answer: bool = True, welcome: bytes | None = None
    ) -> None:
        self.ws = ServerProtocol()
        self.status = status
        self.answer = answer
        self.welcome = welcome
        self.frames: list[Frame] = []
        self.request: Request | None = None
        self.received = asyncio.Event()
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.ws.receive_data(data)
        for event in self.ws.events_received():
            if isinstance(event, Request):
                self.request = event
                if self.status is not None:
                    response = (
                        self.ws.accept(event)
                        if self.status == 101
                        else self.ws.reject(self.status, "Go away.\n")
                    )
                    self.ws.send_response(response)
                    if self.welcome is not None:
                        self.ws.send_text(self.welcome)
                    self.flush()
            elif isinstance(event, Frame):
                self.frames.append(event)
                self.received.set()
        if self.answer:
            self.flush()
        else:
            self.ws.data_to_send()  # dropped: this node answers no ping

    def flush(self) -> None:
        """Write what the protocol wants sent; an empty chunk closes the connection."""
        assert self.transport is not None
        for chunk in self.ws.data_to_send():
            if chunk:
                self.transport.write(chunk)
            else:
                self.transport.close()

    def write(self, *frames: Frame) -> None:
        """Write ``frames`` in one go (so that they arrive in one read)."""
        assert self.transport is not None
        self.transport.write(b"".join(f.serialize(mask=False, extensions=[]) for f in frames))

    async def frame(self, opcode: Opcode) -> Frame:
        """The first received frame with ``opcode``, waiting for it."""
        while True:
            for frame in self.frames:
                if frame.opcode is opcode:
                    return frame
            self.received.clear()
            await self.received.wait()


@asynccontextmanager
async def serving(make: Callable[[], asyncio.Protocol]) -> AsyncIterator[str]:
    """A server on 127.0.0.1, port 0, speaking ``make()``; yields its ws:// address."""
    server = await asyncio.get_running_loop().create_server(make, "127.0.0.1", 0)
    try:
        yield f"ws://127.0.0.1:{server.sockets[0].getsockname()[1]}/"
    finally:
        server.close()


def text(data: bytes, fin: bool = True) -> Frame:
    return Frame(Opcode.TEXT, data, fin=fin)


class Sink:
    """What a socket delivered: one list per read, and whether it was lost."""

    def __init__(self) -> None:
        self.reads: list[list[bytes]] = []
        self.lost = asyncio.Event()
        self.more = asyncio.Event()

    def deliver(self, messages: list[Message]) -> None:
        self.reads.append([bytes(m) for m in messages])
        self.more.set()

    def gone(self, socket: ChatSocket) -> None:
        self.lost.set()

    async def messages(self, count: int) -> list[bytes]:
        """Every message delivered so far, once there are ``count``."""
        while len(got := [m for read in self.reads for m in read]) < count:
            self.more.clear()
            await self.more.wait()
        return got


def node_and_socket(
    node: Node, **options: Any
) -> Callable[[Callable[[Node, ChatSocket], Any]], None]:
    """Run ``scenario(node, socket)`` against a socket opened to ``node``."""

    def runner(scenario: Callable[[Node, ChatSocket], Any]) -> None:
        async def main() -> None:
            async with serving(lambda: node) as url:
                socket = await ChatSocket.open(url, **options)
                try:
                    await scenario(node, socket)
                finally:
                    socket.abort()

        run(main(), timeout=10)

    return runner


def test_frames_of_one_read_are_delivered_together() -> None:
    """Messages written in one go reach ``deliver`` as one list, in order."""

    async def scenario(node: Node, socket: ChatSocket) -> None:
        sink = Sink()
        socket.attach(sink.deliver, sink.gone)
        node.write(text(b"a"), text(b"b"), text(b"c"))
        assert await sink.messages(3) == [b"a", b"b", b"c"]
        assert sink.reads == [[b"a", b"b", b"c"]]

    node_and_socket(Node())(scenario)


def test_messages_before_attach_are_kept() -> None:
    """A message that came with the handshake response is delivered on attach, first."""

    async def scenario(node: Node, socket: ChatSocket) -> None:
        sink = Sink()
        socket.attach(sink.deliver, sink.gone)
        assert sink.reads == [[b"welcome"]]
        node.write(text(b"later"))
        assert await sink.messages(2) == [b"welcome", b"later"]

    node_and_socket(Node(welcome=b"welcome"))(scenario)


def test_fragmented_message_is_reassembled() -> None:
    """A message sent in three fragments is delivered once, whole."""

    async def scenario(node: Node, socket: ChatSocket) -> None:
        sink = Sink()
        socket.attach(sink.deliver, sink.gone)
        node.write(text(b'{"a":', fin=False), Frame(Opcode.CONT, b" 1", fin=False))
        node.write(Frame(Opcode.CONT, b"}"), text(b"next"))
        assert await sink.messages(2) == [b'{"a": 1}', b"next"]

    node_and_socket(Node())(scenario)


def test_sent_data_is_one_masked_text_frame() -> None:
    """send() writes a Text frame the node reads back intact."""

    async def scenario(node: Node, socket: ChatSocket) -> None:
        await socket.send(b'{"type":"method"}')
        frame = await node.frame(Opcode.TEXT)
        assert frame.data == b'{"type":"method"}' and frame.fin

    node_and_socket(Node())(scenario)


def test_handshake_names_the_toolkit() -> None:
    """The handshake request carries User-Agent explorer and offers no compression."""

    async def scenario(node: Node, socket: ChatSocket) -> None:
        assert node.request is not None
        assert node.request.headers["User-Agent"] == "explorer"
        assert "Sec-WebSocket-Extensions" not in node.request.headers

    node_and_socket(Node())(scenario)


def test_deflate_is_offered_when_asked() -> None:
    """compression="deflate" offers permessage-deflate, and compressed frames arrive plain."""

    async def scenario(node: Node, socket: ChatSocket) -> None:
        assert node.request is not None
        assert "permessage-deflate" in node.request.headers["Sec-WebSocket-Extensions"]
        await socket.send(b"squeezed")
        assert (await node.frame(Opcode.TEXT)).data == b"squeezed"

    node_and_socket(Node(), compression="deflate")(scenario)


def test_pings_are_answered() -> None:
    """A node's ping gets a pong with the same payload."""

    async def scenario(node: Node, socket: ChatSocket) -> None:
        node.write(Frame(Opcode.PING, b"are you there"))
        assert (await node.frame(Opcode.PONG)).data == b"are you there"

    node_and_socket(Node())(scenario)


def test_keepalive_drops_a_node_that_answers_no_ping() -> None:
    """With keepalive on, a node that never answers pings is dropped and ``lost`` is told."""

    async def scenario(node: Node, socket: ChatSocket) -> None:
        sink = Sink()
        socket.attach(sink.deliver, sink.gone)
        await sink.lost.wait()
        assert socket.closed and (await node.frame(Opcode.PING)).data

    node_and_socket(Node(answer=False), ping_interval=0.01, ping_timeout=0.01)(scenario)


def test_keepalive_keeps_an_answering_node() -> None:
    """A node that answers pings stays connected through several keepalive rounds."""

    async def scenario(node: Node, socket: ChatSocket) -> None:
        for _ in range(3):
            count = len(node.frames)
            while len(node.frames) == count:
                node.received.clear()
                await node.received.wait()
        assert {f.opcode for f in node.frames} == {Opcode.PING} and not socket.closed

    node_and_socket(Node(), ping_interval=0.01, ping_timeout=5.0)(scenario)


def test_close_runs_the_close_handshake() -> None:
    """close() sends a 1000 close frame, waits for the node's echo and the TCP close, and does
    not report the connection as lost."""

    async def scenario(node: Node, socket: ChatSocket) -> None:
        sink = Sink()
        socket.attach(sink.deliver, sink.gone)
        await socket.close()
        close = await node.frame(Opcode.CLOSE)
        assert close.data[:2] == (1000).to_bytes(2, "big")
        assert socket.closed and not sink.lost.is_set()
        with pytest.raises(ConnectionFailed, match="closed"):
            await socket.send(b"too late")

    node_and_socket(Node())(scenario)


def test_node_closing_is_reported_as_lost() -> None:
    """When the node closes the connection, ``lost`` is called and sending fails."""

    async def scenario(node: Node, socket: ChatSocket) -> None:
        sink = Sink()
        socket.attach(sink.deliver, sink.gone)
        node.ws.send_close(1001, "going away")
        node.flush()
        await sink.lost.wait()
        assert socket.closed
        with pytest.raises(ConnectionFailed):
            await socket.send(b"anyone?")

    node_and_socket(Node())(scenario)


def test_send_waits_while_the_write_buffer_is_full() -> None:
    """When the node stops reading, send() waits; it returns once the node reads again."""

    async def scenario(node: Node, socket: ChatSocket) -> None:
        assert node.transport is not None
        node.transport.pause_reading()
        chunk = b"x" * 65536
        waiting: asyncio.Task[None] | None = None
        for _ in range(2000):  # at most 128 MB: loopback buffers hold a few MB
            waiting = asyncio.ensure_future(socket.send(chunk))
            await asyncio.sleep(0)
            if not waiting.done():
                break
            waiting = None
        assert waiting is not None, "the write buffer never filled"
        node.transport.resume_reading()
        await waiting

    node_and_socket(Node(), ping_interval=None)(scenario)


@pytest.mark.parametrize(
    ("status", "why"), [(403, "403"), (404, "404")], ids=["forbidden", "not-found"]
)
def test_refused_handshake_raises_connection_failed(status: int, why: str) -> None:
    """A node that answers the upgrade with an HTTP error raises ConnectionFailed naming it."""

    async def scenario() -> None:
        async with serving(lambda: Node(status=status)) as url:
            with pytest.raises(ConnectionFailed, match=why) as failed:
                await ChatSocket.open(url)
            assert url in str(failed.value)

    run(scenario())


def test_silent_node_raises_chat_timeout() -> None:
    """A node that accepts TCP but never answers the handshake raises ChatTimeout (a
    TimeoutError and an ExplorerError) after ``open_timeout``."""

    async def scenario() -> None:
        async with serving(lambda: Node(status=None)) as url:
            with pytest.raises(ChatTimeout, match=r"no handshake within 0\.05 s") as failed:
                await ChatSocket.open(url, open_timeout=0.05)
            assert isinstance(failed.value, TimeoutError)
            assert isinstance(failed.value, ExplorerError)

    run(scenario())


def test_nothing_listening_raises_connection_failed() -> None:
    """A port where nothing listens raises ConnectionFailed naming the endpoint."""

    async def scenario() -> None:
        async with serving(lambda: Node()) as url:
            pass  # closed again: its port is free now
        with pytest.raises(ConnectionFailed, match=url):
            await ChatSocket.open(url)

    run(scenario())


def test_bad_address_and_compression_are_refused() -> None:
    """A non-websocket address raises ConnectionFailed, an unknown compression ValueError."""

    async def scenario() -> None:
        with pytest.raises(ConnectionFailed, match="not a websocket address"):
            await ChatSocket.open("http://127.0.0.1:1/")
        with pytest.raises(ValueError, match="compression"):
            await ChatSocket.open("ws://127.0.0.1:1/", compression="gzip")  # type: ignore[arg-type]

    run(scenario())


@pytest.mark.skipif(sys.platform == "win32", reason="Windows counts no unread stream bytes")
def test_unread_counts_what_the_node_sent_until_it_is_read() -> None:
    """unread() is the bytes a node sent that the socket has not read yet, and 0 once read."""

    async def scenario(node: Node, socket: ChatSocket) -> None:
        sink = Sink()
        socket.attach(sink.deliver, sink.gone)
        assert socket.unread() == 0
        node.write(text(b"x" * 1000))
        # The loop is not given a turn, so nothing reads: wait for the kernel to hold it.
        deadline = time.monotonic() + 5
        while socket.unread() == 0 and time.monotonic() < deadline:
            pass
        assert socket.unread() >= 1000
        assert await sink.messages(1) == [b"x" * 1000]
        assert socket.unread() == 0

    node_and_socket(Node())(scenario)
