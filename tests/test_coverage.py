"""A recording split over shards: ``explorer record --shard K/N`` processes writing one
capture on the loopback S3 server, and the coverage check (``Capture.coverage``,
``explorer coverage``) telling which shard wrote what and the gaps."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Iterator

import pandas as pd
import pytest

import explorer
from explorer.cli import main
from explorer.emulator import Platform
from explorer.recording.capture import open_capture
from explorer.recording.coverage import coverage
from tests.test_capture_s3 import keys
from tests.test_record_cli import wait_for

pytestmark = pytest.mark.any_engine("a sharded capture's coverage, fed by the platform")


T = pd.Timestamp("2026-11-20 12:00", tz="UTC")


def manifest(name: str, shard: list[int] | None, started: float, last: float | None) -> dict:
    """A manifest row as Capture.recorders() gives it (times in seconds after T)."""
    return {
        "name": name,
        "host": "h",
        "shard": shard,
        "started": T + pd.Timedelta(seconds=started),
        "last_flush": None if last is None else T + pd.Timedelta(seconds=last),
        "flush_every": 5.0,
        "events": 1,
        "snapshots": 0,
        "channels": [],
    }


def test_a_missing_shard_a_missing_channel_and_a_restart_gap_are_reported() -> None:
    """Shard 3/3 never wrote, channel 5 (shard 3/3) has no rows, and shard 2/3's recorder
    killed at 40 s and restarted at 100 s left a 60 s gap; start-up lags under the tolerance
    (twice the flush interval) are not gaps."""
    manifests = pd.DataFrame(
        [
            manifest("a", [1, 3], 0, 200),
            manifest("b", [2, 3], 3, 40),
            manifest("c", [2, 3], 100, 199),
        ]
    )
    found = coverage(manifests, [3, 4], expected=[3, 4, 5])
    assert found.missing_shards == ["3/3"]
    assert found.missing_channels == {5: "3/3"}
    assert found.gaps[["shard", "seconds"]].values.tolist() == [["2/3", 60.0]]
    assert found.shards["recorders"].tolist() == [1, 2] and not found.complete
    assert "gap in shard 2/3" in found.report() and found.report().endswith("incomplete")


def test_a_write_failure_that_dropped_rows_is_a_gap() -> None:
    """A recorder's write failure (its manifest's gaps) that dropped rows is a gap in its
    shard; one that dropped nothing (the rows were written later) is not."""
    lossy = manifest("a", [1, 1], 0, 200)
    lossy["gaps"] = [
        {"start": T.timestamp() + 50, "end": T.timestamp() + 80, "events": 12, "snapshots": 0},
        {"start": T.timestamp() + 120, "end": T.timestamp() + 150, "events": 0, "snapshots": 0},
    ]
    found = coverage(pd.DataFrame([lossy]), [])
    assert found.gaps[["shard", "seconds"]].values.tolist() == [["1/1", 30.0]]


def test_one_unsharded_recorder_that_ran_throughout_is_complete() -> None:
    """A single recorder without a shard covers its whole span: nothing is missing."""
    found = coverage(pd.DataFrame([manifest("a", None, 0, 100)]), [7], expected=[7])
    assert found.complete and found.shards["shard"].tolist() == ["all"]


@pytest.fixture(scope="module")
def live() -> Iterator[Platform]:
    """A platform with simulated chat for the fleet."""
    from tests.databases import start

    with start(channels=200, simulate=True, rate_limits=True) as running:
        yield running


def shard(base_url: str, url: str, k: int, channels: list[int]) -> subprocess.Popen[bytes]:
    """``explorer record --shard K/3`` of ``channels`` into ``url``, flushing fast."""
    command = [sys.executable, "-m", "explorer.cli", "record", "--url", base_url, "--out", url]
    command += ["--channels", ",".join(map(str, channels)), "--shard", f"{k}/3"]
    command += ["--flush-every", "0.2s", "--snapshot-every", "0.3s"]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def manifests_of(bucket: str) -> int:
    """How many recorders' manifests the bucket holds."""
    return sum(key.startswith("capture/recorders/") for key in keys(bucket))


@pytest.mark.timeout(300)
def test_a_fleet_on_s3_with_a_shard_restarted_reports_its_gap(
    live: Platform, bucket: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Three shard processes record nine channels into one S3 capture; shard 2 is killed
    with SIGKILL and restarted three seconds later. Checked from when all three recorded to
    just before they stop, the coverage sees every shard and channel, the recorders of each
    shard, and exactly one gap, in shard 2/3, spanning the restart; ``explorer coverage``
    prints it and exits 1."""
    with explorer.connect(live.base_url) as api:
        channels = [int(c) for c in api.channels(fields="id", max_rows=9).index]
    url = f"{bucket}/capture"
    processes = {k: shard(live.base_url, url, k, channels) for k in (1, 2, 3)}
    restarted = None
    try:
        # Each process has a tracker and a watch: two manifests once both have flushed.
        wait_for(lambda: manifests_of(bucket) >= 6, timeout=120)
        ready = pd.Timestamp.now(tz="UTC")  # every shard is recording (start-ups differ)
        processes[2].send_signal(signal.SIGKILL)
        processes[2].wait(30)
        killed = pd.Timestamp.now(tz="UTC")
        time.sleep(3)  # the outage the check must find
        restarted = pd.Timestamp.now(tz="UTC")
        processes[2] = shard(live.base_url, url, 2, channels)
        wait_for(lambda: manifests_of(bucket) >= 8, timeout=120)
        time.sleep(1)
        stopping = pd.Timestamp.now(tz="UTC")
    finally:
        for process in processes.values():
            process.send_signal(signal.SIGTERM)
        for process in processes.values():
            process.communicate(timeout=60)
    assert [processes[k].returncode for k in (1, 2, 3)] == [143, 143, 143]
    capture = open_capture(url)
    found = capture.coverage([*channels, 99_999_999], start=ready, end=stopping, tolerance=1.0)
    assert found.missing_shards == []
    assert found.missing_channels == {99_999_999: f"{99_999_999 % 3 + 1}/3"}
    assert found.shards["shard"].tolist() == ["1/3", "2/3", "3/3"]
    assert found.shards["recorders"].tolist() == [2, 4, 2]
    assert found.shards["channels"].tolist() == [
        sum(c % 3 == k for c in channels) for k in range(3)
    ]
    assert found.gaps["shard"].tolist() == ["2/3"]
    gap = found.gaps.iloc[0]
    assert gap["start"] <= killed and gap["end"] >= restarted
    window = ["--start", ready.isoformat(), "--end", stopping.isoformat(), "--tolerance", "1s"]
    assert main(["coverage", url, "--channels", ",".join(map(str, channels)), *window]) == 1
    assert "gap in shard 2/3" in capsys.readouterr().out
