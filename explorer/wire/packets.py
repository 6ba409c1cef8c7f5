"""Chat wire format: decode and encode method, reply and event packets, and chat error objects.

The platform's chat node decodes methods and encodes replies and events; the toolkit's chat
client does the reverse. Both import this one module so the format cannot drift between them,
and the golden fixtures in ``tests/fixtures/chat/`` (written from the spec, not from this code)
keep the two from agreeing on the same mistake. Pure: no I/O.

Packets (platform.md, "Chat interface")::

    method  {"type": "method", "method": str, "arguments": [...], "id": int}   client -> server
    reply   {"type": "reply", "error": null | error, "data": any, "id": int}     server -> client
    event   {"type": "event", "event": str, "data": any}                         server -> client

A reply has no ``data`` key at all after ``ping``, ``purge``, ``attachEmotes`` and after every
failed method; :class:`Reply` keeps that apart from ``"data": null`` with ``has_data``.

Error objects are always ``{code, message, stacktrace: [], data: {}}``: the wire form of a
:class:`~explorer.wire.codes.Refusal`, whose codes (:class:`~explorer.wire.codes.ChatErrorCode`)
and their table live with it in ``explorer.wire.codes``.

A malformed packet still gets exactly one reply (reference.md fact 5): :class:`PacketError`
carries the packet's ``id`` when one could be read from it (an integer from -2**31, the
32-bit signed range old clients count in, negative ids included as the historical platform
answered them, up to 2**53-1) and ``0`` otherwise, and the server replies with that id.

Text frames: the encoders return ``bytes``, orjson's native output. websockets (checked
against 17.4) sends ``bytes`` as a Binary frame unless told otherwise, and chat clients expect
Text frames, so send with ``text=True``: ``await ws.send(payload, text=True)`` (since 14.0)
and ``websockets.broadcast(connections, payload, text=True)`` (since 17.0, hence the project's
lower bound); the toolkit's own client socket calls the sans-I/O ``send_text(payload)``. That
writes the UTF-8 bytes as a Text frame with no ``str`` round trip, the cheapest way to a text
frame. On the receiving side ``await ws.recv(decode=False)`` hands the frame's bytes straight
to :func:`decode`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import orjson

from explorer.wire.codes import UNOTJSON, ChatErrorCode, ChatErrorObj, Refusal

__all__ = [
    "MAX_ID",
    "Event",
    "Method",
    "Packet",
    "PacketError",
    "Reply",
    "decode",
    "encode",
    "encode_event",
    "encode_method",
    "encode_reply",
]

#: Largest id a JavaScript client can represent exactly (Number.MAX_SAFE_INTEGER).
MAX_ID = 2**53 - 1
#: Smallest id: the bottom of the 32-bit signed range (clients counting in an int32 wrap there).
MIN_ID = -(2**31)


class PacketError(Refusal):
    """A frame is not a valid packet; ``id`` is the id to reply with (0 when none was usable)."""

    def __init__(self, code: int, message: str, id: int = 0) -> None:
        super().__init__(code, message)
        self.args = (code, message, id)
        self.id = id


@dataclass(frozen=True, slots=True)
class Method:
    """A method packet (client to server)."""

    method: str
    arguments: list[Any]
    id: int


@dataclass(frozen=True, slots=True)
class Reply:
    """A reply packet (server to client); ``has_data`` is False when the ``data`` key is absent."""

    id: int
    error: ChatErrorObj | None = None
    data: Any = None
    has_data: bool = True


@dataclass(slots=True)
class Event:
    """An event packet (server to client).

    Not frozen: a chat client builds one per event, and a frozen dataclass's ``__init__``
    costs twice as much.
    """

    event: str
    data: Any


Packet = Method | Reply | Event


def decode(raw: str | bytes | bytearray | memoryview) -> Packet:
    """Parse one websocket frame into a packet, or raise :class:`PacketError` (code 4000)."""
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise PacketError(ChatErrorCode.BAD_REQUEST, UNOTJSON) from None
    if type(obj) is not dict:
        raise PacketError(ChatErrorCode.BAD_REQUEST, "A packet must be a JSON object.")
    kind = obj.get("type")
    if kind == "event":
        name = obj.get("event")
        if type(name) is not str:
            raise PacketError(ChatErrorCode.BAD_REQUEST, "An event packet needs a string event.")
        return Event(name, obj.get("data"))
    raw_id = obj.get("id")
    packet_id = raw_id if type(raw_id) is int and MIN_ID <= raw_id <= MAX_ID else None
    reply_id = 0 if packet_id is None else packet_id
    if kind == "method":
        method = obj.get("method")
        # A missing ``arguments`` is an empty list (MixerLib drops empty arrays).
        arguments = obj.get("arguments", [])
        if type(method) is not str:
            raise PacketError(
                ChatErrorCode.BAD_REQUEST, "A method packet needs a string method.", reply_id
            )
        if type(arguments) is not list:
            raise PacketError(
                ChatErrorCode.BAD_REQUEST, "A method packet needs an arguments array.", reply_id
            )
        if packet_id is None:
            raise PacketError(
                ChatErrorCode.BAD_REQUEST, f"A packet id must be an integer {MIN_ID}..{MAX_ID}."
            )
        return Method(method, arguments, packet_id)
    if kind == "reply":
        error = obj.get("error")
        if packet_id is None:
            raise PacketError(
                ChatErrorCode.BAD_REQUEST, f"A packet id must be an integer {MIN_ID}..{MAX_ID}."
            )
        if error is not None and not (
            type(error) is dict
            and type(error.get("code")) is int
            and type(error.get("message")) is str
        ):
            raise PacketError(
                ChatErrorCode.BAD_REQUEST,
                "A reply error must be null or an error object.",
                reply_id,
            )
        return Reply(packet_id, cast("ChatErrorObj | None", error), obj.get("data"), "data" in obj)
    raise PacketError(ChatErrorCode.BAD_REQUEST, f"Unknown packet type {kind!r}.", reply_id)


def encode_method(method: str, arguments: Sequence[Any], id: int) -> bytes:
    """Encode a method packet; send it as a Text frame (``text=True``, see module doc)."""
    return orjson.dumps({"type": "method", "method": method, "arguments": arguments, "id": id})


def encode_reply(
    id: int, data: Any = None, error: ChatErrorObj | None = None, omit_data: bool = False
) -> bytes:
    """Encode a reply packet; send it as a Text frame (``text=True``, see module doc).

    The ``data`` key is left out when ``omit_data`` is true (``ping``, ``purge``,
    ``attachEmotes``) and whenever ``error`` is given, as the spec has it for failed methods.
    """
    if error is not None or omit_data:
        return orjson.dumps({"type": "reply", "error": error, "id": id})
    return orjson.dumps({"type": "reply", "error": None, "data": data, "id": id})


def encode_event(event: str, data: Any) -> bytes:
    """Encode an event packet; broadcast it as a Text frame (``text=True``, see module doc)."""
    return orjson.dumps({"type": "event", "event": event, "data": data})


def encode(packet: Packet) -> bytes:
    """Encode any decoded packet back to its wire form (the inverse of :func:`decode`)."""
    if isinstance(packet, Event):
        return encode_event(packet.event, packet.data)
    if isinstance(packet, Reply):
        return encode_reply(packet.id, packet.data, packet.error, omit_data=not packet.has_data)
    return encode_method(packet.method, packet.arguments, packet.id)
