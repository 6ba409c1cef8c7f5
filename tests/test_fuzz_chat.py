"""Chat fuzzing: hypothesis-generated frames against a live chat node.

The frames are what a hostile or broken client sends: method packets with wrong types, huge
or fractional ids, junk arguments nested deep, any unicode, truncated JSON, JSON past the
parser's depth limit, binary frames, invalid UTF-8 in text frames, and frames over the size
limit. The rules each frame is held to:

- a frame within the size limit gets exactly one well-formed reply (``{type: reply, id,
  error}``; an error is the spec's ``{code, message, stacktrace, data}`` and comes without
  ``data``), carrying the method's id when it could be read and 0 otherwise, and never the
  node's "internal error" (the chat analogue of a 500);
- a frame over the limit closes that connection with 1009, and nothing else does;
- after every batch, a second client on the other node still gets its ping answered;
- memory stays flat: after a warm-up, thousands more junk frames over connections that come
  and go leave the platform's allocations (tracemalloc, its own code and websockets') where
  they were, within a small tolerance.

The fuzzing client signs in as the channel's owner, so room methods run with every permission
and reach their argument checks. Frame counts are printed at the end of the module.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import random
import tracemalloc
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from explorer.wire import chatmethods as chat_methods
from explorer.wire.packets import MAX_ID, MIN_ID
from tests.chatkit import World

pytestmark = pytest.mark.fuzz

#: Batches of frames per fuzzing run (each batch up to BATCH frames); raise it with
#: EXPLORER_FUZZ_EXAMPLES for a longer hunt than CI's.
BATCHES = int(os.environ.get("EXPLORER_FUZZ_EXAMPLES", "16")) * 8
BATCH = 16
#: The node's frame limit in this module (small, so oversized frames are cheap to send).
MAX_FRAME = 4096
#: The reply a method gets when it raised something the node did not expect.
INTERNAL = "Internal error; please retry."
ROOM_METHODS = tuple(method.name for method in chat_methods.TABLE if method.room)
TALLY: Counter[str] = Counter()


@dataclass(frozen=True)
class Frame:
    """One frame to send: its payload, whether it goes as text, and the reply id expected."""

    kind: str
    payload: str | bytes
    text: bool
    #: The id the reply must carry; None when 0 or the packet's own id will both do.
    expect_id: int | None = None

    @property
    def size(self) -> int:
        """Bytes on the wire (before any compression), which the size limit applies to."""
        return len(self.payload.encode() if isinstance(self.payload, str) else self.payload)


# --- strategies -------------------------------------------------------------------------

HUGE = (MAX_ID, MAX_ID + 1, 2**31, 2**53, 2**63 - 1, 2**63, 2**64 - 1, 2**64, -(2**63) - 1)
numbers = st.one_of(
    st.sampled_from((*HUGE, 0, -1)),
    st.integers(-5, 1000),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
)
scalars = st.one_of(st.none(), st.booleans(), numbers, st.text(max_size=30))
junk = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
ids = st.one_of(st.integers(0, 10**6), st.sampled_from(HUGE), st.integers(), junk)


def arguments(channel: int, users: list[int]) -> st.SearchStrategy[Any]:
    """Arguments near what methods expect (ids of this world, names, durations) or junk."""
    near = st.one_of(
        st.sampled_from([channel, *users]),
        st.sampled_from(["streamer", "viewer", "moderator", "nobody", "30s", "1h", "clear"]),
        st.text(max_size=400),
        numbers,
        st.lists(st.text(max_size=20), max_size=12),
    )
    return st.one_of(st.lists(near, max_size=4), st.lists(junk, max_size=4), junk)


def signatures(channel: int, users: list[int]) -> dict[str, list[st.SearchStrategy[Any]]]:
    """Per method, a strategy for each argument slot: right type, edge values, or junk."""
    channels = st.one_of(st.just(channel), numbers, st.just(str(channel)))
    people = st.one_of(st.sampled_from(users), numbers)
    names = st.one_of(st.sampled_from(["streamer", "viewer", "moderator", "nobody"]), st.text())
    durations = st.one_of(st.sampled_from(["30s", "1m15s", "clear", "99999d"]), numbers)
    text = st.text(max_size=400)
    return {
        "auth": [channels, people, st.text(max_size=64)],
        "msg": [text],
        "whisper": [names, text],
        "vote:start": [text, st.lists(st.text(max_size=40), max_size=12), numbers],
        "vote:choose": [numbers],
        "vote": [numbers],
        "timeout": [names, durations],
        "purge": [names],
        "deleteMessage": [st.one_of(st.uuids().map(str), st.text(max_size=40))],
        "clearMessages": [],
        "history": [numbers],
        "giveaway:start": [],
    }


def test_every_room_method_has_a_shape() -> None:
    """The fuzzer shapes the arguments of auth and of every room method of the wire table, so
    a new method cannot be left out of the hunt."""
    shaped = set(signatures(1, [2]))
    assert shaped == {"auth", *ROOM_METHODS}


@st.composite
def shaped_packets(draw: st.DrawFn, channel: int, users: list[int]) -> dict[str, Any]:
    """A method packet whose arguments follow (or nearly follow) the method's signature."""
    table = signatures(channel, users)
    method = draw(st.sampled_from(sorted(table)))
    slots = table[method]
    count = draw(st.sampled_from([len(slots)] * 3 + [0, 1, len(slots) + 1]))
    args: list[Any] = [draw(slots[i] if i < len(slots) else junk) for i in range(count)]
    spoil: bool = draw(st.booleans())
    if args and spoil:
        args[draw(st.integers(0, len(args) - 1))] = draw(junk)
    return {"type": "method", "method": method, "arguments": args, "id": draw(ids)}


def packets(channel: int, users: list[int]) -> st.SearchStrategy[dict[str, Any]]:
    """Method-like packets, each key present or not, each value right or wrong."""
    names = st.one_of(
        st.sampled_from(
            [m.name for m in chat_methods.TABLE if m is not chat_methods.OPT_OUT_EVENTS]
        ),
        st.text(max_size=12),
    )
    return st.fixed_dictionaries(
        {},
        optional={
            "type": st.one_of(st.sampled_from(["method", "reply", "event"]), junk),
            "method": st.one_of(names, junk),
            "event": st.one_of(st.text(max_size=12), junk),
            "arguments": arguments(channel, users),
            "id": ids,
            "error": junk,
            "data": junk,
        },
    )


def expected_id(packet: Any) -> int | None:
    """The id a reply must carry: a method's readable id, else None (0 or its id will do)."""
    if not isinstance(packet, dict) or packet.get("type") != "method":
        return None
    raw = packet.get("id")
    if type(raw) is not int or not MIN_ID <= raw <= MAX_ID:
        return 0
    method_ok = type(packet.get("method")) is str
    return raw if method_ok and type(packet.get("arguments")) is list else None


def encode(value: Any) -> str:
    """JSON text as a lenient client writes it (big integers and all; never NaN)."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


@st.composite
def frames(draw: st.DrawFn, channel: int, users: list[int]) -> Frame:
    """One hostile frame."""
    kind = draw(
        st.sampled_from(
            [
                *["method"] * 8,
                "binary method",
                "junk JSON",
                "truncated JSON",
                "deep JSON",
                "NaN",
                "random bytes",
                "bad UTF-8 text",
                "unicode text",
                "too big",
            ]
        )
    )
    if kind in ("method", "binary method"):
        packet = draw(st.one_of(shaped_packets(channel, users), packets(channel, users)))
        text = encode(packet)
        if kind == "binary method":
            return Frame(kind, text.encode(), False, expected_id(packet))
        return Frame(kind, text, True, expected_id(packet))
    if kind == "junk JSON":
        return Frame(kind, encode(draw(junk)), True)
    if kind == "truncated JSON":
        text = encode(draw(packets(channel, users)))
        return Frame(kind, text[: draw(st.integers(0, max(0, len(text) - 1)))], True, 0)
    if kind == "deep JSON":
        depth = draw(st.integers(500, MAX_FRAME // 2 - 1))
        return Frame(kind, "[" * depth + "]" * depth, True, 0)
    if kind == "NaN":
        return Frame(kind, '{"type":"method","method":"ping","arguments":[NaN],"id":1}', True, 0)
    if kind == "random bytes":
        return Frame(kind, draw(st.binary(max_size=300)), False)
    if kind == "bad UTF-8 text":
        return Frame(kind, b"\xff\xfe" + draw(st.binary(max_size=100)), True, 0)
    if kind == "unicode text":
        return Frame(kind, draw(st.text(min_size=1, max_size=200)), True)
    size = draw(st.integers(MAX_FRAME + 1, 2 * MAX_FRAME))
    return Frame(kind, "x" * size, True)


# --- the live node ----------------------------------------------------------------------


class Client:
    """A websocket client driven on the module's own event loop, reconnecting when closed."""

    def __init__(
        self,
        world: World,
        loop: asyncio.AbstractEventLoop,
        user: str,
        node: int,
        channel: str = "streamer",
        deflate: bool = True,
    ) -> None:
        self.world, self.loop, self.user, self.node = world, loop, user, node
        self.channel = world.channel_of(channel)
        self.compression = "deflate" if deflate else None
        self.ws: ClientConnection | None = None
        self.events = 0

    async def open(self) -> ClientConnection:
        """A connection authenticated as ``user`` in ``channel``'s chat."""
        ws = await connect(
            self.world.endpoint(self.node),
            max_size=None,
            close_timeout=1,
            compression=self.compression,
        )
        await ws.recv()  # WelcomeEvent
        key = self.world.details(self.user, self.channel)["authkey"]
        auth = [self.channel, self.world.user_id(self.user), key]
        await ws.send(encode({"type": "method", "method": "auth", "arguments": auth, "id": 1}))
        reply = await self.reply(ws)
        assert reply["error"] is None, reply
        self.ws = ws
        return ws

    async def reply(self, ws: ClientConnection, timeout: float = 5.0) -> dict[str, Any]:
        """The next reply on ``ws``, counting (and skipping) events."""
        while True:
            packet: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), timeout))
            if packet.get("type") == "reply":
                return packet
            assert packet.get("type") == "event", packet
            self.events += 1

    async def exchange(self, frame: Frame) -> None:
        """Send ``frame`` and check what comes back."""
        ws = self.ws or await self.open()
        await ws.send(frame.payload, text=frame.text)
        TALLY[frame.kind] += 1
        if frame.size > MAX_FRAME:
            with pytest.raises(ConnectionClosed) as closed:
                await self.reply(ws)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
            self.ws = None
            return
        reply = await self.reply(ws)
        check_reply(reply, frame)

    async def ping(self) -> None:
        """A ping method, answered."""
        ws = self.ws or await self.open()
        await ws.send(encode({"type": "method", "method": "ping", "arguments": [], "id": 7}))
        reply = await self.reply(ws, timeout=2.0)
        assert reply == {"type": "reply", "error": None, "id": 7}, reply

    def run(self, coro: Any) -> Any:
        """Run ``coro`` on the module's loop."""
        return self.loop.run_until_complete(asyncio.wait_for(coro, 30))

    async def close(self) -> None:
        """Close the connection, if open."""
        if self.ws is not None:
            await self.ws.close()


def check_reply(reply: dict[str, Any], frame: Frame) -> None:
    """``reply`` is one well-formed reply to ``frame``, with the right id."""
    assert set(reply) <= {"type", "error", "data", "id"} and type(reply["id"]) is int, reply
    if frame.expect_id is not None:
        assert reply["id"] == frame.expect_id, (frame, reply)
    error = reply["error"]
    if error is not None:
        assert "data" not in reply, reply
        assert type(error["code"]) is int and type(error["message"]) is str, reply
        assert isinstance(error["stacktrace"], list) and isinstance(error["data"], dict), reply
        assert error["message"] != INTERNAL, (frame, reply)


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    """A platform of this module's own: no method throttling, small frames."""
    running = World.start(chat_rate=1e6, chat_burst=10**6, chat_max_frame=MAX_FRAME)
    yield running
    running.stop()
    print("\nchat fuzzing, frames sent:", dict(sorted(TALLY.items())), sum(TALLY.values()))


@pytest.fixture(scope="module")
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    """The event loop every client of this module runs on."""
    running = asyncio.new_event_loop()
    yield running
    running.close()


@pytest.fixture(scope="module")
def clients(world: World, loop: asyncio.AbstractEventLoop) -> Iterator[tuple[Client, Client]]:
    """The fuzzing owner (node 0) and a bystanding viewer (node 1) in one channel."""
    fuzzer, bystander = Client(world, loop, "streamer", 0), Client(world, loop, "viewer", 1)
    yield fuzzer, bystander
    for client in (fuzzer, bystander):
        loop.run_until_complete(client.close())


def test_every_frame_is_answered_or_closed_properly(
    world: World, clients: tuple[Client, Client]
) -> None:
    """Each hostile frame gets one proper reply (or 1009 when too big); others are served."""
    fuzzer, bystander = clients
    users = [world.user_id(name) for name in ("streamer", "moderator", "viewer", "viewer2")]

    @settings(
        max_examples=BATCHES,
        deadline=None,
        database=None,
        derandomize=True,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(batch=st.lists(frames(world.channel, users), min_size=1, max_size=BATCH))
    def fuzz(batch: list[Frame]) -> None:
        for frame in batch:
            fuzzer.run(fuzzer.exchange(frame))
        bystander.run(bystander.ping())

    fuzz()
    assert sum(TALLY.values()) >= BATCHES


#: Values every argument slot is tried with, the others being right (see the matrix test).
EDGES: tuple[Any, ...] = (
    *HUGE,
    -1,
    0,
    0.5,
    -0.0,
    1e308,
    "",
    "x" * 1000,
    "\u0000",
    "🙂" * 50,
    None,
    True,
    [],
    {},
    [[[[]]]],
    {"": None},
)


def valid_calls(world: World) -> list[tuple[str, list[Any]]]:
    """One right call per method (two for auth), in the streamer's channel, as its owner."""
    key = world.details("streamer")["authkey"]
    return [
        ("auth", [world.channel]),
        ("auth", [world.channel, world.user_id("streamer"), key]),
        ("msg", ["hello"]),
        ("whisper", ["viewer", "psst"]),
        ("vote:start", ["Best snack?", ["crisps", "fruit"], 30]),
        ("vote:choose", [0]),
        ("vote", [1]),
        ("timeout", ["viewer2", "1s"]),
        ("purge", ["viewer2"]),
        ("deleteMessage", ["00000000-0000-4000-8000-000000000000"]),
        ("clearMessages", []),
        ("history", [5]),
        ("giveaway:start", []),
    ]


def edge_matrix(calls: list[tuple[str, list[Any]]]) -> Iterator[tuple[str, list[Any]]]:
    """Each call with each slot swapped for each edge value, plus too few and too many."""
    for method, args in calls:
        yield method, args[:-1]
        yield method, [*args, "extra"]
        for slot in range(len(args)):
            for edge in EDGES:
                yield method, [*args[:slot], edge, *args[slot + 1 :]]


def test_every_edge_value_in_every_argument_slot_is_answered(
    world: World, clients: tuple[Client, Client]
) -> None:
    """Every method with each argument swapped for an edge value gets a proper reply."""
    fuzzer, bystander = clients
    cases = list(edge_matrix(valid_calls(world)))
    for number, (method, args) in enumerate(cases, start=1000):
        packet = {"type": "method", "method": method, "arguments": args, "id": number}
        fuzzer.run(fuzzer.exchange(Frame("edge matrix", encode(packet), True, number)))
        if method == "auth":  # back as the owner for the next methods
            fuzzer.run(fuzzer.close())
            fuzzer.ws = None
    bystander.run(bystander.ping())
    assert TALLY["edge matrix"] >= len(cases) > 300


def junk_frames(rng: random.Random, channel: int, count: int) -> Iterator[str | bytes]:
    """A fixed stream of mixed frames for the memory check (no hypothesis: same every run)."""
    methods = [*ROOM_METHODS, "auth", "ping", "nope"]
    for index in range(count):
        roll = rng.random()
        if roll < 0.6:
            args = rng.choice(
                [[], [channel], ["x" * rng.randint(0, 300)], [rng.randint(-9, 2**63)], [None] * 3]
            )
            packet = {"type": "method", "method": rng.choice(methods), "arguments": args}
            yield encode({**packet, "id": index})
        elif roll < 0.8:
            yield bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 200)))
        else:
            yield "[" * 700 + '{"a":' * rng.randint(0, 3)


def test_memory_stays_flat(world: World, loop: asyncio.AbstractEventLoop) -> None:
    """Thousands of junk frames over connections that come and go leave no allocations."""
    rng = random.Random(9)

    async def churn(rounds: int) -> None:
        for _ in range(rounds):
            # In a room of its own: the other clients of the module are not reading now.
            # Without permessage-deflate, whose per-connection buffers (freed as each close
            # completes) would drown the signal.
            client = Client(
                world, loop, "moderator", rng.randint(0, 1), channel="moderator", deflate=False
            )
            ws = await client.open()
            for frame in junk_frames(rng, world.channel, 50):
                await ws.send(frame)
                await client.reply(ws)
            await ws.close()

    def allocated() -> int:
        loop.run_until_complete(asyncio.sleep(0.2))  # the last closes complete server-side
        gc.collect()
        snapshot = tracemalloc.take_snapshot().filter_traces(
            [tracemalloc.Filter(True, "*/explorer/*"), tracemalloc.Filter(True, "*/websockets/*")]
        )
        return sum(stat.size for stat in snapshot.statistics("filename"))

    tracemalloc.start()
    try:
        loop.run_until_complete(churn(20))  # warm-up: caches, rooms, prepared statements
        before = allocated()
        loop.run_until_complete(churn(60))
        after = allocated()
    finally:
        tracemalloc.stop()
    TALLY["memory check"] += 80 * 50
    print(f"\nplatform allocations: {before} B before, {after} B after 3,000 junk frames")
    assert after - before < 32 * 1024, (before, after)
