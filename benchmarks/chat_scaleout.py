"""Chat scale-out benchmark (issue 8), loopback only, every loop bounded in count and time.

1,000 chat clients over 50 channels, for a fixed duration, against two platforms in the same
run: three chat-node processes sharing rooms through Redis (plus the REST process), and one
process whose three chat nodes share rooms in process. Each channel has 20 members spread over
the three nodes: one signed-in sender and 19 anonymous readers. Every sender sends one message
every ``INTERVAL`` seconds (waiting for each reply) for ``DURATION`` seconds, stamped with its
send time; every member, the sender included, counts the messages of its channel it receives
and their delivery latency (receive time minus send time, one host clock). After a
``DRAIN`` period for messages in flight, the table shows per platform: messages sent (each got
its reply, so each is stored), deliveries expected (sent times 20), delivered, their ratio
(goal 1.0: nothing lost), and p50/p99 delivery latency (goal p99 < 100 ms).

The clients run in two child processes (``python -m benchmarks.chat_scaleout clients``, 500
clients each, a spec on stdin), so that their cost does not land on the servers. They speak the
websockets sans-I/O protocol over plain asyncio transports, cheap per frame. The Redis platform
needs ``redis-server`` (Debian: ``apt install redis-server``); run with ``python -m
benchmarks.chat_scaleout``.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any, cast

import orjson
from websockets.client import ClientProtocol
from websockets.frames import Frame, Opcode
from websockets.http11 import Response
from websockets.uri import parse_uri

import explorer
from explorer.emulator.fleet import Fleet, spawn, wait_for
from explorer.emulator.server import run_loop

CHANNELS = 50
MEMBERS = 20
NODES = 3
CHILDREN = 2
DURATION = 10.0
INTERVAL = 0.2
DRAIN = 3.0
#: Longest wait for a child to connect its clients, and for a reply.
SETUP_TIMEOUT = 60.0
REPLY_TIMEOUT = 10.0
DEMO_USERS = ("streamer", "moderator", "viewer", "viewer2", "staff")
MARK = "bench "


# --- the child process: members ---------------------------------------------------------


class Member(asyncio.Protocol):
    """One chat client: a websocket on an asyncio transport, counting its channel's benchmark
    messages and their latencies into ``tally``."""

    def __init__(self, url: str, channel: int, tally: Tally) -> None:
        self.ws = ClientProtocol(parse_uri(url), max_size=None)
        self.channel = channel
        self.tally = tally
        self.transport: asyncio.Transport | None = None
        running = asyncio.get_running_loop()
        self.opened: asyncio.Future[None] = running.create_future()
        self.waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.next_id = 0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)
        self.ws.send_request(self.ws.connect())
        self._flush()

    def data_received(self, data: bytes) -> None:
        self.ws.receive_data(data)
        for event in self.ws.events_received():
            if isinstance(event, Response):
                self.opened.set_result(None)
            elif isinstance(event, Frame) and event.opcode is Opcode.TEXT:
                self._text(bytes(event.data))
        self._flush()  # pongs

    def connection_lost(self, exc: Exception | None) -> None:
        for future in self.waiting.values():
            if not future.done():
                future.set_exception(ConnectionError("the chat node closed the connection"))

    def _flush(self) -> None:
        assert self.transport is not None
        for data in self.ws.data_to_send():
            if data:
                self.transport.write(data)

    def _text(self, payload: bytes) -> None:
        if payload.startswith(b'{"type":"reply"'):
            reply = orjson.loads(payload)
            future = self.waiting.pop(reply["id"], None)
            if future is not None and not future.done():
                future.set_result(reply)
        elif b'"ChatMessage"' in payload[:40]:
            text = orjson.loads(payload)["data"]["message"]["message"][0]["text"]
            if text.startswith(MARK):
                self.tally.received(self.channel, time.time() - int(text[len(MARK) :]) / 1e6)

    async def call(self, method: str, arguments: list[Any]) -> dict[str, Any]:
        """Send a method; its reply packet (ConnectionError when it failed)."""
        self.next_id += 1
        future = asyncio.get_running_loop().create_future()
        self.waiting[self.next_id] = future
        packet = {"type": "method", "method": method, "arguments": arguments, "id": self.next_id}
        self.ws.send_text(orjson.dumps(packet))
        self._flush()
        reply: dict[str, Any] = await asyncio.wait_for(future, REPLY_TIMEOUT)
        if reply["error"] is not None:
            raise ConnectionError(f"{method} failed: {reply['error']}")
        return reply


class Tally:
    """What one child's members sent and received."""

    def __init__(self) -> None:
        self.sent: Counter[int] = Counter()
        self.failed = 0
        self.delivered: Counter[int] = Counter()
        #: Deliveries by latency, in tenths of a millisecond.
        self.latencies: Counter[int] = Counter()

    def received(self, channel: int, latency: float) -> None:
        self.delivered[channel] += 1
        self.latencies[round(latency * 10_000)] += 1


async def join(spec: dict[str, Any], tally: Tally) -> Member:
    """A member connected to its node and authenticated."""
    host, port = spec["endpoint"].removeprefix("ws://").rsplit(":", 1)
    running = asyncio.get_running_loop()
    _, member = await running.create_connection(
        lambda: Member(spec["endpoint"], spec["channel"], tally), host, int(port)
    )
    await asyncio.wait_for(member.opened, REPLY_TIMEOUT)
    await member.call("auth", spec["auth"])
    return member


async def send(member: Member, start: float, stop: float, tally: Tally) -> None:
    """Send a stamped message every INTERVAL seconds from ``start`` until ``stop``."""
    due = start
    while due < stop:
        await asyncio.sleep(max(0.0, due - time.time()))
        try:
            await member.call("msg", [f"{MARK}{time.time_ns() // 1000}"])
            tally.sent[member.channel] += 1
        except (ConnectionError, TimeoutError):
            tally.failed += 1
        due += INTERVAL


async def members(specs: list[dict[str, Any]]) -> dict[str, Any]:
    """Connect every member, say ready, wait for the start time on stdin, run, report."""
    tally = Tally()
    joined: list[Member] = []
    for first in range(0, len(specs), 100):
        joined += await asyncio.gather(*(join(s, tally) for s in specs[first : first + 100]))
    print("ready", flush=True)
    start = float(await asyncio.to_thread(sys.stdin.readline))
    senders = [m for m, s in zip(joined, specs, strict=True) if s["sender"]]
    spread = INTERVAL / max(1, len(senders))
    await asyncio.gather(
        *(send(m, start + i * spread, start + DURATION, tally) for i, m in enumerate(senders))
    )
    await asyncio.sleep(max(0.0, start + DURATION + DRAIN - time.time()))
    for member in joined:
        if member.transport is not None:
            member.transport.close()
    return {
        "sent": tally.sent,
        "failed": tally.failed,
        "delivered": tally.delivered,
        "latencies": tally.latencies,
    }


def _child() -> None:
    box: list[dict[str, Any]] = []

    async def main() -> None:
        box.append(await members(orjson.loads(sys.stdin.readline())))

    run_loop(main())
    print(orjson.dumps(box[0], option=orjson.OPT_NON_STR_KEYS).decode(), flush=True)


# --- the parent: platforms, specs, table -------------------------------------------------


def specs_for(base_url: str, endpoints: list[str]) -> list[list[dict[str, Any]]]:
    """The members of each child: 50 channels of 20, spread over the nodes; the first member
    of each channel is its sender, signed in as one of the demo users."""
    with explorer.connect(base_url, progress=False) as anonymous:
        channels = [int(c) for c in anonymous.channels(max_rows=CHANNELS).index[:CHANNELS]]
    keys: dict[int, list[Any]] = {}
    for index, username in enumerate(DEMO_USERS):
        with explorer.connect(base_url, username=username, password="explorer") as api:
            user_id = int(api.request("GET", "/users/current")["id"])
            for channel in channels[index :: len(DEMO_USERS)]:
                keys[channel] = [channel, user_id, api.channel(channel).chat_details().authkey]
    children: list[list[dict[str, Any]]] = [[] for _ in range(CHILDREN)]
    for c, channel in enumerate(channels):
        for m in range(MEMBERS):
            spec = {
                "endpoint": endpoints[(c + m) % len(endpoints)],
                "channel": channel,
                "auth": keys[channel] if m == 0 else [channel],
                "sender": m == 0,
            }
            children[m * CHILDREN // MEMBERS].append(spec)
    return children


def measure(base_url: str, endpoints: list[str]) -> dict[str, float]:
    """Run the load against one platform; sent, expected, delivered, latency percentiles."""
    specs = specs_for(base_url, endpoints)
    children = [
        subprocess.Popen(
            [sys.executable, "-m", "benchmarks.chat_scaleout", "clients"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in specs
    ]
    try:
        for child, spec in zip(children, specs, strict=True):
            assert child.stdin is not None
            child.stdin.write(orjson.dumps(spec).decode() + "\n")
            child.stdin.flush()
        for child in children:
            assert child.stdout is not None
            if child.stdout.readline().strip() != "ready":
                raise RuntimeError("a client process failed to connect its members")
        start = time.time() + 0.5
        for child in children:
            assert child.stdin is not None
            child.stdin.write(f"{start}\n")
            child.stdin.flush()
        reports = [
            orjson.loads(child.communicate(timeout=DURATION + DRAIN + SETUP_TIMEOUT)[0])
            for child in children
        ]
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
                child.wait()
    sent = sum(sum(report["sent"].values()) for report in reports)
    latencies: Counter[int] = Counter()
    for report in reports:
        latencies.update({int(tenths): count for tenths, count in report["latencies"].items()})
    return {
        "sent": sent,
        "failed": sum(report["failed"] for report in reports),
        "expected": sent * MEMBERS,
        "delivered": sum(sum(report["delivered"].values()) for report in reports),
        "p50": percentile(latencies, 0.5),
        "p99": percentile(latencies, 0.99),
        "max": percentile(latencies, 1.0),
    }


def percentile(tenths: Counter[int], share: float) -> float:
    """The latency in milliseconds below which ``share`` of the deliveries fall."""
    total = sum(tenths.values())
    seen = 0
    for value in sorted(tenths):
        seen += tenths[value]
        if seen >= share * total:
            return value / 10
    return float("nan")


def main() -> None:
    """Measure both platforms and print the table."""
    offered = CHANNELS / INTERVAL
    print(
        f"Chat scale-out: {CHANNELS * MEMBERS} clients over {CHANNELS} channels "
        f"({MEMBERS} each, one sender), {NODES} chat nodes, {CHILDREN} client processes, "
        f"{DURATION:g} s at {offered:g} messages/s offered ({offered * MEMBERS:g} deliveries/s)"
    )
    rows: list[tuple[str, dict[str, float]]] = []
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        if shutil.which("redis-server") is None:
            print("  (no redis-server installed: the Redis platform is skipped)")
        else:
            # 1,000 clients from one address: per-address caps off, as on the in-process side.
            unlimited = ["--no-rate-limits"]
            with Fleet(
                folder / "redis.db", nodes=NODES, channels=300, node_args=unlimited
            ) as fleet:
                endpoints = [node.address for node in fleet.nodes]
                name = f"Redis, {NODES} node processes"
                rows.append((name, measure(fleet.base_url, endpoints)))
        args = [
            *("--port", "0", "--db", str(folder / "inprocess.db"), "--channels", "300"),
            *("--chat-nodes", str(NODES), "--no-simulate", "--no-rate-limits"),
        ]
        single = wait_for(spawn(args, folder / "inprocess.log"), 1 + NODES)
        try:
            endpoints = [line.split()[1] for line in single.lines[1:]]
            rows.append(("in process, 1 process", measure(single.address, endpoints)))
        finally:
            single.stop()
    print(
        f"  {'broker':28} {'sent':>7} {'expected':>9} {'delivered':>9} {'ratio':>6} "
        f"{'p50 ms':>7} {'p99 ms':>7} {'max ms':>7}"
    )
    for name, row in rows:
        ratio = row["delivered"] / row["expected"] if row["expected"] else float("nan")
        print(
            f"  {name:28} {row['sent']:7.0f} {row['expected']:9.0f} {row['delivered']:9.0f} "
            f"{ratio:6.3f} {row['p50']:7.1f} {row['p99']:7.1f} {row['max']:7.1f}"
            + (f"  ({row['failed']:.0f} sends failed)" if row["failed"] else "")
        )
    print("  goals: ratio 1.000 (nothing lost), p99 < 100 ms")


if __name__ == "__main__":
    if sys.argv[1:] == ["clients"]:
        _child()
    else:
        main()
