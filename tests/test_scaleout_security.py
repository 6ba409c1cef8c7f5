"""Issue 13's chat attacks on a platform of real processes: one REST process and two chat-node
processes on one SQLite file and a real redis-server (each ended by its own PID).

One user's sockets spread over both node processes share one allowance (counted in Redis) and
one connection cap (counted in SQLite); a logout on the REST process closes that user's
connections on every node process. The single-process versions are in
:mod:`tests.test_security_round2`; the attempts count in :mod:`tests.test_security`'s total.
"""

from __future__ import annotations

import asyncio
import shutil
import time
from collections.abc import Iterator
from contextlib import closing
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import connect

from explorer.emulator.chat.limits import TOO_MANY_CONNECTIONS
from explorer.emulator.chat.node import CREDENTIAL_ENDED
from explorer.emulator.context import Config
from explorer.emulator.fleet import FLEET_CHANNELS, Fleet
from tests import databases
from tests.chatkit import Chat, run
from tests.conftest import sign_in
from tests.test_security import attempt
from tests.test_security_round2 import closed_with

pytestmark = pytest.mark.skipif(
    shutil.which("redis-server") is None,
    reason="no redis-server binary (Debian: apt install redis-server); the attacks need a real one",
)

DEFAULTS = Config()


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    """REST + two chat-node processes (default chat allowances) + redis-server."""
    db = tmp_path_factory.mktemp("scaleout-security") / "platform.db"
    with Fleet(databases.target(db, channels=FLEET_CHANNELS), nodes=2) as running:
        yield running


def streamer_channel(fleet: Fleet) -> int:
    """The id of the demo channel ``streamer``."""
    found: int = httpx.get(f"{fleet.base_url}/channels/streamer", timeout=10).json()["id"]
    return found


async def join_with(fleet: Fleet, node: int, channel: int, user: int, key: str) -> Chat:
    """A raw connection to node process ``node`` signed in with ``key``."""
    chat = Chat(await connect(fleet.nodes[node].address, compression=None))
    assert (await chat.recv())["event"] == "WelcomeEvent"
    await chat.ok("auth", channel, user, key)
    return chat


def credentials(fleet: Fleet, username: str, channel: int) -> tuple[httpx.Client, int, str]:
    """A signed-in client of ``username``, their id and a key it fetched for ``channel``."""
    client = sign_in(fleet.base_url, username)
    key = client.get(f"/chats/{channel}").raise_for_status().json()["authkey"]
    return client, client.get("/users/current").json()["id"], key


def test_one_user_over_two_processes_gets_one_allowance(fleet: Fleet) -> None:
    """Ten sockets of one user on two node processes, 60 messages each: the total accepted
    stays within one user's allowance (burst + rate x elapsed), far below ten sockets' worth."""
    channel = streamer_channel(fleet)
    client, user, key = credentials(fleet, "viewer2", channel)

    async def scenario() -> None:
        sockets = [await join_with(fleet, i % 2, channel, user, key) for i in range(10)]

        async def flood(chat: Chat, number: int) -> list[dict[str, Any]]:
            ids = [await chat.send("msg", f"flood {number}.{i}") for i in range(60)]
            return [await chat.reply(i, timeout=30) for i in ids]

        started = time.monotonic()
        results = await asyncio.gather(*(flood(chat, n) for n, chat in enumerate(sockets)))
        elapsed = time.monotonic() - started
        replies = [reply for replies in results for reply in replies]
        attempt("one user, many sockets, two processes: chat rate", len(replies))
        accepted = sum(reply["error"] is None for reply in replies)
        allowance = DEFAULTS.chat_burst + DEFAULTS.chat_rate * elapsed
        assert DEFAULTS.chat_burst <= accepted <= allowance + 2, (accepted, elapsed)
        for chat in sockets:
            await chat.close()

    with closing(client):
        run(scenario(), timeout=60)


def test_user_cap_counts_connections_on_every_process(fleet: Fleet) -> None:
    """A user holding the cap over both node processes is refused (4008) on either."""
    channel = streamer_channel(fleet)
    client, user, key = credentials(fleet, "moderator", channel)
    cap = DEFAULTS.chat_user_connections

    async def scenario() -> None:
        held = [await join_with(fleet, i % 2, channel, user, key) for i in range(cap)]
        for node in (0, 1):
            extra = Chat(await connect(fleet.nodes[node].address, compression=None))
            assert (await extra.recv())["event"] == "WelcomeEvent"
            attempt("connections over the user cap, two processes")
            assert (await extra.error("auth", channel, user, key))["code"] == 4004
            assert await closed_with(extra) == TOO_MANY_CONNECTIONS
        for chat in held:
            await chat.close()

    with closing(client):
        run(scenario())


def test_logout_closes_the_users_connections_on_every_process(fleet: Fleet) -> None:
    """Signing out on the REST process closes the connections signed in with the session's
    key on both node processes (4001), and neither accepts the key again."""
    channel = streamer_channel(fleet)
    client, user, key = credentials(fleet, "viewer", channel)

    async def scenario() -> None:
        chats = [await join_with(fleet, node, channel, user, key) for node in (0, 1)]
        await asyncio.to_thread(client.delete, "/users/current/session")
        for chat in chats:
            attempt("authkey after logout, two processes")
            assert await closed_with(chat) == CREDENTIAL_ENDED
        for node in (0, 1):
            late = Chat(await connect(fleet.nodes[node].address, compression=None))
            assert (await late.recv())["event"] == "WelcomeEvent"
            attempt("authkey after logout, two processes")
            assert (await late.error("auth", channel, user, key))["message"] == "UNOTFOUND"
            await late.close()

    with closing(client):
        run(scenario())
