"""A full restart of a platform of processes: what got a reply is still there, and what the
dead processes held in room state is released."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from explorer.emulator.fleet import FLEET_CHANNELS, Fleet
from tests import databases
from tests.chatkit import run
from tests.test_scaleout_drills import channel_of, join, until

pytestmark = pytest.mark.skipif(
    shutil.which("redis-server") is None,
    reason="no redis-server binary (Debian: apt install redis-server); the drills need a real one",
)


def presence_rows(db: Path, channel: int) -> int:
    """Rows of ``chat_presence`` for ``channel`` (any process)."""
    with databases.opened(db) as store:
        count: int = store.scalar(
            "SELECT COUNT(*) FROM chat_presence WHERE channelId = ?", (channel,)
        )
    return count


def test_kill_9_of_every_process_keeps_replied_messages(tmp_path: Path) -> None:
    """Every process (REST, nodes, Redis) is killed with -9 while a user is in the chat: after
    a restart on the same database, history ends with every message that got a reply, and the
    dead processes' presence is released once Redis has been up for two registration
    lifetimes."""
    db = tmp_path / "platform.db"
    with Fleet(databases.target(db, channels=FLEET_CHANNELS), nodes=2) as fleet:
        channel = channel_of(fleet, "viewer")

        async def say() -> list[str]:
            chat = await join(fleet, fleet.nodes[0], channel, "viewer2")
            return [(await chat.ok("msg", f"durable {i}"))["id"] for i in range(20)]

        sent = run(say())  # the chat stays open: its node dies with it
        for child in (*fleet.nodes, fleet.rest):
            assert child is not None
            child.kill()
        fleet.redis.kill()
    assert presence_rows(db, channel) == 1

    with Fleet(databases.target(db), nodes=2) as again:

        async def read() -> list[str]:
            chat = await join(again, again.nodes[1], channel, None)
            ids = [message["id"] for message in await chat.ok("history", 100)]
            await chat.close()
            return ids

        assert run(read())[-20:] == sent

        gone = "the dead processes' presence to be released"
        run(until(lambda: presence_rows(db, channel) == 0, 20, gone), timeout=25)
