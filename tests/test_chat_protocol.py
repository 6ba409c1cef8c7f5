"""Chat wire protocol over real websockets: packets, reference.md's wire facts, bad input."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import orjson
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from explorer.emulator.chat import dispatch, polls
from explorer.emulator.chat.methods import RoomMethod
from explorer.wire import chatmethods as chat_methods
from explorer.wire.codes import ChatErrorCode
from tests.chatkit import Chat, World, run


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    """One platform for this module (two chat nodes, a slow method rate for the flood test)."""
    running = World.start(chat_rate=20.0, chat_burst=20, chat_max_frame=4096)
    yield running
    running.stop()


def test_welcome_is_the_first_packet(world: World) -> None:
    """The server sends WelcomeEvent {server: <uuid>} right after the socket opens."""

    async def scenario() -> None:
        async with connect(world.endpoint()) as ws:
            packet = orjson.loads(await asyncio.wait_for(ws.recv(), 1.0))
        assert packet["type"] == "event" and packet["event"] == "WelcomeEvent"
        assert len(packet["data"]["server"]) == 36 and packet["data"]["server"].count("-") == 4

    run(scenario())


def test_auth_sent_before_welcome_is_answered(world: World) -> None:
    """An auth sent before reading WelcomeEvent gets its reply after the welcome."""

    async def scenario() -> None:
        async with connect(world.endpoint()) as ws:
            method = {"type": "method", "method": "auth", "arguments": [world.channel], "id": 0}
            await ws.send(orjson.dumps(method).decode())
            first = orjson.loads(await ws.recv())
            second = orjson.loads(await ws.recv())
        assert first["event"] == "WelcomeEvent"
        assert second == {
            "type": "reply",
            "error": None,
            "data": {"authenticated": False, "roles": []},
            "id": 0,
        }

    run(scenario())


def test_any_path_and_query_is_accepted(world: World) -> None:
    """Clients connect to <endpoint>?version=1.0&Client-ID=<id>; any path works too."""

    async def scenario() -> None:
        for path in ("?version=1.0&Client-ID=abc", "/chat/v2?x=1", "/"):
            chat = await world.connect(path=path)
            assert (await chat.ok("auth", world.channel))["authenticated"] is False
            await chat.close()

    run(scenario())


def test_permessage_deflate_is_negotiated(world: World) -> None:
    """A client offering permessage-deflate gets it, and chat still flows."""

    async def scenario() -> None:
        chat = await world.connect(compression="deflate")
        extensions = chat.ws.response.headers.get("Sec-WebSocket-Extensions", "")
        assert "permessage-deflate" in extensions
        assert (await chat.ok("ping")) is None
        await chat.close()

    run(scenario())


def test_websocket_ping_gets_pong(world: World) -> None:
    """A websocket ping frame is answered with a pong."""

    async def scenario() -> None:
        chat = await world.connect()
        pong = await chat.ws.ping()
        latency = await asyncio.wait_for(pong, 2.0)
        assert latency >= 0
        await chat.close()

    run(scenario())


def test_ping_method_reply_has_no_data(world: World) -> None:
    """The ping method is answered {type: reply, error: null, id} without a data key."""

    async def scenario() -> None:
        chat = await world.connect()
        await chat.ws.send('{"type":"method","method":"ping","arguments":[],"id":12}')
        assert orjson.loads(await chat.ws.recv()) == {"type": "reply", "error": None, "id": 12}
        await chat.close()

    run(scenario())


def test_replies_are_text_frames(world: World) -> None:
    """Everything the server sends arrives as text frames."""

    async def scenario() -> None:
        chat = await world.connect()
        await chat.ok("auth", world.channel)
        await chat.ok("history", 2)
        assert chat.frames and all(isinstance(frame, str) for frame in chat.frames)
        await chat.close()

    run(scenario())


def test_ids_are_per_connection(world: World) -> None:
    """Two connections may use the same ids; each gets its own replies."""

    async def scenario() -> None:
        first, second = await world.connect(), await world.connect(node=1)
        for chat in (first, second):
            await chat.send("ping", id=7)
        assert (await first.reply(7))["id"] == 7
        assert (await second.reply(7))["id"] == 7
        await first.close()
        await second.close()

    run(scenario())


def test_negative_ids_are_answered_under_their_own_id(world: World) -> None:
    """Ids anywhere in the 32-bit signed range, negative too, get replies carrying them, as
    the historical platform answered clients counting in an int32."""

    async def scenario() -> None:
        chat = await world.connect()
        for ident in (-1, -(2**31), 2**31 - 1):
            await chat.send("ping", id=ident)
            reply = await chat.reply(ident)
            assert reply["id"] == ident and reply["error"] is None
        await chat.close()

    run(scenario())


def test_reconnecting_client_keeps_counting(world: World) -> None:
    """A client that reconnects and continues its id sequence gets replies to those ids."""

    async def scenario() -> None:
        chat = await world.connect()
        await chat.ok("auth", world.channel)
        await chat.close()
        again = await world.connect(node=1)
        again.next_id = 40
        assert (await again.call("auth", world.channel))["id"] == 40
        assert (await again.call("ping"))["id"] == 41
        await again.close()

    run(scenario())


def test_every_method_gets_exactly_one_reply(world: World) -> None:
    """A burst of mixed valid and invalid methods gets one reply per id, in order."""

    async def scenario() -> None:
        chat = await world.connect()
        calls = [
            ("auth", [world.channel]),
            ("ping", []),
            ("history", [1]),
            ("msg", ["anonymous cannot"]),
            ("nope", []),
            ("history", ["x"]),
            ("attachEmotes", []),
        ]
        ids = [await chat.send(name, *args) for name, args in calls]
        got = []
        while len(got) < len(ids):
            packet = await chat.recv()
            if packet["type"] == "reply":
                got.append(packet["id"])
        assert got == ids
        last = await chat.send("ping")
        assert (await chat.recv())["id"] == last  # nothing else was pending
        await chat.close()

    run(scenario())


def test_non_json_answers_unotjson(world: World) -> None:
    """A frame that is not JSON gets an error reply UNOTJSON (id 0) and the socket stays."""

    async def scenario() -> None:
        chat = await world.connect()
        await chat.ws.send("this is {not json")
        reply = await chat.recv()
        assert reply["type"] == "reply" and reply["id"] == 0 and "data" not in reply
        assert reply["error"] == {
            "code": 4000,
            "message": "UNOTJSON",
            "stacktrace": [],
            "data": {},
        }
        assert (await chat.ok("ping")) is None
        await chat.close()

    run(scenario())


@pytest.mark.parametrize(
    "packet",
    [
        [1, 2, 3],
        {"type": "method", "method": "ping", "arguments": "x", "id": 3},
        {"type": "method", "method": 5, "arguments": [], "id": 3},
        {"type": "method", "method": "ping", "arguments": [], "id": "3"},
        {"type": "event", "event": "ChatMessage", "data": {}},
        {"type": "reply", "error": None, "data": 1, "id": 3},
        {"type": "mystery", "id": 3},
    ],
)
def test_malformed_packets_get_an_error_reply(world: World, packet: object) -> None:
    """Valid JSON that is not a proper method packet gets one error reply, not a crash."""

    async def scenario() -> None:
        chat = await world.connect()
        await chat.ws.send(orjson.dumps(packet).decode())
        reply = await chat.recv()
        assert reply["type"] == "reply" and reply["error"]["code"] == 4000
        assert reply["id"] in (0, 3)
        assert (await chat.ok("ping")) is None
        await chat.close()

    run(scenario())


def test_unknown_method_is_an_error(world: World) -> None:
    """An unknown method name answers code 4001 naming the method."""

    async def scenario() -> None:
        chat = await world.connect()
        error = await chat.error("fly", 1)
        assert error["code"] == 4001 and "fly" in error["message"]
        await chat.close()

    run(scenario())


def test_room_method_before_auth_is_refused(world: World) -> None:
    """A room method before any auth answers 4003 (call auth first)."""

    async def scenario() -> None:
        chat = await world.connect()
        error = await chat.error("history", 5)
        assert error["code"] == 4003
        await chat.close()

    run(scenario())


def test_binary_json_frame_is_accepted(world: World) -> None:
    """A binary frame carrying a JSON method is answered like a text frame."""

    async def scenario() -> None:
        chat = await world.connect()
        await chat.ws.send(b'{"type":"method","method":"ping","arguments":[],"id":5}')
        assert await chat.recv() == {"type": "reply", "error": None, "id": 5}
        await chat.ws.send(b"\xff\xfe\x00garbage")
        assert (await chat.recv())["error"]["message"] == "UNOTJSON"
        await chat.close()

    run(scenario())


def test_huge_frame_closes_with_1009(world: World) -> None:
    """A frame over the size limit closes that connection with 1009; others keep working."""

    async def scenario() -> None:
        bystander = await world.join(None)
        chat = await world.connect()
        await chat.ws.send("x" * 10_000)
        with pytest.raises(ConnectionClosed) as closed:
            while True:
                await chat.recv()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
        assert (await bystander.ok("ping")) is None
        await bystander.close()

    run(scenario())


def test_flooding_client_is_throttled_alone(world: World) -> None:
    """A client sending far past its method rate gets 4004 replies; another is unaffected."""

    async def scenario() -> None:
        calm = await world.join(None, node=0)
        flood = await world.join(None, node=0)
        ids = [await flood.send("ping") for _ in range(60)]
        codes = []
        for id in ids:
            reply = await flood.reply(id)
            codes.append(reply["error"]["code"] if reply["error"] else 0)
        assert codes.count(4004) >= 10 and codes[0] == 0
        started = asyncio.get_running_loop().time()
        assert (await calm.ok("ping")) is None
        assert asyncio.get_running_loop().time() - started < 0.5
        await calm.close()
        await flood.close()

    run(scenario())


def test_wrong_argument_types_answer_4000(world: World) -> None:
    """Wrong argument counts or types answer 4000 with a message, for every room method."""

    async def scenario() -> None:
        chat = await world.join("viewer")
        for method, args in [
            ("msg", []),
            ("msg", [5]),
            ("msg", ["a", "b"]),
            ("whisper", ["viewer2"]),
            ("vote:start", ["q", "not a list", 10]),
            ("vote:start", ["q", ["a", "a"], 10]),
            ("vote:choose", ["1"]),
            ("vote:choose", [True]),
            ("timeout", ["viewer2", "soon"]),
            ("purge", [None]),
            ("deleteMessage", [123]),
            ("clearMessages", [1]),
            ("history", [-1]),
            ("history", [1.5]),
            ("giveaway:start", ["now"]),
        ]:
            error = await chat.error(method, *args)
            assert error["code"] == 4000 and error["message"], (method, error)
        await chat.close()

    run(scenario())


def test_message_length_is_limited(world: World) -> None:
    """A message longer than 360 characters is refused with 4000."""

    async def scenario() -> None:
        chat: Chat = await world.join("viewer2")
        error = await chat.error("msg", "a" * 361)
        assert error["code"] == 4000 and "360" in error["message"]
        await chat.close()

    run(scenario())


def test_room_methods_come_from_the_modules_owning_them() -> None:
    """The dispatcher's table is the union of the rule modules' ``methods``, each name once."""
    declared = [m.method.name for module in dispatch.MODULES for m in module.methods]
    assert sorted(declared) == sorted(dispatch.METHODS)
    assert dispatch.METHODS["vote"] is dispatch.METHODS["vote:choose"] is polls.vote


def test_the_room_serves_every_wire_room_method() -> None:
    """Every room method of the wire table has a handler, and no handler is off the table."""
    assert set(dispatch.METHODS) == {m.name for m in chat_methods.TABLE if m.room}


def test_a_node_knows_every_wire_method(world: World) -> None:
    """No method of the wire table is answered "unknown method" by a chat node."""

    async def scenario() -> list[dict[str, Any]]:
        chat = await world.join(None)
        try:
            return [await chat.call(m.name) for m in chat_methods.TABLE]
        finally:
            await chat.close()

    for method, reply in zip(chat_methods.TABLE, run(scenario()), strict=True):
        error = reply.get("error") or {}
        assert error.get("code") != ChatErrorCode.UNKNOWN_METHOD, method.name


def test_a_method_declared_twice_is_refused() -> None:
    """Two modules claiming one wire name is an error when the table is built, not a shadow."""
    twice = SimpleNamespace(methods=[RoomMethod(chat_methods.MSG, polls.vote)])
    with pytest.raises(ValueError, match="'msg'"):
        dispatch.method_table((*dispatch.MODULES, twice))
