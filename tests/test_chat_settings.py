"""A channel's chat settings (emoticon pack, CatBot) as rooms keep them: a change told to one
process reaches the rooms of another through the broker they share."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from explorer.emulator.brokers.inprocess import InProcessBroker
from explorer.emulator.chat import settings
from explorer.emulator.chat.cluster import ChatCluster
from explorer.emulator.context import Config, Services
from tests.databases import open_services


@pytest.fixture
def services() -> Iterator[Services]:
    """A small world in memory."""
    opened = open_services(":memory:", Config(channels=20))
    yield opened
    opened.store.close()


def test_a_pack_change_told_to_one_process_reaches_another(services: Services) -> None:
    """Two processes' clusters on one broker: the room the other one kept forgets its pack
    when this one is told of a change, and reads the new emoticon."""
    broker = InProcessBroker()  # stands for the Redis fan-out between the two processes
    here = ChatCluster(services, "127.0.0.1", 0, broker)
    there = ChatCluster(services, "127.0.0.1", 1, broker)
    channel = int(services.store.scalar("SELECT MIN(id) FROM channels"))
    room = there.rooms.get(channel)
    assert room is not None and settings.of(room).emoticons == {}
    broker.subscribe(channel, there.nodes[0])  # a member of the room is on that node
    with services.store.transaction() as conn:
        conn.execute(
            "INSERT INTO channel_emoticons (channelId, code, x, y, width, height, updatedAt) "
            "VALUES (?, 'wave', 0, 0, 24, 24, '2020-01-01T00:00:00.000Z')",
            (channel,),
        )
    assert settings.of(room).emoticons == {}  # kept, as every message reads it
    here.settings_changed(channel)
    assert settings.of(room).emoticons[":wave"]["coords"]["width"] == 24
