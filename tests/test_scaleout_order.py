"""The Redis broker's delivery rule, without a Redis server: stored messages reach a process's
subscribers in history order and each once, whatever order their copies arrive in, and those
that never arrive are fetched from the database."""

from __future__ import annotations

import random
from collections.abc import Iterator

import orjson
import pytest

from explorer.emulator.brokers.broker import Delivery
from explorer.emulator.brokers.redis import RedisBroker, pack, unpack
from explorer.emulator.chat.history import StoredBacklog
from explorer.emulator.chat.members import Member
from explorer.emulator.chat.rooms import Rooms
from explorer.emulator.chat.talk import msg
from explorer.emulator.context import Config, Services
from tests.databases import open_services

UNUSED_REDIS = "redis://127.0.0.1:9/0"  # never dialled: the tests feed messages by hand


class Recorder:
    """A subscriber that keeps what it is given."""

    def __init__(self) -> None:
        self.got: list[Delivery] = []

    def deliver(self, channel_id: int, delivery: Delivery) -> None:
        self.got.append(delivery)

    def message_ids(self) -> list[str]:
        return [orjson.loads(d.payload)["data"]["id"] for d in self.got if d.seq]


@pytest.fixture
def services() -> Iterator[Services]:
    """A small world in memory."""
    opened = open_services(":memory:", Config(channels=20))
    yield opened
    opened.store.close()


def test_pack_round_trips_every_field() -> None:
    """A delivery survives pack and unpack, with and without its emoticon variant."""
    plain = Delivery("UserJoin", b'{"a":1}', users=frozenset({3, 1}), skip="k", seq=5, prev=2)
    both = Delivery("ChatMessage", b'{"b":2}', emotes_payload=b'{"c":3}', refresh_user=9)
    for delivery in (plain, both):
        assert unpack(pack("me", delivery)) == ("me", delivery)


def test_stored_messages_arrive_in_history_order_once(services: Services) -> None:
    """Copies from another process arrive shuffled, some twice, some never: the subscriber gets
    every stored message once, in history order; the last one, never published, comes with
    the catch-up."""
    here = RedisBroker(UNUSED_REDIS, StoredBacklog(services.store))
    there = RedisBroker(UNUSED_REDIS, StoredBacklog(services.store))
    channel = int(services.store.scalar("SELECT MIN(id) FROM channels"))
    recorder, sent = Recorder(), Recorder()
    here.subscribe(channel, recorder)
    there.subscribe(channel, sent)
    room = Rooms(services.store, there, services.config, services.clock).get(channel)
    assert room is not None
    speaker = Member(1, "streamer", permissions=frozenset({"chat"}))
    ids = [msg(room, speaker, [f"message {n}"])["id"] for n in range(12)]
    topic = b"explorer:chat:%d" % channel
    copies = [pack(there.origin, delivery) for delivery in sent.got[:-1]]  # the last is lost
    arriving = copies + copies[:4]
    random.Random(7).shuffle(arriving)
    for message in arriving:
        here._receive(topic, message)
    assert recorder.message_ids() == ids[:-1]
    here.catch_up(channel, sent.got[-1].seq)
    assert recorder.message_ids() == ids


def test_own_events_are_not_delivered_twice(services: Services) -> None:
    """A process delivers its own events when it publishes them; their copies coming back
    through Redis are dropped."""
    broker = RedisBroker(UNUSED_REDIS, StoredBacklog(services.store))
    recorder = Recorder()
    broker.subscribe(1, recorder)
    event = Delivery("UserLeave", b"{}")
    broker.publish(1, event)
    broker._receive(b"explorer:chat:1", pack(broker.origin, event))
    assert recorder.got == [event]
