"""Reading a capture back: the Parquet directory recorders write, queried lazily through DuckDB.

:func:`open_capture` gives a :class:`Capture`: the events (:meth:`Capture.events`, with the
columns and dtypes of ``EventLog.frame``), the same views as an event log (``messages()``,
``polls()``, ``users()``, ``moderation()``, the functions of ``events/frames.py``), the track
rows (:meth:`Capture.snapshots`) and SQL over both (:meth:`Capture.sql`, views ``events``
and ``snapshots``). They are methods, each reading what it is asked for, where an
``EventLog`` or a tracker, which hold their tables in memory, have a ``.frame`` property.

Why DuckDB: it reads the files where they are, listing them at each query (a capture still
being recorded shows its new files; a compacted partition is its day file and the files
written since, :mod:`explorer.recording.compaction`), pushes ``channels=`` and time filters into the
scan (whole date folders are skipped by their name, row groups by their statistics) and sorts out
of core, so a capture bigger than memory stays queryable, and only what is asked for is
read. Files being written are dot files ending ``.partial``, which the ``*.parquet`` glob
never matches, so each row is read once however many recorders wrote into the directory.
A capture with no events (or no snapshots) yet has an empty view of that name.

A capture on object storage (``open_capture("s3://bucket/prefix")``, any URL fsspec knows) is
read the same way: DuckDB reads its files through the fsspec filesystem
(:mod:`explorer.recording.storage`), so no DuckDB extension is downloaded, and known extensions are
never installed or loaded automatically.

``open_capture(path, exclude_users=..., redact_users=...)`` defines the ``events`` view
through :meth:`explorer.events.exclusions.Screen.view`, so every read (``sql()`` and ``packets()``
too) leaves those users' events out, or redacts them (packets by a SQL function of its own).
``events(sessions=True)`` adds each event's stream session (:mod:`explorer.events.marks`).

Every error is a :class:`~explorer.errors.CaptureError`: a folder that is not a capture (a
recorder writes ``events/``, ``snapshots/`` and ``recorders/`` into it) says what was expected,
and a damaged file or a failed query carries DuckDB's error as its ``__cause__``. Only the raw
connection :meth:`Capture.duckdb` hands out, and the batches of :meth:`Capture.packets` as
they are read, raise DuckDB's own errors.
"""

from __future__ import annotations

import contextlib
import html
import os
import threading
from collections.abc import Collection, Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
from duckdb.func import SPECIAL

from explorer.core import columns
from explorer.core.polarsframes import polars_frame
from explorer.core.renames import warn_renamed
from explorer.errors import CaptureError, CaptureNotFound
from explorer.events import frames as chatviews
from explorer.events.exclusions import Screen, UsersLike
from explorer.events.marks import SESSION_COLUMNS, marks_frame, stamp
from explorer.events.rows import COLUMNS
from explorer.events.tables import EVENT_SCHEMA
from explorer.events.textformats import fields_of, write_csv, write_jsonl
from explorer.recording import coverage
from explorer.recording.compaction import RECORDER_GLOB, sources
from explorer.recording.compaction import literal_glob as _literal_glob
from explorer.recording.compaction import sql_text as _text
from explorer.recording.coverage import Coverage
from explorer.recording.recorder import EVENTS, PARTITION, RECORDERS, SNAPSHOT_KEYS, SNAPSHOTS
from explorer.recording.storage import open_store
from explorer.wire import events as wire_events

#: What ``start=`` and ``end=`` take: epoch seconds, a datetime (``pd.Timestamp``) or ISO
#: text (naive times are UTC); None for no bound.
When = float | str | datetime | np.datetime64 | None

#: The SQL function a capture's events view redacts packets with.
_REDACT = "explorer_redacted_packet"

#: DuckDB's names of the arrow types of captures' columns, for the empty views.
_SQL_TYPES = {
    str(pa.timestamp("ms", tz="UTC")): "TIMESTAMPTZ",
    "string": "VARCHAR",
    "int64": "BIGINT",
    "bool": "BOOLEAN",
    "list<item: string>": "VARCHAR[]",
    "map<string, int64>": "MAP(VARCHAR, BIGINT)",
}
_ARROW_TO_PANDAS = {
    pa.int64(): columns.INT,
    pa.int32(): columns.INT,
    pa.bool_(): columns.BOOL,
    pa.string(): columns.STR,
    pa.large_string(): columns.STR,
}.get


def open_capture(
    path: str | os.PathLike[str],
    *,
    exclude_users: UsersLike = None,
    redact_users: UsersLike = None,
) -> Capture:
    """The capture in directory ``path`` (written by one or more recorders), a local path or
    a filesystem URL such as ``s3://bucket/prefix``. Every read leaves out the events of
    ``exclude_users`` (ids or names) and redacts those of ``redact_users``
    (:mod:`explorer.events.exclusions`).

    Raises :class:`~explorer.errors.CaptureNotFound` when ``path`` does not exist and
    :class:`~explorer.errors.CaptureError` when it is not a capture folder (a file, or a
    folder without the ``events/``, ``snapshots/`` or ``recorders/`` a recorder writes).
    """
    return Capture(path, exclude_users=exclude_users, redact_users=redact_users)


class Capture:
    """A capture on disk: events and snapshots, read lazily (see the module docstring)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        exclude_users: UsersLike = None,
        redact_users: UsersLike = None,
    ) -> None:
        self._screen = Screen(exclude_users, redact_users)
        self._store = open_store(path)
        #: The capture's directory: a path, or the URL given.
        self.path = self._store.location
        if isinstance(self.path, Path):
            _check_folder(self.path)
        elif self._store.kind() != "directory":
            raise CaptureNotFound(f"No capture at {str(self.path)!r}.")
        self._db: duckdb.DuckDBPyConnection | None = None
        self._lock = threading.Lock()

    # DuckDB.

    def duckdb(self) -> duckdb.DuckDBPyConnection:
        """A DuckDB connection (its own cursor) with views ``events`` and ``snapshots``
        over the capture's files, in UTC."""
        with self._lock:
            if self._db is None:
                # Nothing downloads at run time: remote files come through fsspec.
                config: dict[str, str | bool | int | float | list[str]] = {
                    "autoinstall_known_extensions": False
                }
                self._db = duckdb.connect(config=config)
                self._db.execute("SET TimeZone = 'UTC'")
                self._store.attach(self._db)
                self._db.create_function(
                    _REDACT, self._screen.packet, ["VARCHAR"], "VARCHAR", null_handling=SPECIAL
                )
            self._define(EVENTS, _empty_sql(EVENT_SCHEMA, with_partition=True))
            self._define(SNAPSHOTS, _empty_sql(pa.schema(list(SNAPSHOT_KEYS.items())), True))
            return self._db.cursor()

    def _define(self, kind: str, empty: str) -> None:
        """(Re)define the view ``kind``: its files, or ``empty`` while it has none. A
        compacted partition is its day files and the files written since
        (:func:`explorer.recording.compaction.sources`), any other the glob of its recorders'
        files."""
        assert self._db is not None
        found = sources(self._store, kind)
        if not found:
            source = empty
        else:
            glob = f"/{RECORDER_GLOB}"
            paths = ", ".join(
                _text(_literal_glob(self._store.url(path)) + (glob if folder else ""))
                for path, folder in found
            )
            source = (
                f"SELECT * FROM read_parquet([{paths}], hive_partitioning = true, "
                f"union_by_name = {'true' if kind == SNAPSHOTS else 'false'})"
            )
        if kind == EVENTS and self._screen:
            source = self._screen.view(source, _REDACT)
        self._db.execute(f"CREATE OR REPLACE VIEW {kind} AS {source}")

    def sql(self, query: str) -> pd.DataFrame:
        """The result of a DuckDB query over the views ``events`` and ``snapshots``.

        Raises CaptureError when the query fails (DuckDB's error is its ``__cause__``)."""
        with self._reading():
            relation = self.duckdb().sql(query)
            return pd.DataFrame() if relation is None else relation.df()

    def _query(self, query: str, params: list[Any] | None = None) -> pa.Table:
        """The result of a DuckDB query (``?`` placeholders filled from ``params``) as an
        arrow table: what the readers below build their frames from."""
        with self._reading():
            relation = self.duckdb().sql(query, params=params)
            return pa.table({}) if relation is None else relation.to_arrow_table()

    @contextlib.contextmanager
    def _reading(self) -> Iterator[None]:
        """Turn DuckDB's and the file system's errors into CaptureError."""
        try:
            yield
        except (duckdb.Error, OSError) as failed:
            raise CaptureError(
                f"Reading the capture at {str(self.path)!r} failed: {failed}"
            ) from failed

    # Events.

    def events(
        self,
        *,
        channels: Iterable[int] | None = None,
        start: When = None,
        end: When = None,
        columns: Iterable[str] | None = None,
        events: str | Collection[str] | None = None,
        sessions: bool = False,
    ) -> pd.DataFrame:
        """Events with ``EventLog.frame``'s columns and dtypes (or only ``columns``, which may
        also name ``row``, ``packet`` and ``date``), in time order; only those of
        ``channels``, of ``events`` (names) and received in ``[start, end)``. ``sessions``
        adds each event's ``session`` and ``session_offset`` (:mod:`explorer.events.marks`,
        from the marks of :meth:`sessions`)."""
        names = list(COLUMNS if columns is None else columns)
        if sessions:
            frame = self.events(
                channels=channels,
                start=start,
                end=end,
                columns=list(dict.fromkeys([*names, "received_at", "channel"])),
                events=events,
            )
            stamped = stamp(frame, self.sessions())
            return stamped[[*names, *SESSION_COLUMNS]]
        where, params = _where("received_at", channels, start, end)
        if events is not None:
            wanted = [events] if isinstance(events, str) else list(events)
            listed = ", ".join(_text(name) for name in wanted)
            where.append(f"event IN ({listed})" if listed else "false")
        select = ", ".join(f'"{name}"' for name in names) if names else "received_at"
        table = self._query(
            f"SELECT {select} FROM events {_and(where)} ORDER BY received_at, row", params
        )
        return _event_frame(table) if names else pd.DataFrame(index=range(table.num_rows))

    def sessions(self) -> pd.DataFrame:
        """What the recorders' looks at the channels' broadcasts found, from their manifests
        (:func:`~explorer.events.marks.marks_frame`): which session each event belongs to."""
        marks = self.recorders().get("sessions", pd.Series([], dtype=object))
        return marks_frame(m for kept in marks.dropna() for m in kept)

    def frame(self, **filters: Any) -> pd.DataFrame:
        """Deprecated: :meth:`events` (``.frame`` is a property elsewhere, holding a table in
        memory; a capture's reads are methods named after what they read)."""
        warn_renamed("Capture.frame()", "Capture.events()")
        return self.events(**filters)

    def messages(self, **filters: Any) -> pd.DataFrame:
        """ChatMessage rows with the message columns (:func:`~explorer.events.frames.messages`)."""
        frame = self.events(
            columns=["event", *chatviews.MESSAGE_COLUMNS], events="ChatMessage", **filters
        )
        return chatviews.messages(frame)

    def polls(self, **filters: Any) -> pd.DataFrame:
        """Poll progress in long form (:func:`~explorer.events.frames.poll_progress`)."""
        return chatviews.poll_progress(self.events(events=chatviews.POLL_EVENTS, **filters))

    def users(self, **filters: Any) -> pd.DataFrame:
        """One row per user id seen (:func:`~explorer.events.frames.users`)."""
        wanted = ["received_at", "event", "user_id", "user_name", "user_roles"]
        return chatviews.users(self.events(columns=wanted, **filters))

    def moderation(self, **filters: Any) -> pd.DataFrame:
        """Moderation events with whom each acted on (see
        :func:`~explorer.events.frames.moderation`)."""
        return chatviews.moderation(self.events(**filters))

    # Snapshots.

    def snapshots(
        self, *, channels: Iterable[int] | None = None, start: When = None, end: When = None
    ) -> pd.DataFrame:
        """The track rows (``time``, ``channel``, ``token``, then the fields) of ``channels``
        taken in ``[start, end)``, in time order."""
        where, params = _where("time", channels, start, end)
        table = self._query(
            f"SELECT * EXCLUDE ({PARTITION}) FROM snapshots {_and(where)} ORDER BY time, channel",
            params,
        )
        return _typed(table)

    def packets(
        self,
        *,
        channels: Iterable[int] | None = None,
        start: When = None,
        end: When = None,
        batch_rows: int = 10_000,
    ) -> pa.RecordBatchReader:
        """The events' packets in time order, read ``batch_rows`` at a time: columns
        ``received_at`` (epoch seconds), ``channel``, ``packet`` (JSON text) and
        ``from_history``; what a replay feeds."""
        where, params = _where("received_at", channels, start, end)
        query = (
            "SELECT epoch_ms(received_at) / 1000.0 AS received_at, channel, packet, from_history "
            f"FROM events {_and(where)} ORDER BY events.received_at, row"
        )
        with self._reading():
            return self.duckdb().sql(query, params=params).to_arrow_reader(batch_rows)

    def count(
        self, *, channels: Iterable[int] | None = None, start: When = None, end: When = None
    ) -> int:
        """How many events match the filters (read from the files' metadata where it can)."""
        where, params = _where("received_at", channels, start, end)
        table = self._query(f"SELECT count(*) AS n FROM events {_and(where)}", params)
        return int(table["n"][0].as_py())

    # Other formats: CSV, JSON Lines, Arrow, Polars (explorer.events.textformats, polarsframes).

    def _events_reader(
        self, fields: Iterable[str] | None = None, batch_rows: int = 10_000, **filters: Any
    ) -> pa.RecordBatchReader:
        """The events (``fields`` of :data:`EVENT_SCHEMA`, all by default) in time order, a
        batch at a time, with the schema's types; ``filters`` as :meth:`events` takes."""
        names = fields_of(fields)
        where, params = _where(
            "received_at", filters.get("channels"), filters.get("start"), filters.get("end")
        )
        select = ", ".join(f'"{name}"' for name in names)
        query = f"SELECT {select} FROM events {_and(where)} ORDER BY events.received_at, row"
        schema = pa.schema([EVENT_SCHEMA.field(name) for name in names])
        with self._reading():
            return self.duckdb().sql(query, params=params).to_arrow_reader(batch_rows).cast(schema)

    def to_csv(
        self, path: str | os.PathLike[str], *, fields: Iterable[str] | None = None, **filters: Any
    ) -> int:
        """Write the events (``fields``, default all; ``channels``, ``start``, ``end`` as
        :meth:`events`) to the CSV file ``path`` (:mod:`explorer.events.textformats`), a batch at a
        time; the rows written. ``explorer.import_chat(path)`` reads it back."""
        with self._reading(), open(path, "wb") as file:
            return write_csv(self._events_reader(fields, **filters), file)

    def to_jsonl(
        self, path: str | os.PathLike[str], *, fields: Iterable[str] | None = None, **filters: Any
    ) -> int:
        """Write the events to the JSON Lines file ``path``, as :meth:`to_csv` does."""
        with self._reading(), open(path, "wb") as file:
            return write_jsonl(self._events_reader(fields, **filters), file)

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        """Arrow's PyCapsule stream of every event (the columns of :data:`EVENT_SCHEMA`) in
        time order: ``pyarrow.table(capture)``, ``polars.DataFrame(capture)``, DuckDB and any
        Arrow reader take the capture as it is."""
        return self._events_reader().__arrow_c_stream__(requested_schema)

    def polars(self) -> Any:
        """Every event as a ``polars.DataFrame`` (polars is optional: ``[polars]``)."""
        return polars_frame(self)

    # Summaries.

    @property
    def channels(self) -> list[int]:
        """Every channel with events or snapshots in the capture, ascending."""
        table = self._query(
            "SELECT channel FROM events WHERE channel IS NOT NULL "
            "UNION SELECT channel FROM snapshots WHERE channel IS NOT NULL ORDER BY channel"
        )
        return [int(c) for c in table["channel"].to_pylist()]

    @property
    def span(self) -> tuple[pd.Timestamp | None, pd.Timestamp | None]:
        """The first and last times of the capture's events and snapshots (None if empty)."""
        table = self._query(
            "SELECT min(t) AS first, max(t) AS last FROM (SELECT received_at AS t FROM events "
            "UNION ALL SELECT time AS t FROM snapshots)"
        )
        first, last = (table[name][0].as_py() for name in ("first", "last"))
        return (
            None if first is None else pd.Timestamp(first).tz_convert("UTC").as_unit("ms"),
            None if last is None else pd.Timestamp(last).tz_convert("UTC").as_unit("ms"),
        )

    def recorders(self) -> pd.DataFrame:
        """The recorders' manifests, one row each (name, shard, rows, last flush, ...)."""
        with self._reading():
            try:
                manifests = [
                    orjson.loads(self._store.read_bytes(file))
                    for file in self._store.glob(f"{RECORDERS}/*.json")
                ]
            except orjson.JSONDecodeError as damaged:
                raise CaptureError(f"A recorder's manifest is damaged: {damaged}") from damaged
        frame = pd.DataFrame(manifests)
        for name in ("started", "last_flush"):
            if name in frame:
                frame[name] = pd.to_datetime(frame[name], unit="s", utc=True).dt.as_unit("ms")
        return frame

    def coverage(
        self,
        channels: Iterable[int] | None = None,
        *,
        start: When = None,
        end: When = None,
        tolerance: float | None = None,
    ) -> Coverage:
        """Which shard wrote what, and the gaps: shards no recorder wrote, ``channels``
        (expected) without rows, and intervals in ``[start, end]`` (default: the recording's
        span) a shard's recorders missed, longer than ``tolerance`` seconds
        (:mod:`explorer.recording.coverage`)."""
        return coverage.coverage(
            self.recorders(),
            self.channels,
            expected=channels,
            start=None if start is None else _when(start),
            end=None if end is None else _when(end),
            tolerance=tolerance,
        )

    def _summary(self) -> str:
        counts = self._query(
            "SELECT (SELECT count(*) FROM events) AS events, "
            "(SELECT count(*) FROM snapshots) AS snapshots"
        )
        events, snapshots = (int(counts[name][0].as_py()) for name in ("events", "snapshots"))
        recorders = len(self._store.glob(f"{RECORDERS}/*.json"))
        first, last = self.span
        when = (
            "" if first is None else f", {first:%Y-%m-%d %H:%M:%S} to {last:%Y-%m-%d %H:%M:%S} UTC"
        )
        return (
            f"{events:,} events, {snapshots:,} snapshots, {len(self.channels):,} channels"
            f"{when}, {recorders} recorder{'s' if recorders != 1 else ''}"
        )

    def __repr__(self) -> str:
        return f"<Capture {str(self.path)!r}: {self._summary()}>"

    def _repr_html_(self) -> str:
        """The summary and the recorders' manifests (for Jupyter; reads no rows)."""
        recorders = self.recorders()
        shown = [
            c
            for c in ("name", "shard", "events", "snapshots", "files", "last_flush", "closed")
            if c in recorders
        ]
        table = recorders[shown].to_html(index=False, notebook=True) if len(recorders) else ""
        return f"<p><code>{html.escape(repr(self))}</code></p>{table}"


#: The folders a recorder writes into a capture.
_PARTS = (EVENTS, SNAPSHOTS, RECORDERS)


def _is_capture(folder: Path) -> bool:
    """Whether a recorder wrote into ``folder`` (one of its parts is there)."""
    return any((folder / part).is_dir() for part in _PARTS)


def _check_folder(path: Path) -> None:
    """Raise CaptureNotFound or CaptureError, saying what was expected, unless ``path`` is
    a folder a recorder wrote (one of ``events/``, ``snapshots/``, ``recorders/`` in it) or
    an empty folder."""
    shown = str(path)
    if not path.exists():
        raise CaptureNotFound(f"No capture at {shown!r}: the path does not exist.")
    if not path.is_dir():
        raise CaptureError(f"A capture is a directory, and {shown!r} is a file.")
    if _is_capture(path) or next(path.iterdir(), None) is None:
        return  # a capture, or an empty folder: one no recorder has written to yet
    expected = (
        f"{shown!r} is not a capture: a capture is the folder given to a recorder "
        "(`explorer record --out FOLDER`, api.watch(..., to=FOLDER)), holding "
        f"{', '.join(part + '/' for part in _PARTS)}"
    )
    if path.name in _PARTS and _is_capture(path.parent):
        raise CaptureError(
            f"{expected}; this is one of those, so open its parent: "
            f"open_capture({str(path.parent)!r})."
        )
    inside = sorted(p.name for p in path.iterdir() if p.is_dir() and _is_capture(p))
    if inside:
        raise CaptureError(f"{expected}; it holds captures: {', '.join(inside)}.")
    raise CaptureError(f"{expected}, and it holds none of them.")


def _when(value: float | str | datetime | np.datetime64) -> pd.Timestamp:
    """A time bound as a UTC timestamp: numbers are epoch seconds, naive times UTC."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return pd.Timestamp(value, unit="s", tz="UTC")
    stamp = pd.Timestamp(value)
    return stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")


def _where(
    time_column: str, channels: Iterable[int] | None, start: When, end: When
) -> tuple[list[str], list[Any]]:
    """SQL conditions and their parameters for the common filters. The date partition is
    filtered too, so DuckDB skips whole date folders by name."""
    where: list[str] = []
    params: list[Any] = []
    if channels is not None:
        wanted = sorted({int(c) for c in channels})
        where.append(f"channel IN ({', '.join(map(str, wanted))})" if wanted else "false")
    if start is not None:
        first = _when(start)
        where += [f"{time_column} >= ?::TIMESTAMPTZ", f"{PARTITION} >= ?::DATE"]
        params += [first.isoformat(), first.strftime("%Y-%m-%d")]
    if end is not None:
        last = _when(end)
        where += [f"{time_column} < ?::TIMESTAMPTZ", f"{PARTITION} <= ?::DATE"]
        params += [last.isoformat(), last.strftime("%Y-%m-%d")]
    return where, params


def _and(where: list[str]) -> str:
    return f"WHERE {' AND '.join(where)}" if where else ""


def _empty_sql(schema: pa.Schema, with_partition: bool = False) -> str:
    """A query of no rows with ``schema``'s columns (and the date partition)."""
    fields = [f'CAST(NULL AS {_SQL_TYPES[str(f.type)]}) AS "{f.name}"' for f in schema]
    if with_partition:
        fields.append(f"CAST(NULL AS DATE) AS {PARTITION}")
    return f"SELECT {', '.join(fields)} WHERE false"


def _typed(table: pa.Table) -> pd.DataFrame:
    """A DuckDB result as a frame with the toolkit's dtypes: ``Int64``, ``boolean``, ``str``,
    times ``datetime64[ms, UTC]``, maps as dicts and lists as lists."""
    timestamps = pa.timestamp("ms", tz="UTC")
    fields = [
        pa.field(f.name, timestamps) if pa.types.is_timestamp(f.type) else f for f in table.schema
    ]
    table = table.cast(pa.schema(fields))
    frame = table.to_pandas(types_mapper=_ARROW_TO_PANDAS, maps_as_pydicts="strict")
    for field in table.schema:
        if pa.types.is_list(field.type):
            lists = [None if v is None else list(v) for v in frame[field.name]]
            frame[field.name] = pd.Series(lists, index=frame.index, dtype=object)
    return frame


def _event_frame(table: pa.Table) -> pd.DataFrame:
    """Event rows as ``EventLog.frame`` has them (``event`` categorical, known names first)."""
    frame = _typed(table)
    if "event" in frame:
        frame["event"] = columns.column(frame["event"].tolist(), "category", wire_events.EVENTS)
    return frame
