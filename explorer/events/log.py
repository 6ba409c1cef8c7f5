"""The growing table of chat events: events kept compactly, read as pandas DataFrames.

Why this shape (DESIGN.md, "Performance design"): growing a DataFrame per event (``pd.concat``
or ``df.loc[len(df)] = row``) copies the table every time and manages about a thousand events
a second. A live chat client must also never fall behind its socket, so adding an event does
as little as possible, and the DataFrame work waits until a DataFrame is wanted:

* adding keeps the event's time, name, packet (the JSON as it came, text or the websocket
  frame's bytes) and message id in the open *tail*, one list per field;
* every ``chunk_rows`` rows the tail is *sealed*: the packets become one zstd-compressed
  newline-delimited JSON text (about 45 bytes per chat message) and the other fields small
  numpy arrays;
* reading builds rows from packets: :meth:`EventLog.materialise` (which the chat client calls
  while its socket is quiet) and :attr:`EventLog.frame` decode each sealed chunk not built yet,
  flatten every packet into a row and build a DataFrame column by column with declared dtypes
  (``events/rows.py``: the columns, flattening and building). ``.frame`` concatenates those
  with the tail's rows; the sealed part of the result then replaces what it was built from
  (sharing its memory), so the next read builds only what is new, and an unchanged log
  returns its last frame without rebuilding. :meth:`EventLog.tail` builds only the rows it
  returns, for live views. The views (``messages()``, ``polls()``, ``users()``,
  ``moderation()``) are the functions of ``events/frames.py`` applied to ``.frame``.

Measured (``benchmarks/eventlog.py``, ``benchmarks/chat_ingest.py``): adding costs under a
microsecond per event, which lets the chat client ingest at over 0.8 of the speed of a bare
websockets client that only parses JSON; building costs about 5 us per row when read (the
packet is decoded a second time). Flattening at ingest instead would cost the socket path
about 1.5 us more per event, for reads that are then almost free.

The index is the row number since the log began (``row``), stable across reads and trims.

Raw packets are not a column. On realistic ChatMessage packets (about 400 bytes on the wire)
a decoded packet dict retains about 2 kB and its JSON about 460 bytes, while the flattened
columns together take about 270, so a ``raw`` column of either kind would break the budget of
400 bytes per event on its own. The compressed chunks keep them instead (about 75 bytes per
event with the sealed fields, 330 once the rows are built), and :meth:`EventLog.packets`
decodes them on demand, for instance ``log.packets(log.messages().index)``.

Garbage collection shapes the code: a tuple or dict kept per event counts towards the next
collection, and at chat rates that means hundreds of collections per 100,000 events, each
walking every young object and now and then the whole heap (about 10 % of ingest and 20 % of
reading, measured). So the tail keeps its fields in lists of plain values, packets are decoded
one at a time while rows are built, and rows are transposed a few hundred at a time.

Reconnects: :meth:`EventLog.add_history` skips messages whose ids are already kept. Sealed
chunks keep 32 bits of each message id's hash (4 bytes a row, where a set of every id would
cost about 125); a hit is confirmed against its packet. It runs once per reconnect.

Threads: one writer thread calls :meth:`~EventLog.append`, :meth:`~EventLog.append_event`,
:meth:`~EventLog.extend` and :meth:`~EventLog.add_history`; any thread may read. The writer
appends a row's message id last, so a reader that counts the ids sees only whole rows; a short
lock guards the swap of tail and chunks at sealing and the readers' snapshot of them. Readers
share the rows built so far under a second lock, never held by the writer, and
:meth:`~EventLog.tail` and :meth:`~EventLog.materialise` never wait for it, so a live view on
the writer's thread is not held up by a long read elsewhere. Pure: no I/O, and time comes from
the caller or the injected ``clock``.
"""

from __future__ import annotations

import asyncio
import html
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import orjson
import pandas as pd

from explorer.core.heap import release_freed
from explorer.events import frames as chatviews
from explorer.events.chunks import (
    Chunk,
    Packed,
    Raw,
    Snapshot,
    Tail,
    chunk_frame,
    flattened_rows,
    id_hashes,
    locate,
    pack,
    received_at,
)
from explorer.wire.events import EVENTS

#: Rows sealed into one chunk by default. A bounded log trims whole chunks, so it keeps between
#: ``max_rows`` and ``max_rows + chunk_rows`` rows: its memory is level once that many came.
CHUNK_ROWS = 4096
#: Rows and columns at most in the log's HTML view.
_HTML_ROWS = 5
_HTML_COLUMNS = 12


def _with_events(frame: pd.DataFrame, events: pd.CategoricalDtype) -> pd.DataFrame:
    """``frame`` with ``event`` recast to ``events`` when a new event name grew the categories."""
    if frame["event"].dtype == events:
        return frame
    return frame.assign(event=frame["event"].astype(events))


# The log: events kept as compressed packets, turned into DataFrames when one is read.


@dataclass(frozen=True, slots=True)
class _Segment:
    """Materialised sealed rows ``start .. start + len(frame)`` as one DataFrame."""

    start: int
    frame: pd.DataFrame

    @property
    def end(self) -> int:
        return self.start + len(self.frame)


class EventLog:
    """A growing, optionally bounded table of chat events (see the module docstring).

    ``max_rows`` keeps only that many most recent rows (``None``: keep everything), except
    rows :meth:`hold` keeps for a reader that has not taken them yet; ``chunk_rows`` is the
    sealing size; ``clock`` gives epoch seconds for events appended without ``received_at``;
    ``screen`` (an :class:`explorer.events.exclusions.Screen`) sees every event first and gives its
    data, a redacted copy to keep instead, or None to leave the event out.

    The writing methods take the ``channel`` an event came from: a log fed by several chats
    (``api.watch``) fills the ``channel`` column with it where the packet names no channel.
    """

    def __init__(
        self,
        max_rows: int | None = None,
        chunk_rows: int = CHUNK_ROWS,
        clock: Callable[[], float] = time.time,
        screen: Callable[[str, Any], Any] | None = None,
    ) -> None:
        if max_rows is not None and max_rows < 1:
            raise ValueError("max_rows must be at least 1 or None.")
        if chunk_rows < 1:
            raise ValueError("chunk_rows must be at least 1.")
        self._max_rows = max_rows
        self._chunk_rows = chunk_rows
        self._clock = clock
        self._screen = screen
        # The writer's lock: swaps of tail and chunks, category growth, reader snapshots.
        self._lock = threading.Lock()
        self._tail = Tail()
        self._tail_start = 0
        self._chunks: deque[Chunk] = deque()
        self._events = pd.CategoricalDtype(EVENTS)
        self._counts: dict[str, int] = {}
        # The readers' lock and cache: materialised sealed rows, and the last frame read.
        self._read_lock = threading.Lock()
        self._segments: list[_Segment] = []
        self._last: tuple[int, int, pd.DataFrame] | None = None
        #: The first row a reader still needs despite ``max_rows`` (None: none held).
        self._hold: int | None = None

    # Writing (one thread).

    def append(
        self,
        packet: Mapping[str, Any],
        received_at: float | None = None,
        channel: int | None = None,
    ) -> None:
        """Add one event packet ``{type, event, data}`` received at ``received_at`` (epoch s)."""
        when = self._clock() if received_at is None else float(received_at)
        self._add_packet(packet, when, channel=channel)

    def append_event(
        self,
        event: str,
        data: Any,
        raw: Raw,
        received_at: float,
        message_id: str | None,
        channel: int | None = None,
    ) -> None:
        """Add one event already decoded from ``raw``, the JSON text or bytes it came in.

        The chat client's path: ``raw`` is kept as the packet, so nothing is encoded again, and
        the caller, which has read the ChatMessage's id already, passes it as ``message_id``
        (what :meth:`add_history` and :meth:`seen_message` find the message by).
        """
        if self._screen is not None:
            kept = self._screen(event, data)
            if kept is not data:
                if kept is not None:
                    packet = {"type": "event", "event": event, "data": kept}
                    self._add_packet(packet, received_at, channel=channel, screened=True)
                return
        self._add(received_at, event, raw, False, message_id, channel)

    def extend(
        self,
        packets: Iterable[Mapping[str, Any]],
        received_at: float | None = None,
        channel: int | None = None,
    ) -> None:
        """Add several event packets, all stamped with ``received_at`` (one clock read if None)."""
        when = self._clock() if received_at is None else float(received_at)
        for packet in packets:
            self._add_packet(packet, when, channel=channel)

    def add_history(
        self,
        messages: Iterable[Mapping[str, Any]],
        received_at: float | None = None,
        channel: int | None = None,
    ) -> int:
        """Add the chat message data of a ``history`` reply, skipping ids already in the log.

        After a reconnect this fills the gap without duplicating messages that arrived live.
        Rows get ``from_history`` True and ``received_at`` of the reply; their packets are
        ``{"type": "event", "event": "ChatMessage", "data": message}``. Returns rows added.
        """
        when = self._clock() if received_at is None else float(received_at)
        messages = list(messages)
        ids = (m.get("id") for m in messages)
        seen = self.kept_message_ids({i for i in ids if isinstance(i, str)})
        added = 0
        for message in messages:
            message_id = message.get("id")
            if isinstance(message_id, str):
                if message_id in seen:
                    continue
                seen.add(message_id)
            packet = {"type": "event", "event": "ChatMessage", "data": message}
            added += self._add_packet(packet, when, from_history=True, channel=channel)
        return added

    def _add_packet(
        self,
        packet: Mapping[str, Any],
        received_at: float,
        from_history: bool = False,
        channel: int | None = None,
        screened: bool = False,
    ) -> bool:
        """Add ``packet`` (unless the screen leaves it out: False)."""
        event = packet.get("event")
        if not isinstance(event, str):
            raise ValueError(f"Not an event packet: event is {event!r}.")
        data = packet.get("data")
        if self._screen is not None and not screened:
            kept = self._screen(event, data)
            if kept is None:
                return False
            if kept is not data:
                packet, data = {**packet, "data": kept}, kept
        message_id = data.get("id") if event == "ChatMessage" and type(data) is dict else None
        # Text, not orjson's bytes: those hold a 4 kB buffer however short the JSON.
        raw = orjson.dumps(packet, default=str).decode()
        self._tail.text = True
        message_id = message_id if type(message_id) is str else None
        self._add(received_at, event, raw, from_history, message_id, channel)
        return True

    def _add(
        self,
        received_at: float,
        event: str,
        raw: Raw,
        from_history: bool,
        message_id: str | None,
        channel: int | None,
    ) -> None:
        try:
            self._counts[event] += 1
        except KeyError:
            if event not in self._events.categories:
                with self._lock:
                    self._events = pd.CategoricalDtype([*self._events.categories, event])
            self._counts[event] = 1
        tail = self._tail
        tail.at.append(received_at)
        tail.events.append(event)
        tail.packets.append(raw)
        tail.history.append(from_history)
        tail.channels.append(channel)
        tail.ids.append(message_id)
        if len(tail.ids) >= self._chunk_rows:
            self._seal()

    def _seal(self) -> None:
        chunk = pack(self._tail, len(self._tail.ids), self._tail_start, self._events)
        with self._lock:
            self._chunks.append(chunk)
            self._tail_start = chunk.end
            self._tail = Tail()
            if self._max_rows is not None:
                floor = self._tail_start - self._max_rows
                if self._hold is not None:
                    floor = min(floor, self._hold)
                while self._chunks and self._chunks[0].end <= floor:
                    self._chunks.popleft()

    # Reading (any thread).

    @property
    def total(self) -> int:
        """Events ever added, including rows no longer kept."""
        with self._lock:
            return self._tail_start + len(self._tail.ids)

    @property
    def counts(self) -> dict[str, int]:
        """Events ever added, per event name."""
        return dict(self._counts)

    def seen_message(self, message_id: str) -> bool:
        """Whether a kept ChatMessage row has this id."""
        return bool(self.kept_message_ids({message_id}))

    def kept_message_ids(self, ids: set[str]) -> set[str]:
        """Which of ``ids`` are ids of kept ChatMessage rows.

        Sealed rows are matched by 32 bits of the hash of their id and each hit is confirmed
        against its packet: a set of every id would cost about 125 bytes per message.
        """
        snap = self._snapshot()
        start = self._start(snap)
        found = {i for i in snap.tail.ids[snap.open_rows(start)] if i in ids}
        hashes = id_hashes(list(ids))
        for chunk in snap.chunks:
            first = max(start - chunk.start, 0)
            hits = np.flatnonzero(np.isin(chunk.ids[first:], hashes)) + first
            if len(hits):
                json = chunk.json()
                for index in hits.tolist():
                    packet = chunk.packet(json, index)
                    data = packet.get("data")
                    event = packet.get("event")
                    if event == "ChatMessage" and isinstance(data, dict) and data.get("id") in ids:
                        found.add(data["id"])
        return found

    def _snapshot(self) -> Snapshot:
        with self._lock:
            tail = self._tail
            return Snapshot(
                tuple(self._chunks),
                tail,
                self._tail_start,
                self._tail_start + len(tail.ids),
                self._events,
            )

    def _start(self, snap: Snapshot) -> int:
        """First row kept in ``snap``: ``max_rows`` back from its end, or the held row."""
        if self._max_rows is None:
            return 0
        start = max(0, snap.end - self._max_rows)
        hold = self._hold
        if hold is not None:
            first = snap.chunks[0].start if snap.chunks else snap.tail_start
            start = max(min(start, hold), first)
        return start

    def hold(self, row: int | None) -> None:
        """Keep rows from ``row`` on (and those after) despite ``max_rows``, until a later call
        moves the hold on or releases it (None).

        A recorder that writes a bounded log to disk holds its next unwritten row, so no row
        is trimmed before it was written, and memory stays bounded by what is not written yet.
        """
        with self._lock:
            self._hold = row

    def packed(self, row: int) -> Packed:
        """The kept rows numbered ``row`` and later as :class:`Packed` chunks: a recorder's
        cheap hand-over of new rows to the process that builds and writes them."""
        snap = self._snapshot()
        first = max(row, self._start(snap))
        chunks = [chunk for chunk in snap.chunks if chunk.end > first]
        open_rows = snap.end - snap.tail_start
        if open_rows and snap.end > first:
            chunks.append(pack(snap.tail, open_rows, snap.tail_start, snap.events))
        return Packed(first, tuple(chunks), snap.events)

    def materialise(self, max_chunks: int | None = None) -> int:
        """Build the DataFrame rows of sealed chunks not built yet, oldest first, at most
        ``max_chunks`` of them; the number of rows built.

        Reads do this on demand. The chat client calls it while its socket is quiet, so that
        reads stay fast and a busy chat never waits for it. Returns 0 at once while another
        thread is reading.
        """
        if not self._read_lock.acquire(blocking=False):
            return 0
        try:
            snap = self._snapshot()
            return self._catch_up(snap, self._start(snap), max_chunks)
        finally:
            self._read_lock.release()

    def _catch_up(self, snap: Snapshot, start: int, max_chunks: int | None) -> int:
        """Materialise ``snap``'s pending chunks (read lock held); rows built."""
        segments = [s for s in self._segments if s.end > start]
        done = segments[-1].end if segments else start
        pending = [chunk for chunk in snap.chunks if chunk.end > done][:max_chunks]
        for chunk in pending:
            frame = chunk_frame(chunk, snap.events)
            first = max(done - chunk.start, 0)
            segments.append(_Segment(chunk.start + first, frame.iloc[first:]))
        self._segments = segments
        return pending[-1].end - done if pending else 0

    @property
    def frame(self) -> pd.DataFrame:
        """All kept rows (see the module docstring for columns)."""
        with self._read_lock:
            snap = self._snapshot()
            start = self._start(snap)
            last = self._last
            if last is not None and last[0] == start and last[1] == snap.end:
                return last[2].copy(deep=False)
            self._catch_up(snap, start, None)
            pieces = [
                _with_events(s.frame.iloc[max(start - s.start, 0) :], snap.events)
                for s in self._segments
            ]
            first_open = max(start, snap.tail_start)
            if first_open < snap.end or not pieces:
                pieces.append(flattened_rows(snap, np.arange(first_open, snap.end)))
            frame = (
                pd.concat(pieces, ignore_index=True)
                if len(pieces) > 1
                else pieces[0].copy(deep=False)
            )
            frame.index = pd.RangeIndex(start, snap.end, name="row")
            sealed = first_open - start
            merged = len(self._segments) > 1
            # The sealed rows of this frame stand in for the segments they were copied from.
            self._segments = [_Segment(start, frame.iloc[:sealed])] if sealed else []
            self._last = (start, snap.end, frame)
            if merged:
                # Concatenating per-chunk columns (tens of kilobytes each, so on the C heap)
                # left holes glibc keeps resident, about 100 bytes a row at a million rows;
                # one release after segments were merged returns them (about 60 ms after
                # building 200,000 rows, a fifteenth of the build).
                del pieces
                release_freed()
        return frame.copy(deep=False)

    def tail(self, n: int = 20, event: str | Collection[str] | None = None) -> pd.DataFrame:
        """The last ``n`` kept rows, or the last ``n`` rows of ``event`` (a name or several),
        built from those rows alone: for live views, and never waiting for another reader."""
        snap = self._snapshot()
        start = self._start(snap)
        n = max(n, 0)
        if event is None:
            return self._rows_frame(snap, np.arange(max(start, snap.end - n), snap.end))
        names = {event} if isinstance(event, str) else set(event)
        first_open = max(start, snap.tail_start)
        open_events = snap.tail.events[snap.open_rows(first_open)]
        hits = [first_open + i for i, name in enumerate(open_events) if name in names]
        numbers = [np.array(hits[-n:] if n else [], np.int64)]
        need = n - len(numbers[0])
        codes = [code for code, name in enumerate(snap.events.categories) if name in names]
        for chunk in reversed(snap.chunks):
            if need <= 0 or chunk.end <= start:
                break
            first = max(start - chunk.start, 0)
            positions = np.flatnonzero(np.isin(chunk.codes[first:], codes))[-need:] + first
            numbers.insert(0, positions + chunk.start)
            need -= len(positions)
        return self._rows_frame(snap, np.concatenate(numbers))

    def _rows_frame(self, snap: Snapshot, numbers: np.ndarray) -> pd.DataFrame:
        """Kept rows ``numbers`` (ascending): taken from materialised segments where they are,
        else flattened from their packets."""
        segments = self._segments  # replaced whole, never changed: no lock needed
        low = int(np.searchsorted(numbers, segments[0].start)) if segments else 0
        high = int(np.searchsorted(numbers, segments[-1].end)) if segments else 0
        pieces = [flattened_rows(snap, numbers[:low])] if low else []
        for segment in segments:
            inside = numbers[low:high]
            inside = inside[(inside >= segment.start) & (inside < segment.end)]
            if len(inside):
                rows = segment.frame.iloc[inside - segment.start]
                pieces.append(_with_events(rows, snap.events))
        if high < len(numbers) or not pieces:
            pieces.append(flattened_rows(snap, numbers[high:]))
        frame = pd.concat(pieces, ignore_index=True) if len(pieces) > 1 else pieces[0].copy()
        frame.index = pd.Index(numbers, dtype=np.int64, name="row")
        return frame

    def messages(self) -> pd.DataFrame:
        """ChatMessage rows with the message columns only (:func:`chatviews.messages
        <explorer.events.frames.messages>`)."""
        return chatviews.messages(self.frame)

    def polls(self, last: int | None = None) -> pd.DataFrame:
        """Poll progress in long form (:func:`~explorer.events.frames.poll_progress`) of every
        poll event, or of the last ``last`` of them, read through :meth:`tail` (for live
        charts)."""
        if last is not None:
            return chatviews.poll_progress(self.tail(last, chatviews.POLL_EVENTS))
        frame = self.frame
        return chatviews.poll_progress(frame.loc[frame["event"].isin(chatviews.POLL_EVENTS)])

    def users(self) -> pd.DataFrame:
        """One row per user id seen: latest name and roles, message count, first and last
        seen (:func:`~explorer.events.frames.users`)."""
        return chatviews.users(self.frame)

    def moderation(self) -> pd.DataFrame:
        """Moderation events with whom each acted on, named where the log has seen the user
        (:func:`~explorer.events.frames.moderation`)."""
        return chatviews.moderation(self.frame)

    def changes(self, fields: str | Sequence[str] | None = None) -> pd.DataFrame:
        """The fields live update events changed, one row per field per event
        (:func:`~explorer.events.frames.changes`; ``fields`` keeps only those)."""
        return chatviews.changes(self.frame, fields)

    def packets(self, rows: Iterable[int] | None = None) -> list[dict[str, Any]]:
        """The original packets of the kept rows numbered ``rows`` (a frame's index), or all.

        Raises ``KeyError`` for a row that is not kept.
        """
        snap = self._snapshot()
        start = self._start(snap)
        wanted = range(start, snap.end) if rows is None else list(rows)
        for row in wanted:
            if not start <= row < snap.end:
                raise KeyError(row)
        return [found[0] for found in locate(snap, wanted)]

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        """Arrow's PyCapsule stream of :attr:`frame` (the event-log columns with their Arrow
        types, ``eventtables.LOG_SCHEMA``): ``pyarrow.table(log)``, ``polars.DataFrame(log)``."""
        from explorer.events.tables import log_table  # Arrow's compute and JSON: when asked

        return log_table(self.frame).__arrow_c_stream__(requested_schema)

    def polars(self) -> Any:
        """:attr:`frame` as a ``polars.DataFrame`` (polars is optional: ``[polars]``)."""
        from explorer.core.polarsframes import polars_frame

        return polars_frame(self)

    def to_parquet(self, path: str | os.PathLike[str]) -> None:
        """Write :attr:`frame` to Parquet; ``poll_responses`` is stored as JSON text."""
        frame = self.frame
        responses = frame["poll_responses"].map(
            lambda r: None if r is None else orjson.dumps(r).decode()
        )
        frame.assign(poll_responses=responses).to_parquet(path)

    def __repr__(self) -> str:
        """Events, kept rows, events per name and the kept rows' time span; reads no rows."""
        snap = self._snapshot()
        start = self._start(snap)
        if snap.end == start:
            return "<EventLog: no events>"
        kept = "" if start == 0 else f", the last {snap.end - start:,} kept"
        counts = sorted(self.counts.items(), key=lambda item: (-item[1], item[0]))
        names = ", ".join(f"{name} {count:,}" for name, count in counts)
        first, last = (_clock_time(received_at(snap, row)) for row in (start, snap.end - 1))
        return f"<EventLog: {snap.end:,} events{kept} ({names}), {first} to {last} UTC>"

    def _repr_html_(self) -> str:
        """The summary of ``repr`` and the last few rows, with the columns they fill (for
        Jupyter: never the whole table)."""
        rows = self.tail(_HTML_ROWS)
        rows = rows.loc[:, rows.notna().any() | rows.columns.isin(["received_at", "event"])]
        table = rows.to_html(max_cols=_HTML_COLUMNS, notebook=True) if len(rows) else ""
        return f"<p><code>{html.escape(repr(self))}</code></p>{table}"


def _clock_time(seconds: float) -> str:
    """``2026-11-24 12:00:01.123``: epoch seconds at millisecond resolution, in UTC."""
    return pd.Timestamp(round(seconds * 1000), unit="ms").strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


class _Logged(Protocol):
    @property
    def log(self) -> EventLog: ...


class LogViews:
    """The event log's views on an object that keeps one in ``log`` (a watch, a chat, a
    replay): ``obj.messages()`` for ``obj.log.messages()``, and so on."""

    def messages(self: _Logged) -> pd.DataFrame:
        """ChatMessage rows of the log so far (:meth:`EventLog.messages`)."""
        return self.log.messages()

    def polls(self: _Logged, last: int | None = None) -> pd.DataFrame:
        """Poll progress in the log so far (:meth:`EventLog.polls`)."""
        return self.log.polls(last)

    def users(self: _Logged) -> pd.DataFrame:
        """Users seen in the log so far (:meth:`EventLog.users`)."""
        return self.log.users()

    def changes(self: _Logged, fields: str | Sequence[str] | None = None) -> pd.DataFrame:
        """Fields changed by live update events so far (:meth:`EventLog.changes`)."""
        return self.log.changes(fields)


#: How often :func:`tidy` looks for a quiet socket to build DataFrame rows in, in seconds.
QUIET_INTERVAL = 0.25
#: Fewer new events than this in one interval is quiet (20,000 events a second).
QUIET_EVENTS = 5_000


async def tidy(log: EventLog, behind: Callable[[], bool] = lambda: False) -> None:
    """Build ``log``'s DataFrame rows while its sockets are quiet, until cancelled: one task
    per log (a log several chats feed runs one, not one per chat). Quiet is fewer than
    :data:`QUIET_EVENTS` new events in an interval, and ``behind`` (where its feeder can tell)
    false: nothing sent waits unread. A client falling behind a flood on a busy machine
    counts few events a second, yet has no time to spare."""
    seen = log.total
    while True:
        await asyncio.sleep(QUIET_INTERVAL)
        total = log.total
        if total - seen < QUIET_EVENTS and not behind():
            log.materialise(max_chunks=1)
        seen = total
