"""Chat nodes: endpoints, rooms shared across nodes, fault drills, slow clients, and the
REST views of chat presence (GET /chats/endpoints, /chats/{id}/users, search, friends)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator

import httpx
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from tests.chatkit import Chat, World, run


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    """One platform for this module, with three chat nodes."""
    running = World.start(
        chat_nodes=3, chat_rate=5000.0, chat_burst=5000, chat_send_buffer=64 * 1024
    )
    yield running
    running.stop()


def test_details_list_every_live_node(world: World) -> None:
    """GET /chats/{id}, its /api/v2 alias and GET /chats/endpoints list all running nodes."""
    endpoints = world.platform.chat_endpoints
    assert len(endpoints) == 3 and len(set(endpoints)) == 3
    assert all(e.startswith("ws://127.0.0.1:") for e in endpoints)
    assert world.details(None)["endpoints"] == endpoints
    v2 = world.base_url.replace("/api/v1", "/api/v2")
    assert httpx.get(f"{v2}/chats/{world.channel}", timeout=10).json()["endpoints"] == endpoints
    listed = httpx.get(f"{world.base_url}/chats/endpoints", timeout=10).json()
    assert listed == {"endpoints": endpoints}


def test_unknown_channel_details_are_404(world: World) -> None:
    """GET /chats/{id} of a channel that does not exist answers 404."""
    assert httpx.get(f"{world.base_url}/chats/999999999", timeout=10).status_code == 404


def test_messages_cross_nodes(world: World) -> None:
    """Members on different nodes of one channel see each other's messages."""

    async def scenario() -> None:
        chats = [await world.join("viewer", node=n) for n in range(3)]
        reply = await chats[2].ok("msg", "from node two")
        for chat in chats:
            assert (await chat.event("ChatMessage"))["id"] == reply["id"]
        for chat in chats:
            await chat.close()

    run(scenario())


def control(world: World, action: str, node: int) -> dict[str, object]:
    """POST /_emulator/chat/nodes/{node}/{action}."""
    url = f"{world.platform.root_url}/_emulator/chat/nodes/{node}/{action}"
    response = httpx.post(url, timeout=10)
    assert response.status_code == 200, response.text
    status: dict[str, object] = response.json()
    return status


def test_node_stopped_mid_conversation(world: World) -> None:
    """Clients of a stopped node are disconnected, reconnect to another node with the same
    key, and the conversation goes on; the node is back on its address after a start."""

    async def scenario() -> None:
        channel = world.channel_of("viewer")
        key = world.details("viewer2", channel)["authkey"]
        listener = await world.join("viewer", channel, node=1)
        talker = await world.connect(node=2)
        await talker.ok("auth", channel, world.user_id("viewer2"), key)
        first = await talker.ok("msg", "before the fault")
        address = world.endpoint(2)
        stopped = await asyncio.to_thread(control, world, "stop", 2)
        assert stopped["running"] is False
        with pytest.raises(ConnectionClosed) as closed:
            while True:
                await talker.recv()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1001
        assert address not in world.details(None, channel)["endpoints"]
        assert (await listener.event("UserLeave"))["username"] == "viewer2"
        again = Chat(await connect(world.details(None, channel)["endpoints"][0]))
        assert (await again.recv())["event"] == "WelcomeEvent"
        again.next_id = talker.next_id
        await again.ok("auth", channel, world.user_id("viewer2"), key)
        assert (await listener.event("UserJoin"))["username"] == "viewer2"
        second = await again.ok("msg", "after the fault")
        ids = [m["id"] for m in await listener.ok("history", 100)]
        assert ids[-2:] == [first["id"], second["id"]]
        started = await asyncio.to_thread(control, world, "start", 2)
        assert started["running"] is True and started["endpoint"] == address
        assert address in world.details(None, channel)["endpoints"]
        back = Chat(await connect(address))
        welcome = await back.recv()
        assert welcome["data"]["server"] == started["server"] != stopped["server"]
        for chat in (listener, again, back):
            await chat.close()

    run(scenario())


def test_control_lists_nodes(world: World) -> None:
    """GET /_emulator/chat/nodes lists each node; an unknown node index answers 404."""
    nodes = httpx.get(f"{world.platform.root_url}/_emulator/chat/nodes", timeout=10).json()
    assert [n["index"] for n in nodes] == [0, 1, 2]
    assert all(n["running"] and len(n["server"]) == 36 for n in nodes)
    missing = httpx.post(f"{world.platform.root_url}/_emulator/chat/nodes/7/stop", timeout=10)
    assert missing.status_code == 404


def test_slow_reader_is_dropped_without_stalling_the_room(world: World) -> None:
    """A client that stops reading is dropped once its backlog is too large, while a reading
    client keeps receiving everything."""

    async def scenario() -> None:
        channel = world.channel_of("moderator")
        sock = socket.create_connection(("127.0.0.1", int(world.endpoint(0).rsplit(":", 1)[1])))
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        slow = Chat(await connect(world.endpoint(0), sock=sock, max_queue=1, compression=None))
        await slow.recv()
        await slow.ok("auth", channel)  # from here on unread: max_queue=1 stops its reading
        reader = await world.join(None, channel, node=1)
        talker = await world.join("staff", channel, node=0)
        text = "x" * 350
        sent = 0
        nodes_url = f"{world.platform.root_url}/_emulator/chat/nodes"
        for _ in range(100):
            for _ in range(50):
                await talker.send("msg", text)
                sent += 1
            await talker.ok("ping")
            await asyncio.sleep(0.1)
            nodes = await asyncio.to_thread(lambda: httpx.get(nodes_url, timeout=10).json())
            if nodes[0]["connections"] == 1:  # only the talker is left on node 0
                break
        else:
            raise AssertionError("the slow reader was never dropped")
        got = 0
        while got < sent:
            packet = await reader.recv()
            got += packet.get("event") == "ChatMessage"
        await slow.ws.close()
        await reader.close()
        await talker.close()

    run(scenario(), timeout=60)


def test_chat_users_lists_present_members(world: World) -> None:
    """GET /chats/{id}/users lists signed-in members (not anonymous ones) by name."""

    async def scenario() -> None:
        channel = world.channel_of("staff")
        chats = [
            await world.join("viewer2", channel),
            await world.join("moderator", channel, node=1),
            await world.join(None, channel),
        ]
        users = await asyncio.to_thread(
            lambda: httpx.get(f"{world.base_url}/chats/{channel}/users", timeout=10)
        )
        assert users.headers["X-Total-Count"] == "2"
        assert users.json() == [
            {"userId": world.user_id("moderator"), "userName": "moderator", "userRoles": ["User"]},
            {"userId": world.user_id("viewer2"), "userName": "viewer2", "userRoles": ["User"]},
        ]
        for chat in chats:
            await chat.close()

    run(scenario())


def test_chat_user_search_and_lookup(world: World) -> None:
    """users/search matches a name prefix in any case; users/{id} finds a present user."""

    async def scenario() -> None:
        channel = world.channel_of("viewer2")
        chats = [await world.join("viewer", channel), await world.join("staff", channel)]
        base = f"{world.base_url}/chats/{channel}/users"

        def fetch() -> tuple[httpx.Response, ...]:
            return (
                httpx.get(f"{base}/search", params={"username": "VIE"}, timeout=10),
                httpx.get(f"{base}/search", params={"username": ""}, timeout=10),
                httpx.get(f"{base}/{world.user_id('viewer')}", timeout=10),
                httpx.get(f"{base}/{world.user_id('moderator')}", timeout=10),
            )

        found, empty, one, absent = await asyncio.to_thread(fetch)
        assert [u["userName"] for u in found.json()] == ["viewer"]
        assert empty.status_code == 400
        assert one.json() == {
            "userId": world.user_id("viewer"),
            "userName": "viewer",
            "userRoles": ["User"],
        }
        assert absent.status_code == 404
        for chat in chats:
            await chat.close()

    run(scenario())


def test_v2_chat_users_page_by_continuation_token(world: World) -> None:
    """GET /api/v2/chats/{id}/users pages by the token its Link header names, each user once,
    in the V2 shape {userId, username, userRoles}; the anonymous details carry no authkey."""

    async def scenario() -> None:
        channel = world.channel_of("moderator")
        names = ["staff", "streamer", "viewer", "viewer2"]
        chats = [await world.join(name, channel) for name in names]
        v2 = world.base_url.replace("/api/v1", "/api/v2")

        def walk() -> tuple[list[httpx.Response], httpx.Response, httpx.Response]:
            pages = [httpx.get(f"{v2}/chats/{channel}/users", params={"limit": 3}, timeout=10)]
            while "link" in pages[-1].headers:
                link = pages[-1].headers["link"]
                assert link.endswith('>; rel="next"') and "continuationToken=" in link
                path = link[1 : link.index(">")]
                pages.append(httpx.get(world.base_url.split("/api/")[0] + path, timeout=10))
            bad = httpx.get(f"{v2}/chats/{channel}/users?continuationToken=%%%", timeout=10)
            anonymous = world.rest("viewer").get(f"/chats/{channel}/anonymous")
            return pages, bad, anonymous

        pages, bad, anonymous = await asyncio.to_thread(walk)
        assert [len(page.json()) for page in pages] == [3, 1]
        assert [u["username"] for page in pages for u in page.json()] == names
        assert set(pages[0].json()[0]) == {"userId", "username", "userRoles"}
        assert bad.status_code == 400
        assert anonymous.status_code == 200 and "authkey" not in anonymous.json()
        assert anonymous.json()["endpoints"] and anonymous.json()["permissions"] == []
        for chat in chats:
            await chat.close()

    run(scenario())


def test_chat_friends_are_followed_members(world: World) -> None:
    """GET /chats/{id}/friends lists present users whose channel the caller follows."""
    client = world.rest("streamer")
    assert client.put(f"/channels/{world.channel_of('viewer')}/follow").status_code == 200

    async def scenario() -> None:
        channel = world.channel_of("moderator")
        chats = [await world.join("viewer", channel), await world.join("viewer2", channel)]
        friends = await asyncio.to_thread(client.get, f"/chats/{channel}/friends")
        assert [u["userName"] for u in friends.json()] == ["viewer"]
        anonymous = await asyncio.to_thread(
            lambda: httpx.get(f"{world.base_url}/chats/{channel}/friends", timeout=10)
        )
        assert anonymous.status_code == 401
        for chat in chats:
            await chat.close()

    run(scenario())
