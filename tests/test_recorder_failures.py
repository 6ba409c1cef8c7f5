"""Rule 7 of issue 23: collection never silently stops. A recorder on a real full disk (a
tmpfs of 4 MiB, filled to the last byte) warns, keeps at most ``pending_rows``
unwritten rows, retries, resumes once space is back, and says where its capture has a gap in
its stats, its manifest and ``explorer record``'s summary. Paths given by the user are paths,
never patterns. Needs root for ``mount -t tmpfs`` (skipped otherwise).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import warnings
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pyarrow.dataset as ds
import pytest

from explorer.emulator import Platform
from explorer.events.log import EventLog
from explorer.recording.capture import open_capture
from explorer.recording.recorder import Recorder
from tests.clocks import ManualClock
from tests.test_record_cli import live, record, wait_for  # noqa: F401 -- the live fixture
from tests.test_recorder import chat_message
from tests.test_security import attempt


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path]:
    """A 4 MiB tmpfs mounted under ``tmp_path`` (unmounted after): room for a short
    recording once the test frees it."""
    mount = tmp_path / "disk"
    mount.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)], check=True)
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=True)


def fill(disk: Path) -> Path:
    """Fill ``disk`` to its last byte with one file; that file."""
    filler = disk / "filler"
    with open(filler, "wb", buffering=0) as file:
        try:
            while True:
                file.write(b"\0" * 4096)
        except OSError:  # ENOSPC: full
            pass
        try:
            while True:
                file.write(b"\0")
        except OSError:  # to the last byte
            pass
    return filler


def manifest(capture: Path, name: str) -> dict[str, object]:
    """A recorder's manifest."""
    return dict(json.loads((capture / "recorders" / f"{name}.json").read_bytes()))


def test_a_full_disk_is_retried_bounded_and_resumed(disk: Path) -> None:
    """On a full disk each flush fails with one warning per gap, only the newest 50 rows
    wait in memory, and once space is back the rows kept are written and the gap closes."""
    capture, clock, log = disk / "capture", ManualClock(), EventLog()
    recorder = Recorder(capture, clock=clock, name="r", worker_rows=None, pending_rows=50)
    recorder.follow(log)
    filler = fill(disk)
    log.extend([chat_message(i) for i in range(120)])
    with pytest.warns(RuntimeWarning, match="cannot write"):
        recorder.try_flush()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the second failure of the same gap stays quiet
        log.extend([chat_message(i) for i in range(120, 150)])
        clock.advance(5)
        recorder.try_flush()
    attempt("recording onto a full disk", 2)
    (gap,) = recorder.stats.gaps
    assert (gap.failures, gap.events, gap.end) == (2, 100, None)
    assert "No space left" in gap.error and recorder.stats.events == 0
    assert not list(capture.glob("**/.*.partial"))  # a failed flush frees what it wrote
    filler.unlink()
    clock.advance(5)
    recorder.try_flush()
    (gap,) = recorder.stats.gaps
    assert gap.end == clock.now and recorder.stats.events == 50
    rows = ds.dataset(capture / "events").to_table(columns=["row"]).column("row").to_pylist()
    assert sorted(rows) == list(range(100, 150))
    written = manifest(capture, "r")
    assert written["gaps"] == [
        {
            "start": gap.start,
            "error": gap.error,
            "end": gap.end,
            "failures": 2,
            "events": 100,
            "snapshots": 0,
        }
    ]
    recorder.close()


def test_waiting_rows_do_not_hasten_retries(disk: Path) -> None:
    """While writes fail, flush_rows events waiting do not make a flush due: retries stay
    flush_every apart."""
    capture, clock, log = disk / "capture", ManualClock(), EventLog()
    recorder = Recorder(capture, clock=clock, name="r", worker_rows=None, flush_rows=10)
    recorder.follow(log)
    filler = fill(disk)
    log.extend([chat_message(i) for i in range(10)])
    assert recorder.due()
    with pytest.warns(RuntimeWarning, match="cannot write"):
        recorder.try_flush()
    log.extend([chat_message(i) for i in range(10, 30)])
    assert not recorder.due()
    clock.advance(5)
    assert recorder.due()
    filler.unlink()
    recorder.close()
    assert recorder.stats.events == 30


def test_snapshots_wait_within_the_bound_too(disk: Path) -> None:
    """Queued snapshot frames past ``pending_rows`` rows are dropped oldest first and
    counted; the rest are written once the disk has room."""
    capture, clock = disk / "capture", ManualClock()
    recorder = Recorder(capture, clock=clock, name="t", pending_rows=10)
    filler = fill(disk)
    for batch in range(4):
        frame = pd.DataFrame(
            {
                "time": pd.to_datetime([clock.now] * 5, unit="s", utc=True),
                "channel": pd.array(range(5), dtype="Int64"),
                "token": [f"c{batch}"] * 5,
                "viewersCurrent": [batch] * 5,
            }
        )
        recorder.add_snapshots(frame)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            recorder.try_flush()
    attempt("snapshots onto a full disk")
    assert recorder.stats.gaps[0].snapshots == 10
    filler.unlink()
    recorder.try_flush()
    tokens = ds.dataset(capture / "snapshots").to_table().column("token").to_pylist()
    assert sorted(set(tokens)) == ["c2", "c3"] and len(tokens) == 10
    recorder.close()


def test_closing_on_a_full_disk_warns_and_counts_what_is_lost(disk: Path) -> None:
    """close() that cannot write its last rows does not raise: it warns, and its stats end
    with a closed gap counting every row it could not write."""
    capture, log = disk / "capture", EventLog()
    recorder = Recorder(capture, name="c", worker_rows=None)
    recorder.follow(log)
    fill(disk)
    log.extend([chat_message(i) for i in range(30)])
    with pytest.warns(RuntimeWarning, match="cannot write"):
        recorder.close()
    attempt("closing onto a full disk")
    (gap,) = recorder.stats.gaps
    assert gap.events == 30 and gap.end is not None


def test_record_reports_a_gap_in_its_summary_and_manifest(
    live: Platform,  # noqa: F811 -- the fixture imported above
    disk: Path,
) -> None:
    """explorer record on a disk that fills up mid-run keeps running, warns, resumes when
    space is back, and its summary and manifest name the gap."""
    out = disk / "capture"
    process = record(live.base_url, out, "--top", "3", "--duration", "12s")
    wait_for(lambda: any((out / "recorders").glob("*.json")), 30)
    filler = fill(disk)
    assert process.stderr is not None
    seen = ""
    while "cannot write" not in seen:
        line = process.stderr.readline()
        assert line, "explorer record ended without warning"
        seen += line
    filler.unlink()
    stdout, _ = process.communicate(timeout=60)
    attempt("explorer record onto a full disk")
    assert process.returncode == 0, stdout
    summary = stdout.rpartition("explorer record:")[2]
    assert re.search(r"write gaps:\s+\d+ \(\d+ failed writes", summary), summary
    manifests = [json.loads(m.read_bytes()) for m in (out / "recorders").glob("*.json")]
    gaps = [gap for written in manifests for gap in written["gaps"]]
    assert gaps and all(g["end"] is not None for g in gaps)


def test_a_capture_path_is_never_a_pattern(tmp_path: Path) -> None:
    """A capture whose directory name holds glob characters (``*``, ``?``, ``[``, ``'``) is
    read as that directory only, not as a pattern matching its neighbours."""
    for name in ("cap*", "cap[12]", "cap?", "cap'1", "capA"):
        recorder = Recorder(tmp_path / name, name="p", worker_rows=None)
        log = EventLog()
        recorder.follow(log)
        log.extend([chat_message(i) for i in range(3 if name == "capA" else 1)])
        recorder.close()
    for name in ("cap*", "cap[12]", "cap?", "cap'1"):
        attempt("glob characters in a capture path")
        capture = open_capture(tmp_path / name)
        assert len(capture.events()) == 1, name
