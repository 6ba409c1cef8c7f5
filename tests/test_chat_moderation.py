"""Chat permissions per role, and the moderation methods: timeout, purge, delete, clear,
giveaways, and role changes arriving as UserUpdate."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.chatkit import Chat, World, run
from tests.clocks import ManualClock

OK = 0


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    """One platform for this module."""
    running = World.start(chat_rate=1000.0, chat_burst=1000)
    yield running
    running.stop()


@pytest.fixture(scope="module")
def outsider(world: World) -> str:
    """The name of a world user who is not a demo account (a harmless moderation target)."""
    page = httpx.get(f"{world.base_url}/channels", params={"limit": 100}, timeout=10).json()
    return str(next(c["token"] for c in page if c["userId"] > 5))


def set_roles(world: World, username: str, **change: list[str]) -> None:
    """PATCH the user's roles in the streamer channel, as its owner."""
    response = world.rest("streamer").patch(
        f"/channels/{world.channel}/users/{world.user_id(username)}", json=change
    )
    assert response.status_code == 200, response.text


def code_of(packet: dict[str, Any]) -> int:
    return OK if packet["error"] is None else int(packet["error"]["code"])


def expectations(role: str) -> dict[str, int]:
    """What each method answers for ``role`` (0: success, else the error code)."""
    acting = {"owner": OK, "mod": OK, "viewer": 4002, "anonymous": 4003, "banned": 4002}[role]
    speaking = {"owner": OK, "mod": OK, "viewer": OK, "anonymous": 4003, "banned": 4002}[role]
    return {
        "msg": speaking,
        "vote:choose": {"anonymous": 4003, "banned": 4002}.get(role, 4006),
        "vote:start": acting if acting else 4006,
        "timeout": acting,
        "purge": acting,
        "clearMessages": acting,
        "giveaway:start": acting,
        "deleteMessage": acting,
        "history": OK,
    }


@pytest.mark.parametrize("role", ["owner", "mod", "viewer", "anonymous", "banned"])
def test_permissions_per_role(world: World, outsider: str, role: str) -> None:
    """Owner and Mod may moderate; a viewer may chat; anonymous and Banned may only read."""
    user = {
        "owner": "streamer",
        "mod": "moderator",
        "viewer": "viewer",
        "anonymous": None,
        "banned": "viewer2",
    }[role]
    if role == "banned":
        set_roles(world, "viewer2", add=["Banned"])

    async def scenario() -> dict[str, int]:
        poster = await world.join("staff")
        others = (await poster.ok("msg", "someone else's message"))["id"]
        # A running poll makes vote:start answer 4006 past the permission check (long enough
        # to outlast the test on a loaded machine; a later role finds it still running).
        poll = await poster.call("vote:start", "Running?", ["yes", "no"], 600)
        assert poll["error"] is None or poll["error"]["code"] == 4006, poll
        chat = await world.join(user)
        got = {
            "msg": code_of(await chat.call("msg", "hello")),
            "vote:choose": code_of(await chat.call("vote:choose", 9)),
            "vote:start": code_of(await chat.call("vote:start", "Q?", ["a", "b"], 5)),
            "timeout": code_of(await chat.call("timeout", outsider, "1s")),
            "purge": code_of(await chat.call("purge", outsider)),
            "giveaway:start": code_of(await chat.call("giveaway:start")),
            "deleteMessage": code_of(await chat.call("deleteMessage", others)),
            "history": code_of(await chat.call("history", 1)),
            "clearMessages": code_of(await chat.call("clearMessages")),
        }
        await chat.close()
        await poster.close()
        return got

    try:
        got = run(scenario())
    finally:
        if role == "banned":
            set_roles(world, "viewer2", remove=["Banned"])
    assert got == expectations(role)


def test_banned_refusal_says_uaccess(world: World) -> None:
    """A banned member's msg is refused with code 4002 and message UACCESS."""
    set_roles(world, "viewer2", add=["Banned"])
    try:

        async def scenario() -> dict[str, Any]:
            chat = await world.join("viewer2")
            error = await chat.error("msg", "let me talk")
            await chat.close()
            return error

        assert run(scenario()) == {"code": 4002, "message": "UACCESS", "stacktrace": [], "data": {}}
    finally:
        set_roles(world, "viewer2", remove=["Banned"])


def test_timeout_silences_only_the_target(world: World) -> None:
    """timeout sends UserTimeout only to the target, whose msg is then refused with 4007."""

    async def scenario() -> None:
        mod = await world.join("moderator")
        target = await world.join("viewer")
        target_tab = await world.join("viewer", node=1)
        bystander = await world.join("viewer2", node=1)
        reply = await mod.ok("timeout", "viewer", "30s")
        assert reply == "viewer has been timed out for 30s."
        expected = {
            "user": {
                "user_name": "viewer",
                "user_id": world.user_id("viewer"),
                "user_roles": ["User"],
            },
            "duration": 30_000,
        }
        assert await target.event("UserTimeout") == expected
        assert await target_tab.event("UserTimeout") == expected
        await bystander.no_event("UserTimeout")
        await mod.no_event("UserTimeout")
        error = await target.error("msg", "can I talk?")
        assert error["code"] == 4007
        assert error["message"] in (
            "You are timed out for 30 more seconds.",
            "You are timed out for 29 more seconds.",
        )
        assert (await bystander.ok("msg", "I can"))["user_name"] == "viewer2"
        assert await mod.ok("timeout", "viewer", "clear") == "viewer is no longer timed out."
        assert (await target.ok("msg", "free again"))["user_name"] == "viewer"
        for chat in (mod, target, target_tab, bystander):
            await chat.close()

    run(scenario())


def test_timeout_purges_with_cause(world: World) -> None:
    """A timeout also purges the target's messages: PurgeMessage with moderator and cause."""

    async def scenario() -> None:
        owner = await world.join("streamer")
        target = await world.join("viewer")
        said = await target.ok("msg", "soon gone")
        await owner.ok("timeout", "viewer", 75)
        data = await owner.event("PurgeMessage")
        assert data["user_id"] == world.user_id("viewer")
        assert data["originatingChannel"] == world.channel
        assert data["cause"] == {"type": "timeout", "durationString": "1m15s"}
        assert data["moderator"]["user_name"] == "streamer"
        assert set(data["moderator"]) == {"user_name", "user_id", "user_roles", "user_level"}
        assert said["id"] not in {m["id"] for m in await owner.ok("history", 100)}
        assert (await target.event("UserTimeout"))["duration"] == 75_000
        await owner.ok("timeout", "viewer", "clear")
        await owner.close()
        await target.close()

    run(scenario())


def test_timeout_expires() -> None:
    """A timed-out user can chat again once the duration is over."""
    clock = ManualClock()
    world = World.start(clock=clock)

    async def scenario() -> None:
        owner = await world.join("streamer")
        target = await world.join("viewer2")
        await owner.ok("timeout", "viewer2", "1s")
        refused = await target.error("msg", "now?")
        assert refused["message"] == "You are timed out for 1 more second."
        clock.advance(1)
        assert (await target.ok("msg", "now!"))["user_name"] == "viewer2"
        await owner.close()
        await target.close()

    try:
        run(scenario())
    finally:
        world.stop()


@pytest.mark.parametrize(
    ("duration", "spelled"),
    [("5m", "5m"), ("1h", "1h"), ("1m15s", "1m15s"), ("90", "1m30s"), (3600, "1h"), ("2d", "2d")],
)
def test_timeout_duration_forms(world: World, outsider: str, duration: Any, spelled: str) -> None:
    """Durations are strings like 30s/5m/1m15s/1h/2d or numbers of seconds."""

    async def scenario() -> str:
        owner = await world.join("streamer")
        reply = await owner.ok("timeout", outsider, duration)
        await owner.ok("timeout", outsider, "clear")
        await owner.close()
        return str(reply)

    assert run(scenario()) == f"{outsider} has been timed out for {spelled}."


def test_moderators_cannot_time_out_the_owner(world: World) -> None:
    """A Mod may not time out or purge the owner (or another Mod): 4002."""

    async def scenario() -> None:
        mod = await world.join("moderator")
        assert (await mod.error("timeout", "streamer", "5m"))["code"] == 4002
        assert (await mod.error("purge", "streamer"))["code"] == 4002
        assert (await mod.error("timeout", "no_such_user_zz", "5m"))["code"] == 4005
        await mod.close()

    run(scenario())


def test_purge_removes_a_users_messages(world: World) -> None:
    """purge sends PurgeMessage {user_id, moderator} to everyone; reply has no data."""

    async def scenario() -> None:
        mod = await world.join("moderator")
        target = await world.join("viewer2", node=1)
        said = await target.ok("msg", "spam spam")
        packet = await mod.call("purge", "viewer2")
        assert packet == {"type": "reply", "error": None, "id": packet["id"]}
        for chat in (mod, target):
            data = await chat.event("PurgeMessage")
            assert data["user_id"] == world.user_id("viewer2") and "cause" not in data
        assert said["id"] not in {m["id"] for m in await mod.ok("history", 100)}
        assert (await target.ok("msg", "still allowed"))["user_name"] == "viewer2"
        await mod.close()
        await target.close()

    run(scenario())


def test_users_delete_only_their_own_messages(world: World) -> None:
    """A viewer deletes their own message; someone else's answers 4002; unknown ids 4005."""

    async def scenario() -> None:
        viewer = await world.join("viewer")
        other = await world.join("viewer2")
        mine = await viewer.ok("msg", "oops")
        theirs = await other.ok("msg", "not yours")
        assert await viewer.ok("deleteMessage", mine["id"]) == "Message deleted."
        data = await other.event("DeleteMessage")
        assert data["id"] == mine["id"] and data["originatingChannel"] == world.channel
        assert data["moderator"]["user_name"] == "viewer"
        error = await viewer.error("deleteMessage", theirs["id"])
        assert error["code"] == 4002 and "own" in error["message"]
        assert (await viewer.error("deleteMessage", mine["id"]))["code"] == 4005
        assert (await viewer.error("deleteMessage", "nope"))["code"] == 4005
        await viewer.close()
        await other.close()

    run(scenario())


def test_moderator_deletes_anyones_message(world: World) -> None:
    """A Mod's deleteMessage sends DeleteMessage {id, moderator} to the room."""

    async def scenario() -> None:
        mod = await world.join("moderator")
        viewer = await world.join("viewer", node=1)
        said = await viewer.ok("msg", "borderline")
        assert await mod.ok("deleteMessage", said["id"]) == "Message deleted."
        data = await viewer.event("DeleteMessage")
        assert data["id"] == said["id"] and data["moderator"]["user_roles"] == ["Mod", "User"]
        await mod.close()
        await viewer.close()

    run(scenario())


def test_clear_messages_empties_history(world: World) -> None:
    """clearMessages (clear_messages) sends ClearMessages {clearer}; history is then empty."""

    async def scenario() -> None:
        owner = await world.join("streamer")
        viewer = await world.join("viewer", node=1)
        await viewer.ok("msg", "before the clear")
        assert (await viewer.error("clearMessages"))["code"] == 4002
        assert await owner.ok("clearMessages") == "Messages cleared."
        data = await viewer.event("ClearMessages")
        assert data["originatingChannel"] == world.channel
        assert data["clearer"]["user_name"] == "streamer"
        assert await viewer.ok("history", 100) == []
        await owner.close()
        await viewer.close()

    run(scenario())


def test_giveaway_picks_an_active_chatter(world: World) -> None:
    """giveaway:start picks a present recent chatter and announces them as the owner."""

    async def scenario() -> None:
        mod = await world.join("moderator")
        viewer = await world.join("viewer", node=1)
        await viewer.ok("msg", "pick me")
        assert await mod.ok("giveaway:start") == "Starting a giveaway"
        while True:
            announcement = await viewer.event("ChatMessage")
            if announcement["user_name"] == "streamer":
                break
        tags = [c for c in announcement["message"]["message"] if c["type"] == "tag"]
        assert tags[0]["username"] in ("viewer", "moderator", "viewer2", "staff")
        assert announcement["user_roles"] == ["Owner", "User"]
        history = await viewer.ok("history", 1)
        assert history[0]["id"] == announcement["id"]
        await mod.close()
        await viewer.close()

    run(scenario())


def test_role_change_sends_user_update_and_applies_at_once(world: World) -> None:
    """PATCHing roles sends UserUpdate to the room and changes the member's powers at once."""

    async def scenario() -> None:
        watcher = await world.join(None, node=1)
        member = await world.join("viewer2")
        assert (await member.error("clearMessages"))["code"] == 4002
        set_roles(world, "viewer2", add=["Mod"])
        update = await watcher.event("UserUpdate")
        assert await member.event("UserUpdate") == update
        assert update["user"] == world.user_id("viewer2") and update["username"] == "viewer2"
        assert update["roles"] == ["Mod", "User"] and "timeout" in update["permissions"]
        assert (await member.ok("clearMessages")) == "Messages cleared."
        assert (await member.ok("msg", "as a mod"))["user_roles"] == ["Mod", "User"]
        set_roles(world, "viewer2", remove=["Mod"], add=["Banned"])
        banned = await member.event("UserUpdate")
        assert banned["roles"] == ["Banned"] and banned["permissions"] == ["connect"]
        assert (await member.error("msg", "hello?"))["message"] == "UACCESS"
        await watcher.close()
        await member.close()

    try:
        run(scenario())
    finally:
        set_roles(world, "viewer2", remove=["Mod", "Banned"])


def test_refusals_leave_no_trace(world: World) -> None:
    """A refused msg is neither delivered nor stored."""

    async def scenario() -> None:
        anon: Chat = await world.join(None)
        watcher = await world.join("moderator", node=1)
        await anon.error("msg", "sneaky")
        await watcher.no_event("ChatMessage")
        assert "sneaky" not in str(await watcher.ok("history", 100))
        await anon.close()
        await watcher.close()

    run(scenario())
