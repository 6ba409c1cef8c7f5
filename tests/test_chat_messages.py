"""Chat messages: msg components, whispers, emoticon images, history and its persistence."""

from __future__ import annotations

import base64
import struct
import time
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from explorer.emulator import Platform
from explorer.emulator.backfill import HISTORY_CHANNELS, seed_history
from explorer.emulator.categories import opening
from explorer.emulator.db import chat_history
from explorer.emulator.db.engine import Store
from explorer.emulator.world import seed_store
from tests.chatkit import World, run


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    """One platform for this module."""
    running = World.start(chat_rate=1000.0, chat_burst=1000)
    yield running
    running.stop()


def test_msg_reaches_everyone_including_the_sender(world: World) -> None:
    """msg sends ChatMessage to every member (any node) and the sender; the reply matches."""

    async def scenario() -> None:
        channel = world.channel_of("viewer")
        sender = await world.join("viewer", channel)
        other = await world.join("viewer2", channel, node=1)
        anon = await world.join(None, channel)
        reply = await sender.ok("msg", "hello chat")
        for chat in (sender, other, anon):
            assert await chat.event("ChatMessage") == reply
        assert reply["channel"] == channel and reply["user_name"] == "viewer"
        assert reply["user_id"] == world.user_id("viewer")
        assert reply["user_roles"] == ["Owner", "User"]
        assert reply["message"] == {
            "message": [{"type": "text", "data": "hello chat", "text": "hello chat"}],
            "meta": {},
        }
        assert len(reply["id"]) == 36 and isinstance(reply["user_level"], int)
        for chat in (sender, other, anon):
            await chat.close()

    run(scenario())


def test_msg_parses_components(world: World) -> None:
    """Text becomes text, tag (known user), emoticon (builtin pack) and link components."""

    async def scenario() -> None:
        chat = await world.join("viewer2", world.channel_of("viewer2"))
        data = await chat.ok("msg", "Hi @viewer, look :) https://example.org/clip @nobody_here")
        assert data["message"]["message"] == [
            {"type": "text", "data": "Hi ", "text": "Hi "},
            {"type": "tag", "text": "@viewer", "username": "viewer", "id": world.user_id("viewer")},
            {"type": "text", "data": ", look ", "text": ", look "},
            {
                "type": "emoticon",
                "source": "builtin",
                "pack": "default",
                "coords": {"x": 0, "y": 0, "width": 24, "height": 24},
                "text": ":)",
            },
            {"type": "text", "data": " ", "text": " "},
            {"type": "link", "url": "https://example.org/clip", "text": "example.org/clip"},
            {"type": "text", "data": " @nobody_here", "text": " @nobody_here"},
        ]
        await chat.close()

    run(scenario())


def test_me_sets_meta_me(world: World) -> None:
    """A message starting with /me is an action: meta.me true, text without the command."""

    async def scenario() -> None:
        chat = await world.join("viewer", world.channel_of("viewer"))
        data = await chat.ok("msg", "/me waves")
        assert data["message"] == {
            "message": [{"type": "text", "data": "waves", "text": "waves"}],
            "meta": {"me": True},
        }
        assert (await chat.event("ChatMessage"))["message"]["meta"] == {"me": True}
        await chat.close()

    run(scenario())


def test_whisper_reaches_only_sender_and_target(world: World) -> None:
    """whisper sends a ChatMessage with meta.whisper and target to sender and target only."""

    async def scenario() -> None:
        channel = world.channel_of("streamer")
        sender = await world.join("viewer", channel)
        target = await world.join("viewer2", channel, node=1)
        bystander = await world.join("moderator", channel)
        anon = await world.join(None, channel, node=1)
        reply = await sender.ok("whisper", "viewer2", "psst")
        assert reply["target"] == "viewer2"
        assert reply["message"]["meta"] == {"whisper": True}
        assert await sender.event("ChatMessage") == reply
        assert await target.event("ChatMessage") == reply
        await bystander.no_event("ChatMessage")
        await anon.no_event("ChatMessage")
        history = await anon.ok("history", 100)
        assert reply["id"] not in {m["id"] for m in history}
        for chat in (sender, target, bystander, anon):
            await chat.close()

    run(scenario())


def test_whisper_needs_a_present_known_user(world: World) -> None:
    """Whispering an unknown user or one not in the chat answers 4005."""

    async def scenario() -> None:
        chat = await world.join("viewer", world.channel_of("moderator"))
        assert (await chat.error("whisper", "no_such_user_x", "hi"))["code"] == 4005
        missing = await chat.error("whisper", "staff", "hi")
        assert missing["code"] == 4005 and "not in this chat" in missing["message"]
        await chat.close()

    run(scenario())


def png_pixels(data: bytes) -> tuple[int, int]:
    """Width and height of a PNG, after checking its signature, chunks and pixel data."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    offset, size, idat = 8, (0, 0), b""
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        kind = data[offset + 4 : offset + 8]
        body = data[offset + 8 : offset + 8 + length]
        (crc,) = struct.unpack(">I", data[offset + 8 + length : offset + 12 + length])
        assert zlib.crc32(kind + body) == crc
        if kind == b"IHDR":
            size = struct.unpack(">II", body[:8])
        elif kind == b"IDAT":
            idat += body
        offset += 12 + length
    width, height = size
    assert len(zlib.decompress(idat)) == height * (1 + 4 * width)
    return width, height


def test_attach_emotes_adds_png_images(world: World) -> None:
    """After attachEmotes, ChatMessages carry meta.emoticons of base64 PNGs; others do not."""

    async def scenario() -> None:
        channel = world.channel_of("staff")
        attached = await world.join("viewer", channel)
        plain = await world.join(None, channel, node=1)
        packet = await attached.call("attachEmotes")
        assert packet == {"type": "reply", "error": None, "id": packet["id"]}
        sent = await attached.ok("msg", "nice <3 :D")
        images = (await attached.event("ChatMessage"))["message"]["meta"]["emoticons"]
        assert sent["message"]["meta"]["emoticons"] == images
        assert set(images) == {"<3", ":D"}
        for image in images.values():
            assert png_pixels(base64.b64decode(image)) == (24, 24)
        assert (await plain.event("ChatMessage"))["message"]["meta"] == {}
        history = await attached.ok("history", 1)
        assert history[0]["message"]["meta"]["emoticons"] == images
        await attached.close()
        await plain.close()

    run(scenario())


def test_history_is_oldest_first_and_limited(world: World) -> None:
    """history [n] returns the latest n messages oldest first; at most 100."""

    async def scenario() -> None:
        channel = world.channel_of("viewer2")
        chat = await world.join("staff", channel)
        sent = [(await chat.ok("msg", f"line {i}"))["id"] for i in range(105)]
        latest = await chat.ok("history", 3)
        assert [m["id"] for m in latest] == sent[-3:]
        assert [m["id"] for m in await chat.ok("history", 500)] == sent[-100:]
        assert await chat.ok("history", 0) == []
        await chat.close()

    run(scenario())


def test_history_excludes_deleted_messages(world: World) -> None:
    """Deleted messages drop out of history."""

    async def scenario() -> None:
        chat = await world.join("viewer2", world.channel_of("viewer"))
        keep = await chat.ok("msg", "keep me")
        gone = await chat.ok("msg", "delete me")
        assert await chat.ok("deleteMessage", gone["id"]) == "Message deleted."
        ids = [m["id"] for m in await chat.ok("history", 10)]
        assert keep["id"] in ids and gone["id"] not in ids
        await chat.close()

    run(scenario())


def test_seeded_history_in_popular_channels(world: World) -> None:
    """The most popular channels have seeded history before anyone chats."""

    async def scenario() -> None:
        chat = await world.join(None, world.channel)
        history = await chat.ok("history", 100)
        assert 20 <= len(history) <= 100
        assert all(m["channel"] == world.channel for m in history)
        assert any(c["type"] != "text" for m in history for c in m["message"]["message"])
        await chat.close()

    run(scenario())


def test_seeded_history_is_deterministic() -> None:
    """Seeding history is a pure function of the seed and fills every history channel."""

    def contents(seed: int) -> list[str]:
        store = Store(":memory:", [chat_history.SCHEMA])
        seed_store(store, seed, 400, lambda password: "x", opening)
        seed_history(store, seed, 1_700_000_000.0)
        rows = [r[0] for r in store.all("SELECT data FROM chat_messages ORDER BY seq")]
        store.close()
        return rows

    assert contents(3) == contents(3) != contents(4)
    store = Store(":memory:", [chat_history.SCHEMA])
    seed_store(store, 0, 5000, lambda password: "x", opening)
    count = seed_history(store, 0, time.time())
    channels = store.scalar("SELECT COUNT(DISTINCT channelId) FROM chat_messages")
    assert channels == HISTORY_CHANNELS and count >= 20 * HISTORY_CHANNELS
    store.close()


def test_history_survives_a_restart(make_platform: Callable[..., Platform], tmp_path: Path) -> None:
    """Messages that got a reply are in history after the platform restarts on its db file."""
    db = tmp_path / "platform.db"
    first = World(make_platform(db=db, rate_limits=False))

    async def say() -> list[str]:
        chat = await first.join("viewer", first.channel_of("viewer"))
        ids = [(await chat.ok("msg", f"durable {i}"))["id"] for i in range(3)]
        await chat.close()
        return ids

    sent = run(say())
    first.stop()
    second = World(make_platform(db=db, rate_limits=False))

    async def read() -> list[str]:
        chat = await second.join(None, second.channel_of("viewer"))
        ids = [m["id"] for m in await chat.ok("history", 100)]
        await chat.close()
        return ids

    assert run(read())[-3:] == sent
    second.stop()
