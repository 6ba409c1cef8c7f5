"""Recording to disk: one recorder's share of a capture, a directory of Parquet files.

A capture is a hive-partitioned Parquet dataset that pandas, pyarrow, DuckDB, Polars, Dask
and Spark read as it is::

    capture/events/date=YYYY-MM-DD/<recorder>-<seq>.parquet     one file per flush
    capture/snapshots/date=YYYY-MM-DD/<recorder>-<seq>.parquet
    capture/recorders/<recorder>.json                          what, when, shard, stats, losses

A :class:`Recorder` follows an :class:`~explorer.events.log.EventLog` (``api.watch(to=...)``) and
queues track snapshots (``api.track(to=...)``); every ``flush_every`` seconds, or as soon as
``flush_rows`` events wait (:meth:`Recorder.run`, or a caller's :meth:`~Recorder.due` /
:meth:`~Recorder.try_flush`), it writes what is new as one new file per kind and date: a file is one
row group, so a flush costs one footer and the files of a kind share one explicit schema (events:
:data:`~explorer.events.tables.EVENT_SCHEMA`; the first snapshot frame fixes the
snapshots'). Events files keep the event-log columns, the row number in the recorder's log
(``row``) and the raw JSON (``packet``), so a replay is exact. Several recorders (one per
shard or machine) write into one directory, each its own files named after it, so a reader
sees one dataset and never a row twice. The directory is a local folder or any filesystem URL
fsspec knows, ``s3://bucket/prefix`` included (:mod:`explorer.recording.storage`).

Why nothing is lost or doubled: a file is first staged (locally written under a dot name,
``.name.partial``, which neither ``*.parquet`` globs nor pyarrow's discovery pick up, and
flushed to the disk; on object storage, its bytes held in memory) and then published (renamed
into place; put in one request, which object stores make atomic), so a reader only ever sees
whole files and ``kill -9`` loses at most the rows of the flush interval under way. The
recorder's state (next unwritten row, file number, queued snapshots, totals) changes in one
assignment, made after the files are staged and before they are published, and any publish
still pending is done first by the next flush or :meth:`~Recorder.close`: an exception at any
point (Ctrl-C, SIGTERM's ``SystemExit``, a full disk, a failed upload) leaves every row either
committed and written once, or still pending. Files are published in the order of their
numbers, which is what lets :mod:`explorer.recording.compaction` merge them into day files while the
recorder writes.

A clean stop writes everything: :meth:`~Recorder.close`, an ``atexit`` hook (the end of a
script, kernel shutdown, Ctrl-C in a script; it also runs before thread pools shut down, which
an object store's client needs) and SIGTERM: when SIGTERM still has its default
handler (which kills without unwinding) and a recorder is made on the main thread, a handler
is installed that raises ``SystemExit(143)``, so ``finally`` blocks and ``atexit`` run. A
recorder made on another thread cannot install it; make one on the main thread first, or
install such a handler yourself.

Where rows are built: a flush takes the new rows as the log keeps them
(:meth:`EventLog.packed <explorer.events.log.EventLog.packed>`: compressed packets, nearly free)
and builds one table of them (:func:`~explorer.events.tables.events_table`: chat messages read by
Arrow in C, off the GIL, other events one Python call a row). A flush of at least
``worker_rows`` rows is built and written by a worker process of the recorder's own (started
at the first such flush, it ends with :meth:`~Recorder.close` or when this process dies), so
that what is left in Python (other events, a flush of packets off the platform's shape) never
takes CPU from the process reading the chats (``benchmarks/recording.py``); smaller flushes, or
all of them with ``worker_rows=None``, are built in-process, as is everything when the worker
cannot run. The worker runs at a lower priority (nice 5): on a machine with no core to spare,
the process reading the chats comes first and the worker catches up with what is left. It
only stages files: the commit and the publishing stay here.

When writing fails (a full disk, a lost connection to storage: any ``OSError``), :meth:`run`
keeps going: it warns once (a ``RuntimeWarning``), retries every ``flush_every`` and resumes
writing when it can. Meanwhile the rows not written stay in memory up to ``pending_rows``
events (and as many snapshot rows); older ones are dropped. Each stretch of failures is a
:class:`Gap` in :attr:`~Recorder.stats` and in the manifest (when it began and ended, the
last error, the rows dropped), so a capture says where it is incomplete.
:meth:`~Recorder.close` that cannot write its last rows warns and counts them as dropped.

Memory: after each flush the log's :meth:`~explorer.events.log.EventLog.hold` moves to the next
unwritten row, so a log with ``max_rows`` keeps about ``max_rows`` rows plus what is not
written yet; and what building the flush's tables freed goes back to the operating system
after it, at most once a second (:class:`explorer.core.heap.ReleaseEvery`, here and in the worker
process), else pyarrow's pool and the C heap keep it and resident memory creeps up over hours
of flushes.
Threads: :meth:`~Recorder.flush` may run in any thread (``run`` writes in a
worker thread, off the event loop); :meth:`~Recorder.add_snapshots` never waits for a flush.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import dataclasses
import os
import re
import secrets
import socket
import sys
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa

from explorer.core import columns
from explorer.core.durations import Duration, seconds
from explorer.core.heap import ReleaseEvery
from explorer.core.processes import unwind_sigterm
from explorer.events.chunks import Packed
from explorer.events.log import EventLog
from explorer.events.tables import events_table
from explorer.recording.formats import PARQUET, CaptureFiles, capture_files
from explorer.recording.storage import PARTIAL, CaptureStore, Staged, open_store
from explorer.recording.worker import Worker, WorkerGone, serve

#: The folders of a capture, one per kind of rows, and the recorders' manifests.
EVENTS = "events"
SNAPSHOTS = "snapshots"
RECORDERS = "recorders"
#: Partition folders are ``date=YYYY-MM-DD`` (UTC), of the rows' ``received_at`` / ``time``.
PARTITION = "date"
#: Rows a watch or a tracker keeps in memory by default while recording (the rest is on disk).
RECORDING_ROWS = 100_000
#: Events waiting that make a flush due before its time: a busy watch's flushes stay this
#: small (some 28 MB of packets to build, a few tenths of a second of the worker), so the
#: worker builds while rows come in rather than all of an interval's at once, and the rows
#: held for it stay under RECORDING_ROWS.
FLUSH_ROWS = 65_536
#: How often :meth:`Recorder.run` looks whether ``flush_rows`` events wait.
_LOOK_EVERY = 0.05

_TIME = pa.timestamp("ms", tz="UTC")
#: The columns every snapshots frame starts with.
SNAPSHOT_KEYS: dict[str, pa.DataType] = {"time": _TIME, "channel": pa.int64(), "token": pa.string()}

_DAY_MS = 86_400_000
PARQUET_FILES = CaptureFiles("")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


@dataclass(frozen=True, slots=True)
class Gap:
    """A stretch of failed writes: from ``start`` to ``end`` (epoch seconds; None while it
    lasts), the last ``error``, the ``failures`` counted, and the ``events`` and
    ``snapshots`` rows dropped (never written) to keep memory within bounds."""

    start: float
    error: str
    end: float | None = None
    failures: int = 1
    events: int = 0
    snapshots: int = 0


@dataclass(frozen=True, slots=True)
class RecorderStats:
    """What a recorder has written: rows per kind, bytes, files and flushes so far, and the
    gaps when writing failed."""

    events: int = 0
    snapshots: int = 0
    bytes: int = 0
    files: int = 0
    flushes: int = 0
    #: When the last flush that wrote something finished (epoch seconds), None before.
    last_flush: float | None = None
    gaps: tuple[Gap, ...] = ()


@dataclass(frozen=True, slots=True)
class _State:
    """Everything a flush changes, replaced in one assignment (see the module docstring)."""

    #: The next row of the followed log to write.
    next_row: int = 0
    #: The number of the next file.
    seq: int = 0
    #: Snapshot tables queued and not written yet.
    queue: tuple[pa.Table, ...] = ()
    #: Files staged and not published yet.
    staged: tuple[Staged, ...] = ()
    stats: RecorderStats = RecorderStats()
    channels: frozenset[int] = frozenset()
    #: Clock time of the last flush (or of the start).
    flushed_at: float = 0.0


class Recorder:
    """Writes one recorder's share of a capture: a Parquet dataset directory.

    ``path`` is the capture's directory (made if missing), local or a filesystem URL such as
    ``s3://bucket/prefix`` (:mod:`explorer.recording.storage`), or :class:`CaptureFiles
    <explorer.recording.formats.CaptureFiles>` of one, to write CSV or JSON Lines files or only
    some events fields; ``flush_every`` how often
    :meth:`run` writes (a duration: ``5.0``, ``"10s"``), and sooner once ``flush_rows`` events
    wait (None: only on time); ``shard`` ``(K, N)`` says which share
    of the channels this recorder has, for the manifest; ``name`` names its files and manifest
    (unique per recorder; default ``host-pid-random``); ``clock`` gives epoch seconds;
    flushes of at least ``worker_rows`` events are built and written in a worker process
    (None: never; see the module docstring); while writes fail, at most ``pending_rows``
    events (and snapshot rows) wait in memory. Raises ``ValueError`` for a path that is not
    a directory, a bad shard or name.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        flush_every: Duration = 5.0,
        shard: tuple[int, int] | None = None,
        name: str | None = None,
        clock: Callable[[], float] = time.time,
        worker_rows: int | None = 2000,
        pending_rows: int = RECORDING_ROWS,
        flush_rows: int | None = FLUSH_ROWS,
    ) -> None:
        #: The files' format and the events fields written (a plain path: Parquet, all).
        self.files = capture_files(path)
        self._store = open_store(self.files.path)
        #: The capture's directory: a path, or the URL given.
        self.path = self._store.location
        if self._store.kind() == "file":
            raise ValueError(f"A capture is a directory, and {str(self.path)!r} is a file.")
        if shard is not None:
            k, n = shard
            if not 1 <= k <= n:
                raise ValueError(f"shard is (K, N) with 1 <= K <= N, not {shard!r}.")
        name = name if name is not None else _default_name()
        if not _NAME.fullmatch(name):
            raise ValueError(
                f"A recorder's name is letters, digits, '_', '.' and '-', not {name!r}."
            )
        self._store.make_folders(EVENTS, SNAPSHOTS, RECORDERS)
        self.name = name
        self.flush_every = seconds(flush_every)
        self._shard = shard
        self._clock = clock
        self._started = clock()
        self._state = _State(flushed_at=self._started)
        #: Held for a whole flush; flushes (and close) take turns.
        self._lock = threading.Lock()
        #: Held only to swap the state: add_snapshots never waits for a flush.
        self._queue_lock = threading.Lock()
        self._log: EventLog | None = None
        self._worker_rows = worker_rows
        self._pending_rows = pending_rows
        self._flush_rows = flush_rows
        self._release = ReleaseEvery(clock=clock)
        self._worker: Worker | None = None
        self._snapshot_schema: pa.Schema | None = None
        self._closed = False
        #: What the capture may be missing, for the manifest (``api.watch`` sets it: per
        #: channel and interval, see :meth:`~explorer.collect.watch.AsyncWatch.losses`).
        self.losses: Callable[[], dict[str, Any]] | None = None
        #: What looks at the channels' broadcasts found, for the manifest (``api.watch`` sets
        #: it: the marks of :mod:`explorer.collect.broadcasts`, which stamp events with their
        #: session).
        self.sessions: Callable[[], list[dict[str, Any]]] | None = None
        _register(self)

    # Feeding.

    def follow(self, log: EventLog) -> None:
        """Record every row ``log`` gets from its current end on (sets and moves its hold).

        A recorder follows one log (rows are numbered in it); raises ``ValueError`` for a
        second one.
        """
        with self._lock:
            if self._log is not None and self._log is not log:
                raise ValueError("This recorder already follows another event log.")
            if self._closed:
                raise ValueError("This recorder is closed.")
            start = log.total
            log.hold(start)
            with self._queue_lock:
                self._state = dataclasses.replace(self._state, next_row=start)
            self._log = log

    def add_snapshots(self, frame: pd.DataFrame) -> None:
        """Queue track rows: columns ``time`` (datetime64[ms, UTC]), ``channel`` (Int64),
        ``token`` (str), then the field columns; the first frame fixes the schema, later ones
        are cast to it (missing columns null, extra ones dropped).

        Raises ``ValueError`` for a frame without the first three columns, or one whose
        values do not fit the schema.
        """
        missing = [key for key in SNAPSHOT_KEYS if key not in frame.columns]
        if missing:
            raise ValueError(
                f"Snapshot frames need the columns time, channel and token; missing {missing}."
            )
        if frame["time"].isna().any():
            raise ValueError("Snapshot rows need a time.")
        if self._closed:
            raise ValueError("This recorder is closed.")
        if not len(frame):
            return
        table = self._snapshot_table(frame)
        with self._queue_lock:
            self._state = dataclasses.replace(self._state, queue=(*self._state.queue, table))

    def _snapshot_table(self, frame: pd.DataFrame) -> pa.Table:
        keys = pd.DataFrame(
            {
                "time": pd.to_datetime(frame["time"], utc=True).dt.as_unit("ms"),
                "channel": frame["channel"].astype(columns.INT),
                "token": frame["token"].astype(columns.STR),
            },
            index=frame.index,
        )
        if self._snapshot_schema is None:
            fields = frame.drop(columns=list(SNAPSHOT_KEYS))
            try:
                inferred = pa.Table.from_pandas(fields, preserve_index=False).schema
            except (pa.ArrowInvalid, pa.ArrowTypeError) as error:
                raise ValueError(f"Snapshot columns Parquet cannot store: {error}") from None
            types = [(f.name, _plain(f.type)) for f in inferred]
            self._snapshot_schema = pa.schema([*SNAPSHOT_KEYS.items(), *types])
        schema = self._snapshot_schema
        arrays = []
        for field in schema:
            values = keys[field.name] if field.name in keys else frame.get(field.name)
            if values is None:
                arrays.append(pa.nulls(len(frame), field.type))
                continue
            try:
                arrays.append(pa.array(values, from_pandas=True).cast(field.type))
            except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as error:
                raise ValueError(
                    f"Snapshot column {field.name!r} does not fit its type {field.type} "
                    f"(fixed by the first frame): {error}"
                ) from None
        return pa.Table.from_arrays(arrays, schema=schema)

    # Writing.

    def due(self) -> bool:
        """Whether ``flush_every`` has passed since the last flush, or ``flush_rows`` events
        wait while writing works (when it fails, retries stay ``flush_every`` apart)."""
        state, log = self._state, self._log
        if self._clock() - state.flushed_at >= self.flush_every:
            return True
        return (
            self._flush_rows is not None
            and log is not None
            and log.total - state.next_row >= self._flush_rows
            and not _gap_open(state.stats)
        )

    def flush(self) -> None:
        """Write what is pending (events since the last flush, queued snapshots) as new
        files; thread-safe; cheap when nothing is pending."""
        with self._lock:
            self._flush()

    def _flush(self) -> None:
        self._publish()
        state = self._state
        log = self._log
        now = self._clock()
        pending_events = log is not None and log.total > state.next_row
        if not pending_events and not state.queue:
            failing = _gap_open(state.stats)
            if failing:
                self._write_manifest()  # nothing to write: the manifest tells if writing works
            with self._queue_lock:
                self._state = dataclasses.replace(
                    self._state, flushed_at=now, stats=_gap_closed(state.stats, now)
                )
            if failing:
                self._write_manifest()
            return
        files: list[Staged] = []
        written = {EVENTS: 0, SNAPSHOTS: 0}
        next_row, channels = state.next_row, set(state.channels)
        if pending_events:
            assert log is not None
            packed = log.packed(state.next_row)
            if packed.end > packed.first:
                new_files, channels_seen = self._write_events(packed, state.seq)
                files += new_files
                written[EVENTS] = packed.end - packed.first
                next_row = packed.end
                channels.update(channels_seen)
        queued = state.queue
        if queued:
            table = pa.concat_tables(queued)
            files += _write_files(
                self._store, self.name, SNAPSHOTS, table, "time", state.seq + len(files), self.files
            )
            written[SNAPSHOTS] = table.num_rows
            channels.update(int(c) for c in _distinct(table["channel"]))
        stats = _gap_closed(state.stats, now)
        stats = RecorderStats(
            events=stats.events + written[EVENTS],
            snapshots=stats.snapshots + written[SNAPSHOTS],
            bytes=stats.bytes + sum(file.nbytes for file in files),
            files=stats.files + len(files),
            flushes=stats.flushes + 1,
            last_flush=now,
            gaps=stats.gaps,
        )
        # The commit: one assignment. Snapshots queued meanwhile stay queued.
        with self._queue_lock:
            self._state = _State(
                next_row=next_row,
                seq=state.seq + len(files),
                queue=self._state.queue[len(queued) :],
                staged=tuple(files),
                stats=stats,
                channels=frozenset(channels),
                flushed_at=now,
            )
        self._publish()
        if log is not None:
            log.hold(next_row)
        self._write_manifest()
        self._release()  # what this flush and the log freed (explorer.core.heap): level for hours

    def try_flush(self) -> None:
        """Flush as :meth:`run` does: when writing fails, warn (once per gap), count it in
        the open :class:`Gap` and keep the newest ``pending_rows`` unwritten rows, instead
        of raising."""
        with self._lock:
            try:
                self._flush()
            except OSError as error:
                self._failed(error, keep=self._pending_rows)

    def _failed(self, error: OSError, keep: int) -> None:
        """Count a failed flush in the open gap (warning when it opens), free what it left
        on disk, and drop the oldest unwritten rows past ``keep`` (lock held)."""
        now, state, log = self._clock(), self._state, self._log
        gaps = list(state.stats.gaps)
        if _gap_open(state.stats):
            last = gaps.pop()
            gap = dataclasses.replace(last, failures=last.failures + 1)
        else:
            warnings.warn(
                f"Recorder {self.name} cannot write to {self.path} ({error}); it retries every "
                f"{self.flush_every:g} s and keeps at most {keep:,} unwritten rows meanwhile.",
                RuntimeWarning,
                stacklevel=3,
            )
            gap = Gap(start=now, error="")
        next_row = state.next_row
        if log is not None and log.total - next_row > keep:
            next_row = log.total - keep
            log.hold(next_row)
        queued, dropped_tables = [t.num_rows for t in state.queue], 0
        while sum(queued[dropped_tables:]) > keep:
            dropped_tables += 1
        gap = dataclasses.replace(
            gap,
            end=now if keep == 0 else None,  # keeping nothing: the recorder is closing
            error=str(error),
            events=gap.events + next_row - state.next_row,
            snapshots=gap.snapshots + sum(queued[:dropped_tables]),
        )
        with self._queue_lock:
            self._state = dataclasses.replace(
                self._state,
                next_row=next_row,
                queue=self._state.queue[dropped_tables:],
                stats=dataclasses.replace(state.stats, gaps=(*gaps, gap)),
                flushed_at=now,
            )
        self._drop_partials()
        with contextlib.suppress(OSError):  # the manifest says so, when it can be written
            self._write_manifest()

    def _drop_partials(self) -> None:
        """Delete files a flush staged on disk before its commit (lock held)."""
        pending = {staged.partial for staged in self._state.staged if staged.partial}
        self._store.discard_staged(f"*/*/.{self.name}-*{PARTIAL}", keep=pending)

    def _write_events(self, packed: Packed, seq: int) -> tuple[list[Staged], set[int]]:
        """Build and write ``packed``'s rows as files numbered from ``seq``: in the worker
        process when there are enough of them (and it works), else here."""
        rows = packed.end - packed.first
        if self._worker_rows is not None and rows >= self._worker_rows:
            try:
                if self._worker is None:
                    self._worker = Worker(_WORKER_ENTRY)
                return self._worker.call((self._store, self.name, packed, seq, self.files))
            except WorkerGone:
                self._worker_rows = None  # it will not come back: build here from now on
        return _events_files(self._store, self.name, packed, seq, self.files)

    def _publish(self) -> None:
        """Publish the files a committed flush staged (lock held)."""
        state = self._state
        if not state.staged:
            return
        for staged in state.staged:
            self._store.publish(staged)
        with self._queue_lock:
            self._state = dataclasses.replace(self._state, staged=())

    def _write_manifest(self, closed: bool = False) -> None:
        """Replace ``recorders/<name>.json`` at once (lock held)."""
        state = self._state
        manifest: dict[str, Any] = {
            "name": self.name,
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "started": self._started,
            "last_flush": state.stats.last_flush,
            "flush_every": self.flush_every,
            "shard": list(self._shard) if self._shard is not None else None,
            "channels": sorted(state.channels),
            "closed": closed,
            **dataclasses.asdict(state.stats),
            "rows": state.stats.events + state.stats.snapshots,
        }
        if self.losses is not None:
            manifest["losses"] = self.losses()
        if self.sessions is not None:
            manifest["sessions"] = self.sessions()
        self._store.write_whole(
            f"{RECORDERS}/{self.name}.json", orjson.dumps(manifest, option=orjson.OPT_INDENT_2)
        )

    async def run(self) -> None:
        """Flush every ``flush_every`` seconds, writing in a worker thread, until cancelled;
        on cancel, :meth:`close` right here, so the last rows are written before the task
        ends (even when the loop is stopping)."""
        try:
            while True:
                if self.due():
                    await asyncio.to_thread(self.try_flush)
                    continue
                wait = self.flush_every - (self._clock() - self._state.flushed_at)
                await asyncio.sleep(min(max(wait, 0.01), self.flush_every, _LOOK_EVERY))
        except asyncio.CancelledError:
            self.close()
            raise

    def close(self) -> None:
        """Flush the rest, release the log's hold and mark the manifest closed; idempotent.
        Rows it cannot write (see :class:`Gap`) are counted as dropped, with a warning."""
        with self._lock:
            if self._closed:
                return
            try:
                self._flush()
            except OSError as error:
                self._failed(error, keep=0)
            self._closed = True
            with contextlib.suppress(OSError):
                self._write_manifest(closed=True)
            self._drop_partials()
            if self._worker is not None:
                self._worker.close()
            if self._log is not None:
                self._log.hold(None)
        _unregister(self)

    @property
    def stats(self) -> RecorderStats:
        """Rows, bytes, files and flushes written so far."""
        return self._state.stats

    def __repr__(self) -> str:
        stats = self.stats
        state = "closed" if self._closed else f"every {self.flush_every:g} s"
        return (
            f"<Recorder {self.name} -> {self.path}: {stats.events:,} events, "
            f"{stats.snapshots:,} snapshots, {stats.files:,} files, {stats.bytes:,} bytes, "
            f"{state}>"
        )


def _gap_open(stats: RecorderStats) -> bool:
    """Whether ``stats`` end with a gap not ended yet: writing fails."""
    return bool(stats.gaps) and stats.gaps[-1].end is None


def _gap_closed(stats: RecorderStats, now: float) -> RecorderStats:
    """``stats`` with its open gap (if any) ended at ``now``: writing works again."""
    if not _gap_open(stats):
        return stats
    gaps = stats.gaps
    return dataclasses.replace(stats, gaps=(*gaps[:-1], dataclasses.replace(gaps[-1], end=now)))


def _distinct(values: pa.ChunkedArray) -> list[Any]:
    """The distinct non-null values of an arrow column."""
    return [v for v in values.unique().to_pylist() if v is not None]


def _plain(kind: pa.DataType) -> pa.DataType:
    """``kind`` with large strings as plain ones and dictionaries decoded (what every reader
    handles the same way), and no type (an empty column) as text."""
    if pa.types.is_large_string(kind) or pa.types.is_dictionary(kind) or pa.types.is_null(kind):
        return pa.string()  # a column empty in the first frame is taken as text
    return kind


def _write_files(
    store: CaptureStore,
    name: str,
    kind: str,
    table: pa.Table,
    time_column: str,
    seq: int,
    files: CaptureFiles = PARQUET_FILES,
) -> list[Staged]:
    """Stage ``table`` in ``store`` as one ``kind`` file per date (one row group each) in the
    format of ``files``; the files, numbered from ``seq``."""
    days = table[time_column].cast(pa.int64()).to_numpy() // _DAY_MS
    out = []
    unique = np.unique(days)
    for day in unique:
        part = table if len(unique) == 1 else table.filter(pa.array(days == day))
        date = pd.Timestamp(int(day) * _DAY_MS, unit="ms").strftime("%Y-%m-%d")
        relative = f"{kind}/{PARTITION}={date}/{name}-{seq:06d}{files.suffix}"
        text = files.format != PARQUET
        out.append(
            store.stage_bytes(relative, files.encode(part)) if text else store.stage(relative, part)
        )
        seq += 1
    return out


def _events_files(
    store: CaptureStore, name: str, packed: Packed, seq: int, files: CaptureFiles = PARQUET_FILES
) -> tuple[list[Staged], set[int]]:
    """Build ``packed``'s rows and stage them as events files; the files and the channels."""
    table = events_table(packed)
    staged = _write_files(store, name, EVENTS, files.events(table), "received_at", seq, files)
    return staged, set(_distinct(table["channel"]))


#: What the worker process runs.
_WORKER_ENTRY = "from explorer.recording.recorder import _serve; _serve()"


def _serve() -> None:
    """The worker process: build and write the events files of each request, at a lower
    priority than the process reading the chats (see the module docstring)."""
    os.nice(5)
    serve(_events_files)


def _default_name() -> str:
    host = re.sub(r"[^A-Za-z0-9_.-]", "-", socket.gethostname()) or "host"
    return f"{host}-{os.getpid()}-{secrets.token_hex(3)}"


# Clean stops: recorders still open are closed at exit, and SIGTERM unwinds to it.

_LIVE: set[Recorder] = set()
_LIVE_LOCK = threading.Lock()


def _register(recorder: Recorder) -> None:
    with _LIVE_LOCK:
        _LIVE.add(recorder)
    unwind_sigterm()


def _unregister(recorder: Recorder) -> None:
    with _LIVE_LOCK:
        _LIVE.discard(recorder)


@atexit.register
def close_all() -> None:
    """Close every recorder still open (this process is exiting); report failures."""
    with _LIVE_LOCK:
        open_ones = list(_LIVE)
    for recorder in open_ones:
        try:
            recorder.close()
        except Exception as error:  # one failure must not stop the other recorders
            print(f"explorer: could not close {recorder!r}: {error}", file=sys.stderr)


# Closing a recorder on object storage needs thread pools (its client resolves names in one),
# which refuse work once the interpreter starts shutting down threads, before atexit hooks
# run: so close_all also runs just before that (the hook threading and concurrent.futures use).
getattr(threading, "_register_atexit", lambda hook: None)(close_all)
