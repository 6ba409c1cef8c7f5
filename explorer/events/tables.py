"""Event rows as Arrow tables: the schema of a capture's events files, and a recorder's kept
rows (:class:`~explorer.events.chunks.Packed`) built into one table of it.

Built one Python call a row (``eventrows.flatten``, then typed pandas columns), a row costs
about 8 us, more than a chat client spends receiving the event, and holds the GIL all along.
So ChatMessage rows, nearly all of a busy capture, are read by Arrow's JSON reader and
compute kernels instead: C that holds no GIL (a flush runs beside the chat client, in a thread
or in the recorder's worker process) and spreads over the cores. Every other event is built
the Python way, row by row, and the rows are put back in log order.

Both ways give the same table (the tests compare them). Where Arrow's reading of a packet
could differ from ``flatten``'s, the whole flush goes the Python way: a field of another type
than the platform sends (Arrow refuses it: ``flatten`` would blank or convert it), a key given
twice, a packet spread over lines, a component without ``text`` or ``type`` or that is not an
object (``flatten`` tells a missing key from ``null`` there; Arrow cannot), a role that is not
text. The platform sends none of these. Pure: no I/O.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj

from explorer.core import columns
from explorer.events.chunks import Packed
from explorer.events.rows import flatten, rows_frame
from explorer.wire import events as wire_events

_TIME = pa.timestamp("ms", tz="UTC")
#: The Arrow types the event-log columns are declared in (``explorer.wire.events``), by name.
_ARROW: dict[str, pa.DataType] = {
    str(t): t
    for t in (
        _TIME,
        pa.int64(),
        pa.string(),
        pa.bool_(),
        pa.list_(pa.string()),
        pa.map_(pa.string(), pa.int64()),
    )
}
#: The Arrow types of the event-log columns, then the recorder's own ``row`` and ``packet``.
_EVENT_TYPES: dict[str, pa.DataType] = {
    **{column.name: _ARROW[column.arrow] for column in wire_events.COLUMNS},
    "row": pa.int64(),
    "packet": pa.string(),
}
#: The schema of every events file: the event-log columns, ``row`` and ``packet``.
EVENT_SCHEMA = pa.schema(list(_EVENT_TYPES.items()))

_CHAT = "ChatMessage"
#: What the JSON reader reads of a ChatMessage packet: the fields ``flatten`` uses, typed as the
#: platform sends them (anything else in a packet is skipped).
_COMPONENT = pa.struct([("type", pa.string()), ("text", pa.string())])
_CHAT_PACKET = pa.schema(
    [
        (
            "data",
            pa.struct(
                [
                    ("channel", pa.int64()),
                    ("originatingChannel", pa.int64()),
                    ("id", pa.string()),
                    ("user_name", pa.string()),
                    ("user_id", pa.int64()),
                    ("user_roles", pa.list_(pa.string())),
                    ("target", pa.string()),
                    (
                        "message",
                        pa.struct(
                            [
                                ("message", pa.list_(_COMPONENT)),
                                ("meta", pa.struct([("whisper", pa.bool_()), ("me", pa.bool_())])),
                            ]
                        ),
                    ),
                ]
            ),
        )
    ]
)
_PARSE = pj.ParseOptions(explicit_schema=_CHAT_PACKET, unexpected_field_behavior="ignore")
#: The reader's block: blocks are read in parallel; a packet must fit in one.
_BLOCK = 1 << 20
#: Rows built at a time (whole chunks), then put together. A flush's every step makes a new
#: buffer the size of its packets (some 130 MB at 300,000 rows): whole, each is fresh memory
#: that the kernel maps and zeroes (1.2-1.6 us a row of system time, measured), and each pass
#: over it misses the caches; 32,768 rows' buffers (some 14 MB) are reused from the
#: allocator's free memory and stay in the cache: a flush took 1.9-2.0 us a row instead of 3.0.
SLICE_ROWS = 32_768


class _OffShape(Exception):
    """A ChatMessage that Arrow may read otherwise than ``flatten``: build the Python way."""


def events_table(packed: Packed) -> pa.Table:
    """``packed``'s rows as a table of :data:`EVENT_SCHEMA` (see the module docstring), built
    :data:`SLICE_ROWS` at a time."""
    return pa.concat_tables([_slice_table(part) for part in packed.split(SLICE_ROWS)])


def _slice_table(packed: Packed) -> pa.Table:
    try:
        return _arrow_table(packed)
    except (_OffShape, pa.ArrowException):
        return frame_table(packed.frame)


#: An event log's columns as Arrow (:data:`EVENT_SCHEMA` without ``row`` and ``packet``).
LOG_SCHEMA = pa.schema([EVENT_SCHEMA.field(column.name) for column in wire_events.COLUMNS])


def log_table(frame: pd.DataFrame) -> pa.Table:
    """An event frame (``EventLog.frame``) as a table of :data:`LOG_SCHEMA`."""
    return pa.Table.from_pydict(_frame_arrays(frame), schema=LOG_SCHEMA)


def frame_table(frame: pd.DataFrame) -> pa.Table:
    """An event frame with its packets (:attr:`Packed.frame
    <explorer.events.chunks.Packed.frame>`) as a table of :data:`EVENT_SCHEMA`, its index as
    ``row``: the Python way."""
    arrays = _frame_arrays(frame)
    arrays["row"] = pa.array(frame.index.to_numpy(np.int64), pa.int64())
    arrays["packet"] = pa.array(frame["packet"], from_pandas=True).cast(pa.string())
    return pa.Table.from_pydict(arrays, schema=EVENT_SCHEMA)


def _frame_arrays(frame: pd.DataFrame) -> dict[str, pa.Array]:
    """The event-log columns of ``frame`` as arrays of their Arrow types."""
    arrays = {}
    for column in wire_events.COLUMNS:
        name, kind = column.name, _EVENT_TYPES[column.name]
        if name == "poll_answers":
            arrays[name] = pa.array([_answers(v) for v in frame[name]], kind)
        elif name == "poll_responses":
            arrays[name] = pa.array([_responses(v) for v in frame[name]], kind)
        else:
            arrays[name] = pa.array(frame[name], from_pandas=True).cast(kind)
    return arrays


def _answers(value: Any) -> list[str] | None:
    return [str(answer) for answer in value] if isinstance(value, list) else None


def _responses(value: Any) -> list[tuple[str, int | None]] | None:
    if not isinstance(value, dict):
        return None
    return [(str(answer), columns.as_int(votes)) for answer, votes in value.items()]


def _arrow_table(packed: Packed) -> pa.Table:
    """ChatMessage rows read by Arrow, the others built by ``flatten``, in log order."""
    chunks = [(c, max(packed.first - c.start, 0)) for c in packed.chunks]
    if not chunks:
        return frame_table(packed.frame)
    lines, ends = packed.lines()
    n = len(ends) - 1
    packets = pa.LargeBinaryArray.from_buffers(
        pa.large_binary(), n, [None, pa.py_buffer(ends), pa.py_buffer(lines)]
    )
    categories = np.asarray(packed.events.categories, dtype=object)
    codes = np.concatenate([c.codes[skip:] for c, skip in chunks])
    chat = codes == categories.tolist().index(_CHAT)
    at = np.concatenate([c.received_at[skip:] for c, skip in chunks])
    history = np.concatenate([c.history[skip:] for c, skip in chunks])
    channels = np.concatenate([c.channels[skip:].astype(np.int64) for c, skip in chunks])
    others = np.flatnonzero(~chat)
    arrays = _chat_arrays(
        pc.filter(packets, pa.array(chat)) if len(others) else packets, channels[chat]
    )
    if len(others):
        view = lines.data
        rows = (
            flatten(orjson.loads(view[ends[i] : ends[i + 1] - 1]), t, h, None if c < 0 else c)
            for i, t, h, c in zip(
                others.tolist(),
                at[others].tolist(),
                history[others].tolist(),
                channels[others].tolist(),
                strict=True,
            )
        )
        python = _frame_arrays(rows_frame(rows, packed.events))
        order = pa.array(np.argsort(np.concatenate([np.flatnonzero(chat), others]), kind="stable"))
        arrays = {
            name: pc.take(pa.concat_arrays([arrays[name], python[name]]), order) for name in arrays
        }
    arrays["received_at"] = pa.array(np.round(at * 1000.0).astype(np.int64), _TIME)
    arrays["event"] = pa.array(categories[codes], pa.string())
    arrays["from_history"] = pa.array(history, pa.bool_())
    arrays["row"] = pa.array(np.arange(packed.end - n, packed.end, dtype=np.int64))
    arrays["packet"] = pc.binary_slice(packets, 0, -1).cast(pa.large_string()).cast(pa.string())
    return pa.Table.from_pydict(arrays, schema=EVENT_SCHEMA)


def _chat_arrays(packets: pa.Array, channels: np.ndarray) -> dict[str, pa.Array]:
    """The event-log columns (``received_at``, ``event``, ``from_history`` aside) of
    ChatMessage ``packets`` (each followed by a newline); ``channels``: each row's channel
    from the log, -1 for none. Raises :class:`_OffShape` or ``ArrowInvalid`` for a packet
    that ``flatten`` may read otherwise."""
    n = len(packets)
    arrays = {column.name: pa.nulls(n, _EVENT_TYPES[column.name]) for column in wire_events.COLUMNS}
    if not n:
        return arrays
    offsets = np.frombuffer(packets.buffers()[1], np.int64)[packets.offset :][: n + 1]
    block = max(_BLOCK, int(np.diff(offsets).max()) + 1)
    table = pj.read_json(
        pa.BufferReader(packets.buffers()[2][offsets[0] : offsets[-1]]),
        read_options=pj.ReadOptions(block_size=block),
        parse_options=_PARSE,
    )
    if table.num_rows != n:
        raise _OffShape("a packet spread over lines")
    data = table.column("data").combine_chunks()
    valid = data.is_valid()
    roles = pc.struct_field(data, "user_roles")
    parts = pc.struct_field(data, ["message", "message"])
    components = pc.list_flatten(parts)
    texts, types = pc.struct_field(components, "text"), pc.struct_field(components, "type")
    if pc.list_flatten(roles).null_count or components.null_count or texts.null_count:
        raise _OffShape("a role, a component or a component's text is null or missing")
    if types.null_count:
        raise _OffShape("a component's type is null or missing")
    lengths = pc.fill_null(pc.list_value_length(parts), 0).to_numpy(zero_copy_only=False)
    starts = pa.array(np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)]))

    def joined(values: pa.Array, separator: str) -> pa.Array:
        text = pc.binary_join(pa.LargeListArray.from_arrays(starts, values), separator)
        return pc.if_else(valid, text.cast(pa.string()), pa.scalar(None, pa.string()))

    def flag(name: str) -> pa.Array:
        value = pc.fill_null(pc.struct_field(data, ["message", "meta", name]), False)
        return pc.if_else(valid, value, pa.scalar(None, pa.bool_()))

    logged = pa.array(channels, pa.int64(), mask=channels < 0)
    arrays.update(
        channel=pc.coalesce(
            pc.struct_field(data, "channel"), pc.struct_field(data, "originatingChannel"), logged
        ),
        message_id=pc.struct_field(data, "id"),
        user_name=pc.struct_field(data, "user_name"),
        user_id=pc.struct_field(data, "user_id"),
        user_roles=pc.binary_join(roles, ","),
        text=joined(texts, ""),
        components=joined(types, ","),
        whisper=flag("whisper"),
        me=flag("me"),
        target=pc.struct_field(data, "target"),
    )
    return arrays
