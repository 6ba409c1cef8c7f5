"""Compacting a capture: day files per partition, the same rows read back, doubles of redundant
recorders dropped, recorders writing meanwhile, and ``kill -9`` at every step."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from explorer.cli import main
from explorer.errors import CaptureError, CaptureNotFound
from explorer.events.log import EventLog
from explorer.recording.capture import open_capture
from explorer.recording.compaction import COMPACTIONS, DAY_SUFFIX, KINDS, compact
from explorer.recording.recorder import Recorder
from explorer.recording.storage import open_store
from tests.test_recorder import T0, chat_message

DAY = 86_400.0


def join(user: int, channel: int) -> dict[str, Any]:
    """A UserJoin packet of ``user`` in ``channel``: the same packet each time it happens."""
    data = {"username": f"u{user}", "id": user, "roles": ["User"], "channel": channel}
    return {"type": "event", "event": "UserJoin", "data": data}


def record(path: Path | str, name: str, packets: list[tuple[dict[str, Any], float]]) -> None:
    """Record ``packets`` (with receive times) as recorder ``name``, a file per 3 rows, and a
    snapshot of channel 7 at each tenth packet's time."""
    log = EventLog()
    recorder = Recorder(path, name=name, worker_rows=None)
    recorder.follow(log)
    for i, (packet, at) in enumerate(packets):
        log.append(packet, at, channel=packet["data"]["channel"])
        if i % 10 == 0:
            recorder.add_snapshots(snapshot(at, i))
        if i % 3 == 2:
            recorder.flush()
    recorder.close()


def snapshot(at: float, viewers: int) -> pd.DataFrame:
    """A one-row snapshot of channel 7 taken at ``at``."""
    return pd.DataFrame(
        {
            "time": pd.to_datetime([at], unit="s", utc=True).as_unit("ms"),
            "channel": pd.array([7], dtype="Int64"),
            "token": pd.array(["seven"], dtype="string"),
            "viewersCurrent": pd.array([viewers], dtype="Int64"),
        }
    )


def two_days(channel: int = 7, offset: float = 0.0) -> list[tuple[dict[str, Any], float]]:
    """Messages over two days in ``channel``, received ``offset`` seconds late."""
    first = [(chat_message(i, channel), T0 + i + offset) for i in range(20)]
    return first + [(chat_message(100 + i, channel), T0 + DAY + i + offset) for i in range(8)]


def schema(path: Path) -> pa.Schema:
    """A Parquet file's schema, without its metadata."""
    return pq.read_schema(path).remove_metadata()


def data_files(path: Path, kind: str = "events") -> list[str]:
    return sorted(p.name for p in (path / kind).glob("*/*.parquet"))


def read(path: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A capture's events (with packets) and snapshots, in a stable order."""
    capture = open_capture(path)
    columns = ["received_at", "event", "channel", "message_id", "packet"]
    events = capture.events(columns=columns).sort_values(columns).reset_index(drop=True)
    return events, capture.snapshots().reset_index(drop=True)


def test_each_partition_becomes_one_day_file_read_the_same(tmp_path: Path) -> None:
    """After compaction each date folder holds one day file, and the capture reads the same
    events (every column and dtype) and snapshots as before."""
    record(tmp_path, "a", two_days(7))
    record(tmp_path, "b", two_days(8, offset=0.5))
    capture = open_capture(tmp_path)
    events, snapshots = capture.events(), capture.snapshots()
    schemas = {kind: schema(next((tmp_path / kind).glob("*/*.parquet"))) for kind in KINDS}
    stats = compact(tmp_path, grace=0)
    assert (
        stats.partitions == 4 and stats.doubles == 0 and stats.rows == len(events) + len(snapshots)
    )
    for kind in ("events", "snapshots"):
        names = data_files(tmp_path, kind)
        assert len(names) == 2 and all(name.endswith(DAY_SUFFIX) for name in names)
        assert all(schema(day) == schemas[kind] for day in (tmp_path / kind).glob("*/*"))
    after = open_capture(tmp_path)
    pd.testing.assert_frame_equal(after.events(), events)
    pd.testing.assert_frame_equal(after.snapshots(), snapshots)
    assert compact(tmp_path, grace=0).partitions == 0


def test_redundant_recorders_are_merged_without_doubles(tmp_path: Path) -> None:
    """Two recorders of the same channel: every message once, and a user joining twice a
    second apart (the same packet) twice, not four times."""
    packets = [*two_days(7), (join(5, 7), T0 + 30), (join(5, 7), T0 + 31)]
    record(tmp_path, "a", packets)
    record(tmp_path, "b", [(packet, at + 0.3) for packet, at in packets])
    assert open_capture(tmp_path).count() == 2 * len(packets)
    stats = compact(tmp_path, grace=0)
    capture = open_capture(tmp_path)
    assert stats.doubles == len(packets)  # snapshots taken at other times are no doubles
    messages = capture.messages()
    assert len(messages) == 28 and messages["message_id"].is_unique
    assert capture.events(events="UserJoin")["received_at"].tolist() == [
        pd.Timestamp(T0 + 30, unit="s", tz="UTC"),
        pd.Timestamp(T0 + 31, unit="s", tz="UTC"),
    ]


def test_a_join_after_a_pause_is_a_new_event(tmp_path: Path) -> None:
    """The same packet from two recorders further apart than the tolerance is two events."""
    record(tmp_path, "a", [(join(5, 7), T0)])
    record(tmp_path, "b", [(join(5, 7), T0 + 60)])
    compact(tmp_path, grace=0, tolerance="10s")
    assert open_capture(tmp_path).count() == 2


def test_compaction_while_a_recorder_writes_keeps_every_row_once(tmp_path: Path) -> None:
    """A recorder flushing in a thread while compaction runs again and again: at the end the
    capture holds every row of its log exactly once."""
    log = EventLog()
    recorder = Recorder(tmp_path, name="live", worker_rows=None)
    recorder.follow(log)
    stop = threading.Event()
    total = 500

    def write() -> None:
        for i in range(total):
            log.append(chat_message(i, 7), T0 + i / 10, channel=7)
            if i % 5 == 4:
                recorder.flush()
        stop.set()

    writer = threading.Thread(target=write)
    writer.start()
    runs = 0
    while not stop.is_set() or runs < 2:
        compact(tmp_path, grace=0)
        runs += 1
        assert open_capture(tmp_path).messages()["message_id"].is_unique
    writer.join()
    recorder.close()
    compact(tmp_path, grace=0)
    ids = open_capture(tmp_path).messages()["message_id"]
    assert runs >= 2 and len(ids) == total and ids.is_unique
    assert data_files(tmp_path) == [n for n in data_files(tmp_path) if n.endswith(DAY_SUFFIX)]


#: A compaction in a child process that prints each step and waits for a line before going on.
CHILD = """
import sys
from explorer.recording.compaction import compact

def step(name, kind, partition):
    print(name, kind, partition, flush=True)
    sys.stdin.readline()

compact(sys.argv[1], grace=0, progress=step)
print("done", flush=True)
"""


def rows(path: Path) -> list[tuple[int, str]]:
    """The capture's messages as (channel, message id), sorted: doubles show."""
    messages = open_capture(path).messages()
    return sorted(zip(messages["channel"].tolist(), messages["message_id"].tolist(), strict=True))


@pytest.mark.parametrize("stop_after", [2, 3, 13])
def test_kill_9_at_any_step_loses_and_doubles_nothing(tmp_path: Path, stop_after: int) -> None:
    """A compaction killed with SIGKILL after its Nth step (a day file written, then
    committed, then the first partition's removals): readers see every row once right away,
    and a second compaction finishes the job."""
    record(tmp_path, "a", two_days(7))
    record(tmp_path, "b", two_days(8, offset=0.2))
    expected = rows(tmp_path)
    snapshots = len(open_capture(tmp_path).snapshots())
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])},
    )
    assert child.stdin is not None and child.stdout is not None
    steps = []
    try:
        while len(steps) < stop_after:
            line = child.stdout.readline()
            assert line and line != "done\n", f"the compaction ended after {steps}"
            steps.append(line.split()[0])
            if len(steps) < stop_after:
                child.stdin.write("\n")
                child.stdin.flush()
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=60)
    assert rows(tmp_path) == expected, steps
    assert len(open_capture(tmp_path).snapshots()) == snapshots
    compact(tmp_path, grace=0)
    assert rows(tmp_path) == expected
    assert len(open_capture(tmp_path).snapshots()) == snapshots
    assert all(name.endswith(DAY_SUFFIX) for name in data_files(tmp_path))
    assert not list(tmp_path.rglob(".*.partial"))


def test_the_command_compacts_and_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`explorer compact` merges the capture and says what it did; a missing capture exits
    2 with a message."""
    record(tmp_path, "a", two_days(7))
    assert main(["compact", str(tmp_path), "--grace", "0s"]) == 0
    assert "4 partitions" in capsys.readouterr().out
    assert (tmp_path / COMPACTIONS / "events").is_dir()
    assert main(["compact", str(tmp_path / "missing")]) == 2
    assert "No capture" in capsys.readouterr().err
    with pytest.raises(CaptureNotFound):
        compact(tmp_path / "missing")


def test_a_capture_on_object_storage_compacts_the_same_way(bucket: str) -> None:
    """On an S3-compatible store: one day file per partition, the same rows read back."""
    url = f"{bucket}/capture"
    few = [(chat_message(i, 7), T0 + i) for i in range(4)] + [(chat_message(9, 7), T0 + DAY)]
    record(url, "a", few)
    record(url, "b", [(packet, at + 0.5) for packet, at in few])
    before = open_capture(url).messages()
    stats = compact(url, grace=0)
    assert stats.partitions == 3 and stats.doubles == len(before) // 2  # snapshots: day 1
    files = open_store(url).glob("events/*/*.parquet")
    assert len(files) == 2 and all(name.endswith(DAY_SUFFIX) for name in files)
    after = open_capture(url).messages()
    assert sorted(after["message_id"]) == sorted(before["message_id"].drop_duplicates())


def test_a_record_naming_a_file_elsewhere_is_refused(tmp_path: Path) -> None:
    """A compaction record whose day file is a path out of its folder is damaged: reading the
    capture raises CaptureError rather than reading that path."""
    record(tmp_path, "a", two_days(7))
    compact(tmp_path, grace=0)
    path = next((tmp_path / COMPACTIONS / "events").glob("*.json"))
    content = json.loads(path.read_text())
    path.write_text(json.dumps({**content, "files": ["../../secret.parquet"]}))
    with pytest.raises(CaptureError, match="damaged"):
        open_capture(tmp_path).count()
