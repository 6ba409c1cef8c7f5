"""Chat benchmarks (issue 3), loopback only, every loop bounded in count and time.

1. Fan-out: deliveries per second to 1,000 clients in one channel, from a platform chat node
   against a bare ``websockets.broadcast`` server sending the same bytes, side by side in one
   run (alternating rounds, median of each), as a ratio. Goal: >= 0.8.
2. Throughput: messages per second through one node with 100 clients chatting in one channel
   (each waits for its reply before sending again; every message is delivered to all 100).

Both servers run in this process (each on its own event loop thread, uvloop like the
platform); the receiving clients run in a child process (``python -m benchmarks.chat_fanout
clients ...``) so their cost does not land on the servers. They are raw websocket clients that
do the handshake by hand and only split frames and count them, far cheaper per frame than a
full client, so the servers are what is measured. A driver connection in the child sends the
messages with a window of in-flight requests; for the bare server each ``msg`` frame triggers
one broadcast of a ChatMessage frame captured from the platform. Run with
``python -m benchmarks.chat_fanout``.
"""

from __future__ import annotations

import asyncio
import base64
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import httpx
import orjson
from websockets.asyncio.client import connect
from websockets.asyncio.server import ServerConnection, broadcast, serve
from websockets.exceptions import ConnectionClosed

from explorer.emulator import Platform, start
from explorer.emulator.server import run_loop

RECEIVERS = 1000
MESSAGES = 300
ROUNDS = 3
CHATTERS = 100
CHAT_SECONDS = 3.0
WINDOW = 8
DEADLINE = 60.0
TEXT = "fan-out benchmark: the quick brown fox jumps over the lazy dog"


# --- a raw websocket client: handshake by hand, frames split and counted --------------------


def client_frame(payload: bytes) -> bytes:
    """A masked text frame (zero mask key: the payload goes out as is)."""
    size = len(payload)
    if size < 126:
        header = bytes((0x81, 0x80 | size))
    elif size < 65536:
        header = bytes((0x81, 0x80 | 126)) + size.to_bytes(2, "big")
    else:
        header = bytes((0x81, 0x80 | 127)) + size.to_bytes(8, "big")
    return header + b"\0\0\0\0" + payload


def method_frame(method: str, arguments: list[Any], id: int) -> bytes:
    """A method packet as a client frame."""
    packet = {"type": "method", "method": method, "arguments": arguments, "id": id}
    return client_frame(orjson.dumps(packet))


class RawClient(asyncio.Protocol):
    """Counts text frames of a given payload size; notices replies."""

    def __init__(self, host: str, port: int, count_size: int = -1) -> None:
        self.host, self.port = host, port
        self.count_size = count_size
        self.counted = 0
        self.replies = 0
        self.upgraded = asyncio.get_running_loop().create_future()
        self.changed = asyncio.Event()
        self.last_chat: bytes = b""
        self.transport: asyncio.Transport | None = None
        self._buffer = bytearray()
        self._open = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)
        key = base64.b64encode(os.urandom(16)).decode()
        self.transport.write(
            (
                f"GET /?version=1.0&Client-ID=bench HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
                "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )

    def data_received(self, data: bytes) -> None:
        buffer = self._buffer
        buffer += data
        if not self._open:
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            if not buffer.startswith(b"HTTP/1.1 101"):
                raise RuntimeError(bytes(buffer[:200]).decode(errors="replace"))
            del buffer[: end + 4]
            self._open = True
            self.upgraded.set_result(None)
        position, available = 0, len(buffer)
        while available - position >= 2:
            size = buffer[position + 1] & 0x7F
            head = 2
            if size == 126:
                if available - position < 4:
                    break
                size, head = int.from_bytes(buffer[position + 2 : position + 4], "big"), 4
            elif size == 127:
                if available - position < 10:
                    break
                size, head = int.from_bytes(buffer[position + 2 : position + 10], "big"), 10
            if available - position < head + size:
                break
            if size == self.count_size:
                self.counted += 1
            elif buffer[position + head : position + head + 15] == b'{"type":"reply"':
                self.replies += 1
            elif buffer[position + head + 24 : position + head + 37] == b'"ChatMessage"':
                self.last_chat = bytes(buffer[position + head : position + head + size])
            position += head + size
        if position:
            del buffer[:position]
            self.changed.set()

    async def until(self, check: Any, seconds: float = DEADLINE) -> None:
        """Wait until ``check()`` holds (bounded)."""
        deadline = time.monotonic() + seconds
        while not check():
            self.changed.clear()
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("benchmark client waited too long")
            try:
                await asyncio.wait_for(self.changed.wait(), left)
            except TimeoutError:
                continue

    def send(self, frame: bytes) -> None:
        assert self.transport is not None
        self.transport.write(frame)


async def open_raw(url: str, count_size: int = -1) -> RawClient:
    """A raw client connected and upgraded."""
    host, port = url.removeprefix("ws://").split(":")
    loop = asyncio.get_running_loop()
    _, client = await loop.create_connection(
        lambda: RawClient(host, int(port), count_size), host, int(port)
    )
    await asyncio.wait_for(client.upgraded, 10)
    return client


async def authed(url: str, auth: list[Any], count_size: int = -1) -> RawClient:
    """A raw client that sent ``auth`` and got its reply."""
    client = await open_raw(url, count_size)
    client.send(method_frame("auth", auth, 0))
    await client.until(lambda: client.replies >= 1, 10)
    return client


# --- the child process: receivers, drivers, chatters -------------------------------------


async def fanout_clients(url: str, auth: list[Any], driver_auth: list[Any]) -> dict[str, float]:
    """Driver joins and learns the frame size; 1,000 receivers join; then the timed run."""
    driver = await authed(url, driver_auth)
    driver.send(method_frame("msg", [TEXT], 1))
    await driver.until(lambda: driver.replies >= 2 and bool(driver.last_chat), 10)
    size = len(driver.last_chat)
    receivers = []
    for start_at in range(0, RECEIVERS, 100):
        batch = [authed(url, auth, size) for _ in range(start_at, min(start_at + 100, RECEIVERS))]
        receivers += await asyncio.gather(*batch)
    started = time.perf_counter()
    sent = done = 0
    while done < MESSAGES:
        while sent < MESSAGES and sent - done < WINDOW:
            sent += 1
            driver.send(method_frame("msg", [TEXT], sent + 1))
        await driver.until(lambda d=done: driver.replies - 2 > d)
        done = driver.replies - 2
    deadline = time.monotonic() + DEADLINE
    for receiver in receivers:
        await receiver.until(lambda r=receiver: r.counted >= MESSAGES, deadline - time.monotonic())
    elapsed = time.perf_counter() - started
    for client in (driver, *receivers):
        assert client.transport is not None
        client.transport.close()
    return {"deliveries": RECEIVERS * MESSAGES, "seconds": elapsed}


async def chat_clients(url: str, auth: list[Any]) -> dict[str, float]:
    """100 clients each send msg, wait for the reply, repeat, for CHAT_SECONDS."""
    chatters = [await authed(url, auth) for _ in range(CHATTERS)]
    stop = time.monotonic() + CHAT_SECONDS
    replies = [0] * CHATTERS

    async def chat(index: int, client: RawClient) -> None:
        base = client.replies
        while time.monotonic() < stop:
            sent = replies[index] + 1
            client.send(method_frame("msg", [TEXT], sent))
            await client.until(lambda sent=sent: client.replies - base >= sent, 10)
            replies[index] = sent

    started = time.perf_counter()
    await asyncio.gather(*(chat(i, c) for i, c in enumerate(chatters)))
    elapsed = time.perf_counter() - started
    for client in chatters:
        assert client.transport is not None
        client.transport.close()
    return {"messages": sum(replies), "seconds": elapsed}


def _child(mode: str, url: str, auth: list[Any], driver_auth: list[Any]) -> None:
    coro = fanout_clients(url, auth, driver_auth) if mode == "fanout" else chat_clients(url, auth)
    result = run_async(coro)
    print(orjson.dumps(result).decode(), flush=True)


def run_async(coro: Any) -> Any:
    """Run ``coro`` on a fresh loop (uvloop when installed), returning its result."""
    box: list[Any] = []

    async def keep() -> None:
        box.append(await coro)

    run_loop(keep())
    return box[0]


def in_child(
    mode: str, url: str, auth: list[Any], driver_auth: list[Any] | None = None
) -> dict[str, float]:
    """Run one client side in a child process; its JSON result."""
    args = [mode, url, orjson.dumps(auth).decode(), orjson.dumps(driver_auth or auth).decode()]
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.chat_fanout", "clients", *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    result: dict[str, float] = orjson.loads(done.stdout.strip().splitlines()[-1])
    return result


# --- the servers ------------------------------------------------------------------------


@dataclass
class BareServer:
    """A bare websockets server: each ``msg`` frame broadcasts ``payload`` to every client."""

    payload: bytes
    url: str = ""
    _ready: threading.Event = field(default_factory=threading.Event)
    _stop: asyncio.Event | None = None
    _loop: asyncio.AbstractEventLoop | None = None

    def start(self) -> BareServer:
        threading.Thread(target=lambda: run_loop(self._serve()), daemon=True).start()
        self._ready.wait(10)
        return self

    def stop(self) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)

    async def _serve(self) -> None:
        clients: set[ServerConnection] = set()
        reply = b'{"type":"reply","error":null,"data":{"authenticated":false,"roles":[]},"id":0}'

        async def handler(ws: ServerConnection) -> None:
            clients.add(ws)
            try:
                async for frame in ws:
                    if '"method":"msg"' in frame:
                        broadcast(clients, self.payload, text=True)
                    await ws.send(reply, text=True)
            except ConnectionClosed:
                pass  # the benchmark's clients leave without a closing handshake
            finally:
                clients.discard(ws)

        self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
        async with serve(handler, "127.0.0.1", 0) as server:
            self.url = f"ws://127.0.0.1:{server.sockets[0].getsockname()[1]}"
            self._ready.set()
            await self._stop.wait()


def platform_sample(platform: Platform, channel: int, user: int, key: str) -> bytes:
    """A ChatMessage frame payload the platform sends for TEXT from ``user``."""

    async def capture() -> bytes:
        async with connect(platform.chat_endpoints[0], compression=None) as ws:
            await ws.recv()
            auth = {"type": "method", "method": "auth", "arguments": [channel, user, key], "id": 0}
            await ws.send(orjson.dumps(auth).decode())
            await ws.recv()
            await ws.send(
                orjson.dumps(
                    {"type": "method", "method": "msg", "arguments": [TEXT], "id": 1}
                ).decode()
            )
            while True:
                frame = await asyncio.wait_for(ws.recv(decode=False), 5)
                if b'"ChatMessage"' in frame[:40]:
                    return frame

    result: bytes = run_async(capture())
    return result


def signed_in_key(platform: Platform, username: str) -> tuple[int, int, str]:
    """(channel of ``streamer``, user id, authkey) for ``username``."""
    with httpx.Client(base_url=platform.base_url, timeout=10) as client:
        login = client.post("/users/login", json={"username": username, "password": "explorer"})
        client.headers["X-CSRF-Token"] = login.headers["X-CSRF-Token"]
        me = client.get("/users/current").json()
        channel = client.get("/channels/streamer").json()["id"]
        key = client.get(f"/chats/{channel}").json()["authkey"]
        return channel, me["id"], key


def main() -> None:
    """Run both measurements and print rates and the ratio."""
    print(f"Chat fan-out: {RECEIVERS} clients in one channel, {MESSAGES} messages, {ROUNDS} rounds")
    with tempfile.TemporaryDirectory() as folder:
        platform = start(
            db=Path(folder) / "chat.db",
            channels=1000,
            rate_limits=False,
            chat_nodes=1,
            chat_rate=100_000.0,
            chat_burst=100_000,
            chat_send_buffer=64 * 1024 * 1024,
        )
        try:
            channel, user, key = signed_in_key(platform, "streamer")
            bare = BareServer(platform_sample(platform, channel, user, key)).start()
            node = platform.chat_endpoints[0]
            ours, theirs = [], []
            for _ in range(ROUNDS):
                result = in_child("fanout", node, [channel], [channel, user, key])
                ours.append(result["deliveries"] / result["seconds"])
                result = in_child("fanout", bare.url, [channel], [channel])
                theirs.append(result["deliveries"] / result["seconds"])
            bare.stop()
            platform_rate, bare_rate = statistics.median(ours), statistics.median(theirs)
            print(f"  platform chat node        {platform_rate:10.0f} deliveries/s")
            print(f"  bare websockets.broadcast {bare_rate:10.0f} deliveries/s (same bytes)")
            print(f"  ratio platform/bare: {platform_rate / bare_rate:.2f} (goal >= 0.8)")
            viewer_channel, viewer, viewer_key = signed_in_key(platform, "viewer")
            chat = in_child("chat", node, [viewer_channel, viewer, viewer_key])
            rate = chat["messages"] / chat["seconds"]
            print(
                f"Chat throughput: {CHATTERS} clients chatting in one channel on one node "
                f"(SQLite file, each message committed before its reply)"
            )
            print(
                f"  {rate:10.0f} messages/s   {rate * CHATTERS:10.0f} deliveries/s "
                f"({chat['messages']:.0f} messages in {chat['seconds']:.1f} s)"
            )
        finally:
            platform.stop()


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "clients":
        _child(sys.argv[2], sys.argv[3], orjson.loads(sys.argv[4]), orjson.loads(sys.argv[5]))
    else:
        main()
