"""The growing table of chat events: one flat row per event, read as pandas DataFrames.

Why this shape (DESIGN.md, "Performance design"): growing a DataFrame per event (``pd.concat``
or ``df.loc[len(df)] = row``) copies the table every time and manages about a thousand events
a second. Here an event is flattened into one tuple appended to a plain list, the open *tail*.
Every ``chunk_rows`` rows the tail is *sealed*: transposed and built once, column by column
with declared dtypes, into a DataFrame chunk. :attr:`EventLog.frame` concatenates the sealed
chunks and the tail; the sealed part of that result then replaces the chunks it was built
from (sharing its memory), so the next read concatenates one piece plus what is new, and an
unchanged log returns its last frame without rebuilding. :meth:`EventLog.tail` builds only
the last rows, for live views.

Columns, in this order (:data:`COLUMNS`, dtypes in :data:`DTYPES`; missing values are ``<NA>``):

==================  ======================  ================================================
received_at         datetime64[ns, UTC]     when the toolkit received the event
event               category                event name
channel             Int64                   ``data.channel`` or ``data.originatingChannel``
message_id          string                  ChatMessage id, DeleteMessage id
user_name           string                  who the event is by or about: the sender
user_id             Int64                   (ChatMessage), joiner/leaver (UserJoin/UserLeave),
user_roles          string                  poll author, updated user (UserUpdate), timed-out
                                            user (UserTimeout); roles comma-joined
text                string                  ChatMessage components' text, concatenated
components          string                  component types, comma-joined ("text,emoticon")
whisper, me         boolean                 ChatMessage ``meta`` flags (False when absent)
target              string                  whisper recipient
poll_q              string                  PollStart/PollEnd question
poll_answers        object                  the answers list (answers may contain commas)
poll_voters         Int64                   voters so far
poll_responses      object                  the ``responses`` dict, answer -> votes
poll_ends_at        datetime64[ns, UTC]     ``endsAt`` (epoch ms)
poll_duration_ms    Int64                   ``duration`` (ms remaining)
moderator           string                  user_name of DeleteMessage/PurgeMessage
                                            ``moderator`` or ClearMessages ``clearer``
target_user_id      Int64                   whom a moderation or update acts on: PurgeMessage
                                            user_id, UserTimeout user, UserUpdate user
duration_ms         Int64                   UserTimeout duration
from_history        boolean                 row came from a ``history`` reply
==================  ======================  ================================================

The index is the row number since the log began (``row``), stable across reads and trims.
Strings use pandas' nullable ``string`` dtype (pyarrow storage when pyarrow is installed).

Raw packets are not a column. Measured with ``benchmarks/eventlog.py`` on realistic
ChatMessage packets (about 400 bytes on the wire), a decoded packet dict retains about 2 kB
and its JSON text about 460 bytes, while all the flattened columns together take about 270, so
a ``raw`` column of either kind would break the budget of 400 bytes per event on its own.
Instead each sealed chunk keeps its packets as one zlib-compressed JSON array (about 60 bytes
per event, 330 in all) and :meth:`EventLog.packets` decodes them on demand, for instance
``log.packets(log.messages().index)``. The open tail keeps each packet as JSON text rather than
as the dict: thousands of live dicts would make every garbage collection pass slower.

Reconnects: :meth:`EventLog.add_history` skips messages whose ids are already kept. The check
scans the kept ``message_id`` column (about 3 ms per 100,000 rows) instead of keeping a set
of ids, which would cost about 125 bytes per message; it runs once per reconnect.

Threads: one writer thread calls :meth:`~EventLog.append`, :meth:`~EventLog.extend` and
:meth:`~EventLog.add_history`; any thread may read. A row is one tuple added with one
``list.append``, so a reader can never see half a row; a short lock guards the swap of tail
and chunks at sealing and the reader's snapshot of them. No lock is held while a DataFrame is
built. Pure: no I/O, and time comes from the caller or the injected ``clock``.
"""

from __future__ import annotations

import bisect
import os
import threading
import time
import zlib
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import orjson
import pandas as pd

#: Event names from the spec's Events table, the first categories of ``event``.
KNOWN_EVENTS: tuple[str, ...] = (
    "WelcomeEvent",
    "ChatMessage",
    "UserJoin",
    "UserLeave",
    "PollStart",
    "PollEnd",
    "DeleteMessage",
    "PurgeMessage",
    "ClearMessages",
    "UserUpdate",
    "UserTimeout",
)

_TIME = pd.DatetimeTZDtype("ns", "UTC")
_STRING = pd.StringDtype()
_INT = pd.Int64Dtype()
_BOOL = pd.BooleanDtype()
_OBJECT = np.dtype(object)

# (column, dtype, how the row value is converted); "s"/"ms" are epoch seconds/milliseconds.
_SCHEMA: tuple[tuple[str, Any, str], ...] = (
    ("received_at", _TIME, "s"),
    ("event", pd.CategoricalDtype(KNOWN_EVENTS), "category"),
    ("channel", _INT, "int"),
    ("message_id", _STRING, "str"),
    ("user_name", _STRING, "str"),
    ("user_id", _INT, "int"),
    ("user_roles", _STRING, "str"),
    ("text", _STRING, "str"),
    ("components", _STRING, "str"),
    ("whisper", _BOOL, "bool"),
    ("me", _BOOL, "bool"),
    ("target", _STRING, "str"),
    ("poll_q", _STRING, "str"),
    ("poll_answers", _OBJECT, "object"),
    ("poll_voters", _INT, "int"),
    ("poll_responses", _OBJECT, "object"),
    ("poll_ends_at", _TIME, "ms"),
    ("poll_duration_ms", _INT, "int"),
    ("moderator", _STRING, "str"),
    ("target_user_id", _INT, "int"),
    ("duration_ms", _INT, "int"),
    ("from_history", _BOOL, "bool"),
)

#: Column names of :attr:`EventLog.frame`, in order.
COLUMNS: tuple[str, ...] = tuple(name for name, _, _ in _SCHEMA)
#: Declared dtypes; ``event`` gains a category for each event name outside :data:`KNOWN_EVENTS`.
DTYPES: dict[str, Any] = {name: dtype for name, dtype, _ in _SCHEMA}

_POS = {name: i for i, name in enumerate(COLUMNS)}
_MESSAGE_ID = _POS["message_id"]
_RAW = len(COLUMNS)  # rows carry the packet after the columns, for packets()
_BLANK: tuple[Any, ...] = (None,) * (len(COLUMNS) + 1)
_INT64_MAX = 2**63 - 1

_MESSAGE_COLUMNS = [
    "received_at",
    "channel",
    "message_id",
    "user_name",
    "user_id",
    "user_roles",
    "text",
    "components",
    "whisper",
    "me",
    "target",
    "from_history",
]
_POLL_DTYPES = {
    "time": _TIME,
    "question": _STRING,
    "answer": _STRING,
    "votes": _INT,
    "voters": _INT,
    "ended": np.dtype(bool),
}
_USER_DTYPES = {
    "user_id": _INT,
    "user_name": _STRING,
    "roles": _STRING,
    "messages": _INT,
    "first_seen": _TIME,
    "last_seen": _TIME,
}

Row = tuple[Any, ...]


# Flattening: one tuple per event, in COLUMNS order plus the packet.


def _roles(value: Any) -> str | None:
    return ",".join(value) if value is not None else None


def _name(user: Any) -> Any:
    return user.get("user_name") if isinstance(user, dict) else None


def _row(received_at: float, event: str, packet: Mapping[str, Any], **fields: Any) -> Row:
    row = list(_BLANK)
    row[0] = received_at
    row[1] = event
    row[_RAW] = _encode(packet)
    for name, value in fields.items():
        row[_POS[name]] = value
    return tuple(row)


def _encode(packet: Mapping[str, Any]) -> str:
    # Kept as str: orjson's bytes hold a 4 kB buffer however short the JSON; decode() is exact.
    return orjson.dumps(packet, default=str).decode()


def _chat_message(
    received_at: float, data: dict[str, Any], packet: Mapping[str, Any], history: bool
) -> Row:
    # The hot path: a literal tuple in COLUMNS order is ten times cheaper than _row().
    get = data.get
    message = get("message") or {}
    parts = message.get("message") or ()
    meta = message.get("meta")
    roles = get("user_roles")
    channel = get("channel")
    return (
        received_at,
        "ChatMessage",
        get("originatingChannel") if channel is None else channel,
        get("id"),
        get("user_name"),
        get("user_id"),
        ",".join(roles) if roles is not None else None,
        "".join([p["text"] if "text" in p else p.get("data", "") for p in parts]),
        ",".join([p.get("type", "") for p in parts]),
        meta.get("whisper") is True if meta else False,
        meta.get("me") is True if meta else False,
        get("target"),
        None,  # poll_q
        None,  # poll_answers
        None,  # poll_voters
        None,  # poll_responses
        None,  # poll_ends_at
        None,  # poll_duration_ms
        None,  # moderator
        None,  # target_user_id
        None,  # duration_ms
        history,
        orjson.dumps(packet, default=str).decode(),  # _encode(), inlined
    )


def _poll(data: dict[str, Any]) -> dict[str, Any]:
    author = data.get("author") or {}
    return {
        "user_name": author.get("user_name"),
        "user_id": author.get("user_id"),
        "user_roles": _roles(author.get("user_roles")),
        "poll_q": data.get("q"),
        "poll_answers": data.get("answers"),
        "poll_voters": data.get("voters"),
        "poll_responses": data.get("responses"),
        "poll_ends_at": data.get("endsAt"),
        "poll_duration_ms": data.get("duration"),
    }


def _user_timeout(data: dict[str, Any]) -> dict[str, Any]:
    user = data.get("user") or {}
    return {
        "user_name": user.get("user_name"),
        "user_id": user.get("user_id"),
        "user_roles": _roles(user.get("user_roles")),
        "target_user_id": user.get("user_id"),
        "duration_ms": data.get("duration"),
    }


# Events not listed here (WelcomeEvent, unknown names) fill only the common columns.
_FLATTEN: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "UserJoin": lambda d: {
        "user_name": d.get("username"),
        "user_id": d.get("id"),
        "user_roles": _roles(d.get("roles")),
    },
    "UserLeave": lambda d: {"user_name": d.get("username"), "user_id": d.get("id")},
    "PollStart": _poll,
    "PollEnd": _poll,
    "DeleteMessage": lambda d: {"message_id": d.get("id"), "moderator": _name(d.get("moderator"))},
    "PurgeMessage": lambda d: {
        "target_user_id": d.get("user_id"),
        "moderator": _name(d.get("moderator")),
    },
    "ClearMessages": lambda d: {"moderator": _name(d.get("clearer"))},
    "UserUpdate": lambda d: {
        "user_name": d.get("username"),
        "user_id": d.get("user"),
        "user_roles": _roles(d.get("roles")),
        "target_user_id": d.get("user"),
    },
    "UserTimeout": _user_timeout,
}


def flatten(packet: Mapping[str, Any], received_at: float, from_history: bool = False) -> Row:
    """One row for an event packet: the :data:`COLUMNS` values, then the packet as JSON text.

    Fields of the wrong shape leave their columns empty instead of failing the event. When the
    rows are built, numbers of the wrong type are blanked and other values in a string column
    are written as text.
    """
    event = packet.get("event")
    data = packet.get("data")
    if event == "ChatMessage" and type(data) is dict:
        try:
            return _chat_message(received_at, data, packet, from_history)
        except (AttributeError, TypeError):
            pass  # a malformed message keeps the common columns only
    elif not isinstance(event, str):
        raise ValueError(f"Not an event packet: event is {event!r}.")
    if type(data) is not dict:
        return _row(received_at, event, packet, from_history=from_history)
    flatten_data = _FLATTEN.get(event)
    try:
        fields = flatten_data(data) if flatten_data else {}
    except (AttributeError, TypeError):
        fields = {}
    channel = data.get("channel", data.get("originatingChannel"))
    return _row(received_at, event, packet, channel=channel, from_history=from_history, **fields)


# Building columns: one pandas array per column, from a transposed list of rows.


def _as_int(value: Any) -> int | None:
    if type(value) is float and value.is_integer():
        value = int(value)
    return value if type(value) is int and abs(value) <= _INT64_MAX else None


def _missing(kind: str, dtype: Any, n: int) -> Any:
    """An all-missing array, built directly: most columns of a chat chunk are empty."""
    if kind == "int":
        return pd.arrays.IntegerArray(np.zeros(n, np.int64), np.ones(n, bool))
    if kind == "bool":
        return pd.arrays.BooleanArray(np.zeros(n, bool), np.ones(n, bool))
    if kind == "ms":
        return pd.DatetimeIndex(np.full(n, np.datetime64("NaT", "ns"))).tz_localize("UTC").array
    return pd.Series(pd.NA, index=pd.RangeIndex(n), dtype=dtype).array


def _array(kind: str, dtype: Any, values: Sequence[Any]) -> Any:
    n = len(values)
    if kind == "object":
        return np.fromiter(values, dtype=object, count=n)
    if kind == "s":
        return pd.to_datetime(np.asarray(values, dtype="float64"), unit="s", utc=True).as_unit("ns")
    if kind == "category":
        # Every row's event is already a category (EventLog._add); codes beat matching strings.
        codes = {name: code for code, name in enumerate(dtype.categories)}
        return pd.Categorical.from_codes(
            np.array([codes[v] for v in values], np.int32), dtype=dtype
        )
    missing = values.count(None)
    if missing == n:
        return _missing(kind, dtype, n)
    if kind == "bool" and missing == 0:
        return pd.arrays.BooleanArray(np.array(values, dtype=bool), np.zeros(n, bool))
    if kind in ("str", "bool"):
        # Flattening makes every boolean; the string dtype writes any other value as text.
        return pd.array(values, dtype=dtype)
    try:
        if kind == "ms":
            return pd.to_datetime(pd.array(values, dtype=_INT), unit="ms", utc=True).as_unit("ns")
        return pd.array(values, dtype=dtype)
    except (TypeError, ValueError, OverflowError):
        # A number of the wrong type from the wire: blank it rather than lose the chunk.
        return _array(kind, dtype, [_as_int(v) for v in values])


def _build(rows: Sequence[Row], events: pd.CategoricalDtype) -> pd.DataFrame:
    """The DataFrame for ``rows``, built column-wise with the declared dtypes."""
    # One list per column; zip(*rows) would allocate an iterator per row and wake the GC.
    columns = [[row[i] for row in rows] for i in range(len(_SCHEMA))]
    data = {
        name: _array(kind, events if kind == "category" else dtype, columns[i])
        for i, (name, dtype, kind) in enumerate(_SCHEMA)
    }
    return pd.DataFrame(data, copy=False)


def _with_events(frame: pd.DataFrame, events: pd.CategoricalDtype) -> pd.DataFrame:
    """``frame`` with ``event`` recast to ``events`` when a new event name grew the categories."""
    if frame["event"].dtype == events:
        return frame
    return frame.assign(event=frame["event"].astype(events))


@dataclass(frozen=True, slots=True)
class _Segment:
    """Sealed rows ``start .. start + len(frame)`` as one DataFrame."""

    start: int
    frame: pd.DataFrame

    @property
    def end(self) -> int:
        return self.start + len(self.frame)


@dataclass(frozen=True, slots=True)
class _Chunk:
    """The packets of sealed rows ``start .. start + count``: a zlib-compressed JSON array."""

    start: int
    count: int
    packets: bytes


@dataclass(frozen=True, slots=True)
class _Snapshot:
    segments: tuple[_Segment, ...]
    chunks: tuple[_Chunk, ...]
    rows: list[Row]
    tail_start: int
    end: int
    events: pd.CategoricalDtype


class EventLog:
    """A growing, optionally bounded table of chat events (see the module docstring).

    ``max_rows`` keeps only that many most recent rows (``None``: keep everything);
    ``chunk_rows`` is the sealing size; ``clock`` gives epoch seconds for events appended
    without ``received_at``.
    """

    def __init__(
        self,
        max_rows: int | None = None,
        chunk_rows: int = 4096,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if max_rows is not None and max_rows < 1:
            raise ValueError("max_rows must be at least 1 or None.")
        if chunk_rows < 1:
            raise ValueError("chunk_rows must be at least 1.")
        self._max_rows = max_rows
        self._chunk_rows = chunk_rows
        self._clock = clock
        self._lock = threading.Lock()
        self._rows: list[Row] = []
        self._tail_start = 0
        self._segments: list[_Segment] = []
        self._chunks: deque[_Chunk] = deque()
        self._events = pd.CategoricalDtype(KNOWN_EVENTS)
        self._counts: dict[str, int] = {}
        self._last: tuple[int, int, pd.DataFrame] | None = None

    # Writing (one thread).

    def append(self, packet: Mapping[str, Any], received_at: float | None = None) -> None:
        """Add one event packet ``{type, event, data}`` received at ``received_at`` (epoch s)."""
        self._add(flatten(packet, self._clock() if received_at is None else float(received_at)))

    def extend(
        self, packets: Iterable[Mapping[str, Any]], received_at: float | None = None
    ) -> None:
        """Add several event packets, all stamped with ``received_at`` (one clock read if None)."""
        when = self._clock() if received_at is None else float(received_at)
        for packet in packets:
            self._add(flatten(packet, when))

    def add_history(
        self, messages: Iterable[Mapping[str, Any]], received_at: float | None = None
    ) -> int:
        """Add the chat message data of a ``history`` reply, skipping ids already in the log.

        After a reconnect this fills the gap without duplicating messages that arrived live.
        Rows get ``from_history`` True and ``received_at`` of the reply; their packets are
        ``{"type": "event", "event": "ChatMessage", "data": message}``. Returns rows added.
        """
        when = self._clock() if received_at is None else float(received_at)
        messages = list(messages)
        ids = (m.get("id") for m in messages)
        seen = self._kept_message_ids({i for i in ids if isinstance(i, str)})
        added = 0
        for message in messages:
            message_id = message.get("id")
            if isinstance(message_id, str):
                if message_id in seen:
                    continue
                seen.add(message_id)
            packet = {"type": "event", "event": "ChatMessage", "data": message}
            self._add(flatten(packet, when, from_history=True))
            added += 1
        return added

    def _add(self, row: Row) -> None:
        event = row[1]
        try:
            self._counts[event] += 1
        except KeyError:
            if event not in self._events.categories:
                with self._lock:
                    self._events = pd.CategoricalDtype([*self._events.categories, event])
            self._counts[event] = 1
        rows = self._rows
        rows.append(row)
        if len(rows) >= self._chunk_rows:
            self._seal()

    def _seal(self) -> None:
        rows = self._rows
        frame = _build(rows, self._events)
        chunk = _Chunk(
            self._tail_start,
            len(rows),
            zlib.compress(("[" + ",".join([r[_RAW] for r in rows]) + "]").encode(), 1),
        )
        with self._lock:
            self._segments.append(_Segment(self._tail_start, frame))
            self._chunks.append(chunk)
            self._tail_start += len(rows)
            self._rows = []
            if self._max_rows is not None:
                self._drop_before(self._tail_start - self._max_rows)

    def _drop_before(self, floor: int) -> None:
        """Forget sealed rows wholly older than row ``floor`` (lock held)."""
        while self._segments and self._segments[0].end <= floor:
            del self._segments[0]
        while self._chunks and self._chunks[0].start + self._chunks[0].count <= floor:
            self._chunks.popleft()

    # Reading (any thread).

    @property
    def total(self) -> int:
        """Events ever added, including rows no longer kept."""
        with self._lock:
            return self._tail_start + len(self._rows)

    @property
    def counts(self) -> dict[str, int]:
        """Events ever added, per event name."""
        return dict(self._counts)

    def seen_message(self, message_id: str) -> bool:
        """Whether a kept ChatMessage row has this id (one vectorised scan of the kept rows)."""
        return bool(self._kept_message_ids({message_id}))

    def _kept_message_ids(self, ids: set[str]) -> set[str]:
        """Which of ``ids`` are ids of kept ChatMessage rows.

        A scan instead of an id set: a set of every id costs about 125 bytes per message, a
        third of the memory budget, for a lookup needed once per reconnect.
        """
        snap = self._snapshot()
        start = self._start(snap)
        found = {
            r[_MESSAGE_ID]
            for r in snap.rows[max(start - snap.tail_start, 0) :]
            if r[_MESSAGE_ID] in ids and r[1] == "ChatMessage"
        }
        for segment in snap.segments:
            if segment.end > start:
                kept = slice(max(start - segment.start, 0), None)
                message_ids = segment.frame["message_id"].iloc[kept]
                hits = message_ids.isin(list(ids)).to_numpy()
                if hits.any():
                    events = segment.frame["event"].iloc[kept][hits]
                    found.update(message_ids[hits][(events == "ChatMessage").to_numpy()])
        return found

    def _snapshot(self) -> _Snapshot:
        with self._lock:
            rows = self._rows
            return _Snapshot(
                tuple(self._segments),
                tuple(self._chunks),
                rows,
                self._tail_start,
                self._tail_start + len(rows),
                self._events,
            )

    def _start(self, snap: _Snapshot) -> int:
        """First row kept in ``snap``: ``max_rows`` back from its end."""
        if self._max_rows is None:
            return 0
        return max(0, snap.end - self._max_rows)

    def _assemble(self, snap: _Snapshot, start: int) -> tuple[pd.DataFrame, int]:
        """Rows ``start .. snap.end`` as one frame, and how many of them are sealed rows."""
        pieces = [
            _with_events(
                s.frame if s.start >= start else s.frame.iloc[start - s.start :], snap.events
            )
            for s in snap.segments
            if s.end > start
        ]
        first_tail = max(start, snap.tail_start)
        if first_tail < snap.end or not pieces:
            rows = snap.rows[first_tail - snap.tail_start : snap.end - snap.tail_start]
            pieces.append(_build(rows, snap.events))
        frame = (
            pd.concat(pieces, ignore_index=True) if len(pieces) > 1 else pieces[0].copy(deep=False)
        )
        frame.index = pd.RangeIndex(start, snap.end, name="row")
        return frame, first_tail - start

    @property
    def frame(self) -> pd.DataFrame:
        """All kept rows (see the module docstring for columns)."""
        snap = self._snapshot()
        start = self._start(snap)
        last = self._last
        if last is not None and last[0] == start and last[1] == snap.end:
            return last[2].copy(deep=False)
        frame, sealed = self._assemble(snap, start)
        if snap.segments:
            # The sealed rows of this frame stand in for the segments they were copied from.
            self._replace(snap.segments, _Segment(start, frame.iloc[:sealed]))
        self._last = (start, snap.end, frame)
        return frame.copy(deep=False)

    def _replace(self, segments: tuple[_Segment, ...], merged: _Segment) -> None:
        """Put ``merged`` in place of ``segments`` unless the writer trimmed them meanwhile."""
        with self._lock:
            current = self._segments[: len(segments)]
            if len(current) == len(segments) and all(
                a is b for a, b in zip(current, segments, strict=True)
            ):
                self._segments[: len(segments)] = [merged] if len(merged.frame) else []

    def tail(self, n: int = 20) -> pd.DataFrame:
        """The last ``n`` kept rows, built without touching older ones (for live views)."""
        snap = self._snapshot()
        return self._assemble(snap, max(self._start(snap), snap.end - max(n, 0)))[0]

    def messages(self) -> pd.DataFrame:
        """ChatMessage rows with the message columns only."""
        frame = self.frame
        return frame.loc[frame["event"] == "ChatMessage", _MESSAGE_COLUMNS]

    def polls(self) -> pd.DataFrame:
        """Poll progress in long form: one row per answer per PollStart/PollEnd event.

        Columns: time, question, answer, votes, voters, ended (True for PollEnd rows).
        """
        frame = self.frame
        polls = frame.loc[frame["event"].isin(["PollStart", "PollEnd"])]
        records = []
        for at, event, question, answers, voters, responses in zip(
            polls["received_at"],
            polls["event"],
            polls["poll_q"],
            polls["poll_answers"],
            polls["poll_voters"],
            polls["poll_responses"],
            strict=True,
        ):
            counts = responses if isinstance(responses, dict) else {}
            for answer in answers if isinstance(answers, list) else list(counts):
                records.append(
                    (at, question, answer, _as_int(counts.get(answer)), voters, event == "PollEnd")
                )
        columns = list(zip(*records, strict=True)) if records else [()] * len(_POLL_DTYPES)
        return pd.DataFrame(
            {
                name: pd.array(values, dtype=dtype) if name != "ended" else np.array(values, bool)
                for (name, dtype), values in zip(_POLL_DTYPES.items(), columns, strict=True)
            }
        )

    def users(self) -> pd.DataFrame:
        """One row per user id seen: latest name and roles, message count, first and last seen."""
        frame = self.frame
        seen = frame.loc[frame["user_id"].notna()]
        by_user = seen.groupby("user_id", sort=True)
        latest = by_user[["user_name", "user_roles"]].last()
        users = pd.DataFrame(
            {
                "user_id": latest.index.array,
                "user_name": latest["user_name"].array,
                "roles": latest["user_roles"].array,
                "messages": (seen["event"] == "ChatMessage")
                .groupby(seen["user_id"], sort=True)
                .sum()
                .array,
                "first_seen": by_user["received_at"].min().array,
                "last_seen": by_user["received_at"].max().array,
            }
        )
        return users.astype(_USER_DTYPES)

    def packets(self, rows: Iterable[int] | None = None) -> list[dict[str, Any]]:
        """The original packets of the kept rows numbered ``rows`` (a frame's index), or all.

        Raises ``KeyError`` for a row that is not kept.
        """
        snap = self._snapshot()
        start = self._start(snap)
        wanted = range(start, snap.end) if rows is None else rows
        starts = [c.start for c in snap.chunks]
        decoded: dict[int, list[Any]] = {}
        out = []
        for row in wanted:
            if not start <= row < snap.end:
                raise KeyError(row)
            if row >= snap.tail_start:
                out.append(orjson.loads(snap.rows[row - snap.tail_start][_RAW]))
                continue
            chunk = snap.chunks[bisect.bisect_right(starts, row) - 1]
            if chunk.start not in decoded:
                decoded[chunk.start] = orjson.loads(zlib.decompress(chunk.packets))
            out.append(decoded[chunk.start][row - chunk.start])
        return out

    def to_parquet(self, path: str | os.PathLike[str]) -> None:
        """Write :attr:`frame` to Parquet; ``poll_responses`` is stored as JSON text."""
        frame = self.frame
        responses = frame["poll_responses"].map(
            lambda r: None if r is None else orjson.dumps(r).decode()
        )
        frame.assign(poll_responses=responses).to_parquet(path)
