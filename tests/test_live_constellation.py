"""Constellation, the live-events service at the web root: its protocol as the historical
developer docs describe it (mixer/developer-docs, pages/02.reference/02.constellation), who
may subscribe to what, and the events REST changes send.

Each test opens real websockets to a platform on 127.0.0.1 and changes it through REST.
"""

from __future__ import annotations

import asyncio
import gzip
from collections.abc import Callable, Iterator
from contextlib import closing
from typing import Any

import httpx
import orjson
import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from explorer.emulator import Platform
from tests.chatkit import run
from tests.conftest import sign_in
from tests.databases import start
from tests.test_platform_oauth import implicit_token


@pytest.fixture(scope="module")
def live() -> Iterator[Platform]:
    """A platform of its own: the tests here rename, follow and host."""
    with start(channels=100, rate_limits=False) as running:
        yield running


class Socket:
    """One Constellation connection: methods by id, events kept in order."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.events: list[dict[str, Any]] = []
        self.next_id = 0

    async def packet(self, timeout: float = 5.0) -> dict[str, Any]:
        value: dict[str, Any] = orjson.loads(await asyncio.wait_for(self.ws.recv(), timeout))
        return value

    async def call(self, method: str, params: Any, ident: Any = None) -> dict[str, Any]:
        """Send a method; its reply (events arriving first are kept)."""
        if ident is None:
            ident, self.next_id = self.next_id, self.next_id + 1
        packet = {"type": "method", "method": method, "params": params, "id": ident}
        await self.ws.send(orjson.dumps(packet).decode())
        return await self.reply(ident)

    async def reply(self, ident: Any) -> dict[str, Any]:
        while True:
            packet = await self.packet()
            if packet["type"] == "reply" and packet["id"] == ident:
                return packet
            self.events.append(packet)

    async def live(self, topic: str) -> Any:
        """The payload of the next live event for ``topic``."""
        while True:
            for event in self.events:
                if event["event"] == "live" and event["data"]["channel"] == topic:
                    self.events.remove(event)
                    return event["data"]["payload"]
            self.events.append(await self.packet())


async def opened(platform: Platform, headers: dict[str, str] | None = None) -> Socket:
    """A socket at the platform's web root, past its hello (kept in ``events``)."""
    return await opened_at(platform.root_url, headers)


async def opened_at(root_url: str, headers: dict[str, str] | None = None) -> Socket:
    """A socket at the web root ``root_url`` (http), past its hello (kept in ``events``)."""
    root = root_url.replace("http", "ws", 1) + "/"
    ws = await connect(root, subprotocols=["cnstl"], additional_headers=headers)
    socket = Socket(ws)
    socket.events.append(await socket.packet())
    return socket


def channel_of(platform: Platform, owner: str) -> int:
    found: int = httpx.get(f"{platform.base_url}/channels/{owner}").json()["id"]
    return found


def test_hello_says_whether_the_socket_is_signed_in(live: Platform) -> None:
    """hello carries authenticated false without a credential and true with a bearer token."""
    with closing(sign_in(live.base_url, "viewer")) as viewer:
        token = implicit_token(viewer, "user:details:self")["access_token"]

    async def main() -> list[dict[str, Any]]:
        anonymous = await opened(live)
        signed = await opened(live, {"Authorization": f"Bearer {token}"})
        assert anonymous.ws.subprotocol == "cnstl"
        hellos = [anonymous.events[0], signed.events[0]]
        await anonymous.ws.close()
        await signed.ws.close()
        return hellos

    assert run(main()) == [
        {"type": "event", "event": "hello", "data": {"authenticated": False}},
        {"type": "event", "event": "hello", "data": {"authenticated": True}},
    ]


def test_the_credential_may_come_as_a_query_parameter(live: Platform) -> None:
    """?authorization=Bearer <token> signs the socket in like the header (the docs let every
    header come as a query parameter; carina sends its jwt option as ?jwt=)."""
    with closing(sign_in(live.base_url, "viewer")) as viewer:
        token = implicit_token(viewer, "user:details:self")["access_token"]

    async def main() -> Any:
        root = live.root_url.replace("http", "ws", 1)
        async with connect(f"{root}/?authorization=Bearer%20{token}") as ws:
            return orjson.loads(await asyncio.wait_for(ws.recv(), 5))["data"]

    assert run(main()) == {"authenticated": True}


def test_a_bad_token_closes_with_session_expired(live: Platform) -> None:
    """A bearer token that is not valid closes the socket with 4011."""

    async def main() -> int | None:
        root = live.root_url.replace("http", "ws", 1) + "/"
        async with connect(root, additional_headers={"Authorization": "Bearer nope"}) as ws:
            with pytest.raises(ConnectionClosed) as closed:
                await asyncio.wait_for(ws.recv(), 5)
        return closed.value.rcvd.code if closed.value.rcvd else None

    assert run(main()) == 4011


def test_method_errors_use_the_documented_codes(live: Platform) -> None:
    """Unknown event 4106, duplicate 4108, bad params 4010, unknown method 4009, not JSON 4006,
    unknown packet type 4008; ping answers {} under the caller's own id, negative too."""

    async def main() -> dict[str, Any]:
        socket = await opened(live)
        codes: dict[str, Any] = {}
        ok = await socket.call("livesubscribe", {"events": ["channel:1:update"]})
        codes["ok"] = (ok["result"], ok["error"])
        codes["dup"] = await socket.call("livesubscribe", {"events": ["channel:1:update"]})
        codes["unknown"] = await socket.call("livesubscribe", {"events": ["channel:1:secrets"]})
        codes["params"] = await socket.call("livesubscribe", ["channel:1:update"])
        codes["method"] = await socket.call("divide", {})
        codes["ping"] = await socket.call("ping", None, ident=-7)
        await socket.ws.send("{nope")
        codes["json"] = await socket.reply(None)
        await socket.ws.send(orjson.dumps({"type": "reply", "id": 9}).decode())
        codes["type"] = await socket.reply(9)
        await socket.ws.close()
        return codes

    codes = run(main())
    assert codes["ok"] == (None, None)
    assert codes["dup"]["error"]["code"] == 4108
    assert codes["unknown"]["error"] == {
        "code": 4106,
        "message": 'Unknown event "channel:1:secrets"',
    }
    assert codes["params"]["error"]["code"] == 4010
    assert codes["method"]["error"]["code"] == 4009
    assert codes["ping"] == {"type": "reply", "id": -7, "result": {}, "error": None}
    assert codes["json"]["error"]["code"] == 4006
    assert codes["type"]["error"]["code"] == 4008


def test_livesubscribe_is_all_or_nothing(live: Platform) -> None:
    """A livesubscribe with one unknown event subscribes to none of the others."""

    async def main() -> tuple[int, dict[str, Any]]:
        socket = await opened(live)
        refused = await socket.call(
            "livesubscribe", {"events": ["channel:2:update", "user:2:nothing"]}
        )
        again = await socket.call("livesubscribe", {"events": ["channel:2:update"]})
        await socket.ws.close()
        return refused["error"]["code"], again

    code, again = run(main())
    assert code == 4106 and again["error"] is None


def test_channel_update_carries_only_the_changed_public_fields(live: Platform) -> None:
    """A PATCH of the title sends channel:{id}:update with the new name alone (no streamKey,
    no updatedAt), read from a gzipped method frame as the docs allow."""
    channel = channel_of(live, "streamer")

    async def main() -> Any:
        socket = await opened(live)
        topic = f"channel:{channel}:update"
        packet = {"type": "method", "method": "livesubscribe", "params": {"events": [topic]}}
        await socket.ws.send(gzip.compress(orjson.dumps({**packet, "id": 5})))
        assert (await socket.reply(5))["error"] is None
        with closing(sign_in(live.base_url, "streamer")) as streamer:
            patched = await asyncio.to_thread(
                streamer.patch, f"/channels/{channel}", json={"name": "live now"}
            )
            assert patched.status_code == 200, patched.text
        payload = await socket.live(topic)
        await socket.ws.close()
        return payload

    assert run(main()) == {"name": "live now"}


def test_follow_and_unfollow_send_followed_events(live: Platform) -> None:
    """Following sends channel:{id}:followed (the user, with their channel) and
    user:{id}:followed (the channel); unfollowing sends both with following false."""
    channel = channel_of(live, "streamer")

    async def main() -> list[Any]:
        with closing(sign_in(live.base_url, "viewer2")) as viewer:
            me = (await asyncio.to_thread(viewer.get, "/users/current")).json()
            socket = await opened(live)
            topics = [f"channel:{channel}:followed", f"user:{me['id']}:followed"]
            assert (await socket.call("livesubscribe", {"events": topics}))["error"] is None
            await asyncio.to_thread(viewer.delete, f"/channels/{channel}/follow")
            assert (await asyncio.to_thread(viewer.put, f"/channels/{channel}/follow")).is_success
            got = [await socket.live(topics[0]), await socket.live(topics[1])]
            await asyncio.to_thread(viewer.delete, f"/channels/{channel}/follow")
            got += [await socket.live(topics[0]), await socket.live(topics[1])]
        await socket.ws.close()
        return [me, *got]

    me, followed, user_followed, unfollowed, user_unfollowed = run(main())
    assert followed["following"] is True and followed["user"]["id"] == me["id"]
    assert followed["user"]["channel"]["userId"] == me["id"]
    assert user_followed["following"] is True and user_followed["channel"]["id"] == channel
    assert unfollowed["following"] is False and user_unfollowed["following"] is False


def test_hosting_sends_hosted_then_unhosted(live: Platform) -> None:
    """A host sends channel:{hostee}:hosted {hosterId, hoster, auto}; ending it, unhosted."""
    hostee = channel_of(live, "moderator")

    async def main() -> list[Any]:
        socket = await opened(live)
        topics = [f"channel:{hostee}:hosted", f"channel:{hostee}:unhosted"]
        assert (await socket.call("livesubscribe", {"events": topics}))["error"] is None
        with closing(sign_in(live.base_url, "streamer")) as streamer:
            host = channel_of(live, "streamer")
            put = await asyncio.to_thread(
                streamer.put, f"/channels/{host}/hostee", json={"id": hostee}
            )
            assert put.status_code == 200, put.text
            hosted = await socket.live(topics[0])
            await asyncio.to_thread(streamer.delete, f"/channels/{host}/hostee")
            unhosted = await socket.live(topics[1])
        await socket.ws.close()
        return [host, hosted, unhosted]

    host, hosted, unhosted = run(main())
    assert hosted["hosterId"] == host and hosted["hoster"]["id"] == host
    assert hosted["auto"] is False
    assert unhosted["hosterId"] == host and "auto" not in unhosted


def test_notify_is_private_to_its_user(live: Platform) -> None:
    """user:{id}:notify is refused (4107) anonymously and to another user's token; its owner's
    token subscribes and receives it, with user:{id}:achievement, for a game made in REST."""
    with closing(sign_in(live.base_url, "viewer2")) as viewer:
        me = viewer.get("/users/current").json()["id"]
        own = implicit_token(viewer, "notification:view:self")["access_token"]
        with closing(sign_in(live.base_url, "viewer")) as other:
            theirs = implicit_token(other, "notification:view:self", "s2")["access_token"]

        async def main() -> list[Any]:
            topic = [f"user:{me}:notify", f"user:{me}:achievement"]
            anonymous = await opened(live)
            stranger = await opened(live, {"Authorization": f"Bearer {theirs}"})
            owner = await opened(live, {"Authorization": f"Bearer {own}"})
            refused = [
                (await anonymous.call("livesubscribe", {"events": topic}))["error"]["code"],
                (await stranger.call("livesubscribe", {"events": topic}))["error"]["code"],
            ]
            assert (await owner.call("livesubscribe", {"events": topic}))["error"] is None
            created = await asyncio.to_thread(viewer.post, "/interactive/games", json={"name": "g"})
            assert created.status_code == 201, created.text
            notification = await owner.live(topic[0])
            earning = await owner.live(topic[1])
            for socket in (anonymous, stranger, owner):
                await socket.ws.close()
            return [refused, notification, earning]

        refused, notification, earning = run(main())
    assert refused == [4107, 4107]
    assert notification["userId"] == me and notification["type"] == "achievement"
    assert earning["achievement"] == "game-creator" and earning["earned"] is True


def test_a_cookie_from_another_site_is_not_a_credential(live: Platform) -> None:
    """The session cookie signs a socket in from this platform's pages only: sent with a
    foreign Origin, the socket is anonymous (another site cannot read private events)."""
    with closing(sign_in(live.base_url, "viewer")) as viewer:
        cookie = "; ".join(f"{k}={v}" for k, v in viewer.cookies.items())
    host = live.root_url.split("://", 1)[1]

    async def main() -> list[bool]:
        seen = []
        for origin in (f"http://{host}", "http://evil.example"):
            socket = await opened(live, {"Cookie": cookie, "Origin": origin})
            seen.append(socket.events[0]["data"]["authenticated"])
            await socket.ws.close()
        return seen

    assert run(main()) == [True, False]


def test_a_huge_frame_closes_with_1009(live: Platform) -> None:
    """A frame over the frame limit (64 KiB) closes the socket with 1009; the service stays up."""

    async def main() -> int | None:
        socket = await opened(live)
        await socket.ws.send("x" * (65 * 1024))
        with pytest.raises(ConnectionClosed) as closed:
            while True:
                await socket.packet()
        again = await opened(live)
        assert (await again.call("ping", None))["result"] == {}
        await again.ws.close()
        return closed.value.rcvd.code if closed.value.rcvd else None

    assert run(main()) == 1009


def test_one_address_holds_a_bounded_number_of_sockets(
    make_platform: Callable[..., Platform],
) -> None:
    """Past chat_address_connections sockets from one address, the next is closed with 1008;
    once one closes, a new one is served."""
    capped = make_platform(chat_address_connections=2)

    async def main() -> int | None:
        first, second = await opened(capped), await opened(capped)
        root = capped.root_url.replace("http", "ws", 1) + "/"
        async with connect(root) as third:
            with pytest.raises(ConnectionClosed) as closed:
                await asyncio.wait_for(third.recv(), 5)
        await first.ws.close()
        again = await _reopened(capped)
        assert (await again.call("ping", None))["result"] == {}
        for socket in (second, again):
            await socket.ws.close()
        return closed.value.rcvd.code if closed.value.rcvd else None

    assert run(main()) == 1008


async def _reopened(platform: Platform) -> Socket:
    """A socket opened once the server has counted a closed one out (bounded retries)."""
    for _ in range(50):
        try:
            socket = await opened(platform)
            assert (await socket.call("ping", None))["error"] is None
            return socket
        except ConnectionClosed:
            await asyncio.sleep(0.02)
    raise AssertionError("no socket was served again")
