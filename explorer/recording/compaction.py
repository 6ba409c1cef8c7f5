"""Compacting a capture: each partition's small files merged into one day file, while
recorders keep writing, crash-safe at every step, doubles of redundant recorders dropped.

A recorder writes a file per flush (``<recorder>-<seq>.parquet``): with ``--flush-every 5s``
eight recorders write some 138,000 files a day, and a reader lists and opens every one.
:func:`compact` (``explorer compact``) merges each partition folder (``events/date=D``,
``snapshots/date=D``) into one day file, ``D~<token>.day.parquet``, sorted by time in row groups
whose statistics let a day's query skip the rest.

Why it is safe while recorders write and readers read:

- **Which files a day file replaces** is written in the partition's record,
  ``compactions/<kind>/date=D.json``: the day files that hold the partition, and per recorder
  the last file number merged (``through``). A recorder publishes its files in number order
  (``explorer.recording.recorder``), so a file it publishes later always has a higher number and is
  read beside the day file. The record is replaced whole (a rename; one put on object storage):
  that is the commit.
- **Steps**: list the partition, write the day file (staged, then published), commit the
  record, and only then delete what it replaced. ``kill -9`` at any point leaves either the old
  record (the new day file, unnamed by any record, is ignored by readers and deleted by the next
  run) or the new one (the files it replaced are ignored, and deleted by the next run).
- **Readers** (:func:`sources`, what :func:`~explorer.recording.capture.open_capture` reads)
  list the files, then read the records, and read the records' day files plus every recorder
  file past ``through``; a partition without a record is read through the glob of recorder files
  (:data:`RECORDER_GLOB`), which never matches a day file. Replaced files are deleted only
  ``grace`` seconds after their record's commit (a run waits that long before its deletions),
  so a reader that planned its files less than ``grace`` ago still finds each of them.
- **One compaction at a time** per capture: two at once could each delete the other's
  uncommitted day file.

Doubles: two recorders of the same channels each write every event. Chat messages are one
event per message id (a live copy preferred to a history one); another event is the same
as another recorder's copy of it when its packet is identical and it arrived within
``tolerance`` seconds (world seconds: the capture's clock) of it, one-to-one: within a run of
identical packets no more than ``tolerance`` apart, the k-th copy of each recorder is the same
event, so a genuine repeat (a user joining twice) stays. Snapshots are doubles when they have
the same ``time`` and ``channel``.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import duckdb
import orjson
import pyarrow as pa

from explorer.core.durations import Duration, seconds
from explorer.errors import CaptureError, CaptureNotFound
from explorer.recording.storage import PARTIAL, CaptureStore, open_store

#: The folders a capture's kinds of rows live in (the recorder's EVENTS and SNAPSHOTS).
KINDS = ("events", "snapshots")
#: Where the partitions' records live.
COMPACTIONS = "compactions"
#: The glob of the files writers publish (their names end in their number), never a day file.
RECORDER_GLOB = "*[0-9].parquet"
#: How a day file's name ends.
DAY_SUFFIX = ".day.parquet"
#: Rows per row group of a day file.
GROUP_ROWS = 131_072

_WRITER_FILE = re.compile(r"(?P<name>[A-Za-z0-9][A-Za-z0-9_.-]*)-(?P<seq>[0-9]{6,})\.parquet")
_PARTITION = re.compile(r"date=\d{4}-\d{2}-\d{2}")
#: A day file's name: its date, a random token, the suffix (never a path elsewhere).
_DAY_FILE = re.compile(r"\d{4}-\d{2}-\d{2}~[0-9a-f]{12}\.day\.parquet")
#: The source name of a partition's earlier day files among its recorders.
_DAY_SOURCE = "~day"

#: A step a compaction reports: ``(step, kind, partition)`` with step ``listed``, ``written``,
#: ``committed`` or ``removed``.
Progress = Callable[[str, str, str], None]


@dataclass(frozen=True, slots=True)
class Record:
    """A partition's record: the day files that hold it, per recorder the last file number
    merged into them, and when it was committed (epoch seconds)."""

    files: tuple[str, ...] = ()
    through: dict[str, int] = field(default_factory=dict)
    committed: float = 0.0

    def merged(self, name: str) -> bool:
        """Whether file ``name`` (of the partition) is held by the day files."""
        found = _WRITER_FILE.fullmatch(name)
        if found is None:
            return name.endswith(DAY_SUFFIX) and name not in self.files
        return int(found["seq"]) <= self.through.get(found["name"], -1)


@dataclass(frozen=True, slots=True)
class CompactionStats:
    """What :func:`compact` did: partitions merged, files merged and deleted, rows written
    to day files and doubles dropped."""

    partitions: int = 0
    merged: int = 0
    removed: int = 0
    rows: int = 0
    doubles: int = 0


def sources(store: CaptureStore, kind: str) -> list[tuple[str, bool]]:
    """What a reader reads of ``kind`` now: ``(path inside the capture, is a folder)`` pairs,
    a folder standing for its recorders' files (:data:`RECORDER_GLOB`) (see the module
    docstring). Lists the files first, then reads the records."""
    listed = _partitions(store, kind)
    records = _records(store, kind)
    out: list[tuple[str, bool]] = []
    for partition, names in sorted(listed.items()):
        folder = f"{kind}/{partition}"
        record = records.get(partition)
        if record is None:
            if any(_WRITER_FILE.fullmatch(name) for name in names):
                out.append((folder, True))
            others = (n for n in names if not _WRITER_FILE.fullmatch(n))
            out += [(f"{folder}/{n}", False) for n in others if not n.endswith(DAY_SUFFIX)]
            continue
        out += [(f"{folder}/{name}", False) for name in record.files]
        out += [(f"{folder}/{n}", False) for n in names if not _read(record, n)]
    return out


def _read(record: Record, name: str) -> bool:
    """Whether ``name`` is left out of a reader's files: merged, or a day file (the record's
    are read by their names, any other is not committed)."""
    return name.endswith(DAY_SUFFIX) or record.merged(name)


def compact(
    path: str | os.PathLike[str],
    *,
    grace: Duration = 60.0,
    tolerance: Duration = 10.0,
    progress: Progress | None = None,
    clock: Callable[[], float] = time.time,
    sleep: Callable[[float], None] = time.sleep,
) -> CompactionStats:
    """Compact the capture at ``path`` (a folder or a URL such as ``s3://bucket/prefix``):
    merge each partition's new files into a day file, then delete what the records replaced
    ``grace`` after their commit (waiting for it); ``tolerance`` is how far apart two
    recorders' identical packets may arrive and be one event. ``progress`` is told each step.
    See the module docstring. Raises CaptureNotFound when ``path`` is not a folder, and
    CaptureError when a file cannot be read."""
    store = open_store(path)
    if store.kind() != "directory":
        raise CaptureNotFound(f"No capture at {str(store.location)!r}: not a folder.")
    return _compact(store, grace_seconds(grace), seconds(tolerance), progress, clock, sleep)


def grace_seconds(value: Duration) -> float:
    """A grace in seconds: a duration, or none at all (``0``, ``"0s"``)."""
    if isinstance(value, str) and value.strip().rstrip("s") in ("0", "0.0"):
        return 0.0
    return 0.0 if value == 0 else seconds(value)


def _compact(
    store: CaptureStore,
    grace: float,
    tolerance: float,
    progress: Progress | None,
    clock: Callable[[], float],
    sleep: Callable[[float], None],
) -> CompactionStats:
    report = progress or (lambda step, kind, partition: None)
    stats = CompactionStats()
    store.discard_staged(f"*/*/.*{DAY_SUFFIX}{PARTIAL}", keep=set())
    for kind in KINDS:
        listed = _partitions(store, kind)
        records = _records(store, kind)
        for partition, names in sorted(listed.items()):
            record = records.get(partition, Record())
            new = [n for n in names if _WRITER_FILE.fullmatch(n) and not record.merged(n)]
            if not new:
                continue
            report("listed", kind, partition)
            rows, doubles = _merge(store, kind, partition, record, new, tolerance)
            report("written", kind, partition)
            stats = CompactionStats(
                stats.partitions + 1,
                stats.merged + len(new) + len(record.files),
                stats.removed,
                stats.rows + rows[1],
                stats.doubles + doubles,
            )
            through = dict(record.through)
            for name in new:
                found = _WRITER_FILE.fullmatch(name)
                assert found is not None
                through[found["name"]] = max(through.get(found["name"], -1), int(found["seq"]))
            committed = Record((rows[0],), through, clock())
            store.make_folders(f"{COMPACTIONS}/{kind}")
            store.write_whole(_record_path(kind, partition), _dump(committed))
            report("committed", kind, partition)
    removed = _remove(store, grace, report, clock, sleep)
    return CompactionStats(stats.partitions, stats.merged, removed, stats.rows, stats.doubles)


def _remove(
    store: CaptureStore,
    grace: float,
    report: Progress,
    clock: Callable[[], float],
    sleep: Callable[[float], None],
) -> int:
    """Delete the files the records replaced, and day files no record names, once ``grace``
    seconds passed since each record's commit (waiting for the newest); how many."""
    plans: list[tuple[float, str, str, list[str]]] = []
    for kind in KINDS:
        listed = _partitions(store, kind)
        records = _records(store, kind)
        for partition, names in sorted(listed.items()):
            record = records.get(partition)
            if record is None:
                gone = [n for n in names if n.endswith(DAY_SUFFIX)]  # never committed
                plans.append((0.0, kind, partition, gone))
            else:
                gone = [n for n in names if record.merged(n)]
                plans.append((record.committed, kind, partition, gone))
    wanted = [plan for plan in plans if plan[3]]
    if not wanted:
        return 0
    wait = max(committed for committed, *_ in wanted) + grace - clock()
    if wait > 0:
        sleep(wait)
    count = 0
    for _, kind, partition, gone in wanted:
        for name in gone:
            store.remove(f"{kind}/{partition}/{name}")
            count += 1
        report("removed", kind, partition)
    return count


def _merge(
    store: CaptureStore, kind: str, partition: str, record: Record, new: list[str], tolerance: float
) -> tuple[tuple[str, int], int]:
    """Write the partition's day files and ``new`` files as one day file, doubles dropped:
    ((its name, its rows), the doubles dropped)."""
    folder = f"{kind}/{partition}"
    groups: dict[str, list[str]] = {}
    for name in new:
        found = _WRITER_FILE.fullmatch(name)
        assert found is not None
        groups.setdefault(found["name"], []).append(name)
    if record.files:
        groups[_DAY_SOURCE] = list(record.files)
    spill = tempfile.mkdtemp(prefix="explorer-compact-")
    try:
        db = duckdb.connect(config={"autoinstall_known_extensions": False})
        db.execute("SET TimeZone = 'UTC'")
        db.execute(f"SET temp_directory = {sql_text(spill)}")
        db.execute("SET preserve_insertion_order = false")
        store.attach(db)
        union = " UNION ALL BY NAME ".join(
            f"SELECT *, {sql_text(source)} AS _source FROM read_parquet("
            f"[{', '.join(sql_text(literal_glob(store.url(f'{folder}/{n}'))) for n in names)}], "
            "union_by_name = true, hive_partitioning = false)"
            for source, names in sorted(groups.items())
        )
        (total,) = db.execute(f"SELECT count(*) FROM ({union})").fetchall()
        query = _EVENTS_SQL if kind == "events" else _SNAPSHOTS_SQL
        reader = db.sql(query.format(union=union, tolerance_ms=int(tolerance * 1000)))
        batches = reader.to_arrow_reader(GROUP_ROWS)
        schema = pa.schema([pa.field(f.name, _normal(f.type)) for f in batches.schema])
        name = f"{partition.removeprefix('date=')}~{secrets.token_hex(6)}{DAY_SUFFIX}"
        rows = [0]

        def cast() -> Iterator[pa.RecordBatch]:
            for batch in batches:
                rows[0] += batch.num_rows
                yield batch.cast(schema)

        staged = store.stage_batches(f"{folder}/{name}", schema, cast())
        db.close()
    except duckdb.Error as failed:
        raise CaptureError(f"Compacting {folder} failed: {failed}") from failed
    finally:
        shutil.rmtree(spill, ignore_errors=True)
    store.publish(staged)
    return (name, rows[0]), int(total[0]) - rows[0]


#: Events in time order, doubles dropped (see the module docstring).
_EVENTS_SQL = """
WITH keyed AS (
    SELECT *, CASE WHEN event = 'ChatMessage' AND message_id IS NOT NULL
                   THEN 'm' || message_id ELSE 'p' || packet END AS _key
    FROM ({union})
), runs AS (
    SELECT *, coalesce(epoch_ms(received_at) - lag(epoch_ms(received_at)) OVER (
               PARTITION BY channel, _key ORDER BY received_at, _source, "row"
           ) > {tolerance_ms}, true)::INTEGER AS _new
    FROM keyed
), clusters AS (
    SELECT *, CASE WHEN starts_with(_key, 'm') THEN 0 ELSE sum(_new) OVER (
               PARTITION BY channel, _key ORDER BY received_at, _source, "row"
               ROWS UNBOUNDED PRECEDING) END AS _run
    FROM runs
), copies AS (
    SELECT *, CASE WHEN starts_with(_key, 'm') THEN 1 ELSE row_number() OVER (
               PARTITION BY channel, _key, _run, _source ORDER BY received_at, "row") END AS _nth
    FROM clusters
)
SELECT * EXCLUDE (_source, _key, _new, _run, _nth) FROM copies
QUALIFY row_number() OVER (
    PARTITION BY channel, _key, _run, _nth ORDER BY from_history, received_at, _source, "row"
) = 1
ORDER BY received_at, _source, "row"
"""

#: Snapshots in time order, one per time and channel.
_SNAPSHOTS_SQL = """
SELECT * EXCLUDE (_source) FROM ({union})
QUALIFY row_number() OVER (PARTITION BY "time", channel ORDER BY _source) = 1
ORDER BY "time", channel
"""


def _normal(kind: pa.DataType) -> pa.DataType:
    """A type as DuckDB gives it, as the recorders write it: times in ms UTC, plain strings,
    lists of ``item``."""
    if pa.types.is_timestamp(kind):
        return pa.timestamp("ms", tz="UTC")
    if pa.types.is_large_string(kind) or pa.types.is_string_view(kind):
        return pa.string()
    if pa.types.is_map(kind):
        return pa.map_(_normal(kind.key_type), _normal(kind.item_type))
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        return pa.list_(_normal(kind.value_type))
    return kind


def _partitions(store: CaptureStore, kind: str) -> dict[str, list[str]]:
    """The partition folders of ``kind`` with their Parquet files' names (one listing)."""
    out: dict[str, list[str]] = {}
    for path in store.glob(f"{kind}/*/*.parquet"):
        _, partition, name = path.rsplit("/", 2)
        if _PARTITION.fullmatch(partition):
            out.setdefault(partition, []).append(name)
    return out


def _records(store: CaptureStore, kind: str) -> dict[str, Record]:
    """The records of ``kind``'s partitions, by partition folder name."""
    out = {}
    for path in store.glob(f"{COMPACTIONS}/{kind}/*.json"):
        partition = path.rsplit("/", 1)[1].removesuffix(".json")
        try:
            raw: dict[str, Any] = orjson.loads(store.read_bytes(path))
            files = tuple(str(name) for name in raw["files"])
            if not all(_DAY_FILE.fullmatch(name) for name in files):
                raise ValueError(f"not day files: {files}")
            out[partition] = Record(
                files,
                {str(k): int(v) for k, v in raw["through"].items()},
                float(raw["committed"]),
            )
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError) as bad:
            raise CaptureError(f"The compaction record {path} is damaged: {bad!r}") from bad
    return out


def _record_path(kind: str, partition: str) -> str:
    return f"{COMPACTIONS}/{kind}/{partition}.json"


def _dump(record: Record) -> bytes:
    return orjson.dumps(
        {"files": list(record.files), "through": record.through, "committed": record.committed},
        option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS,
    )


def sql_text(value: str) -> str:
    """``value`` as an SQL string literal."""
    return "'" + value.replace("'", "''") + "'"


def literal_glob(path: str) -> str:
    """``path`` as a DuckDB glob matching only itself: a user's path is a path, never a
    pattern, so each of ``*?[]`` becomes a one-character class (``[*]``)."""
    return "".join(f"[{c}]" if c in "*?[]" else c for c in path)
