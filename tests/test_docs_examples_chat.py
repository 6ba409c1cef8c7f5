"""The historical developer docs' own examples for follow notifications, partner emotes,
CatBot's censored message, the achievement event and ``giveaway:start``, replayed against a
running platform and compared key by key and type by type.

Each example is kept verbatim in ``tests/fixtures/docs/`` with its source: repository
``mixer/developer-docs`` at commit ``1f7f41da10c4a2537f8706484372329d0bc06921``, the page's
path and the example's heading (user_notify.json: ``pages/02.reference/02.constellation/
03.events/02.live/20.User Notify/doc.md``; user_achievement.json: ``.../18.User Achievement/
doc.md``; chat_message_censored.json: ``pages/02.reference/01.chat/04.events/02.ChatMessage/
doc.md``, "Censored Message"; emoticon_external.json: ``pages/01.guides/02.chat/04.Emotes/
doc.md``, "Subscription & Verified Channel Emote"; giveaway_start_reply.json: ``pages/
02.reference/01.chat/03.methods/11.giveawaystart/doc.md``, "Response").
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from explorer.emulator.chat.catbot import Catbot
from tests.chatkit import Chat, World, run
from tests.test_live_constellation import opened
from tests.test_platform_oauth import implicit_token

FIXTURES = Path(__file__).parent / "fixtures" / "docs"


def documented(name: str) -> Any:
    """The docs' example kept in fixture ``name``."""
    return orjson.loads((FIXTURES / name).read_bytes())["example"]


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "integer" if isinstance(value, int) else "number"
    return {str: "string", list: "array", dict: "object"}.get(type(value), "null")


def differences(actual: Any, example: Any, path: str = "") -> list[str]:
    """Where ``actual`` differs from the docs' ``example`` in its keys or JSON types (empty
    when it has exactly the example's keys, each of the example's type, all the way down).

    A ``null`` in the example admits any type (the docs show an empty field of a type they do
    not name), and an empty object or list in the example admits any content.
    """
    if example is None:
        return []
    if _kind(actual) != _kind(example):
        return [f"{path or '.'}: {_kind(actual)}, documented {_kind(example)}"]
    if isinstance(example, dict) and example:
        extra = [f"{path}.{key}: not documented" for key in actual if key not in example]
        missing = [f"{path}.{key}: missing" for key in example if key not in actual]
        return (
            extra
            + missing
            + [
                found
                for key in example
                if key in actual
                for found in differences(actual[key], example[key], f"{path}.{key}")
            ]
        )
    if isinstance(example, list) and example:
        if len(actual) != len(example):
            return [f"{path}: {len(actual)} items, documented {len(example)}"]
        return [
            found
            for index, (item, shown) in enumerate(zip(actual, example, strict=True))
            for found in differences(item, shown, f"{path}[{index}]")
        ]
    return []


def test_differences_name_extra_missing_and_retyped_keys() -> None:
    """The comparison reports an undocumented key, a missing one and a changed type."""
    example = {"id": "x", "n": 1, "user": {"bio": None, "level": 2}}
    actual = {"id": 7, "extra": True, "user": {"bio": "hi"}}
    assert differences(actual, example) == [
        ".extra: not documented",
        ".n: missing",
        ".id: integer, documented string",
        ".user.level: missing",
    ]


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    """One platform for this module (its tests use different channels' settings)."""
    running = World.start(chat_rate=1000.0, chat_burst=1000)
    yield running
    running.stop()


def _token(world: World, username: str, scope: str) -> str:
    return implicit_token(world.rest(username), scope)["access_token"]


async def _live(world: World, username: str, topic: str, action: Any) -> Any:
    """The payload of the live event ``topic`` that ``action`` (a blocking call, run in a
    thread) causes, as ``username`` subscribed with an OAuth token receives it."""
    token = _token(world, username, "notification:view:self")
    socket = await opened(world.platform, {"Authorization": f"Bearer {token}"})
    try:
        assert (await socket.call("livesubscribe", {"events": [topic]}))["error"] is None
        await asyncio.to_thread(action)
        return await socket.live(topic)
    finally:
        await socket.ws.close()


def test_a_follow_notifies_the_channel_owner_as_the_docs_show(world: World) -> None:
    """A follow sends the owner user:{id}:notify with the docs' Notification, key for key,
    and REST answers the same object for its id."""
    owner, follower = world.user_id("streamer"), world.user_id("viewer2")
    path = f"/channels/{world.channel}/follow"
    fan = world.rest("viewer2")
    assert fan.delete(path).status_code == 200

    def follow() -> None:
        assert fan.put(path).status_code == 200

    sent = run(_live(world, "streamer", f"user:{owner}:notify", follow))
    assert differences(sent, documented("user_notify.json")) == []
    assert uuid.UUID(sent["id"]) and sent["userId"] == owner and sent["trigger"] == ""
    assert sent["type"] == sent["payload"]["type"] == "follow"
    assert sent["payload"]["channelOwnerId"] == world.channel
    assert sent["payload"]["triggeringUser"]["id"] == follower
    assert world.rest("streamer").get(f"/notifications/{sent['id']}").json() == sent


def test_the_achievement_event_carries_the_earnings_id(world: World) -> None:
    """user:{id}:achievement has the docs' AchievementEarning keys and types, ``id`` too."""
    me = world.user_id("viewer2")

    def earn() -> None:
        made = world.rest("viewer2").post("/interactive/games", json={"name": "docs"})
        assert made.status_code == 201, made.text

    sent = run(_live(world, "viewer2", f"user:{me}:achievement", earn))
    assert differences(sent, documented("user_achievement.json")) == []
    assert sent["user"] == me and sent["achievement"] == "game-creator"


def test_a_channel_emote_is_the_docs_external_emoticon(world: World) -> None:
    """A code of the channel's pack typed as ``:code`` is an external emoticon component as
    the docs show it; moving it moves the next message's coordinates, removing it makes text."""
    example = documented("emoticon_external.json")
    code = example["text"].removeprefix(":")
    pack_path = "/channels/streamer/emoticons"
    owner = world.rest("streamer")

    def set_pack(coords: dict[str, int] | None) -> None:
        reply = owner.patch(pack_path, json={"emoticons": {code: coords}})
        assert reply.status_code == 200, reply.text

    async def said(chat: Any, text: str) -> list[dict[str, Any]]:
        components: list[dict[str, Any]] = (await chat.ok("msg", text))["message"]["message"]
        return components

    async def scenario() -> list[list[dict[str, Any]]]:
        viewer = await world.join("viewer")
        await asyncio.to_thread(set_pack, example["coords"])
        first = await said(viewer, f"nice {example['text']}")
        await asyncio.to_thread(set_pack, {**example["coords"], "x": 48})
        moved = await said(viewer, example["text"])
        await asyncio.to_thread(set_pack, None)
        removed = await said(viewer, example["text"])
        await viewer.close()
        return [first, moved, removed]

    first, moved, removed = run(scenario())
    emote = first[1]
    assert differences(emote, example) == []
    assert {k: v for k, v in emote.items() if k != "pack"} == {
        k: v for k, v in example.items() if k != "pack"
    }
    assert moved[1]["coords"]["x"] == 48
    assert removed == [{"type": "text", "data": example["text"], "text": example["text"]}]


async def _heard(chat: Chat, message_id: str) -> dict[str, Any]:
    """The ChatMessage with ``message_id`` that ``chat`` receives (bots may chat meanwhile)."""
    while (data := await chat.event("ChatMessage"))["id"] != message_id:
        pass
    return data


def _censoring(world: World, preferences: dict[str, Any]) -> None:
    reply = world.rest("streamer").post(f"/channels/{world.channel}/preferences", json=preferences)
    assert reply.status_code == 200, reply.text


def test_a_censored_message_matches_the_docs_and_reaches_only_moderators(world: World) -> None:
    """With a banned word, a viewer's message reaches the owner and mods as the docs' censored
    ChatMessage (and its sender's reply says so); another viewer gets nothing, history too."""
    example = documented("chat_message_censored.json")
    _censoring(world, {"channel:bannedwords": ["bad"]})

    async def scenario() -> tuple[Any, Any, Any, list[Any]]:
        owner = await world.join("streamer")
        mod = await world.join("moderator")
        onlooker = await world.join("viewer2")
        sender = await world.join("viewer")
        reply = await sender.ok("msg", example["message"]["message"][0]["text"])
        to_owner = await _heard(owner, reply["id"])
        to_mod = await _heard(mod, reply["id"])
        await onlooker.ok("ping")  # every event published before it came before its reply
        assert all(p.get("data", {}).get("id") != reply["id"] for p in onlooker.events)
        history = await onlooker.ok("history", 100)
        for chat in (owner, mod, onlooker, sender):
            await chat.close()
        return reply, to_owner, to_mod, history

    try:
        reply, to_owner, to_mod, history = run(scenario())
    finally:
        _censoring(world, {"channel:bannedwords": None})
    assert differences(to_owner, example) == []
    assert to_owner["message"] == example["message"]
    assert to_mod == to_owner and reply == to_owner
    assert all(said["id"] != reply["id"] for said in history)


def test_catbot_levels_filter_their_words_and_spare_moderators(world: World) -> None:
    """At level 2 a viewer's insult is censored and a mod's is not; at level 0 it passes."""

    async def censored(username: str, text: str) -> bool:
        chat = await world.join(username)
        data = await chat.ok("msg", text)
        await chat.close()
        return data["message"]["meta"].get("censored", False) is True

    _censoring(world, {"channel:catbot:level": 2})
    try:
        at_two = run(censored("viewer", "what an idiot")), run(censored("moderator", "idiot"))
    finally:
        _censoring(world, {"channel:catbot:level": None})
    assert at_two == (True, False)
    assert run(censored("viewer", "what an idiot")) is False


def test_each_catbot_level_adds_to_the_one_below() -> None:
    """A level filters its own words and every lower level's, as whole words in any case."""
    assert not Catbot.of(0, ()).blocks("kys", ["User"])
    assert Catbot.of(1, ()).blocks("just KYS", ["User"])
    assert Catbot.of(4, ()).blocks("kys", ["User"]) and Catbot.of(4, ()).blocks("damn", ["User"])
    assert not Catbot.of(3, ()).blocks("damn", ["User"])
    assert not Catbot.of(4, ()).blocks("hello shell", ["User"])
    assert Catbot.of(0, ("bad word",)).blocks("a Bad Word here", ["User"])
    assert not Catbot.of(4, ("bad",)).blocks("bad damn", ["Mod", "User"])


def test_giveaway_start_replies_the_docs_text(world: World) -> None:
    """``giveaway:start`` replies exactly the docs' example (but its id)."""
    example = documented("giveaway_start_reply.json")

    async def scenario() -> dict[str, Any]:
        owner = await world.join("streamer")
        viewer = await world.join("viewer")
        await viewer.ok("msg", "pick me")
        reply = await owner.call("giveaway:start")
        for chat in (owner, viewer):
            await chat.close()
        return reply

    reply = run(scenario())
    assert differences(reply, example) == []
    assert {**reply, "id": example["id"]} == example
