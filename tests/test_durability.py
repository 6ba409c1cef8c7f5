"""Durability: ``kill -9`` the platform in the middle of a burst of writes, restart it on the
same database, and find every write it had acknowledged.

``explorer serve`` runs as a real subprocess on loopback (port 0, one chat node, no simulated
activity, no rate limits so registrations are not capped by ``user-register``). Three writers
run at once: registrations (``POST /users``), follows (``PUT /channels/{id}/follow``) and chat
messages (``msg`` over a websocket). A write counts as acknowledged only when its 2xx response
or its successful chat reply has arrived. Mid-burst the process gets SIGKILL; a new process
opens the same file, and every acknowledged user, follow and message must be there (users by
REST, follows by ``relationship``, messages in chat ``history``), and ``PRAGMA
integrity_check`` must say ``ok``. Loops are bounded in count and in time.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import queue
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import ClientConnection, connect

#: Kill once every writer has this many writes acknowledged, or after BURST_SECONDS.
BURST_SECONDS = 4.0
KILL_AFTER = {"users": 10, "follows": 60, "messages": 60}
#: Chat messages per channel stay under history's 100, so history can show every one.
MESSAGES_PER_CHANNEL = 90
CHAT_CHANNELS = ("streamer", "moderator", "viewer")


@dataclass
class Server:
    """A running ``explorer serve`` subprocess and the addresses it announced."""

    process: subprocess.Popen[str]
    rest: str
    chat: str
    lines: queue.Queue[str] = field(default_factory=queue.Queue)

    @classmethod
    def start(cls, db: Path, log: Path) -> Server:
        """Start ``explorer serve`` on ``db`` and wait for its REST and CHAT lines."""
        command = [
            sys.executable,
            "-m",
            "explorer.cli",
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--db",
            str(db),
            "--channels",
            "300",
            "--chat-nodes",
            "1",
            "--no-rate-limits",
            "--no-simulate",
        ]
        with log.open("a") as errors:
            process = subprocess.Popen(
                command, stdout=subprocess.PIPE, stderr=errors, text=True, bufsize=1
            )
        lines: queue.Queue[str] = queue.Queue()

        def pump() -> None:
            assert process.stdout is not None
            for line in process.stdout:
                lines.put(line.strip())

        threading.Thread(target=pump, daemon=True).start()
        found: dict[str, str] = {}
        deadline = time.monotonic() + 60
        while len(found) < 2:
            try:
                line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                process.kill()
                raise TimeoutError(f"explorer serve did not start: {log.read_text()}") from None
            kind, _, address = line.partition(" ")
            if kind in ("REST", "CHAT"):
                found[kind] = address
        return cls(process, found["REST"], found["CHAT"], lines)

    def kill(self) -> None:
        """SIGKILL, by pid: no cleanup of any kind runs."""
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> None:
        """Interrupt (a clean shutdown), killing it if it does not exit in time."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()


@dataclass
class Acknowledged:
    """Writes the platform confirmed before it died."""

    users: dict[int, str] = field(default_factory=dict)
    follows: set[int] = field(default_factory=set)
    messages: dict[int, set[str]] = field(default_factory=dict)
    #: Writes sent but never answered: in flight when the process died.
    unanswered: int = 0

    def count(self) -> int:
        """All acknowledged writes."""
        return len(self.users) + len(self.follows) + sum(map(len, self.messages.values()))


async def sign_in(client: httpx.AsyncClient, username: str) -> None:
    """Sign ``client`` in (cookie session plus its CSRF header)."""
    response = await client.post(
        "/users/login", json={"username": username, "password": "explorer"}
    )
    response.raise_for_status()
    client.headers["X-CSRF-Token"] = response.headers["X-CSRF-Token"]


async def channel_ids(base: str) -> dict[str, int]:
    """Channel ids by token, for every channel of the world."""
    ids: dict[str, int] = {}
    async with httpx.AsyncClient(base_url=base, timeout=10) as client:
        for page in range(3):
            params = {"fields": "id,token", "limit": "100", "page": str(page), "order": "id:asc"}
            for channel in (await client.get("/channels", params=params)).json():
                ids[channel["token"]] = channel["id"]
    return ids


async def register(base: str, worker: int, acked: Acknowledged, stop: asyncio.Event) -> None:
    """Register users one after another until stopped; keep those answered 201."""
    async with httpx.AsyncClient(base_url=base, timeout=10) as client:
        for number in range(200):
            if stop.is_set():
                return
            name = f"durable_{worker}_{number}"
            body = {"username": name, "password": "correct horse", "email": f"{name}@example.org"}
            try:
                response = await client.post("/users", json=body)
            except httpx.HTTPError:
                acked.unanswered += 1
                return
            if response.status_code == 201:
                acked.users[response.json()["id"]] = name


async def follow(base: str, targets: list[int], acked: Acknowledged, stop: asyncio.Event) -> None:
    """Follow channels as viewer until stopped; keep those answered 2xx."""
    async with httpx.AsyncClient(base_url=base, timeout=10) as client:
        await sign_in(client, "viewer")
        for channel in targets:
            if stop.is_set():
                return
            try:
                response = await client.put(f"/channels/{channel}/follow")
            except httpx.HTTPError:
                acked.unanswered += 1
                return
            if response.is_success:
                acked.follows.add(channel)


async def chat(
    base: str, endpoint: str, channels: list[int], acked: Acknowledged, stop: asyncio.Event
) -> None:
    """Send messages as viewer2 until stopped; keep those whose reply succeeded."""
    async with httpx.AsyncClient(base_url=base, timeout=10) as client:
        await sign_in(client, "viewer2")
        me = (await client.get("/users/current")).json()["id"]
        keys = {ch: (await client.get(f"/chats/{ch}")).json()["authkey"] for ch in channels}
    packet_id = 0

    async def call(ws: ClientConnection, method: str, *args: object) -> dict[str, Any]:
        nonlocal packet_id
        packet_id += 1
        sent = {"type": "method", "method": method, "arguments": list(args), "id": packet_id}
        await ws.send(json.dumps(sent))
        while True:
            packet: dict[str, Any] = json.loads(await ws.recv())
            if packet["type"] == "reply" and packet["id"] == packet_id:
                return packet

    try:
        for channel in channels:
            async with connect(endpoint) as ws:
                await ws.recv()  # WelcomeEvent
                assert (await call(ws, "auth", channel, me, keys[channel]))["error"] is None
                for number in range(MESSAGES_PER_CHANNEL):
                    if stop.is_set():
                        return
                    reply = await call(ws, "msg", f"durable message {number}")
                    if reply["error"] is None:
                        data = reply["data"]
                        assert isinstance(data, dict)
                        acked.messages.setdefault(channel, set()).add(data["id"])
    except Exception as lost:  # the server died under us: expected only after the kill
        acked.unanswered += 1
        if not stop.is_set():
            raise AssertionError(f"chat writer failed before the kill: {lost!r}") from lost


async def burst(server: Server, acked: Acknowledged) -> dict[str, int]:
    """Run the writers, SIGKILL the server mid-burst, let the writers notice."""
    ids = await channel_ids(server.rest)
    stop = asyncio.Event()
    chat_channels = [ids[name] for name in CHAT_CHANNELS]
    targets = [i for name, i in ids.items() if name not in ("viewer",)][:280]
    writers = [
        *(asyncio.ensure_future(register(server.rest, w, acked, stop)) for w in range(4)),
        asyncio.ensure_future(follow(server.rest, targets, acked, stop)),
        asyncio.ensure_future(chat(server.rest, server.chat, chat_channels, acked, stop)),
    ]
    started = time.monotonic()
    while time.monotonic() - started < BURST_SECONDS and not (
        len(acked.users) >= KILL_AFTER["users"]
        and len(acked.follows) >= KILL_AFTER["follows"]
        and sum(map(len, acked.messages.values())) >= KILL_AFTER["messages"]
    ):
        await asyncio.sleep(0.005)
    stop.set()
    server.kill()  # while requests are still in flight
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(asyncio.gather(*writers, return_exceptions=True), 15)
    for writer in writers:
        if writer.done() and writer.exception() is not None:
            raise writer.exception()  # type: ignore[misc]
    return ids


async def found(server: Server, acked: Acknowledged) -> Acknowledged:
    """Which acknowledged writes the restarted platform has."""
    seen = Acknowledged()
    async with httpx.AsyncClient(base_url=server.rest, timeout=10) as client:
        for user_id, name in acked.users.items():
            response = await client.get(f"/users/{user_id}")
            if response.status_code == 200 and response.json()["username"] == name:
                seen.users[user_id] = name
        await sign_in(client, "viewer")
        for channel in acked.follows:
            relationship = (await client.get(f"/channels/{channel}/relationship")).json()
            if relationship["status"]["follows"] is not None:
                seen.follows.add(channel)
    for channel, messages in acked.messages.items():
        async with connect(server.chat) as ws:
            await ws.recv()
            await ws.send(
                json.dumps({"type": "method", "method": "auth", "arguments": [channel], "id": 1})
            )
            await ws.recv()
            await ws.send(
                json.dumps({"type": "method", "method": "history", "arguments": [100], "id": 2})
            )
            history = json.loads(await ws.recv())["data"]
        seen.messages[channel] = {item["id"] for item in history} & messages
    return seen


@contextlib.contextmanager
def serving(db: Path, log: Path) -> Iterator[Server]:
    """A server on ``db``, stopped (or killed) afterwards whatever happens."""
    server = Server.start(db, log)
    try:
        yield server
    finally:
        if server.process.poll() is None:
            server.stop()


@pytest.mark.sqlite_only(
    "kill -9 durability of the SQLite file and its integrity_check; on PostgreSQL "
    "tests/test_drills_postgres.py kills REST processes under load"
)
def test_acknowledged_writes_survive_kill_9(tmp_path: Path) -> None:
    """Every write acknowledged before SIGKILL is there after a restart; the db is intact."""
    db, log = tmp_path / "platform.db", tmp_path / "serve.log"
    acked = Acknowledged()
    with serving(db, log) as first:
        asyncio.run(burst(first, acked))
        assert first.process.returncode == -signal.SIGKILL
    with serving(db, log) as second:
        seen = asyncio.run(found(second, acked))
    with contextlib.closing(sqlite3.connect(db)) as conn:
        integrity = conn.execute("PRAGMA integrity_check").fetchone()[0]
    print(
        f"\nwrites acknowledged {acked.count()} (users {len(acked.users)}, follows "
        f"{len(acked.follows)}, messages {sum(map(len, acked.messages.values()))}); "
        f"found after kill -9 and restart {seen.count()}; {acked.unanswered} in flight at "
        f"the kill; integrity_check {integrity}"
    )
    assert acked.users and acked.follows and acked.messages, "the burst wrote too little"
    assert seen.users == acked.users
    assert seen.follows == acked.follows
    assert seen.messages == acked.messages
    assert integrity == "ok"
