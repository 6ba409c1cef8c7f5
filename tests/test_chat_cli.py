"""``explorer serve`` with chat: one ``CHAT ws://...`` line per node, each node answering."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys

import httpx
import orjson
from websockets.asyncio.client import connect


def test_serve_prints_one_chat_line_per_node() -> None:
    """`explorer serve --chat-nodes 3` prints REST then three CHAT lines; every node serves."""
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "explorer.cli",
            "serve",
            "--port",
            "0",
            "--db",
            ":memory:",
            "--channels",
            "100",
            "--chat-nodes",
            "3",
            "--no-simulate",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert process.stdout is not None
        rest = process.stdout.readline().split()
        chats = [process.stdout.readline().split() for _ in range(3)]
        assert rest[0] == "REST" and [c[0] for c in chats] == ["CHAT"] * 3
        endpoints = [c[1] for c in chats]
        details = httpx.get(f"{rest[1]}/chats/endpoints", timeout=10).json()
        assert details == {"endpoints": endpoints}
        channel = httpx.get(f"{rest[1]}/channels/streamer", timeout=10).json()["id"]

        async def auth_everywhere() -> list[dict[str, object]]:
            replies = []
            for endpoint in endpoints:
                async with connect(endpoint) as ws:
                    await ws.recv()
                    method = {"type": "method", "method": "auth", "arguments": [channel], "id": 1}
                    await ws.send(orjson.dumps(method).decode())
                    replies.append(orjson.loads(await ws.recv())["data"])
            return replies

        replies = asyncio.run(auth_everywhere())
        assert replies == [{"authenticated": False, "roles": []}] * 3
    finally:
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=20) == 0
