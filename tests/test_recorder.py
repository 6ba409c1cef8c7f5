"""The recorder: Parquet files per flush, one schema, bounded memory, nothing lost on a clean
stop and at most a flush interval on ``kill -9``."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd
import polars as pl
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from explorer.events.log import EventLog
from explorer.events.tables import EVENT_SCHEMA
from explorer.recording.recorder import Recorder
from explorer.wire import events as wire_events
from tests import test_widgets
from tests.clocks import ManualClock

ROOT = Path(__file__).resolve().parent.parent
T0 = 1_700_000_000.0


def test_event_files_have_the_wire_columns_and_types() -> None:
    """An events file holds the wire's event-log columns, each in its declared Arrow type,
    then the recorder's own row and packet."""
    declared = [(column.name, column.arrow) for column in wire_events.COLUMNS]
    written = [(field.name, str(field.type)) for field in EVENT_SCHEMA]
    assert written == [*declared, ("row", "int64"), ("packet", "string")]


def chat_message(i: int, channel: int = 7) -> dict[str, Any]:
    """A ChatMessage packet numbered ``i`` (id ``m{i}``, text ``message {i}``) in ``channel``."""
    packet = test_widgets.chat_message(i)
    packet["data"]["channel"] = channel
    return packet


def poll_start(votes: dict[str, Any]) -> dict[str, Any]:
    """A PollStart packet with ``votes`` per answer."""
    data = {"q": "Tea?", "answers": list(votes), "responses": votes, "voters": 3, "channel": 7}
    return {"type": "event", "event": "PollStart", "data": data}


def event_files(path: Path, kind: str = "events") -> list[Path]:
    """The data files of one kind in a capture."""
    return sorted((path / kind).glob("*/*.parquet"))


@pytest.fixture
def recording(tmp_path: Path) -> Iterator[tuple[EventLog, Recorder, ManualClock]]:
    """A log followed by a recorder into ``tmp_path``, with a manual clock; closed after."""
    clock = ManualClock()
    log = EventLog(clock=clock)
    recorder = Recorder(tmp_path, flush_every=5.0, clock=clock, name="r1")
    recorder.follow(log)
    yield log, recorder, clock
    recorder.close()


def test_one_file_per_flush_with_one_schema(
    recording: tuple[EventLog, Recorder, ManualClock], tmp_path: Path
) -> None:
    """Each flush writes one file (one row group) and every file has the events schema, even
    when the rows of one flush leave most columns empty."""
    log, recorder, _ = recording
    log.append(chat_message(0), T0)
    recorder.flush()
    log.append({"type": "event", "event": "UserJoin", "data": {"username": "bo", "id": 2}}, T0)
    log.append(poll_start({"yes": 2, "no": 1}), T0 + 1, channel=7)
    recorder.flush()
    log.append({"type": "event", "event": "Unheard", "data": None}, T0 + 2)
    recorder.flush()
    files = event_files(tmp_path)
    assert [f.name for f in files] == [
        "r1-000000.parquet",
        "r1-000001.parquet",
        "r1-000002.parquet",
    ]
    for file in files:
        assert pq.read_schema(file).remove_metadata().equals(EVENT_SCHEMA)
        assert pq.ParquetFile(file).num_row_groups == 1
    assert recorder.stats.events == 4 and recorder.stats.files == 3
    assert recorder.stats.flushes == 3


def test_rows_read_back_the_same_by_every_reader(
    recording: tuple[EventLog, Recorder, ManualClock], tmp_path: Path
) -> None:
    """pandas, pyarrow.dataset, DuckDB and Polars read the capture's events directory as the
    same rows, with the date partition."""
    log, recorder, _ = recording
    for i in range(30):
        log.append(chat_message(i, channel=7 + i % 3), T0 + i)
        if i % 10 == 9:
            recorder.flush()
    log.append(poll_start({"yes": 2, "no": 1}), T0 + 40)
    recorder.flush()
    events = tmp_path / "events"
    by_pandas = pd.read_parquet(events).sort_values("row")
    by_arrow = ds.dataset(events, partitioning="hive").to_table().to_pandas().sort_values("row")
    by_duckdb = duckdb.sql(
        f"SELECT * FROM read_parquet('{events}/**/*.parquet', hive_partitioning=true) ORDER BY row"
    ).df()
    by_polars = pl.scan_parquet(events / "**/*.parquet").sort("row").collect()
    expected = log.frame
    for frame in (by_pandas, by_arrow, by_duckdb):
        assert frame["row"].tolist() == list(range(31))
        assert frame["text"].tolist()[:30] == expected["text"].tolist()[:30]
        assert frame["channel"].tolist() == expected["channel"].tolist()
        assert {pd.Timestamp(str(d)).date().isoformat() for d in frame["date"]} == {"2023-11-14"}
    assert by_polars["row"].to_list() == list(range(31))
    assert by_polars["message_id"].to_list()[:30] == expected["message_id"].tolist()[:30]
    poll = by_duckdb.iloc[-1]
    assert dict(poll["poll_responses"]) == {"yes": 2, "no": 1}
    assert list(poll["poll_answers"]) == ["yes", "no"]
    assert json.loads(poll["packet"]) == poll_start({"yes": 2, "no": 1})


def test_rows_split_by_date(
    recording: tuple[EventLog, Recorder, ManualClock], tmp_path: Path
) -> None:
    """A flush whose rows span midnight (UTC) writes one file in each date's folder."""
    log, recorder, _ = recording
    midnight = pd.Timestamp("2026-11-25", tz="UTC").timestamp()
    log.append(chat_message(0), midnight - 1)
    log.append(chat_message(1), midnight + 1)
    recorder.flush()
    assert [f.parent.name for f in event_files(tmp_path)] == ["date=2026-11-24", "date=2026-11-25"]


def test_bounded_log_stays_bounded_and_every_row_is_written_once(tmp_path: Path) -> None:
    """A log with max_rows followed through many flushes keeps few rows in memory, and the
    files hold every row exactly once."""
    log = EventLog(max_rows=500, chunk_rows=100)
    recorder = Recorder(tmp_path, name="bounded")
    recorder.follow(log)
    kept = []
    for batch in range(100):
        for i in range(300):
            log.append(chat_message(batch * 300 + i), T0 + batch)
        kept.append(len(log.frame))
        recorder.flush()
    recorder.close()
    assert max(kept) <= 500 + 300 + 100
    rows = ds.dataset(tmp_path / "events").to_table(columns=["row", "message_id"])
    assert sorted(rows["row"].to_pylist()) == list(range(30_000))
    assert len(set(rows["message_id"].to_pylist())) == 30_000


def test_a_flush_that_wrote_hands_freed_memory_back(
    recording: tuple[EventLog, Recorder, ManualClock], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A flush that wrote files returns what building them freed to the OS (explorer.core.heap),
    so hours of flushes keep memory level; a flush with nothing to write does not."""
    released = []
    monkeypatch.setattr("explorer.core.heap.release_freed", lambda: released.append(1))
    log, recorder, _ = recording
    recorder.flush()
    assert released == []
    log.append(chat_message(0), T0)
    recorder.flush()
    assert released == [1] and recorder.stats.files == 1


def test_flushes_hand_memory_back_at_most_once_a_second(
    recording: tuple[EventLog, Recorder, ManualClock], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Flushes less than a second after the last return of freed memory leave it for later:
    a busy recording's many small flushes would each pay for their memory anew."""
    released = []
    monkeypatch.setattr("explorer.core.heap.release_freed", lambda: released.append(1))
    log, recorder, clock = recording
    for step in (0.0, 0.4, 0.4, 0.4):
        clock.advance(step)
        log.append(chat_message(len(released)), T0)
        recorder.flush()
    assert recorder.stats.files == 4 and released == [1, 1]


def test_worker_process_writes_what_the_recorder_would(tmp_path: Path) -> None:
    """Rows built and written by the worker process equal those written in-process; when the
    worker dies the recorder writes the next flush itself, losing nothing."""
    tables = []
    for worker_rows in (None, 1):
        log = EventLog(chunk_rows=64)
        recorder = Recorder(tmp_path / str(worker_rows), name="w", worker_rows=worker_rows)
        recorder.follow(log)
        for i in range(500):
            log.append(chat_message(i, channel=i % 4), T0 + i)
            if i % 100 == 99:
                recorder.flush()
                if worker_rows and i == 199:
                    assert recorder._worker is not None
                    recorder._worker._process.kill()
        log.append(poll_start({"yes": 2}), T0 + 600)
        recorder.close()
        tables.append(ds.dataset(tmp_path / str(worker_rows) / "events").to_table())
    assert tables[0].sort_by("row").equals(tables[1].sort_by("row"))
    assert tables[1]["row"].to_pylist() == list(range(501))


def test_a_log_followed_from_its_current_end(tmp_path: Path) -> None:
    """Rows added before follow() are not recorded; rows after are, numbered as in the log."""
    log = EventLog()
    log.append(chat_message(0), T0)
    recorder = Recorder(tmp_path, name="late")
    recorder.follow(log)
    log.append(chat_message(1), T0 + 1)
    recorder.close()
    table = pq.read_table(event_files(tmp_path)[0])
    assert table["row"].to_pylist() == [1]
    assert table["message_id"].to_pylist() == ["m1"]


def test_due_follows_the_injected_clock(recording: tuple[EventLog, Recorder, ManualClock]) -> None:
    """due() turns true once flush_every has passed since the last flush, and a flush resets
    it, also when nothing was pending."""
    _, recorder, clock = recording
    assert not recorder.due()
    clock.advance(5.0)
    assert recorder.due()
    recorder.flush()
    assert not recorder.due() and recorder.stats.flushes == 0


def test_a_flush_is_due_once_flush_rows_events_wait(tmp_path: Path) -> None:
    """due() turns true before flush_every once flush_rows events wait, and flushing them
    resets it."""
    clock = ManualClock()
    log = EventLog(clock=clock)
    recorder = Recorder(tmp_path, clock=clock, name="rows", flush_rows=3)
    recorder.follow(log)
    log.extend([chat_message(i) for i in range(2)])
    assert not recorder.due()
    log.append(chat_message(2), T0)
    assert recorder.due()
    recorder.flush()
    assert not recorder.due() and recorder.stats.events == 3
    recorder.close()


def test_manifest_is_rewritten_at_each_flush(
    recording: tuple[EventLog, Recorder, ManualClock], tmp_path: Path
) -> None:
    """recorders/<name>.json says when it started and last flushed, its shard, channels and
    totals; close() marks it closed."""
    log, recorder, clock = recording
    log.append(chat_message(0, channel=3), T0)
    clock.advance(5.0)
    recorder.flush()
    manifest = json.loads((tmp_path / "recorders" / "r1.json").read_bytes())
    assert manifest["name"] == "r1" and manifest["shard"] is None
    assert manifest["flushes"] == 1 and manifest["events"] == 1 and manifest["rows"] == 1
    assert manifest["channels"] == [3] and manifest["last_flush"] == clock.now
    assert manifest["started"] == clock.now - 5.0 and manifest["closed"] is False
    assert manifest["bytes"] == sum(f.stat().st_size for f in event_files(tmp_path))
    recorder.close()
    assert json.loads((tmp_path / "recorders" / "r1.json").read_bytes())["closed"] is True
    assert not list(tmp_path.glob("**/.*"))


def test_add_snapshots_casts_later_frames_to_the_first(tmp_path: Path) -> None:
    """The first snapshot frame fixes the schema: later frames gain missing columns as nulls,
    lose extra ones and have their values cast."""
    recorder = Recorder(tmp_path, name="track", shard=(1, 2))
    time = pd.Timestamp("2026-11-24 12:00", tz="UTC")
    first = pd.DataFrame(
        {
            "time": [time, time],
            "channel": pd.array([1, 2], dtype="Int64"),
            "token": ["a", "b"],
            "viewersCurrent": pd.array([10, None], dtype="Int64"),
            "online": [True, False],
        }
    )
    later = pd.DataFrame(
        {
            "time": [time + pd.Timedelta("30s")],
            "channel": [1],
            "token": ["a"],
            "viewersCurrent": [12.0],
            "extra": ["dropped"],
        }
    )
    recorder.add_snapshots(first)
    recorder.add_snapshots(later)
    recorder.close()
    files = event_files(tmp_path, "snapshots")
    assert len(files) == 1
    table = pq.read_table(files[0])
    assert table.column_names == ["time", "channel", "token", "viewersCurrent", "online"]
    assert str(table.schema.field("viewersCurrent").type) == "int64"
    assert str(table.schema.field("time").type) == "timestamp[ms, tz=UTC]"
    assert table["viewersCurrent"].to_pylist() == [10, None, 12]
    assert table["online"].to_pylist() == [True, False, None]
    assert recorder.stats.snapshots == 3 and recorder.stats.events == 0
    manifest = json.loads((tmp_path / "recorders" / "track.json").read_bytes())
    assert manifest["shard"] == [1, 2] and manifest["channels"] == [1, 2]


def test_bad_input_raises_clear_value_errors(tmp_path: Path) -> None:
    """A path that is a file, a bad shard or name, a snapshot frame without its key columns
    or with values that do not fit, and a second log, each raise ValueError."""
    file = tmp_path / "file"
    file.write_text("x")
    with pytest.raises(ValueError, match="is a file"):
        Recorder(file)
    with pytest.raises(ValueError, match="shard"):
        Recorder(tmp_path, shard=(3, 2))
    with pytest.raises(ValueError, match="name"):
        Recorder(tmp_path, name="../up")
    recorder = Recorder(tmp_path / "capture", name="bad")
    with pytest.raises(ValueError, match="time, channel and token"):
        recorder.add_snapshots(pd.DataFrame({"time": [], "viewers": []}))
    time = pd.Timestamp("2026-11-24", tz="UTC")
    recorder.add_snapshots(pd.DataFrame({"time": [time], "channel": [1], "token": ["a"], "n": [1]}))
    with pytest.raises(ValueError, match="'n'"):
        recorder.add_snapshots(
            pd.DataFrame({"time": [time], "channel": [1], "token": ["a"], "n": ["many"]})
        )
    recorder.follow(EventLog())
    with pytest.raises(ValueError, match="another event log"):
        recorder.follow(EventLog())
    recorder.close()
    recorder.close()  # idempotent
    with pytest.raises(ValueError, match="closed"):
        recorder.add_snapshots(pd.DataFrame({"time": [time], "channel": [1], "token": ["a"]}))


def test_run_flushes_flush_rows_events_before_its_time(tmp_path: Path) -> None:
    """run() writes once flush_rows events wait, though its clock never moves."""
    clock = ManualClock()
    log = EventLog()
    recorder = Recorder(tmp_path, clock=clock, name="early", flush_rows=5)
    recorder.follow(log)

    async def scenario() -> None:
        task = asyncio.create_task(recorder.run())
        log.extend([chat_message(i) for i in range(5)])
        for _ in range(500):  # until the flush shows
            if recorder.stats.flushes:
                break
            await asyncio.sleep(0.01)
        assert recorder.stats.events == 5
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())


def test_run_flushes_when_due_and_closes_on_cancel(tmp_path: Path) -> None:
    """run() flushes once the clock says flush_every has passed, and closes when cancelled."""
    clock = ManualClock()
    log = EventLog()
    recorder = Recorder(tmp_path, flush_every="10s", clock=clock, name="runner")
    recorder.follow(log)

    async def scenario() -> None:
        task = asyncio.create_task(recorder.run())
        log.append(chat_message(0), T0)
        clock.advance(10.0)
        for _ in range(500):  # until the first flush shows
            if recorder.stats.flushes:
                break
            await asyncio.sleep(0.01)
        assert recorder.stats.events == 1
        log.append(chat_message(1), T0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    assert recorder.stats.events == 2 and recorder.stats.flushes == 2
    assert json.loads((tmp_path / "recorders" / "runner.json").read_bytes())["closed"] is True


# A recorder in another process, fed continuously; its clock counts the events added, so it
# flushes every EVERY events and prints how many it had added at each flush.
FEEDER = """
import sys, time
from explorer.events.log import EventLog
from explorer.recording.recorder import Recorder
from tests.test_recorder import T0, chat_message

path, every = sys.argv[1], int(sys.argv[2])
worker_rows = int(sys.argv[3]) if sys.argv[3] != "None" else None
log = EventLog(max_rows=1000)
recorder = Recorder(
    path, flush_every=every, clock=lambda: float(log.total), name="feeder", worker_rows=worker_rows
)
recorder.follow(log)
deadline = time.monotonic() + 60
try:
    for i in range(2_000_000):
        log.append(chat_message(i, channel=i % 5), T0 + i / 1000)
        if recorder.due():
            recorder.flush()
            print("flushed", log.total, flush=True)
        if time.monotonic() > deadline:
            break
finally:
    print("added", log.total, flush=True)
"""
EVERY = 400


def start_feeder(
    path: str | Path, worker_rows: int | None
) -> tuple[subprocess.Popen[str], list[int]]:
    """Start the feeder and read its output until it has flushed three times."""
    process = subprocess.Popen(
        [sys.executable, "-c", FEEDER, str(path), str(EVERY), str(worker_rows)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert process.stdout is not None
    flushed: list[int] = []
    while len(flushed) < 3:
        line = process.stdout.readline()
        assert line.startswith("flushed"), line
        flushed.append(int(line.split()[1]))
    return process, flushed


def written_rows(path: Path) -> np.ndarray:
    """The row numbers in the capture, every file read on its own."""
    rows = [pq.read_table(f, columns=["row"])["row"].to_numpy() for f in event_files(path)]
    return np.sort(np.concatenate(rows))


def kill_feeder(process: subprocess.Popen[str], rows_written: Callable[[], np.ndarray]) -> int:
    """SIGKILL the feeder, then check that the rows written (``rows_written()``, read after)
    are the first ones up to a flush: at most one flush interval of rows is lost. How many."""
    os.kill(process.pid, signal.SIGKILL)
    output, _ = process.communicate(timeout=30)
    assert process.returncode == -signal.SIGKILL
    flushed = [int(line.split()[1]) for line in output.splitlines() if line.startswith("flushed")]
    rows = rows_written()
    written = len(rows)
    assert (rows == np.arange(written)).all()
    last_printed = flushed[-1] if flushed else 3 * EVERY  # start_feeder read the first three
    # Flushes come every EVERY rows and none ran unprinted beyond the next one.
    assert written in (last_printed, last_printed + EVERY)
    return written


@pytest.mark.parametrize("worker_rows", [None, 1])
def test_kill_9_loses_at_most_one_flush_interval(tmp_path: Path, worker_rows: int | None) -> None:
    """A recorder killed with SIGKILL mid-run (writing itself or through its worker process)
    leaves only readable files, no partial file is read, and the rows written are the first
    ones up to a flush: at most one flush interval of rows is lost."""
    process, _ = start_feeder(tmp_path, worker_rows)
    written = kill_feeder(process, lambda: written_rows(tmp_path))
    assert ds.dataset(tmp_path / "events").count_rows() == written
    glob = f"{tmp_path}/events/**/*.parquet"
    assert duckdb.sql(f"SELECT count(*) FROM read_parquet('{glob}')").fetchall() == [(written,)]


def terminate_feeder(process: subprocess.Popen[str]) -> int:
    """SIGTERM the feeder and check that it unwound (exit 143); how many rows it had added."""
    os.kill(process.pid, signal.SIGTERM)
    output, _ = process.communicate(timeout=60)
    assert process.returncode == 128 + signal.SIGTERM
    return int(output.splitlines()[-1].split()[1])


@pytest.mark.parametrize("worker_rows", [None, 1])
def test_sigterm_loses_nothing(tmp_path: Path, worker_rows: int | None) -> None:
    """SIGTERM unwinds the recorder's process, and its atexit hook writes every row added
    (through the worker process too, which outlives SIGTERM for that)."""
    process, _ = start_feeder(tmp_path, worker_rows)
    added = terminate_feeder(process)
    assert (written_rows(tmp_path) == np.arange(added)).all()
    manifest = json.loads((tmp_path / "recorders" / "feeder.json").read_bytes())
    assert manifest["closed"] is True and manifest["events"] == added
