"""Fault drills on a platform of real processes: one REST process and three chat-node processes
on one database (a SQLite file; PostgreSQL under the suite's switch) and a real redis-server,
each ended by its own PID.

kill -9 a node under load, restart Redis, expire authkeys mid-session, a slow client, a poll
whose owner dies. The module's platform is shared; after each drill the killed nodes are
replaced (``Fleet.heal``) so the next one starts with three.
"""

from __future__ import annotations

import asyncio
import shutil
import socket
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import pandas as pd
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

import explorer
from explorer.chat import ChatClient
from explorer.chat.session import Loss, State
from explorer.core.processes import Child
from explorer.emulator.chat.node import TOO_SLOW
from explorer.emulator.fleet import FLEET_CHANNELS, Fleet
from explorer.errors import ConnectionFailed
from tests import databases
from tests.chatkit import Chat, run
from tests.conftest import sign_in

pytestmark = pytest.mark.skipif(
    shutil.which("redis-server") is None,
    reason="no redis-server binary (Debian: apt install redis-server); the drills need a real one",
)

#: Authkey lifetime of the drill platform: short, so that keys expire within a drill.
AUTHKEY_TTL = 2.0
PASSWORD = "explorer"


@pytest.fixture(scope="module")
def platform(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    """REST + three chat-node processes + redis-server, for the whole module."""
    db = tmp_path_factory.mktemp("scaleout") / "platform.db"
    rest = ["--authkey-ttl", str(AUTHKEY_TTL)]
    target = databases.target(db, channels=FLEET_CHANNELS)
    with Fleet(target, nodes=3, rest_args=rest, node_args=["--chat-rate", "5000"]) as fleet:
        yield fleet


@pytest.fixture
def fleet(platform: Fleet) -> Iterator[Fleet]:
    """The module's platform; nodes a drill killed are replaced afterwards."""
    yield platform
    platform.heal()


def channel_of(fleet: Fleet, owner: str) -> int:
    """The id of ``owner``'s channel."""
    found: int = httpx.get(f"{fleet.base_url}/channels/{owner}", timeout=10).json()["id"]
    return found


def history_ids(db: Path | str, channel: int) -> list[str]:
    """Every stored, undeleted message id of ``channel`` in history order, read from the
    platform's database."""
    with databases.opened(db) as store:
        rows = store.all(
            "SELECT id FROM chat_messages WHERE channelId = ? AND deleted = 0 ORDER BY seq",
            (channel,),
        )
    return [row[0] for row in rows]


async def join(fleet: Fleet, node: Child, channel: int, user: str | None) -> Chat:
    """A raw connection to ``node`` authenticated as ``user`` (anonymous when None)."""

    def credentials() -> tuple[int, str]:
        client = sign_in(fleet.base_url, user or "", PASSWORD)
        try:
            key = client.get(f"/chats/{channel}").json()["authkey"]
            return client.get("/users/current").json()["id"], key
        finally:
            client.close()

    chat = Chat(await connect(node.address, compression=None))
    assert (await chat.recv())["event"] == "WelcomeEvent"
    if user is None:
        await chat.ok("auth", channel)
    else:
        user_id, key = await asyncio.to_thread(credentials)
        await chat.ok("auth", channel, user_id, key)
    return chat


async def until(condition: Callable[[], Any], timeout: float, what: str) -> None:
    """Wait (polling) until ``condition()`` holds, at most ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.02)


def node_at(fleet: Fleet, endpoint: str | None) -> Child:
    """The node process serving ``endpoint``."""
    return next(node for node in fleet.nodes if node.address == endpoint)


def caught_up(reader: ChatClient, message_id: str) -> bool:
    """Whether ``reader``'s log holds ``message_id``."""
    return message_id in set(reader.log.messages()["message_id"])


async def talk(chat: ChatClient, name: str, replied: list[str], stop: asyncio.Event) -> None:
    """Send numbered messages until ``stop``, keeping the ids of those that got a reply."""
    for count in range(10_000):
        if stop.is_set():
            return
        try:
            replied.append((await chat.send(f"{name} {count}", timeout=5))["id"])
        except (ConnectionFailed, TimeoutError):
            continue  # lost with its node: may or may not be stored
        await asyncio.sleep(0.02)


def test_kill_9_node_under_load_loses_nothing(fleet: Fleet) -> None:
    """A node is killed (-9) while five users chat: its clients move to other nodes, and every
    reader's EventLog equals history from its first message on, without gap or duplicate;
    every message that got a reply is in history."""
    channel = channel_of(fleet, "streamer")
    senders = ("streamer", "moderator", "viewer", "viewer2", "staff")

    async def scenario() -> None:
        anonymous = explorer.AsyncClient(fleet.base_url, progress=False)
        signed_in = [
            explorer.AsyncClient(fleet.base_url, username=name, password=PASSWORD, progress=False)
            for name in senders
        ]
        options: dict[str, Any] = {"reconnect_delay": 0.05, "give_up_after": 20.0}
        readers = [anonymous.chat(channel, seed=i, **options) for i in range(6)]
        talkers = [api.chat(channel, seed=10 + i, **options) for i, api in enumerate(signed_in)]
        for chat in (*readers, *talkers):
            await chat.start()
        victim = node_at(fleet, readers[0].endpoint)
        replied: list[str] = []
        stop = asyncio.Event()
        load = [
            asyncio.create_task(talk(c, n, replied, stop))
            for c, n in zip(talkers, senders, strict=True)
        ]
        await until(lambda: len(replied) >= 50, 10, "the load to build up")
        moved = [chat for chat in (*readers, *talkers) if chat.endpoint == victim.address]
        await asyncio.to_thread(victim.kill)

        def moved_back() -> bool:
            joined = (State.CONNECTED, State.AUTHENTICATED)
            return all(c.reconnects >= 1 and c.state in joined for c in moved)

        await until(moved_back, 15, "the victim's clients to rejoin elsewhere")
        resumed = len(replied)
        await until(lambda: len(replied) >= resumed + 50, 10, "the load to go on")
        stop.set()
        await asyncio.gather(*load)
        said = history_ids(fleet.db, channel)
        assert set(replied) <= set(said) and len(replied) > 100
        for reader in readers:
            await until(partial(caught_up, reader, said[-1]), 15, "a reader to catch up")
        assert readers[0].reconnects >= 1 and readers[0].endpoint != victim.address
        for reader in readers:
            got = list(reader.log.messages()["message_id"])
            first = said.index(got[0])
            assert got == said[first:], "gap, duplicate or reordering"
            assert reader.gaps == 0
        for chat in (*readers, *talkers):
            await chat.aclose()
        for api in (anonymous, *signed_in):
            await api.aclose()

    run(scenario(), timeout=60)


def test_redis_restart_nodes_reconnect_and_resume(fleet: Fleet) -> None:
    """Redis is killed and started again: nodes keep serving their own clients; a message
    stored meanwhile and one sent after the restart reach clients on every node; pub/sub works
    again (whispers and polls cross nodes) and every node is listed again."""
    channel = channel_of(fleet, "moderator")

    async def scenario() -> None:
        users = ("moderator", "viewer", "viewer2")
        chats = [await join(fleet, n, channel, u) for n, u in zip(fleet.nodes, users, strict=True)]
        seen: list[set[str]] = [set() for _ in chats]

        async def saw(index: int, message_id: str, timeout: float) -> bool:
            """Whether chats[index] gets ChatMessage ``message_id`` within ``timeout`` s."""
            deadline = time.monotonic() + timeout
            while message_id not in seen[index]:
                left = deadline - time.monotonic()
                try:
                    seen[index].add((await chats[index].event("ChatMessage", left))["id"])
                except TimeoutError:
                    return False
            return True

        await asyncio.to_thread(fleet.redis.kill)
        during = (await chats[1].ok("msg", "said while Redis was down"))["id"]
        assert await saw(1, during, 1)  # its own node served it at once
        await asyncio.to_thread(fleet.redis.start)

        def listed() -> bool:
            url = f"{fleet.base_url}/chats/endpoints"
            return len(httpx.get(url, timeout=10).json()["endpoints"]) == 3

        await until(listed, 10, "every node to register again")
        for index, user in ((1, "viewer"), (2, "viewer2")):  # each node resubscribes on its own
            for attempt in range(50):  # its pub/sub is back once a whisper (never stored) crosses
                whisper = await chats[0].ok("whisper", user, f"are you there? {attempt}")
                if await saw(index, whisper["id"], 0.2):
                    break
            else:
                raise AssertionError(f"whispers never crossed to node {index} again")
        after = (await chats[2].ok("msg", "said after the restart"))["id"]
        for index in range(len(chats)):
            assert await saw(index, during, 5) and await saw(index, after, 5)
        await chats[0].ok("vote:start", "Back?", ["yes", "no"], 1)
        for chat in chats[1:]:
            assert (await chat.event("PollStart", timeout=5))["q"] == "Back?"
        for chat in chats:
            await chat.close()

    run(scenario(), timeout=60)


def test_expired_authkey_is_refused_and_replaced(fleet: Fleet) -> None:
    """An authkey expires mid-session: the joined connection keeps working; a new connection
    with the stale key is refused with UNOTFOUND on any node; when its node dies the toolkit
    reconnects elsewhere, fetches a fresh key and is signed in again."""
    channel = channel_of(fleet, "viewer2")

    async def scenario() -> None:
        api = explorer.AsyncClient(
            fleet.base_url, username="viewer", password=PASSWORD, progress=False
        )
        user_id = int((await api.request("GET", "/users/current"))["id"])
        chat = api.chat(channel, reconnect_delay=0.05)
        await chat.start()
        home = node_at(fleet, chat.endpoint)
        # Fetched after the chat's own key, so once this one has expired the chat's has too.
        stale = (await api.channel(channel).chat_details()).authkey

        async def stale_auth(node: Child) -> Any:
            """The error of auth with the stale key on a new connection to ``node``."""
            raw = Chat(await connect(node.address, compression=None))
            await raw.recv()
            packet = await raw.call("auth", channel, user_id, stale)
            await raw.close()
            return packet["error"]

        # The nodes are processes on the real clock: poll until the key has expired.
        deadline = time.monotonic() + AUTHKEY_TTL + 10
        while await stale_auth(fleet.nodes[0]) is None:
            assert time.monotonic() < deadline, "the authkey never expired"
            await asyncio.sleep(0.1)
        assert (await chat.send("still signed in"))["user_name"] == "viewer"
        for node in fleet.nodes:
            refused = await stale_auth(node)
            assert (refused["code"], refused["message"]) == (1, "UNOTFOUND")
        await asyncio.to_thread(home.kill)
        await until(
            lambda: chat.reconnects == 1 and chat.state == State.AUTHENTICATED, 10, "rejoin"
        )
        assert chat.key_refreshes == 1 and chat.endpoint != home.address
        assert (await chat.send("signed in again"))["user_name"] == "viewer"
        await chat.aclose()
        await api.aclose()

    run(scenario(), timeout=30)


@pytest.mark.serial  # the client must read 2 MB within the node's 2 s close window
def test_slow_client_is_dropped_without_stalling_the_room(fleet: Fleet) -> None:
    """A client that stops reading is dropped by its node (1008, or the cut that follows it)
    once its backlog passes the node's send buffer, while readers on that node and on another
    keep receiving everything a talker on a third node says."""
    channel = channel_of(fleet, "staff")
    slow_node, far_node, talk_node = fleet.nodes
    # 2,200 ChatMessages of ~890 bytes: ~1.95 MB, more than the node's 1 MiB send buffer plus
    # what the kernel buffers hold (~0.5 MB), so the slow client's backlog passes the limit in
    # the last fraction of a second of the flood.
    count = 2200

    async def scenario() -> None:
        # A receive buffer made small before connecting keeps the TCP window small, so the
        # node's own buffer fills up; enlarged later, it lets the client drain fast.
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", int(slow_node.address.rsplit(":", 1)[1])))
        slow = Chat(await connect(slow_node.address, sock=sock, max_queue=1, compression=None))
        await slow.recv()
        await slow.ok("auth", channel)  # from here on unread: max_queue=1 stops its reading
        near = await join(fleet, slow_node, channel, None)
        far = await join(fleet, far_node, channel, None)
        talker = await join(fleet, talk_node, channel, "viewer")

        async def read(chat: Chat) -> int:
            messages = 0
            while messages < count:
                messages += (await chat.recv(timeout=20)).get("event") == "ChatMessage"
            return messages

        readers = asyncio.gather(read(near), read(far))
        for _ in range(count // 100):
            for _ in range(100):
                await talker.send("msg", "x" * 300)
            await talker.ok("ping")
        assert await asyncio.wait_for(readers, 30) == [count, count]
        # The node checks backlogs every 0.5 s, queues the close frame behind the backlog and
        # cuts the connection 2 s later: read in between, fast, to see the close frame.
        await asyncio.sleep(0.75)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 * 1024 * 1024)
        with pytest.raises(ConnectionClosed) as closed:
            for _ in range(count + 10):
                await slow.recv(timeout=5)
        # The close frame waits behind the backlog; a client that cannot read it all within the
        # 2 s the node allows sees the cut instead (no frame): either way the node dropped it.
        reason = closed.value.rcvd
        assert reason is None or (reason.code, reason.reason) == TOO_SLOW
        for chat in (near, far, talker):
            await chat.close()

    run(scenario(), timeout=60)


def test_poll_counts_each_voter_once_and_outlives_its_owner(fleet: Fleet) -> None:
    """Votes cast on different nodes, one user voting from two nodes, count once per user; when
    the node that started the poll is killed, a survivor adopts the poll and ends it."""
    channel = channel_of(fleet, "streamer")
    owner_node = fleet.nodes[0]

    async def scenario() -> None:
        owner = await join(fleet, owner_node, channel, "streamer")
        tab1 = await join(fleet, fleet.nodes[1], channel, "viewer")
        tab2 = await join(fleet, fleet.nodes[2], channel, "viewer")
        other = await join(fleet, fleet.nodes[2], channel, "viewer2")
        await owner.ok("vote:start", "Who survives?", ["one", "two", "three"], 5)
        await tab1.ok("vote:choose", 0)
        await tab2.ok("vote:choose", 2)
        await other.ok("vote", 2)
        await asyncio.to_thread(owner_node.kill)
        end = await other.event("PollEnd", timeout=15)
        assert end["q"] == "Who survives?" and end["voters"] == 2
        assert end["responses"] == {"one": 0, "two": 0, "three": 2}
        for chat in (tab1, tab2, other):
            await chat.close()

    run(scenario(), timeout=30)


def test_kill_9_under_a_recording_watch_keeps_every_message(fleet: Fleet, tmp_path: Path) -> None:
    """A node is killed (-9) under a watch recording a busy channel: its chat rejoins
    elsewhere, fills from history, and the capture holds every stored message from its first
    on, once and in order; the one outage says only other events may be missing."""
    channel = channel_of(fleet, "viewer")
    capture = tmp_path / "capture"

    async def scenario() -> None:
        api = explorer.AsyncClient(fleet.base_url, progress=False)
        talker_api = explorer.AsyncClient(
            fleet.base_url, username="viewer", password=PASSWORD, progress=False
        )
        watch = await api.watch([channel], to=capture, flush_every=0.5)
        chat = watch.chat(channel)
        talker = talker_api.chat(channel, reconnect_delay=0.05, give_up_after=20.0)
        await talker.start()
        assert chat is not None
        victim = node_at(fleet, chat.endpoint)
        replied: list[str] = []
        stop = asyncio.Event()
        load = asyncio.create_task(talk(talker, "recorded", replied, stop))
        await until(lambda: len(replied) >= 50, 10, "the load to build up")
        await asyncio.to_thread(victim.kill)
        await until(lambda: chat.reconnects == 1 and chat.state == State.CONNECTED, 15, "rejoin")
        resumed = len(replied)
        await until(lambda: len(replied) >= resumed + 50, 10, "the load to go on")
        stop.set()
        await load
        said = history_ids(fleet.db, channel)
        await until(partial(caught_up, chat, said[-1]), 15, "the watch to catch up")
        await watch.aclose()
        await talker.aclose()
        for client in (api, talker_api):
            await client.aclose()
        events = pd.read_parquet(capture / "events")
        got = list(events[events["event"] == "ChatMessage"].sort_values("row")["message_id"])
        assert got == said[said.index(got[0]) :], "gap, duplicate or reordering"
        assert [(o.loss, o.removed) for o in chat.outages] == [(Loss.EVENTS, 0)]
        assert watch.losses()["gaps"] == 0

    run(scenario(), timeout=60)
