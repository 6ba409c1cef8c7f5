"""Servers that benchmarks measure, each run in its own process so the load generator does not
share their GIL: ``python -m benchmarks.targets platform`` (the emulator, limits off, no
simulation), ``python -m benchmarks.targets shared DB BROKER PORT`` (a REST process of a
platform on the file DB, rate limits on in buckets too large to fill, counted in the Redis at
BROKER, ``-`` for in process; sharing PORT, 0 for a free one, with the other REST processes of
that platform; the first one seeds DB), ``python -m benchmarks.targets bare FILE`` (a bare
Starlette endpoint answering FILE's bytes) or ``python -m benchmarks.targets decoy KIND`` (a
listener that does with each connection the least a server can: holds it unread for
``slowloris``, closes it at once for ``headers``, reads and discards every frame of a websocket
for ``websocket``; what an attack costs the machine, not a server). Each prints its base URL on
one line, then serves until killed.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def _bare(body_file: str) -> None:
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    body = Path(body_file).read_bytes()

    async def endpoint(request: Request) -> Response:
        return Response(body, media_type="application/json")

    app = Starlette(routes=[Route("/api/v1/channels", endpoint)])
    from explorer.emulator.server import bind

    sock = bind("127.0.0.1", 0)
    print(f"http://127.0.0.1:{sock.getsockname()[1]}/api/v1", flush=True)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    uvicorn.Server(config).run(sockets=[sock])


def _websocket_decoy() -> None:
    """A websockets server that reads and discards every frame (no compression, no limit)."""
    import contextlib

    from websockets.asyncio.server import ServerConnection, serve
    from websockets.exceptions import ConnectionClosed

    from explorer.emulator.server import bind, run_loop

    async def discard(ws: ServerConnection) -> None:
        with contextlib.suppress(ConnectionClosed):  # attackers hang up without a close
            async for _ in ws:
                pass

    async def main() -> None:
        sock = bind("127.0.0.1", 0)
        async with serve(discard, sock=sock, compression=None, max_size=None) as server:
            print(f"http://127.0.0.1:{sock.getsockname()[1]}/api/v1", flush=True)
            await server.serve_forever()

    run_loop(main())


def _decoy(kind: str) -> None:
    import asyncio
    from typing import cast

    if kind == "websocket":
        _websocket_decoy()
        return

    held: list[asyncio.Transport] = []

    class Decoy(asyncio.Protocol):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            tcp = cast(asyncio.Transport, transport)  # uvloop's does not subclass it
            if kind == "slowloris" and len(held) < 4096:
                tcp.pause_reading()
                held.append(tcp)
            else:
                tcp.abort()

    async def serve() -> None:
        sock = bind("127.0.0.1", 0)
        server = await asyncio.get_running_loop().create_server(Decoy, sock=sock)
        print(f"http://127.0.0.1:{sock.getsockname()[1]}/api/v1", flush=True)
        await server.serve_forever()

    from explorer.emulator.server import bind, run_loop

    run_loop(serve())


def _platform(channels: int) -> None:
    from explorer.emulator import start

    platform = start(channels=channels, rate_limits=False)
    print(platform.base_url, flush=True)
    while True:
        time.sleep(3600)


def _shared(db: str, broker: str, port: int) -> None:
    from explorer.emulator import Platform, PlatformOptions
    from explorer.emulator.config import Config
    from explorer.wire.ratelimit import BUCKETS

    endless = {name: (10**9, bucket.interval) for name, bucket in BUCKETS.items()}
    shared = broker != "-"
    options = PlatformOptions(
        db=db,
        port=port,
        config=Config(channels=5000, buckets=endless),
        chat_nodes=0 if shared else 1,
        broker=broker if shared else None,
        reuse_port=shared,
    )
    platform = Platform(options).start_in_thread(120)
    print(platform.base_url, flush=True)
    while True:
        time.sleep(3600)


@contextmanager
def running(*args: str) -> Iterator[tuple[str, int]]:
    """Start a target in a subprocess; yield (base URL, pid); terminate that pid after."""
    process = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.targets", *args], stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        if not url.startswith("http://127.0.0.1:"):
            raise RuntimeError(f"target {args} failed to start: {url!r}")
        yield url, process.pid
    finally:
        process.terminate()
        process.wait(10)


if __name__ == "__main__":
    if sys.argv[1] == "bare":
        _bare(sys.argv[2])
    elif sys.argv[1] == "decoy":
        _decoy(sys.argv[2])
    elif sys.argv[1] == "shared":
        _shared(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        _platform(int(sys.argv[2]) if len(sys.argv) > 2 else 5000)
