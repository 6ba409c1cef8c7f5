"""Helpers for the chat tests: a signed-in world and a small websocket chat client.

pytest-asyncio is not used: each test runs its coroutine with ``asyncio.run``. The client
reads frames only when asked (no background task), so a test sees every packet in order:
replies are matched by id, events are kept until a test asks for them.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import httpx
import orjson
from websockets.asyncio.client import ClientConnection, connect

from explorer.emulator import Platform
from tests.conftest import SMALL_WORLD, sign_in
from tests.databases import start

DEMO_USERS = ("streamer", "moderator", "viewer", "viewer2", "staff")
T = TypeVar("T")


def run(coro: Awaitable[T], timeout: float = 20.0) -> T:
    """Run one test coroutine to completion (bounded in time)."""

    async def bounded() -> T:
        return await asyncio.wait_for(coro, timeout)

    return asyncio.run(bounded())


class Chat:
    """One chat connection as a test drives it."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.next_id = 1
        self.events: list[dict[str, Any]] = []
        self.replies: dict[int, dict[str, Any]] = {}
        self.frames: list[str | bytes] = []

    async def recv(self, timeout: float = 5.0) -> dict[str, Any]:
        """The next packet, kept as a raw frame too."""
        frame = await asyncio.wait_for(self.ws.recv(), timeout)
        self.frames.append(frame)
        packet: dict[str, Any] = orjson.loads(frame)
        return packet

    async def send(self, method: str, *args: Any, id: int | None = None) -> int:
        """Send a method packet; its id (counting up per connection unless given)."""
        if id is None:
            id, self.next_id = self.next_id, self.next_id + 1
        packet = {"type": "method", "method": method, "arguments": list(args), "id": id}
        await self.ws.send(orjson.dumps(packet).decode())
        return id

    async def reply(self, id: int, timeout: float = 5.0) -> dict[str, Any]:
        """The reply with ``id``, reading (and keeping) events until it comes."""
        while id not in self.replies:
            packet = await self.recv(timeout)
            if packet["type"] == "reply":
                self.replies[packet["id"]] = packet
            else:
                self.events.append(packet)
        return self.replies.pop(id)

    async def call(self, method: str, *args: Any) -> dict[str, Any]:
        """Send ``method`` and return its whole reply packet."""
        return await self.reply(await self.send(method, *args))

    async def ok(self, method: str, *args: Any) -> Any:
        """Call ``method``, assert it succeeded, return its data (None when absent)."""
        packet = await self.call(method, *args)
        assert packet["error"] is None, packet
        return packet.get("data")

    async def error(self, method: str, *args: Any) -> dict[str, Any]:
        """Call ``method``, assert it failed, return the error object."""
        packet = await self.call(method, *args)
        assert packet["error"] is not None and "data" not in packet, packet
        error: dict[str, Any] = packet["error"]
        return error

    async def event(self, name: str, timeout: float = 5.0) -> dict[str, Any]:
        """The data of the first (kept or new) event called ``name``."""
        for index, packet in enumerate(self.events):
            if packet["event"] == name:
                return self.events.pop(index)["data"]  # type: ignore[no-any-return]
        while True:
            packet = await self.recv(timeout)
            if packet["type"] == "reply":
                self.replies[packet["id"]] = packet
            elif packet["event"] == name:
                return packet["data"]  # type: ignore[no-any-return]
            else:
                self.events.append(packet)

    async def no_event(self, name: str) -> None:
        """Assert that no event ``name`` came before the reply to a ``ping`` sent now.

        A connection's packets are ordered, and with the in-process broker an event is written
        as it is published, so the reply is a positive marker: every event of an action whose
        reply was awaited before (or of a disconnect awaited with :meth:`World.disconnect`)
        came before it.
        """
        await self.ok("ping")
        assert all(p["event"] != name for p in self.events), self.events

    async def close(self) -> None:
        """Close the connection."""
        await self.ws.close()


@dataclass
class World:
    """A running platform plus signed-in REST clients of the demo accounts."""

    platform: Platform
    clients: dict[str, httpx.Client] = field(default_factory=dict)
    ids: dict[str, int] = field(default_factory=dict)

    @classmethod
    def start(cls, **options: Any) -> World:
        """A fresh platform (1,000 channels, no rate limits, two chat nodes) with options."""
        options.setdefault("channels", SMALL_WORLD)
        options.setdefault("rate_limits", False)
        return cls(start(**options))

    def stop(self) -> None:
        """Close the clients and stop the platform."""
        for client in self.clients.values():
            client.close()
        self.platform.stop()

    @property
    def base_url(self) -> str:
        """The platform's REST base."""
        return self.platform.base_url

    @property
    def channel(self) -> int:
        """The id of the demo channel ``streamer``."""
        return self.channel_of("streamer")

    def channel_of(self, username: str) -> int:
        """The id of ``username``'s channel."""
        key = f"channel:{username}"
        if key not in self.ids:
            response = httpx.get(f"{self.base_url}/channels/{username}", timeout=10)
            self.ids[key] = response.json()["id"]
        return self.ids[key]

    def user_id(self, username: str) -> int:
        """The id of user ``username``."""
        if username not in self.ids:
            self.ids[username] = self.channel_info(username)["userId"]
        return self.ids[username]

    def channel_info(self, username: str) -> dict[str, Any]:
        """``GET /channels/{username}``."""
        info: dict[str, Any] = httpx.get(f"{self.base_url}/channels/{username}", timeout=10).json()
        return info

    def rest(self, username: str) -> httpx.Client:
        """A REST client signed in as ``username`` (cookie + CSRF), made once."""
        if username not in self.clients:
            self.clients[username] = sign_in(self.base_url, username)
        return self.clients[username]

    def details(self, username: str | None, channel: int | None = None) -> dict[str, Any]:
        """``GET /chats/{channel}`` as ``username`` (anonymously when None)."""
        path = f"/chats/{channel or self.channel}"
        response = (
            httpx.get(self.base_url + path, timeout=10)
            if username is None
            else self.rest(username).get(path)
        )
        response.raise_for_status()
        details: dict[str, Any] = response.json()
        return details

    def endpoint(self, node: int = 0) -> str:
        """The address of chat node ``node``."""
        return self.platform.chat_endpoints[node]

    async def connect(self, node: int = 0, path: str = "", **options: Any) -> Chat:
        """A connection to node ``node`` whose WelcomeEvent has been read."""
        chat = Chat(await connect(self.endpoint(node) + path, **options))
        welcome = await chat.recv()
        assert welcome["event"] == "WelcomeEvent", welcome
        return chat

    def node_connections(self, node: int) -> int:
        """The open connections chat node ``node`` reports (``GET /_emulator/chat/nodes``)."""
        url = f"{self.platform.root_url}/_emulator/chat/nodes"
        count: int = httpx.get(url, timeout=10).json()[node]["connections"]
        return count

    async def disconnect(self, chat: Chat, node: int = 0) -> None:
        """Close ``chat`` (connected to node ``node``) and return once the node has let it go:
        whatever the disconnect publishes (``UserLeave``) is published by then."""
        before = self.node_connections(node)
        await chat.close()
        deadline = time.monotonic() + 5
        for _ in range(1000):
            if self.node_connections(node) < before:
                return
            if time.monotonic() > deadline:
                break
        raise AssertionError("the node never let the connection go")

    async def join(self, username: str | None, channel: int | None = None, node: int = 0) -> Chat:
        """A connection authenticated as ``username`` (anonymous when None) in ``channel``."""
        chat = await self.connect(node)
        channel = channel or self.channel
        if username is None:
            data = await chat.ok("auth", channel)
        else:
            key = self.details(username, channel)["authkey"]
            data = await chat.ok("auth", channel, self.user_id(username), key)
        assert data["authenticated"] is (username is not None)
        return chat
