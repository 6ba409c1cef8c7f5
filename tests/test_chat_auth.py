"""Chat ``auth``: every row of the spec's state table, each UNOTFOUND cause, authkeys."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from explorer.emulator import Platform
from tests.chatkit import World, run
from tests.clocks import ManualClock

UNOTFOUND = {"code": 1, "message": "UNOTFOUND", "stacktrace": [], "data": {}}


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    """One platform for this module."""
    running = World.start()
    yield running
    running.stop()


def test_anonymous_auth_reads_but_cannot_act(world: World) -> None:
    """auth [ch] -> {authenticated: false, roles: []}; msg is then refused with 4003."""

    async def scenario() -> None:
        chat = await world.connect()
        assert await chat.ok("auth", world.channel) == {"authenticated": False, "roles": []}
        assert (await chat.error("msg", "hello"))["code"] == 4003
        assert isinstance(await chat.ok("history", 5), list)
        await chat.close()

    run(scenario())


def test_auth_with_nulls_is_anonymous(world: World) -> None:
    """auth [ch, null, null, null] is an anonymous join."""

    async def scenario() -> None:
        chat = await world.connect()
        data = await chat.ok("auth", world.channel, None, None, None)
        assert data == {"authenticated": False, "roles": []}
        await chat.close()

    run(scenario())


def test_numeric_string_channel_joins_anonymously(world: World) -> None:
    """An old client's channel id sent as a numeric string is accepted for anonymous auth."""

    async def scenario() -> None:
        chat = await world.connect()
        data = await chat.ok("auth", str(world.channel))
        assert data == {"authenticated": False, "roles": []}
        await chat.close()

    run(scenario())


def test_numeric_string_ids_authenticate(world: World) -> None:
    """auth with channel and user ids as numeric strings signs in, as the historical platform
    took them (reference.md fact 4 saw one old client send strings)."""

    async def scenario() -> None:
        chat = await world.connect()
        key = world.details("viewer")["authkey"]
        data = await chat.ok("auth", str(world.channel), str(world.user_id("viewer")), key)
        assert data == {"authenticated": True, "roles": ["User"]}
        await chat.close()

    run(scenario())


def test_authenticated_auth_returns_roles(world: World) -> None:
    """auth [ch, user, key] with a valid key -> {authenticated: true, roles}."""

    async def scenario() -> None:
        chat = await world.connect()
        key = world.details("moderator")["authkey"]
        data = await chat.ok("auth", world.channel, world.user_id("moderator"), key)
        assert data["authenticated"] is True and set(data["roles"]) == {"User", "Mod"}
        await chat.close()

    run(scenario())


def test_four_argument_auth_ignores_the_access_key(world: World) -> None:
    """auth [ch, user, key, accessKey] authenticates like the 3-argument form."""

    async def scenario() -> None:
        chat = await world.connect()
        key = world.details("viewer")["authkey"]
        data = await chat.ok("auth", world.channel, world.user_id("viewer"), key, "access-key")
        assert data == {"authenticated": True, "roles": ["User"]}
        await chat.close()

    run(scenario())


def unotfound_cases(world: World) -> dict[str, list[object]]:
    """Every UNOTFOUND cause the spec lists, as auth arguments."""
    channel, user = world.channel, world.user_id("viewer")
    key = world.details("viewer")["authkey"]
    other_channel = world.channel_of("viewer2")
    other_key = world.details("viewer", other_channel)["authkey"]
    return {
        "unknown key": [channel, user, "0" * 32],
        "key of another channel": [channel, user, other_key],
        "key of another user": [channel, world.user_id("viewer2"), key],
        "ids swapped": [user, channel, key],
        "invalid channel": [999_999_999, user, key],
        "invalid channel anonymous": [999_999_999],
        "channel as a word": ["streamer", user, key],
        "user as a signed string": [channel, f"+{user}", key],
        "key as number": [channel, user, 12345],
        "two arguments": [channel, user],
        "five arguments": [channel, user, key, None, "x"],
        "no arguments": [],
        "null key": [channel, user, None],
        "null channel": [None],
        "boolean channel": [True],
    }


def test_every_unotfound_cause_keeps_the_connection_connected(world: World) -> None:
    """Each listed mismatch answers code 1 UNOTFOUND, and the connection can still auth."""

    async def scenario() -> None:
        chat = await world.connect()
        for cause, args in unotfound_cases(world).items():
            error = await chat.error("auth", *args)
            assert error == UNOTFOUND, cause
            assert (await chat.error("history", 1))["code"] == 4003, cause
        assert (await chat.ok("auth", world.channel))["authenticated"] is False
        await chat.close()

    run(scenario())


def test_expired_key_is_unotfound(make_platform: Callable[..., Platform]) -> None:
    """A key past its lifetime (authkey_ttl) answers UNOTFOUND."""
    clock = ManualClock()
    world = World(make_platform(rate_limits=False, authkey_ttl=60, clock=clock))

    async def scenario() -> None:
        key = world.details("viewer")["authkey"]
        clock.advance(61)
        chat = await world.connect()
        assert await chat.error("auth", world.channel, world.user_id("viewer"), key) == UNOTFOUND
        await chat.close()

    run(scenario())
    world.stop()


def test_key_is_reused_on_reconnect(world: World) -> None:
    """The same key authenticates again after a reconnect (and on another node)."""

    async def scenario() -> None:
        key = world.details("viewer2")["authkey"]
        assert world.details("viewer2")["authkey"] == key
        for node in (0, 1, 0):
            chat = await world.connect(node)
            data = await chat.ok("auth", world.channel, world.user_id("viewer2"), key)
            assert data["authenticated"] is True
            await chat.close()

    run(scenario())


def test_failed_reauth_keeps_the_current_session(world: World) -> None:
    """A wrong key on an authenticated connection leaves it authenticated."""

    async def scenario() -> None:
        chat = await world.join("viewer")
        assert await chat.error("auth", world.channel, world.user_id("viewer"), "bad") == UNOTFOUND
        assert (await chat.ok("msg", "still here"))["user_name"] == "viewer"
        await chat.close()

    run(scenario())


def test_anonymous_then_authenticated_on_one_connection(world: World) -> None:
    """Re-auth on the same connection upgrades an anonymous reader to a member."""

    async def scenario() -> None:
        watcher = await world.join("moderator")
        chat = await world.join(None)
        key = world.details("viewer2")["authkey"]
        data = await chat.ok("auth", world.channel, world.user_id("viewer2"), key)
        assert data["authenticated"] is True
        join = await watcher.event("UserJoin")
        assert join["username"] == "viewer2"
        assert (await chat.ok("msg", "upgraded"))["user_id"] == world.user_id("viewer2")
        await chat.close()
        await watcher.close()

    run(scenario())


def test_user_join_goes_to_others_not_the_joiner(world: World) -> None:
    """Authenticated auth sends UserJoin {username, roles, id} to the other members only."""

    async def scenario() -> None:
        channel = world.channel_of("viewer")
        anon = await world.join(None, channel)
        other = await world.join("staff", channel, node=1)
        assert (await anon.event("UserJoin"))["username"] == "staff"
        joiner = await world.join("viewer2", channel)
        for watcher in (anon, other):
            data = await watcher.event("UserJoin")
            assert data == {
                "originatingChannel": channel,
                "username": "viewer2",
                "roles": ["User"],
                "id": world.user_id("viewer2"),
            }
        await joiner.no_event("UserJoin")
        for chat in (anon, other, joiner):
            await chat.close()

    run(scenario())


def test_anonymous_join_sends_no_user_join(world: World) -> None:
    """An anonymous auth produces no UserJoin for the others."""

    async def scenario() -> None:
        channel = world.channel_of("viewer2")
        watcher = await world.join("viewer", channel)
        anon = await world.join(None, channel, node=1)
        await watcher.no_event("UserJoin")
        await world.disconnect(anon, node=1)
        await watcher.no_event("UserLeave")
        await watcher.close()

    run(scenario())


def test_user_leave_on_disconnect(world: World) -> None:
    """Closing an authenticated connection sends UserLeave {username, id} to the others."""

    async def scenario() -> None:
        channel = world.channel_of("staff")
        watcher = await world.join(None, channel)
        leaver = await world.join("viewer", channel, node=1)
        await leaver.close()
        data = await watcher.event("UserLeave")
        assert data == {
            "originatingChannel": channel,
            "username": "viewer",
            "id": world.user_id("viewer"),
        }
        await watcher.close()

    run(scenario())


def test_second_connection_of_a_user_is_not_a_new_join(world: World) -> None:
    """UserJoin/UserLeave track users: a second tab neither joins nor leaves again."""

    async def scenario() -> None:
        channel = world.channel_of("moderator")
        watcher = await world.join(None, channel)
        first = await world.join("viewer", channel)
        await watcher.event("UserJoin")
        second = await world.join("viewer", channel, node=1)
        await watcher.no_event("UserJoin")
        await world.disconnect(second, node=1)
        await watcher.no_event("UserLeave")
        await first.close()
        assert (await watcher.event("UserLeave"))["username"] == "viewer"
        await watcher.close()

    run(scenario())


def test_scoped_token_key_cannot_chat(world: World) -> None:
    """A key fetched with a bearer token lacking chat:chat authenticates but cannot send."""
    client = world.rest("viewer2")
    response = client.get(
        "/oauth/authorize",
        params={
            "response_type": "token",
            "client_id": "explorer-toolkit",
            "redirect_uri": "http://127.0.0.1/oauth/callback",
            "scope": "chat:connect",
            "state": "s",
        },
    )
    token = parse_qs(urlsplit(response.headers["location"]).fragment)["access_token"][0]
    bearer = httpx.get(
        f"{world.base_url}/chats/{world.channel}",
        headers={"Authorization": f"Bearer {token}"},
        timeout=10,
    ).json()
    assert bearer["permissions"] == ["connect"]
    assert bearer["authkey"] != world.details("viewer2")["authkey"]

    async def scenario() -> None:
        chat = await world.connect()
        user = world.user_id("viewer2")
        assert (await chat.ok("auth", world.channel, user, bearer["authkey"]))["authenticated"]
        error = await chat.error("msg", "hi")
        assert error["code"] == 4002 and "chat" in error["message"]
        await chat.close()

    run(scenario())


def test_keys_are_fetched_fresh_per_channel(world: World) -> None:
    """GET /chats/{id} issues distinct keys per channel, each valid only for its channel."""
    first = world.details("viewer", world.channel)["authkey"]
    second = world.details("viewer", world.channel_of("viewer2"))["authkey"]
    assert first != second and len(first) >= 16
    anonymous = world.details(None)
    assert "authkey" not in anonymous and anonymous["permissions"] == []
    assert anonymous["endpoints"] == world.platform.chat_endpoints
