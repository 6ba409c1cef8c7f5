"""Security of the live-events service (issue 36, round 4): what one client can make the
platform hold or compute through a Constellation socket is bounded, and what a socket reads
ends with the credential it was opened with. Each test attacks a real platform over real
websockets on 127.0.0.1; a bystander's ping is answered after each attack.
"""

from __future__ import annotations

import asyncio
import gzip
import socket
from collections.abc import Iterator
from contextlib import closing
from typing import Any
from urllib.parse import urlsplit

import httpx
import orjson
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from explorer.emulator import Platform
from explorer.emulator.live import constellation
from tests.chatkit import run
from tests.clocks import ManualClock
from tests.conftest import sign_in
from tests.databases import start
from tests.test_live_constellation import Socket, opened
from tests.test_platform_oauth import implicit_token
from tests.test_security import MakePlatform, code_grant
from tests.test_security_round3 import jwt_client, mint_jwt

#: A method packet whose padding makes it ``size`` bytes long once inflated.
PADDED = '{{"type":"method","method":"ping","params":null,"id":1,"pad":"{}"}}'


def padded(size: int) -> str:
    return PADDED.format("a" * (size - len(PADDED) + 2))


@pytest.fixture(scope="module")
def live() -> Iterator[Platform]:
    with start(channels=20, rate_limits=False) as running:
        yield running


async def closed_code(sock: Socket, timeout: float = 10.0) -> int | None:
    """Read until the server closes ``sock``; its close code."""
    with pytest.raises(ConnectionClosed) as closed:
        while True:
            await sock.packet(timeout)
    return closed.value.rcvd.code if closed.value.rcvd else None


async def sent_then_closed_code(sock: Socket, message: str) -> int | None:
    """Send ``message`` and read until the server closes ``sock``; its close code (a server
    that closes while a large message is still going out ends the send itself)."""
    try:
        await sock.ws.send(message)
    except ConnectionClosed as gone:
        return gone.rcvd.code if gone.rcvd else None
    return await closed_code(sock)


async def bystander_pings(platform: Platform) -> bool:
    """Whether a fresh socket is still served."""
    other = await opened(platform)
    answered = (await other.call("ping", None))["result"] == {}
    await other.ws.close()
    return answered


def test_a_reply_echoes_only_a_short_id(live: Platform) -> None:
    """A reply echoes a number or a short string id; a long id (10,000 characters) is not
    echoed: the reply's id is null with error 4010, so a reply is never larger than a small
    packet."""

    async def main() -> list[Any]:
        sock = await opened(live)
        short = await sock.call("ping", None, "abc")
        await sock.ws.send(orjson.dumps({"type": "method", "method": "ping", "id": "x" * 10_000}))
        long = await sock.reply(None)
        unknown = await sock.call("z" * 10_000, None)
        await sock.ws.close()
        return [short["result"], long["error"]["code"], len(orjson.dumps(unknown))]

    echoed, refused, unknown_size = run(main())
    assert echoed == {} and refused == 4010 and unknown_size < 400


def test_no_message_is_inflated_or_parsed_past_the_limit(live: Platform) -> None:
    """No message past the frame limit (64 KiB) is inflated or parsed: a gzipped frame of a few
    KiB inflating to 60 MB is answered 4007 and the socket keeps working; a 1 MB text message
    with permessage-deflate offered (never negotiated) closes the socket with 1009; a gzipped
    frame inflating to under the limit is answered; a bystander is served meanwhile."""
    bomb = gzip.compress(padded(60 * 1024 * 1024).encode(), 9)
    assert len(bomb) < 100 * 1024

    async def main() -> list[Any]:
        sock = await opened(live)
        await sock.ws.send(bomb)
        refused = (await sock.reply(None))["error"]["code"]
        await sock.ws.send(gzip.compress(padded(60 * 1024).encode()))
        answered = (await sock.reply(1))["result"]
        await sock.ws.close()
        root = live.root_url.replace("http", "ws", 1) + "/"
        async with connect(root, compression="deflate", max_size=None) as ws:
            negotiated = ws.response.headers.get("Sec-WebSocket-Extensions") if ws.response else 0
            deflated = Socket(ws)
            await deflated.packet()
            code = await sent_then_closed_code(deflated, padded(1024 * 1024))
        return [refused, answered, negotiated, code, await bystander_pings(live)]

    assert run(main()) == [4007, {}, None, 1009, True]


def test_chat_nodes_bound_messages_after_inflating(live: Platform) -> None:
    """A chat node bounds a message's inflated size too: a permessage-deflate frame of a few
    KiB that inflates past 64 KiB closes the connection with 1009 (websockets' max_size
    applies after inflating), and the node still serves."""
    node = live.chat.local_endpoints()[0] if live.chat else ""

    async def main() -> list[Any]:
        async with connect(node, compression="deflate", max_size=None) as ws:
            await ws.recv()
            assert ws.response and "permessage-deflate" in ws.response.headers.get(
                "Sec-WebSocket-Extensions", ""
            )
            await ws.send(padded(1024 * 1024))
            with pytest.raises(ConnectionClosed) as closed:
                while True:
                    await asyncio.wait_for(ws.recv(), 10)
        async with connect(node) as again:
            welcome = orjson.loads(await asyncio.wait_for(again.recv(), 5))["event"]
        return [closed.value.rcvd.code if closed.value.rcvd else None, welcome]

    assert run(main()) == [1009, "WelcomeEvent"]


def test_a_reader_that_stops_is_closed_by_the_bytes_queued_for_it(
    make_platform: MakePlatform,
) -> None:
    """A socket that sends methods and never reads is closed with 1008 once the replies
    queued for it pass chat_send_buffer bytes (here 16 KiB), long before it has sent 3,000
    methods (the queue is bounded by bytes, not by frames); a bystander is served."""
    platform = make_platform(chat_send_buffer=16 * 1024, rate_limits=False)
    parts = urlsplit(platform.root_url)

    async def main() -> list[Any]:
        raw = socket.socket()
        # A small receive window: the kernel holds little of what the server writes.
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        raw.connect((parts.hostname or "", parts.port or 80))
        raw.setblocking(False)
        ws = await connect(f"ws://{parts.netloc}/", sock=raw, max_size=None)
        stalled = Socket(ws)
        packet = {"type": "method", "method": "ping", "params": None, "id": "i" * 100}
        for _ in range(3000):
            await ws.send(orjson.dumps(packet).decode())
        replies = 0
        with pytest.raises(ConnectionClosed) as closed:
            while True:
                if (await stalled.packet())["type"] == "reply":
                    replies += 1
        code = closed.value.rcvd.code if closed.value.rcvd else None
        return [code, replies < 3000, await bystander_pings(platform)]

    assert run(main(), 60) == [1008, True, True]


def test_subscriptions_are_bounded_per_address(live: Platform) -> None:
    """One address's sockets hold at most ADDRESS_SUBSCRIPTIONS subscriptions together: with
    every socket under its own cap, the batch passing the address's total is refused whole
    (4110); unsubscribing makes room again."""
    per_socket = constellation.MAX_SUBSCRIPTIONS
    sockets_needed = constellation.ADDRESS_SUBSCRIPTIONS // per_socket + 1
    batch = 2000  # names per frame, under the 64 KiB frame limit

    async def fill(sock: Socket, first: int) -> list[int | None]:
        codes = []
        for start_at in range(first, first + per_socket, batch):
            names = [f"costream:{n}:update" for n in range(start_at, start_at + batch)]
            error = (await sock.call("livesubscribe", {"events": names}))["error"]
            codes.append(error and error["code"])
        return codes

    async def main() -> list[Any]:
        socks = [await opened(live) for _ in range(sockets_needed)]
        codes = [await fill(sock, i * per_socket) for i, sock in enumerate(socks)]
        last = socks[-1]
        names = [f"costream:{n}:update" for n in range(batch)]
        assert (await socks[0].call("liveunsubscribe", {"events": names}))["error"] is None
        again = (await last.call("livesubscribe", {"events": ["costream:x:update"]}))["error"]
        for sock in socks:
            await sock.ws.close()
        return [codes, again, await bystander_pings(live)]

    codes, again, served = run(main(), 60)
    assert all(code is None for socket_codes in codes[:-1] for code in socket_codes)
    assert codes[-1][0] == 4110 and again is None and served


def test_private_events_need_the_scope_their_rest_route_needs(live: Platform) -> None:
    """user:{id}:notify needs notification:view:self, as GET /notifications does: a token of
    the user with chat:connect only is refused (4107) where REST answers 403; with the scope
    it is accepted."""
    with closing(sign_in(live.base_url, "viewer")) as viewer:
        me = viewer.get("/users/current").json()["id"]
        chat_only = implicit_token(viewer, "chat:connect")["access_token"]
        scoped = implicit_token(viewer, "notification:view:self", "s2")["access_token"]
    rest = httpx.get(
        f"{live.base_url}/notifications", headers={"Authorization": f"Bearer {chat_only}"}
    )

    async def main() -> list[Any]:
        codes = []
        for token in (chat_only, scoped):
            sock = await opened(live, {"Authorization": f"Bearer {token}"})
            error = (await sock.call("livesubscribe", {"events": [f"user:{me}:notify"]}))["error"]
            codes.append(error and error["code"])
            await sock.ws.close()
        return codes

    assert rest.status_code == 403
    assert run(main()) == [4107, None]


def test_a_socket_ends_with_its_credential(make_platform: MakePlatform) -> None:
    """A socket signed in with a token closes with 4011 when the token is revoked; one signed
    in with a JWT when the session behind it signs out; one signed in with another session's
    cookie when the owner changes the password. A socket of a credential that lives on stays."""
    platform = make_platform(rate_limits=False)
    base = platform.base_url
    root = platform.root_url
    with (
        closing(sign_in(base, "viewer")) as owner,
        closing(sign_in(base, "viewer")) as other,
        closing(sign_in(base, "viewer")) as thief,
    ):
        me = owner.get("/users/current").json()["id"]
        token = implicit_token(owner, "notification:view:self")["access_token"]
        jwt = mint_jwt(other)
        cookie = "; ".join(f"{k}={v}" for k, v in thief.cookies.items())
        topic = {"events": [f"user:{me}:notify"]}

        async def main() -> list[Any]:
            by_token = await opened(platform, {"Authorization": f"Bearer {token}"})
            by_jwt = await opened(platform, {"Authorization": f"JWT {jwt}"})
            by_cookie = await opened(platform, {"Cookie": cookie, "Origin": root})
            by_owner = await opened(
                platform,
                {"Cookie": "; ".join(f"{k}={v}" for k, v in owner.cookies.items()), "Origin": root},
            )
            for sock in (by_token, by_jwt, by_cookie, by_owner):
                assert (await sock.call("livesubscribe", topic))["error"] is None
            codes = []
            revoked = await asyncio.to_thread(
                httpx.post, f"{base}/oauth/revoke", data={"token": token}
            )
            revoked.raise_for_status()
            codes.append(await closed_code(by_token))
            assert (await asyncio.to_thread(other.delete, "/users/current/session")).is_success
            codes.append(await closed_code(by_jwt))
            changed = await asyncio.to_thread(
                owner.put,
                "/users/current/password",
                json={"password": "explorer", "newPassword": "n3w-secret"},
            )
            assert changed.status_code == 204, changed.text
            codes.append(await closed_code(by_cookie))
            still = (await by_owner.call("ping", None))["result"]
            await by_owner.ws.close()
            return [codes, still]

        assert run(main(), 30) == [[4011, 4011, 4011], {}]
    with jwt_client(base, jwt) as dead:
        assert dead.get("/users/current").status_code == 401


def test_a_socket_ends_when_its_token_expires(make_platform: MakePlatform) -> None:
    """A socket signed in with a token closes with 4011 within RECHECK seconds of the token's
    expiry (the platform's clock), as REST answers that token 401 from then on."""
    clock = ManualClock()
    platform = make_platform(rate_limits=False, implicit_token_ttl=60, clock=clock)
    with closing(sign_in(platform.base_url, "viewer")) as viewer:
        token = implicit_token(viewer, "user:details:self")["access_token"]

    async def main() -> int | None:
        sock = await opened(platform, {"Authorization": f"Bearer {token}"})
        assert (await sock.call("ping", None))["result"] == {}
        clock.advance(61 + constellation.RECHECK)
        return await closed_code(sock)

    assert run(main()) == 4011


def test_a_flood_of_methods_is_read_at_the_addresss_pace(
    make_platform: MakePlatform, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sockets of one address are read at RATE frames a second together (past a burst of
    BURST): two sockets sending 60 pings each get their last replies no sooner than
    (120 - BURST) / RATE seconds after the first send; a socket of another address is
    answered meanwhile."""
    monkeypatch.setattr(constellation, "RATE", 100.0)
    monkeypatch.setattr(constellation, "BURST", 20.0)
    platform = make_platform(rate_limits=False)
    ping = orjson.dumps({"type": "method", "method": "ping", "params": None, "id": 1}).decode()

    async def flood(sock: Socket) -> None:
        for _ in range(60):
            await sock.ws.send(ping)
        for _ in range(60):
            while (await sock.packet())["type"] != "reply":
                pass

    async def main() -> list[Any]:
        socks = [await opened(platform), await opened(platform)]
        root = platform.root_url.replace("http", "ws", 1) + "/"
        other = Socket(await connect(root, local_addr=("127.0.0.2", 0)))
        await other.packet()
        started = asyncio.get_running_loop().time()
        flooding = asyncio.gather(*(flood(sock) for sock in socks))
        answered = (await other.call("ping", None))["result"]
        await flooding
        took = asyncio.get_running_loop().time() - started
        for sock in (*socks, other):
            await sock.ws.close()
        return [answered, took]

    answered, took = run(main())
    # The server's bucket and the test's loop read their clocks apart (it read 11 us short): 10 ms.
    assert answered == {} and took >= (120 - 20) / 100.0 - 0.01


def test_a_socket_on_an_access_token_ends_when_it_is_refreshed(
    make_platform: MakePlatform,
) -> None:
    """Refreshing a code grant revokes its old access token, and a socket signed in with that
    token closes with 4011; a socket on the new token stays."""
    platform = make_platform(rate_limits=False)
    with closing(sign_in(platform.base_url, "viewer")) as session:
        app, first = code_grant(platform, session)
    rotate = {
        "grant_type": "refresh_token",
        "client_id": app["id"],
        "client_secret": app["secret"],
        "refresh_token": first["refresh_token"],
    }

    async def main() -> list[Any]:
        old = await opened(platform, {"Authorization": f"Bearer {first['access_token']}"})
        assert (await old.call("ping", None))["result"] == {}
        token_url = f"{platform.base_url}/oauth/token"
        fresh = (await asyncio.to_thread(httpx.post, token_url, data=rotate)).raise_for_status()
        new = await opened(platform, {"Authorization": f"Bearer {fresh.json()['access_token']}"})
        code = await closed_code(old)
        still = (await new.call("ping", None))["result"]
        await new.ws.close()
        return [code, still]

    assert run(main()) == [4011, {}]
