"""The event log's compact storage: the open tail, sealed chunks, snapshots and packed rows,
and building DataFrame rows from them (``events/log.py`` explains the shape and its figures).

Rows are kept as the log receives them: the open :class:`Tail` (one list per field) and sealed
:class:`Chunk` s (the packets as one zstd-compressed newline-delimited JSON text, the other
fields small numpy arrays). A :class:`Snapshot` is what a reader sees at one moment;
:class:`Packed` is kept rows sealed for another process (the recorder's worker). Pure: no I/O.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa

from explorer.events.rows import flatten, rows_frame

#: Sealed packets: zstd at level 1 packs chat JSON to 11 % in 0.4 us per packet (zlib -1: 15 %
#: in 1.6 us).
_CODEC = pa.Codec("zstd", compression_level=1)
_UINT32_MAX = 2**32 - 1

#: A packet's JSON: text, or the bytes of the websocket frame it came in.
Raw = str | bytes | bytearray | memoryview


class Tail:
    """The open rows, one list per field. Columns rather than a tuple per row: every tuple
    would be one more object for the garbage collector, and at chat rates it would then run
    hundreds of times more often (about 10 % of ingest time, measured).

    The writer appends to ``ids`` last, so ``len(ids)`` rows are complete in every list.
    """

    __slots__ = ("at", "channels", "events", "history", "ids", "packets", "text")

    def __init__(self) -> None:
        self.at: list[float] = []
        self.events: list[str] = []
        self.packets: list[Raw] = []
        self.history: list[bool] = []
        #: The channel each row came from, when the writer said (None: the packet's own).
        self.channels: list[int | None] = []
        #: The ChatMessage id of each row (None for other events).
        self.ids: list[str | None] = []
        #: Whether some packet is text (str) rather than bytes.
        self.text = False


def _as_bytes(raw: Raw) -> bytes | bytearray | memoryview:
    return raw.encode() if isinstance(raw, str) else raw


def _channels(channels: list[int | None]) -> np.ndarray:
    """Each row's channel, -1 for None; 32 bits while every id fits (4 bytes a row)."""
    values = np.fromiter((-1 if c is None else c for c in channels), np.int64, len(channels))
    return values.astype(np.int32) if values.max(initial=-1) < 2**31 else values


def _channel(value: Any) -> int | None:
    number = int(value)
    return None if number < 0 else number


def id_hashes(ids: list[str | None]) -> np.ndarray:
    """32 bits of each id's ``hash()`` (a constant for None)."""
    return np.fromiter(map(hash, ids), np.int64, len(ids)).astype(np.uint32)


@dataclass(frozen=True, slots=True)
class Chunk:
    """Sealed rows ``start .. end``: their packets as one compressed newline-delimited JSON
    text, and the fields that are needed without parsing it, one numpy array each."""

    start: int
    #: ``p0\np1\n...`` compressed (each packet followed by a newline, the layout Arrow's
    #: JSON reader takes); packet ``i`` is ``json[offsets[i] : offsets[i + 1] - 1]``.
    packets: bytes
    offsets: np.ndarray
    received_at: np.ndarray
    #: Event codes into the log's categories at sealing (categories only ever grow).
    codes: np.ndarray
    history: np.ndarray
    #: :func:`_channels` of the rows.
    channels: np.ndarray
    #: :func:`id_hashes` of the ChatMessage ids (None for other rows): a first, cheap test for
    #: add_history, whose hits are confirmed against the packets.
    ids: np.ndarray

    @property
    def end(self) -> int:
        return self.start + len(self.received_at)

    def json(self) -> bytes:
        """The uncompressed packets, each followed by a newline."""
        return bytes(_CODEC.decompress(self.packets, int(self.offsets[-1]), asbytes=True))

    def packet(self, json: bytes, index: int) -> Any:
        """Packet ``index`` (relative to ``start``) decoded from :meth:`json`'s result."""
        return orjson.loads(json[self.offsets[index] : self.offsets[index + 1] - 1])


def pack(tail: Tail, n: int, start: int, events: pd.CategoricalDtype) -> Chunk:
    """The first ``n`` rows of ``tail`` (row ``start`` on) sealed into a chunk."""
    packets = (
        [_as_bytes(raw) for raw in tail.packets[:n]]
        if tail.text
        else cast("list[bytes | bytearray | memoryview]", tail.packets[:n])
    )
    offsets = np.empty(n + 1, np.int64)
    offsets[0] = 0
    np.cumsum(np.fromiter(map(len, packets), np.int64, n) + 1, out=offsets[1:])
    codes = {name: code for code, name in enumerate(events.categories)}
    return Chunk(
        start,
        _CODEC.compress(b"\n".join([*packets, b""]), asbytes=True),
        offsets.astype(np.uint32) if offsets[-1] <= _UINT32_MAX else offsets,
        np.array(tail.at[:n], np.float64),
        np.fromiter(map(codes.__getitem__, tail.events[:n]), np.int16, n),
        np.array(tail.history[:n], bool),
        _channels(tail.channels[:n]),
        id_hashes(tail.ids[:n]),
    )


@dataclass(frozen=True, slots=True)
class Snapshot:
    chunks: tuple[Chunk, ...]
    tail: Tail
    tail_start: int
    end: int
    events: pd.CategoricalDtype

    def open_rows(self, first: int) -> slice:
        """The positions in ``tail``'s lists of open rows ``first .. end``."""
        return slice(max(first - self.tail_start, 0), self.end - self.tail_start)


@dataclass(frozen=True, slots=True)
class Packed:
    """Kept rows from ``first`` on, packed as the log keeps them: sealed chunks (compressed
    JSON packets and the fields read without parsing them), the open rows sealed the same way.
    Cheap to make and to pickle, so a recorder can build and write the rows in another process
    (:meth:`frame`)."""

    first: int
    chunks: tuple[Chunk, ...]
    events: pd.CategoricalDtype

    @property
    def end(self) -> int:
        """One past the last row."""
        return self.chunks[-1].end if self.chunks else self.first

    def split(self, rows: int) -> list[Packed]:
        """These rows as consecutive parts of whole chunks, each of about ``rows`` rows (at
        least one chunk; one part when there are no chunks)."""
        parts: list[Packed] = []
        group: list[Chunk] = []
        first, size = self.first, 0
        for chunk in self.chunks:
            group.append(chunk)
            size += chunk.end - max(self.first, chunk.start)
            if size >= rows:
                parts.append(Packed(first, tuple(group), self.events))
                first, group, size = chunk.end, [], 0
        if group or not parts:
            parts.append(Packed(first, tuple(group), self.events))
        return parts

    def lines(self) -> tuple[np.ndarray, np.ndarray]:
        """The rows' packets as newline-delimited JSON in one buffer (as their chunks keep
        them: each packet followed by a newline), and where each packet begins (one more
        offset: the end)."""
        buffers, ends, base = [], [np.zeros(1, np.int64)], 0
        for chunk in self.chunks:
            skip = max(self.first - chunk.start, 0)
            offsets = chunk.offsets.astype(np.int64)
            buffers.append(np.frombuffer(chunk.json(), np.uint8)[offsets[skip] :])
            ends.append(offsets[skip + 1 :] - offsets[skip] + base)
            base += int(offsets[-1] - offsets[skip])
        return np.concatenate(buffers), np.concatenate(ends)

    @property
    def frame(self) -> pd.DataFrame:
        """The rows as :attr:`EventLog.frame` has them, plus a ``packet`` column of each row's
        JSON text."""
        pieces, texts = [], []
        for chunk in self.chunks:
            skip = max(self.first - chunk.start, 0)
            pieces.append(chunk_frame(chunk, self.events).iloc[skip:])
            json = chunk.json()
            offsets = chunk.offsets.tolist()
            texts += [
                json[offsets[i] : offsets[i + 1] - 1].decode()
                for i in range(skip, len(offsets) - 1)
            ]
        if not pieces:
            pieces.append(rows_frame((), self.events))
        frame = pd.concat(pieces, ignore_index=True) if len(pieces) > 1 else pieces[0]
        frame.index = pd.Index(np.arange(self.end - len(frame), self.end), name="row")
        frame["packet"] = pd.Series(texts, index=frame.index, dtype="str")
        return frame


def received_at(snap: Snapshot, row: int) -> float:
    """The receive time (epoch seconds) of kept row ``row``."""
    if row >= snap.tail_start:
        return snap.tail.at[row - snap.tail_start]
    chunk = snap.chunks[bisect.bisect_right([c.start for c in snap.chunks], row) - 1]
    return float(chunk.received_at[row - chunk.start])


def chunk_frame(chunk: Chunk, events: pd.CategoricalDtype) -> pd.DataFrame:
    """A sealed chunk as a DataFrame: decode its packets, flatten them, build the columns."""
    # One packet at a time: decoding them all first would keep thousands of dicts alive, and
    # every garbage collection pass meanwhile would walk them all (8x slower).
    json = memoryview(chunk.json())
    offsets = chunk.offsets.tolist()
    rows = (
        flatten(orjson.loads(json[offsets[i] : offsets[i + 1] - 1]), at, history, _channel(ch))
        for i, (at, history, ch) in enumerate(
            zip(
                chunk.received_at.tolist(),
                chunk.history.tolist(),
                chunk.channels.tolist(),
                strict=True,
            )
        )
    )
    return rows_frame(rows, events)


def flattened_rows(snap: Snapshot, numbers: np.ndarray) -> pd.DataFrame:
    """Kept rows ``numbers`` built from their packets."""
    located = locate(snap, numbers.tolist())
    return rows_frame((flatten(*found) for found in located), snap.events)


def locate(
    snap: Snapshot, numbers: Iterable[int]
) -> Iterator[tuple[dict[str, Any], float, bool, int | None]]:
    """``(packet, received_at, from_history, channel)`` of kept rows ``numbers``, in that
    order; each chunk involved is decompressed once."""
    starts = [chunk.start for chunk in snap.chunks]
    json: tuple[Chunk, bytes] | None = None
    for row in numbers:
        if row >= snap.tail_start:
            tail, index = snap.tail, row - snap.tail_start
            yield (
                orjson.loads(tail.packets[index]),
                tail.at[index],
                tail.history[index],
                tail.channels[index],
            )
            continue
        chunk = snap.chunks[bisect.bisect_right(starts, row) - 1]
        if json is None or json[0] is not chunk:
            json = (chunk, chunk.json())
        index = row - chunk.start
        yield (
            chunk.packet(json[1], index),
            float(chunk.received_at[index]),
            bool(chunk.history[index]),
            _channel(chunk.channels[index]),
        )
