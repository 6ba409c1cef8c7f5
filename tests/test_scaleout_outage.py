"""The Redis broker across a restart of a real redis-server, its processes played by brokers in
this one: what a process publishes once Redis answers again reaches the others."""

from __future__ import annotations

import asyncio
import shutil

import pytest

from explorer.emulator.brokers.broker import Delivery
from explorer.emulator.brokers.redis import RedisBroker
from explorer.emulator.fleet import RedisServer
from tests.chatkit import run
from tests.test_scaleout_drills import until
from tests.test_scaleout_order import Recorder

pytestmark = pytest.mark.skipif(
    shutil.which("redis-server") is None,
    reason="no redis-server binary (Debian: apt install redis-server); the test needs a real one",
)

CHANNEL = 7
#: A heartbeat that never comes within a test: only the calls a test makes reach Redis.
QUIET = 3600.0


class NoHistory:
    """A chat history without messages (the test publishes events that are never stored)."""

    def latest(self) -> int:
        return 0

    def latest_by_channel(self, after: int) -> dict[int, int]:
        return {}

    def since(self, channel_id: int, after: int, through: int) -> list[Delivery]:
        return []


def test_events_published_after_a_redis_restart_reach_other_processes() -> None:
    """Redis is killed and started again: every event a process publishes once Redis answers
    again reaches the other processes, though its pool still holds connections from before."""
    server = RedisServer().start()

    async def scenario() -> None:
        publisher, listener = (RedisBroker(server.url, NoHistory(), heartbeat=QUIET) for _ in "ab")
        recorder = Recorder()
        listener.subscribe(CHANNEL, recorder)
        for broker in (publisher, listener):
            await broker.start()
        # Calls made at once leave as many connections in the publisher's pool.
        await asyncio.gather(*(publisher.take(f"warm-up {n}", 1.0, 1.0, 0.0) for n in range(4)))
        await asyncio.to_thread(server.kill)
        await asyncio.to_thread(server.start)
        # The listener has subscribed again once an event of a process started now reaches it.
        probe = RedisBroker(server.url, NoHistory(), heartbeat=QUIET)
        await probe.start()
        for _ in range(100):
            probe.publish(CHANNEL, Delivery("Probe", b"{}"))
            await asyncio.sleep(0.05)
            if recorder.got:
                break
        else:
            raise AssertionError("the listener never subscribed again")
        events = [b"%d" % n for n in range(4)]
        for event in events:
            publisher.publish(CHANNEL, Delivery("PollStart", event))

            def arrived(sent: bytes = event) -> bool:
                return any(d.payload == sent for d in recorder.got if d.event == "PollStart")

            await until(arrived, 5, f"event {event!r} to cross")
        assert [d.payload for d in recorder.got if d.event == "PollStart"] == events
        assert publisher.lost == 0
        for broker in (publisher, listener, probe):
            await broker.close()

    try:
        run(scenario(), timeout=60)
    finally:
        server.stop()
