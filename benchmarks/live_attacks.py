"""The live-events attacks of ``python -m benchmarks front`` (issue 36): sockets at a platform's
web root that each do one hostile thing, reopened whenever the server closes them.

* :func:`bombs`: gzipped frames of about 58 KB that inflate to 60 MB each;
* :func:`hold`: subscribe to as many 100-character names as allowed, then ping with
  100-character ids without ever reading.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import socket
import time
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

import orjson
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

#: A method packet inflating to 60 MB, gzipped (about 58 KB).
BOMB = gzip.compress(
    b'{"type":"method","method":"ping","id":1,"pad":"' + b"a" * 60_000_000 + b'"}', 9
)
#: Subscriptions per frame in :func:`hold` (100-character names, under 64 KiB).
NAMES_PER_FRAME = 600

Attack = Callable[[ClientConnection, int], Awaitable[None]]


async def again_and_again(
    url: str, local: str, until: float, attack: Attack, opened: list[int]
) -> None:
    """Run ``attack`` on one live-events socket of the platform whose REST base is ``url``,
    from the address ``local``, reopening it whenever it closes, until ``until``; each socket
    opened adds to ``opened``."""
    parts = urlsplit(url)
    while time.monotonic() < until:
        raw = socket.socket()
        try:
            raw.bind((local, 0))
            raw.setblocking(False)
            await asyncio.get_running_loop().sock_connect(raw, (parts.hostname, parts.port))
            ws = await connect(
                f"ws://{parts.netloc}/", sock=raw, compression=None, max_size=None, open_timeout=5
            )
        except (OSError, InvalidHandshake, TimeoutError):
            raw.close()
            await asyncio.sleep(0.05)
            continue
        opened.append(1)
        try:
            await asyncio.wait_for(attack(ws, len(opened)), max(0.01, until - time.monotonic()))
        except (ConnectionClosed, OSError, TimeoutError):
            pass
        finally:
            # Hang up without a closing handshake (a socket that never read cannot have one).
            with contextlib.suppress(OSError):
                raw.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(ws.wait_closed(), 1.0)
            raw.close()


async def bombs(ws: ClientConnection, _: int) -> None:
    """Send gzip bombs until the socket closes."""
    while True:
        await ws.send(BOMB)
        await asyncio.sleep(0)


async def hold(ws: ClientConnection, nth: int) -> None:
    """Subscribe to as many long names as allowed (new ones for the ``nth`` socket), then
    ping without reading, until closed."""
    base = nth * 100_000
    for batch in range(10_000 // NAMES_PER_FRAME + 1):
        first = base + batch * NAMES_PER_FRAME
        names = [f"costream:{n:090d}:update" for n in range(first, first + NAMES_PER_FRAME)]
        packet = {"type": "method", "method": "livesubscribe", "params": {"events": names}}
        await ws.send(orjson.dumps({**packet, "id": batch}).decode())
    ping = orjson.dumps({"type": "method", "method": "ping", "id": "i" * 100}).decode()
    while True:
        await ws.send(ping)
        await asyncio.sleep(0)  # a send below the write limit does not yield
