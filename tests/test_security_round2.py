"""Security rules of issue 13, each proven by an attack that must fail on a live platform.

One user is one user (chat allowances and connection caps per identity), authkeys die with the
credential that fetched them, forwarding headers count only from trusted proxies, rich text is
sanitized on write, the control namespace answers loopback only. The attempts are added to the
attack count of :mod:`tests.test_security`; the Redis (multi-process) versions of the chat
attacks are in :mod:`tests.test_scaleout_security`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from contextlib import closing
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

import explorer
from explorer.cli.serve import exposure_warning
from explorer.emulator import addresses
from explorer.emulator.chat.limits import TOO_MANY_CONNECTIONS
from explorer.emulator.chat.node import CREDENTIAL_ENDED
from explorer.errors import CredentialLost
from explorer.events.log import EventLog
from explorer.views.chat import LiveChat
from tests.chatkit import Chat, World, run
from tests.clocks import ManualClock
from tests.conftest import sign_in
from tests.test_security import ATTACKS, MakePlatform, attempt, bearer, code_grant, implicit_token

HOSTILE = "<script>alert(1)</script><img src=x onerror=alert(2)>"


@pytest.fixture(scope="module", autouse=True)
def tally() -> Iterator[None]:
    """Print the attack count, this module's attempts included, once the module is done."""
    yield
    print(f"\nattacks tried (with round 2): {sum(ATTACKS.values())}", dict(sorted(ATTACKS.items())))


def world_of(make_platform: MakePlatform, **options: Any) -> World:
    """A :class:`World` around a platform of this test's own (stopped after the test)."""
    options.setdefault("rate_limits", True)
    return World(make_platform(**options))


async def closed_with(chat: Chat, timeout: float = 5.0) -> tuple[int | None, str | None]:
    """The close code and reason of ``chat``, once the node has closed it (frames that came
    before are dropped)."""
    async with asyncio.timeout(timeout):
        try:
            while True:
                await chat.ws.recv()
        except ConnectionClosed:
            pass
    return chat.ws.close_code, chat.ws.close_reason


async def signed_in_chat(world: World, client: httpx.Client, user_id: int) -> tuple[Chat, str]:
    """A connection authenticated with a key fetched by ``client``, and the key."""
    key = client.get(f"/chats/{world.channel}").raise_for_status().json()["authkey"]
    chat = await world.connect()
    await chat.ok("auth", world.channel, user_id, key)
    return chat, key


async def key_is_dead(world: World, user_id: int, key: str) -> None:
    """``auth`` with ``key`` answers UNOTFOUND on every node."""
    for node in range(len(world.platform.chat_endpoints)):
        chat = await world.connect(node)
        error = await chat.error("auth", world.channel, user_id, key)
        assert error["code"] == 1 and error["message"] == "UNOTFOUND"
        await chat.close()


async def ended(world: World, chat: Chat, user_id: int, key: str, attack: str) -> None:
    """``chat`` was closed with 4001 and ``key`` is dead on every node (counted as
    ``attack``)."""
    attempt(attack, 1 + len(world.platform.chat_endpoints))
    assert await closed_with(chat) == CREDENTIAL_ENDED
    await key_is_dead(world, user_id, key)


# --- 1. one user is one user ------------------------------------------------------------


def test_one_user_on_ten_sockets_gets_one_users_allowance(make_platform: MakePlatform) -> None:
    """A user sending 60 messages on each of 10 sockets (two nodes) gets exactly one burst
    accepted (the clock stands still), the rest 4004; another user's ping is answered
    meanwhile."""
    world = world_of(make_platform, clock=ManualClock(), chat_rate=20.0, chat_burst=40)

    async def scenario() -> None:
        sockets = [await world.join("viewer", node=i % 2) for i in range(10)]
        bystander = await world.join("viewer2", node=1)

        async def flood(chat: Chat, number: int) -> list[dict[str, Any]]:
            ids = [await chat.send("msg", f"flood {number}.{i}") for i in range(60)]
            return [await chat.reply(i, timeout=30) for i in ids]

        flooding = asyncio.gather(*(flood(chat, n) for n, chat in enumerate(sockets)))
        started = time.perf_counter()
        await bystander.ok("ping")
        assert time.perf_counter() - started < 1.0
        replies = [reply for replies in await flooding for reply in replies]
        attempt("one user, many sockets: chat rate", len(replies))
        accepted = [r for r in replies if r["error"] is None]
        refused = [r for r in replies if r["error"] is not None]
        assert len(accepted) == 40
        assert {r["error"]["code"] for r in refused} == {4004}
        assert (await bystander.call("msg", "still here"))["error"] is None
        for chat in [*sockets, bystander]:
            await chat.close()

    run(scenario(), timeout=60)


def test_anonymous_sockets_share_their_address_allowance(make_platform: MakePlatform) -> None:
    """Twenty anonymous sockets from one address share one address allowance (ten users'
    burst of 4, their 20 ``auth`` calls included), not twenty."""
    world = world_of(make_platform, clock=ManualClock(), chat_rate=20.0, chat_burst=4)

    async def scenario() -> None:
        sockets = [await world.join(None, node=i % 2) for i in range(20)]
        replies = []
        for chat in sockets:
            for _ in range(3):
                replies.append(await chat.call("ping"))
        attempt("anonymous sockets from one address: chat rate", len(replies))
        assert sum(r["error"] is None for r in replies) == 40 - 20
        assert {r["error"]["code"] for r in replies if r["error"]} == {4004}
        for chat in sockets:
            await chat.close()

    run(scenario(), timeout=60)


def test_connections_over_the_user_cap_are_closed(make_platform: MakePlatform) -> None:
    """A user's connection past ``chat_user_connections`` (over both nodes) is closed with
    4008 when it signs in; a connection of another user still gets in."""
    world = world_of(make_platform, chat_user_connections=3)

    async def scenario() -> None:
        held = [await world.join("viewer", node=i % 2) for i in range(3)]
        for node in (0, 1):
            extra = await world.connect(node)
            key = world.details("viewer")["authkey"]
            attempt("connections over the user cap")
            error = await extra.error("auth", world.channel, world.user_id("viewer"), key)
            assert error["code"] == 4004
            assert await closed_with(extra) == TOO_MANY_CONNECTIONS
        other = await world.join("viewer2")
        await other.ok("ping")
        await held[0].ok("ping")
        for chat in [*held, other]:
            await chat.close()

    run(scenario())


def test_connections_over_the_address_cap_are_closed(make_platform: MakePlatform) -> None:
    """One address may open ``chat_address_connections`` sockets; the next is closed with
    4008 before its welcome."""
    world = world_of(make_platform, chat_address_connections=5, chat_nodes=1)

    async def scenario() -> None:
        held = [await world.connect() for _ in range(5)]
        attempt("connections over the address cap")
        refused = Chat(await connect(world.endpoint()))
        assert await closed_with(refused) == TOO_MANY_CONNECTIONS
        await held[0].ok("ping")
        for chat in held:
            await chat.close()

    run(scenario())


# --- 2. authkeys die with their credential ----------------------------------------------


def test_logout_ends_the_sessions_authkeys(make_platform: MakePlatform) -> None:
    """After DELETE /users/current/session the connections signed in with the session's keys
    are closed with 4001 and the key answers UNOTFOUND on every node."""
    world = world_of(make_platform, rate_limits=False)
    viewer = world.user_id("viewer")

    async def scenario() -> None:
        with closing(sign_in(world.base_url, "viewer")) as client:
            chat, key = await signed_in_chat(world, client, viewer)
            client.delete("/users/current/session").raise_for_status()
        await ended(world, chat, viewer, key, "authkey after logout")

    run(scenario())


def test_another_sessions_logout_leaves_a_key_alone(make_platform: MakePlatform) -> None:
    """Signing out one session ends only the keys that session fetched."""
    world = world_of(make_platform, rate_limits=False)
    viewer = world.user_id("viewer")

    async def scenario() -> None:
        with closing(sign_in(world.base_url, "viewer")) as kept:
            chat, _ = await signed_in_chat(world, kept, viewer)
            with closing(sign_in(world.base_url, "viewer")) as other:
                other.get(f"/chats/{world.channel}").raise_for_status()
                other.delete("/users/current/session").raise_for_status()
            await chat.ok("msg", "still signed in")
            await chat.close()

    run(scenario())


def test_token_revocation_ends_the_tokens_authkeys(make_platform: MakePlatform) -> None:
    """POST /oauth/revoke closes the connections signed in with keys fetched by the token."""
    world = world_of(make_platform, rate_limits=False)
    viewer = world.user_id("viewer")

    async def scenario() -> None:
        with closing(sign_in(world.base_url, "viewer")) as client:
            token = implicit_token(client, "chat:connect chat:chat")
        with bearer(world.base_url, token) as api:
            chat, key = await signed_in_chat(world, api, viewer)
        revoked = httpx.post(world.base_url + "/oauth/revoke", data={"token": token})
        assert revoked.status_code == 200
        await ended(world, chat, viewer, key, "authkey after token revocation")

    run(scenario())


def test_refresh_token_reuse_ends_the_familys_authkeys(make_platform: MakePlatform) -> None:
    """Replaying a used refresh token ends the keys of every token of its grant."""
    world = world_of(make_platform, rate_limits=False)
    streamer = world.user_id("streamer")

    async def scenario() -> None:
        with closing(sign_in(world.base_url, "streamer")) as client:
            app, first = code_grant(world.platform, client, "chat:connect chat:chat")
        rotate = {
            "grant_type": "refresh_token",
            "client_id": app["id"],
            "client_secret": app["secret"],
            "refresh_token": first["refresh_token"],
        }
        token_url = world.base_url + "/oauth/token"
        second = httpx.post(token_url, data=rotate).raise_for_status().json()
        with bearer(world.base_url, second["access_token"]) as api:
            chat, key = await signed_in_chat(world, api, streamer)
        assert httpx.post(token_url, data=rotate).status_code == 400  # the replay
        await ended(world, chat, streamer, key, "authkey after refresh token reuse")

    run(scenario())


def test_suspension_ends_the_owners_authkeys(make_platform: MakePlatform) -> None:
    """Suspending a user's channel (their account) closes their chat connections in every
    channel."""
    world = world_of(make_platform, rate_limits=False)
    viewer2 = world.user_id("viewer2")

    async def scenario() -> None:
        with closing(sign_in(world.base_url, "viewer2")) as client:
            chat, key = await signed_in_chat(world, client, viewer2)
        staff = world.rest("staff")
        staff.post(f"/channels/{world.channel_of('viewer2')}/suspend").raise_for_status()
        await ended(world, chat, viewer2, key, "authkey after suspension")

    run(scenario())


def test_password_change_ends_every_other_credential(make_platform: MakePlatform) -> None:
    """Changing the password closes chats of other sessions and tokens (4001), ends those
    credentials, keeps the calling session; a wrong current password changes nothing."""
    world = world_of(make_platform, rate_limits=False)
    viewer = world.user_id("viewer")

    async def scenario() -> None:
        with (
            closing(sign_in(world.base_url, "viewer")) as thief,
            closing(sign_in(world.base_url, "viewer")) as owner,
        ):
            token = implicit_token(thief, "chat:connect chat:chat")
            with bearer(world.base_url, token) as api:
                by_token, token_key = await signed_in_chat(world, api, viewer)
            by_session, session_key = await signed_in_chat(world, thief, viewer)
            path = "/users/current/password"
            wrong = owner.put(path, json={"password": "guess", "newPassword": "n3w-secret"})
            assert wrong.status_code == 401
            changed = owner.put(path, json={"password": "explorer", "newPassword": "n3w-secret"})
            assert changed.status_code == 204, changed.text
            for chat, key in ((by_token, token_key), (by_session, session_key)):
                await ended(world, chat, viewer, key, "authkey after a password change")
            assert thief.get("/users/current").status_code == 401
            with bearer(world.base_url, token) as api:
                assert api.get("/users/current").status_code == 401
            assert owner.get("/users/current").status_code == 200

    run(scenario())


def test_toolkit_reports_a_lost_credential(make_platform: MakePlatform) -> None:
    """A toolkit chat whose session signs out ends with CredentialLost instead of
    reconnecting."""
    world = world_of(make_platform, rate_limits=False)
    with explorer.connect(
        world.base_url, username="viewer", password="explorer", progress=False
    ) as api:
        chat = api.chat("streamer")
        try:
            chat.send("before signing out")
            api.logout()
            deadline = time.monotonic() + 10
            while chat.state != "closed" and time.monotonic() < deadline:
                time.sleep(0.01)
            assert isinstance(chat.error, CredentialLost)
            with pytest.raises(CredentialLost):
                chat.send("after signing out")
        finally:
            chat.close()


# --- 3. forwarded addresses -------------------------------------------------------------


def test_forwarded_for_from_an_untrusted_peer_resets_no_bucket(
    make_platform: MakePlatform,
) -> None:
    """After 8 failed logins, sending X-Forwarded-For (or X-Real-IP) with any address still
    gets 429: the header is not trusted from loopback by default."""
    platform = make_platform(rate_limits=True)
    login = platform.base_url + "/users/login"
    for guess in range(8):
        httpx.post(login, json={"username": "viewer", "password": f"guess{guess}"})
    for header in ("X-Forwarded-For", "X-Real-IP"):
        for spoofed in ("10.9.8.7", "127.0.0.2", "::1", "10.0.0.1, 10.0.0.2"):
            response = httpx.post(
                login,
                json={"username": "viewer", "password": "explorer"},
                headers={header: spoofed},
            )
            attempt("spoofed X-Forwarded-For")
            assert response.status_code == 429, (header, spoofed)


def test_forwarded_for_counts_from_a_trusted_proxy(make_platform: MakePlatform) -> None:
    """With the loopback proxy trusted (forwarded_allow_ips), the client it names is counted:
    another client behind it is not blocked by the first one's failures."""
    platform = make_platform(rate_limits=True, forwarded_allow_ips=("127.0.0.1",))
    login = platform.base_url + "/users/login"
    first = {"X-Forwarded-For": "10.9.8.7"}
    for guess in range(8):
        httpx.post(login, json={"username": "viewer", "password": f"g{guess}"}, headers=first)
    right = {"username": "viewer", "password": "explorer"}
    assert httpx.post(login, json=right, headers=first).status_code == 429
    assert httpx.post(login, json=right, headers={"X-Forwarded-For": "10.1.1.1"}).is_success


# --- 4. rich text -----------------------------------------------------------------------


def test_channel_description_is_sanitized_on_write(make_platform: MakePlatform) -> None:
    """Script, event handlers and javascript: links are dropped from a description; harmless
    formatting and http(s) links stay."""
    world = world_of(make_platform, rate_limits=False)
    owner = world.rest("streamer")
    path = f"/channels/{world.channel}"
    kept = '<p>Hi <b>all</b> <a href="https://example.org/">site</a></p>'
    payloads = [
        HOSTILE,
        '<a href="javascript:alert(1)">x</a>',
        '<svg onload="alert(1)"><circle/></svg>',
        '<iframe src="https://evil.example"></iframe>',
        '<p style="background:url(javascript:alert(1))">x</p>',
        '<img src="data:image/svg+xml;base64,PHN2Zz4=">',
        "<scr<script>ipt>alert(1)</script>",
    ]
    for method in ("PATCH", "PUT"):
        for payload in payloads:
            answer = owner.request(method, path, json={"description": payload + kept})
            attempt("stored script in a description")
            stored = answer.raise_for_status().json()["description"]
            assert stored == httpx.get(world.base_url + path).json()["description"]
            lowered = stored.lower()
            for bad in (
                "<script",
                "onerror",
                "onload",
                "javascript:",
                "<iframe",
                "style=",
                "data:",
            ):
                assert bad not in lowered, (payload, stored)
            assert '<b>all</b> <a href="https://example.org/"' in stored


def test_names_and_messages_are_escaped_where_the_toolkit_renders_them() -> None:
    """A hostile user name and message are escaped in the live widget and the log's HTML."""
    log = EventLog()
    data = {
        "channel": 7,
        "id": "m1",
        "user_name": HOSTILE,
        "user_id": 1,
        "user_roles": ["User"],
        "message": {"message": [{"type": "text", "data": HOSTILE, "text": HOSTILE}], "meta": {}},
    }
    log.append({"type": "event", "event": "ChatMessage", "data": data})
    attempt("script in a name or message, rendered", 2)
    widget = LiveChat(log, lambda: ("authenticated", "ws://node"))
    rendered = [widget.children[0].value, widget.children[2].value, log._repr_html_()]
    for html in rendered:
        assert "<script" not in html and "<img" not in html


# --- 5. control namespace ---------------------------------------------------------------


def test_control_namespace_answers_loopback_only(make_platform: MakePlatform) -> None:
    """A client a trusted proxy names from elsewhere gets 403 from every control route; a
    loopback client is answered; with open_control everyone is."""
    guarded = make_platform(rate_limits=False, forwarded_allow_ips=("127.0.0.1",))
    remote = {"X-Forwarded-For": "10.9.8.7"}
    routes = [
        ("GET", "/health"),
        ("GET", "/mail"),
        ("GET", "/chat/nodes"),
        ("POST", "/chat/nodes/0/stop"),
        ("POST", "/chat/nodes/0/start"),
    ]
    for method, path in routes:
        url = guarded.root_url + "/_emulator" + path
        attempt("control namespace from a remote client")
        assert httpx.request(method, url, headers=remote).status_code == 403, path
    assert httpx.get(guarded.root_url + "/_emulator/health").status_code == 200
    opened = make_platform(rate_limits=False, forwarded_allow_ips=("*",), open_control=True)
    assert httpx.get(opened.root_url + "/_emulator/mail", headers=remote).status_code == 200


def test_serving_beyond_loopback_warns_what_is_open() -> None:
    """The warning of ``explorer serve --host`` off loopback names the API, the chat nodes and
    the control namespace's state; loopback names get none."""
    closed, opened = exposure_warning("192.0.2.1", False), exposure_warning("192.0.2.1", True)
    assert "REST API" in closed and "chat nodes" in closed and "loopback only" in closed
    assert "mail box" in opened and "--open-control" in opened
    assert all(addresses.is_loopback(host) for host in ("127.0.0.1", "::1", "localhost"))
    assert not addresses.is_loopback("0.0.0.0")


def test_a_suspended_channels_chat_details_are_not_found_signed_in_or_not(
    make_platform: MakePlatform,
) -> None:
    """``GET /chats/{id}`` of a suspended channel is a 404 for a signed-in caller, as for an
    anonymous one: no permissions and no authkey for it."""
    world = world_of(make_platform, rate_limits=False)
    channel = world.channel_of("viewer2")
    world.rest("staff").post(f"/channels/{channel}/suspend").raise_for_status()
    assert httpx.get(f"{world.base_url}/chats/{channel}", timeout=10).status_code == 404
    answer = world.rest("viewer").get(f"/chats/{channel}")
    assert answer.status_code == 404 and "authkey" not in answer.text
