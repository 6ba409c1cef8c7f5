"""Chat wire format: golden fixtures from the spec, malformed packets, error objects."""

from __future__ import annotations

import pickle
from pathlib import Path

import orjson
import pytest

from explorer.errors import ChatError, ExplorerError
from explorer.wire import events as wire_events
from explorer.wire.codes import UNOTJSON, ChatErrorCode, Refusal, error_object
from explorer.wire.packets import (
    MAX_ID,
    MIN_ID,
    Event,
    Method,
    PacketError,
    Reply,
    decode,
    encode,
    encode_event,
    encode_method,
    encode_reply,
)

FIXTURES = Path(__file__).parent / "fixtures" / "chat"
FIXTURE_NAMES = sorted(p.name for p in FIXTURES.glob("*.json"))


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_fixture_round_trips(name: str) -> None:
    """Decoding a golden packet and encoding it again gives the same JSON, keys included."""
    raw = fixture(name)
    assert orjson.loads(encode(decode(raw))) == orjson.loads(raw)


def test_fixture_set_is_complete() -> None:
    """The golden set covers every event of the wire's table (the spec's Events table), so a
    new event cannot come without its fixture."""
    events = {p.event for p in (decode(fixture(n)) for n in FIXTURE_NAMES) if isinstance(p, Event)}
    assert events == set(wire_events.EVENTS)


def test_decode_welcome_event() -> None:
    """An event packet decodes to Event with its name and data."""
    assert decode(fixture("welcome_event.json")) == Event(
        "WelcomeEvent", {"server": "0f6b9d3e-52a1-4c1f-9a77-3b2d8e5c1a40"}
    )


def test_decode_auth_method() -> None:
    """A method packet decodes to Method with name, arguments and id."""
    assert decode(fixture("auth_method.json")) == Method(
        "auth", [4242, 1001, "e3b0c44298fc1c149afbf4c8996fb924"], 0
    )


def test_decode_ping_reply_has_no_data() -> None:
    """A reply without a data key decodes with has_data False."""
    assert decode(fixture("ping_reply.json")) == Reply(12, None, None, has_data=False)


def test_decode_reply_with_null_data_keeps_the_key() -> None:
    """A reply whose data is null decodes with has_data True and re-encodes the key."""
    packet = decode(b'{"type":"reply","error":null,"data":null,"id":4}')
    assert packet == Reply(4, None, None, has_data=True)
    assert orjson.loads(encode(packet)) == {"type": "reply", "error": None, "data": None, "id": 4}


def test_decode_unotfound_reply() -> None:
    """The spec's UNOTFOUND reply decodes to its error object and no data."""
    packet = decode(fixture("auth_reply_unotfound.json"))
    assert packet == Reply(0, error_object(ChatErrorCode.UNOTFOUND, "UNOTFOUND"), has_data=False)


def test_decode_accepts_str() -> None:
    """A text frame delivered as str decodes like its bytes."""
    raw = fixture("chat_message.json")
    assert decode(raw.decode()) == decode(raw)


def test_not_json_is_unotjson() -> None:
    """A frame that is not JSON raises code 4000 UNOTJSON with reply id 0."""
    with pytest.raises(PacketError) as caught:
        decode(b'{"type":"method",')
    assert (caught.value.code, caught.value.message, caught.value.id) == (4000, UNOTJSON, 0)


def test_invalid_utf8_is_unotjson() -> None:
    """Bytes that are not UTF-8 are not JSON either."""
    with pytest.raises(PacketError, match=UNOTJSON):
        decode(b'{"type":"\xff"}')


@pytest.mark.parametrize("raw", [b"[]", b"42", b'"method"', b"null"])
def test_non_object_json_is_bad_request(raw: bytes) -> None:
    """JSON that is not an object raises code 4000 with reply id 0."""
    with pytest.raises(PacketError) as caught:
        decode(raw)
    assert (caught.value.code, caught.value.id) == (4000, 0)
    assert caught.value.message != UNOTJSON


@pytest.mark.parametrize(
    "packet",
    [
        {"type": "method", "method": 3, "arguments": [], "id": 9},
        {"type": "method", "arguments": [], "id": 9},
        {"type": "method", "method": "msg", "arguments": "hi", "id": 9},
        {"type": "reply", "error": "boom", "id": 9},
        {"type": "reply", "error": {"code": "1", "message": "UNOTFOUND"}, "id": 9},
        {"type": "rpc", "id": 9},
        {"method": "msg", "arguments": [], "id": 9},
    ],
)
def test_malformed_packet_keeps_its_id(packet: dict[str, object]) -> None:
    """A JSON packet with a usable id but a bad shape raises code 4000 carrying that id."""
    with pytest.raises(PacketError) as caught:
        decode(orjson.dumps(packet))
    assert (caught.value.code, caught.value.id) == (ChatErrorCode.BAD_REQUEST, 9)


@pytest.mark.parametrize("bad_id", [True, MIN_ID - 1, MAX_ID + 1, 1.0, "1", None])
def test_unusable_id_replies_with_zero(bad_id: object) -> None:
    """A method whose id is not an integer -2**31..2**53-1 raises code 4000 with reply id 0."""
    raw = orjson.dumps({"type": "method", "method": "msg", "arguments": ["hi"], "id": bad_id})
    with pytest.raises(PacketError) as caught:
        decode(raw)
    assert (caught.value.code, caught.value.id) == (4000, 0)


@pytest.mark.parametrize("ident", [-1, MIN_ID])
def test_negative_ids_in_the_32_bit_range_are_accepted(ident: int) -> None:
    """Ids down to -2**31 are method ids, as the historical platform answered them."""
    assert decode(encode_method("ping", [], ident)) == Method("ping", [], ident)


def test_largest_safe_id_is_accepted() -> None:
    """Id 2**53-1 is still a valid method id."""
    raw = encode_method("ping", [], MAX_ID)
    assert decode(raw) == Method("ping", [], MAX_ID)


def test_event_without_name_is_bad_request() -> None:
    """An event packet whose event is not a string raises code 4000."""
    with pytest.raises(PacketError) as caught:
        decode(b'{"type":"event","event":null,"data":{}}')
    assert caught.value.code == 4000


def test_encode_method_shape() -> None:
    """encode_method writes type, method, arguments and id."""
    assert orjson.loads(encode_method("msg", ["hello"], 3)) == {
        "type": "method",
        "method": "msg",
        "arguments": ["hello"],
        "id": 3,
    }


def test_encode_reply_omits_data_when_asked() -> None:
    """encode_reply with omit_data writes no data key (ping, purge, attachEmotes)."""
    assert orjson.loads(encode_reply(12, omit_data=True)) == orjson.loads(
        fixture("ping_reply.json")
    )


def test_encode_reply_with_error_has_no_data() -> None:
    """A failed method's reply carries the error object and no data key."""
    error = error_object(ChatErrorCode.TIMED_OUT, "You are timed out for 42 more seconds.")
    assert orjson.loads(encode_reply(7, "ignored", error=error)) == orjson.loads(
        fixture("msg_reply_timed_out.json")
    )


def test_encode_event_matches_fixture() -> None:
    """encode_event writes the WelcomeEvent packet exactly as the spec shows it."""
    raw = encode_event("WelcomeEvent", {"server": "0f6b9d3e-52a1-4c1f-9a77-3b2d8e5c1a40"})
    assert orjson.loads(raw) == orjson.loads(fixture("welcome_event.json"))


def test_encoders_return_utf8_bytes() -> None:
    """Encoded packets are UTF-8 bytes, ready for a Text frame sent with text=True."""
    raw = encode_event("ChatMessage", {"text": "héllo ☃"})
    assert isinstance(raw, bytes)
    assert "héllo ☃" in raw.decode("utf-8")


def test_error_object_shape() -> None:
    """error_object builds exactly code, message, an empty stacktrace and data."""
    assert error_object(4002, "UACCESS") == {
        "code": 4002,
        "message": "UACCESS",
        "stacktrace": [],
        "data": {},
    }
    assert error_object(4006, "No poll.", {"poll": None})["data"] == {"poll": None}


def test_error_object_code_is_plain_int() -> None:
    """An IntEnum code is stored as a plain int."""
    assert type(error_object(ChatErrorCode.ACCESS_DENIED, "UACCESS")["code"]) is int


def test_error_codes_table() -> None:
    """The code table is UNOTFOUND=1 and 4000..4007 for method errors."""
    assert [int(c) for c in ChatErrorCode] == [1, *range(4000, 4008)]


def test_a_refusal_becomes_a_chat_error_through_its_error_object() -> None:
    """The platform's Refusal and the toolkit's ChatError agree through the reply's object."""
    refused = Refusal(ChatErrorCode.NOT_FOUND, "No such message.", {"id": "x"})
    again = ChatError.from_object(refused.to_object())
    assert (again.code, again.message, again.data) == (4005, "No such message.", {"id": "x"})
    assert str(again) == "No such message. (code 4005)"


def test_chat_error_from_sparse_object() -> None:
    """ChatError.from_object tolerates a server error object with missing fields."""
    error = ChatError.from_object({"message": "UACCESS"})
    assert (error.code, error.message, error.data) == (0, "UACCESS", {})


def test_packet_error_is_a_wire_refusal_not_a_toolkit_error() -> None:
    """PacketError is a Refusal whose to_object is the reply's error, outside the toolkit's
    tree, so the server's replies do not depend on the user-facing exceptions."""
    error = PacketError(ChatErrorCode.BAD_REQUEST, UNOTJSON, 5)
    assert isinstance(error, Refusal) and not isinstance(error, ExplorerError)
    assert error.to_object() == error_object(4000, UNOTJSON)


@pytest.mark.parametrize(
    "error",
    [ChatError(4004, "Slow down.", {"wait": 2}), PacketError(4000, "bad", 8), Refusal(4002, "x")],
)
def test_errors_pickle(error: Refusal) -> None:
    """Chat errors survive pickling (they may cross a process boundary)."""
    again = pickle.loads(pickle.dumps(error))
    assert (type(again), again.args, str(again)) == (type(error), error.args, str(error))


def test_a_method_without_arguments_has_none() -> None:
    """A method packet without ``arguments`` (MixerLib drops empty arrays) has []."""
    assert decode(b'{"type":"method","method":"ping","id":4}') == Method("ping", [], 4)
