"""Event tables: rows built by Arrow from the packets' JSON equal the rows built the Python way
(``flatten``, checked against golden frames in test_eventlog), for the platform's packets and
for packets off its shape."""

from __future__ import annotations

from pathlib import Path

import orjson
import pandas as pd
import pyarrow as pa
import pytest

from benchmarks.eventlog import make_packets
from explorer.events import chunks as eventchunks
from explorer.events import tables as eventtables
from explorer.events.log import EventLog
from explorer.events.tables import EVENT_SCHEMA, events_table, frame_table

FIXTURES = Path(__file__).parent / "fixtures" / "chat"
T = 1_700_000_000.123


def _log(raws: list[bytes], chunk_rows: int = 4, channel: int | None = None) -> EventLog:
    log = EventLog(chunk_rows=chunk_rows)
    for i, raw in enumerate(raws):
        packet = orjson.loads(raw)
        data = packet.get("data")
        ident = data.get("id") if packet["event"] == "ChatMessage" and type(data) is dict else None
        log.append_event(packet["event"], data, raw, T + i / 7, ident, channel)
    return log


def _chat(data: bytes) -> bytes:
    return b'{"type":"event","event":"ChatMessage","data":' + data + b"}"


def _same(log: EventLog, first: int = 0, arrow_only: pytest.MonkeyPatch | None = None) -> pa.Table:
    """The table of ``log``'s rows from ``first``, checked equal to the Python way's; with
    ``arrow_only``, chat messages must build without it (``flatten`` then raises)."""
    packed = log.packed(first)
    expected = frame_table(packed.frame)
    if arrow_only is not None:
        arrow_only.setattr(eventchunks, "flatten", _no_flatten)
    table = events_table(packed)
    assert table.schema.equals(EVENT_SCHEMA)
    assert table.equals(expected)
    return table


def _no_flatten(*args: object) -> None:
    raise AssertionError("built the Python way")


def test_platform_messages_and_other_events_match_the_python_way(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Chat messages with every other event of the fixtures in between, sealed and open rows,
    from the middle of a chunk, build the same table both ways, in log order."""
    others = [
        orjson.dumps(orjson.loads(path.read_bytes()))
        for path in sorted(FIXTURES.glob("*.json"))
        if orjson.loads(path.read_bytes()).get("type") == "event"
    ]
    raws = []
    for i, raw in enumerate(make_packets(300)):
        raws.append(raw)
        if i % 20 == 0:
            raws.append(others[i // 20 % len(others)])
    table = _same(_log(raws, chunk_rows=64, channel=9), 5, monkeypatch)
    assert table["row"].to_pylist() == list(range(5, len(raws)))
    assert set(table["event"].to_pylist()) > {"ChatMessage", "UserJoin", "PollStart"}


def test_history_rows_and_the_logs_channel_are_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows from a history reply keep from_history, and a message naming no channel takes the
    channel it was logged under."""
    log = EventLog(chunk_rows=3)
    log.add_history([orjson.loads(make_packets(1)[0])["data"]], T, channel=5)
    nameless = _chat(b'{"id":"a","user_name":"u","message":{"message":[]}}')
    log.append_event("ChatMessage", orjson.loads(nameless)["data"], nameless, T, "a", 8)
    table = _same(log, 0, monkeypatch)
    assert table["from_history"].to_pylist() == [True, False]
    assert table["channel"].to_pylist()[1] == 8


SHAPES = {
    "no components": b'{"channel":1,"id":"a","message":{"message":[]}}',
    "no message": b'{"channel":1,"id":"a"}',
    "message null": b'{"channel":1,"id":"a","message":null}',
    "no meta": b'{"channel":1,"message":{"message":[{"type":"text","text":"x"}]}}',
    "whisper false": b'{"channel":1,"message":{"message":[],"meta":{"whisper":false}}}',
    "me": b'{"channel":1,"message":{"message":[],"meta":{"me":true,"other":[1]}}}',
    "originatingChannel": b'{"originatingChannel":4,"id":"a"}',
    "roles empty": b'{"channel":1,"user_roles":[]}',
    "roles null": b'{"channel":1,"user_roles":null}',
    "escapes": b'{"channel":1,"user_name":"\\u00e9\\ud83d\\ude00","message":{"message":'
    b'[{"type":"text","text":"a\\"b\\\\c\\n"},{"type":"emoticon","text":"\xf0\x9f\x98\x80"}]}}',
    "data null": b"null",
    "extra fields": b'{"channel":1,"user_level":3,"user_avatar":null,"extra":{"a":[1,{}]}}',
}
OFF_SHAPES = {
    "id as number": b'{"channel":1,"id":7}',
    "user id as text": b'{"channel":1,"user_id":"7"}',
    "integral float user id": b'{"channel":1,"user_id":7.0}',
    "user id beyond int64": b'{"channel":1,"user_id":99999999999999999999}',
    "name as number": b'{"channel":1,"user_name":5}',
    "roles as text": b'{"channel":1,"user_roles":"Mod"}',
    "a null role": b'{"channel":1,"user_roles":["Mod",null]}',
    "component without text": b'{"channel":1,"message":{"message":[{"type":"text","data":"d"}]}}',
    "component text null": b'{"channel":1,"message":{"message":[{"type":"t","text":null},'
    b'{"type":"t","text":"x"}]}}',
    "component without type": b'{"channel":1,"message":{"message":[{"text":"x"},{"text":"y"}]}}',
    "component not an object": b'{"channel":1,"message":{"message":["x"]}}',
    "component null": b'{"channel":1,"message":{"message":[null]}}',
    "meta falsy": b'{"channel":1,"message":{"message":[],"meta":false}}',
    "meta a list": b'{"channel":1,"message":{"message":[],"meta":[]}}',
    "whisper as text": b'{"channel":1,"message":{"message":[],"meta":{"whisper":"yes"}}}',
    "key twice": b'{"channel":1,"user_name":"a","user_name":"b"}',
    "data a list": b"[1]",
    "message a list": b'{"channel":1,"message":[]}',
}


@pytest.mark.parametrize("data", SHAPES.values(), ids=list(SHAPES))
def test_edges_of_the_platforms_shape_match_the_python_way(
    data: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A message at an edge of the platform's shape is read by Arrow as the Python way builds
    it."""
    _same(_log([make_packets(1)[0], _chat(data), make_packets(2)[1]], channel=3), 0, monkeypatch)


@pytest.mark.parametrize("data", OFF_SHAPES.values(), ids=list(OFF_SHAPES))
@pytest.mark.filterwarnings("ignore:invalid value encountered in cast:RuntimeWarning")  # int64+
def test_a_message_off_the_platforms_shape_is_built_the_python_way(data: bytes) -> None:
    """A message Arrow could read otherwise makes its flush build the Python way."""
    _same(_log([make_packets(1)[0], _chat(data), make_packets(2)[1]], channel=3))


def test_a_packet_over_several_lines_is_built_the_python_way() -> None:
    """A packet sent pretty-printed, newlines and all, keeps its text and its fields."""
    pretty = (FIXTURES / "chat_message.json").read_bytes()
    table = _same(_log([make_packets(1)[0], pretty, pretty.strip() + b"\n"]))
    assert table["packet"].to_pylist()[1] == pretty.decode()
    assert table["text"].to_pylist()[1] == "Hi @bob look :) example.org/clip"


def test_split_gives_whole_chunks_covering_every_row_once() -> None:
    """Packed.split's parts are consecutive whole chunks of at least the rows asked (the last
    has what is left), from the packed first row on; no chunks make one empty part."""
    packed = _log(make_packets(50)).packed(6)
    parts = packed.split(10)
    assert [row for part in parts for row in range(part.first, part.end)] == list(range(6, 50))
    assert all(part.end - part.first >= 10 for part in parts[:-1])
    chunks = [chunk for part in parts for chunk in part.chunks]
    assert len(chunks) == len(packed.chunks)
    assert all(mine is theirs for mine, theirs in zip(chunks, packed.chunks, strict=True))
    (empty,) = EventLog().packed(0).split(10)
    assert (empty.first, empty.chunks) == (0, ())


def test_an_off_shape_message_sends_only_its_slice_the_python_way(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Rows built a slice at a time equal the Python way's, and an off-shape message makes
    only the slice it is in build the Python way."""
    raws = make_packets(40)
    raws[20] = _chat(OFF_SHAPES["key twice"])
    packed = _log(raws, channel=3).packed(1)
    expected = frame_table(packed.frame)
    built: list[list[int]] = []

    def python_way(frame: pd.DataFrame) -> pa.Table:
        built.append(frame.index.tolist())
        return frame_table(frame)

    monkeypatch.setattr(eventtables, "SLICE_ROWS", 8)
    monkeypatch.setattr(eventtables, "frame_table", python_way)
    table = events_table(packed)
    assert table.equals(expected)
    assert built == [list(range(20, 28))]  # parts: rows 1-11, 12-19, 20-27, 28-35, 36-39
