"""Watching many channels (issue 16): nothing missing, nothing doubled.

``api.watch(top=200)`` watches the 200 busiest simulated channels while an independent
observer, a plain websockets client per channel, sees the same channels. The observer joins
after the watch and leaves before it, so every message it saw was said while the watch was
joined; in between one chat node is stopped for a few seconds (the observer stays on the other
node), so the watch's chats on that node reconnect and fill what they missed from history. The
figures: messages the observer saw, how many of those are missing from the watch's combined
log, and how many the log holds twice (by message id per channel). Goal: 0 and 0.

The platform runs in this process (its own thread and loop), the watch on the toolkit's loop,
the observer on a third loop; rate limits are off so the observer's own joins are not
throttled. Run with ``python -m benchmarks.watch``; every phase is bounded in time.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import Counter
from typing import Any

import httpx
import orjson
from websockets.asyncio.client import ClientConnection, connect

import explorer
from explorer.collect.watch import Watch
from explorer.emulator import start

CHANNELS = 200
#: Seconds the observer watches, the node outage starting a third of the way in.
RUN = 15.0
OUTAGE = 3.0
#: Seconds the watch gets after the observer left to receive what the observer saw.
GRACE = 15.0
#: Simulated chat: messages per second over all channels, and at most in one.
SIM_RATE = 400.0
SIM_CHANNEL_RATE = 10.0


class Observer:
    """One plain websockets connection per channel, all on one node, recording the ids of the
    ChatMessages each sees; runs on its own thread and loop."""

    def __init__(self, endpoint: str, channels: list[int]) -> None:
        self.endpoint = endpoint
        self.channels = channels
        self.seen: dict[int, list[str]] = {channel: [] for channel in channels}
        self.joined = threading.Event()
        self._stop: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread = threading.Thread(target=asyncio.run, args=(self._main(),), daemon=True)

    def start(self) -> None:
        """Connect every channel; returns once all are joined."""
        self._thread.start()
        if not self.joined.wait(60):
            raise TimeoutError("the observer did not join in time")

    def stop(self) -> None:
        """Leave every channel and wait for the thread."""
        assert self._loop is not None and self._stop is not None
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(30)

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        sockets = await asyncio.gather(*(self._join(c) for c in self.channels))
        readers = [
            asyncio.create_task(self._read(ws, c))
            for ws, c in zip(sockets, self.channels, strict=True)
        ]
        self.joined.set()
        await self._stop.wait()
        for reader in readers:
            reader.cancel()
        await asyncio.gather(*readers, return_exceptions=True)
        await asyncio.gather(*(ws.close() for ws in sockets), return_exceptions=True)

    async def _join(self, channel: int) -> ClientConnection:
        ws = await connect(self.endpoint, max_size=None)
        packet = {"type": "method", "method": "auth", "arguments": [channel], "id": 1}
        await ws.send(orjson.dumps(packet).decode())
        while True:
            frame = orjson.loads(await asyncio.wait_for(ws.recv(), 30))
            if frame.get("type") == "reply":
                if frame.get("error") is not None:
                    raise RuntimeError(f"observer auth refused in {channel}: {frame['error']}")
                return ws
            self._note(channel, frame)

    async def _read(self, ws: ClientConnection, channel: int) -> None:
        async for frame in ws:
            self._note(channel, orjson.loads(frame))

    def _note(self, channel: int, packet: dict[str, Any]) -> None:
        data = packet.get("data")
        if packet.get("event") == "ChatMessage" and isinstance(data, dict) and "target" not in data:
            self.seen[channel].append(str(data["id"]))


def control(root_url: str, node: int, action: str) -> None:
    """Stop or start chat node ``node``."""
    httpx.post(f"{root_url}/_emulator/chat/nodes/{node}/{action}", timeout=10).raise_for_status()


def logged(watch: Watch) -> dict[int, Counter[str]]:
    """Message ids per channel in the watch's log, with how often each is there."""
    messages = watch.messages()
    found: dict[int, Counter[str]] = {}
    for channel, ids in messages.groupby("channel")["message_id"]:
        found[int(channel)] = Counter(ids)
    return found


def missing(observer: Observer, found: dict[int, Counter[str]]) -> int:
    """Messages the observer saw that the watch's log lacks."""
    return sum(
        sum(1 for m in ids if m not in found.get(channel, {}))
        for channel, ids in observer.seen.items()
    )


def run() -> dict[str, float]:
    """Watch, observe, stop a node meanwhile, compare; the figures."""
    with start(
        rate_limits=False, simulate=True, sim_rate=SIM_RATE, sim_channel_rate=SIM_CHANNEL_RATE
    ) as platform:
        api = explorer.connect(platform.base_url, progress=False)
        started = time.perf_counter()
        watch = api.watch(top=CHANNELS, reconnect_delay=0.5)
        joined = time.perf_counter() - started
        try:
            observer = Observer(platform.chat_endpoints[1], watch.channels)
            observer.start()
            time.sleep(RUN / 3)
            control(platform.root_url, 0, "stop")
            time.sleep(OUTAGE)
            control(platform.root_url, 0, "start")
            time.sleep(RUN - RUN / 3 - OUTAGE)
            observer.stop()
            deadline = time.monotonic() + GRACE
            while missing(observer, found := logged(watch)) and time.monotonic() < deadline:
                time.sleep(0.2)
            stats = watch.stats()
        finally:
            watch.close()
            api.close()
    doubled = sum(count - 1 for ids in found.values() for count in ids.values() if count > 1)
    return {
        "channels": len(stats),
        "joined_s": joined,
        "seen": sum(len(ids) for ids in observer.seen.values()),
        "missing": missing(observer, found),
        "doubled": doubled,
        "events": int(stats["events"].sum()),
        "reconnects": int(stats["reconnects"].sum()),
        "gaps": int(stats["gaps"].sum()),
        "failed": int((stats["state"] == "failed").sum()),
    }


def main() -> None:
    """Print what the observer saw against the watch's log."""
    r = run()
    print(
        f"Watch of the {r['channels']:.0f} busiest simulated channels ({RUN:g} s observed, chat "
        f"node 0 stopped for {OUTAGE:g} s meanwhile)"
    )
    print(f"  joined in                  {r['joined_s']:>10.2f} s ({r['failed']:.0f} failed)")
    print(f"  events in the watch log    {r['events']:>10,.0f}")
    print(f"  reconnects, possible gaps  {r['reconnects']:>10,.0f}, {r['gaps']:.0f}")
    print(f"  messages the observer saw  {r['seen']:>10,.0f}")
    print(f"  missing from the watch log {r['missing']:>10,.0f}   goal 0")
    print(f"  doubled in the watch log   {r['doubled']:>10,.0f}   goal 0")


if __name__ == "__main__":
    main()
