"""Captures on object storage: recorders write ``s3://`` URLs, and ``open_capture``, ``replay``
and DuckDB read them back, against a real S3-compatible server on loopback (``s3_server``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import boto3
import duckdb
import numpy as np
import pandas as pd
import polars as pl
import pyarrow.parquet as pq
import pytest
import s3fs

from explorer.emulator import Platform
from explorer.events.log import EventLog
from explorer.recording.capture import open_capture
from explorer.recording.recorder import Recorder
from explorer.recording.replays import replay
from tests.test_capture import moderation_packets, record
from tests.test_record_cli import wait_for
from tests.test_recorder import (
    T0,
    chat_message,
    kill_feeder,
    poll_start,
    start_feeder,
    terminate_feeder,
)

pytestmark = pytest.mark.any_engine("captures on object storage, fed by the platform")


DAY = 86_400.0


def keys(bucket: str) -> list[str]:
    """Every object key in ``bucket`` (an ``s3://name`` URL), listed afresh."""
    client = boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL"])
    pages = client.get_paginator("list_objects_v2").paginate(Bucket=bucket.removeprefix("s3://"))
    return sorted(item["Key"] for page in pages for item in page.get("Contents", []))


def duckdb_count(url: str) -> int:
    """Events in the capture at ``url``, counted by a DuckDB of our own reading through s3fs
    (what the docs show)."""
    db = duckdb.connect(config={"autoinstall_known_extensions": False})
    db.register_filesystem(s3fs.S3FileSystem(skip_instance_cache=True))
    query = f"SELECT count(*) FROM read_parquet('{url}/events/**/*.parquet')"
    return int(db.sql(query).fetchall()[0][0])


@pytest.fixture
def recorded(bucket: str) -> tuple[EventLog, str]:
    """A log of chat, a poll and moderation over two days, recorded to ``bucket``/capture."""
    log = EventLog()
    packets = [(chat_message(i, channel=7 + i % 3), T0 + i) for i in range(25)]
    packets += [(poll_start({"yes": 1, "no": 2}), T0 + 30)]
    packets += [(p, T0 + 40 + i) for i, p in enumerate(moderation_packets())]
    packets += [(chat_message(100 + i, channel=8), T0 + DAY + i) for i in range(5)]
    url = f"{bucket}/capture"
    record(url, log, "one", packets)
    return log, url


def test_a_capture_on_s3_reads_back_as_recorded(recorded: tuple[EventLog, str]) -> None:
    """open_capture on the s3:// URL gives the log's frame and views and the manifest; DuckDB
    (through s3fs) and Polars (its own S3 client), reading the bucket themselves as the docs
    show, count the same rows over both date partitions."""
    log, url = recorded
    capture = open_capture(url)
    pd.testing.assert_frame_equal(capture.events(), log.frame.reset_index(drop=True))
    pd.testing.assert_frame_equal(
        capture.messages().reset_index(drop=True), log.messages().reset_index(drop=True)
    )
    assert capture.recorders()["name"].tolist() == ["one"]
    assert capture.recorders()["closed"].tolist() == [True]
    assert duckdb_count(url) == len(log.frame) == capture.count()
    events = pl.scan_parquet(f"{url}/events/**/*.parquet", hive_partitioning=True).collect()
    assert len(events) == len(log.frame) and events["date"].n_unique() == 2
    assert str(capture.path) == url and url in repr(capture)


def test_only_whole_parquet_objects_are_written(recorded: tuple[EventLog, str]) -> None:
    """Every object is a final name (no staging objects), and each reads as Parquet alone."""
    log, url = recorded
    bucket = url.rpartition("/")[0]
    names = keys(bucket)
    data = [key for key in names if key.endswith(".parquet")]
    assert names == sorted([*data, "capture/recorders/one.json"])
    assert {key.split("/")[2] for key in data} == {"date=2023-11-14", "date=2023-11-15"}
    fs = s3fs.S3FileSystem(skip_instance_cache=True)
    rows = sum(
        pq.read_table(f"{bucket}/{key}".removeprefix("s3://"), filesystem=fs).num_rows
        for key in data
    )
    assert rows == len(log.frame)


def test_replay_reads_a_capture_on_s3(recorded: tuple[EventLog, str]) -> None:
    """replay() of the s3:// URL feeds every event back into a log equal to the recorded one."""
    log, url = recorded
    replaying = replay(url, speed=None)
    assert replaying.wait(30)
    pd.testing.assert_frame_equal(replaying.log.frame, log.frame)


def test_a_missing_capture_bucket_or_scheme_is_a_clear_error(bucket: str) -> None:
    """open_capture of an empty prefix raises FileNotFoundError; a recorder into a bucket that
    does not exist, or at a URL scheme no installed filesystem knows, raises ValueError
    naming it, before anything is written."""
    with pytest.raises(FileNotFoundError, match="No capture at"):
        open_capture(f"{bucket}/nothing-here")
    with pytest.raises(ValueError, match="No bucket 'no-such-bucket'"):
        Recorder("s3://no-such-bucket/capture")
    with pytest.raises(ValueError, match="nosuchfs://x"):
        Recorder("nosuchfs://x/capture")


def written_rows(url: str) -> np.ndarray:
    """The row numbers of the capture at ``url``, every object read on its own."""
    fs = s3fs.S3FileSystem(skip_instance_cache=True)
    files = fs.glob(f"{url.removeprefix('s3://')}/events/*/*.parquet")
    rows = [pq.read_table(f, columns=["row"], filesystem=fs)["row"].to_numpy() for f in files]
    return np.sort(np.concatenate(rows))


@pytest.mark.parametrize("worker_rows", [None, 1])
def test_kill_9_on_s3_loses_at_most_one_flush_interval(
    bucket: str, worker_rows: int | None
) -> None:
    """A recorder writing to S3 killed with SIGKILL mid-run (building files itself or in its
    worker process) leaves whole objects holding the first rows up to a flush, read the same
    by open_capture and by DuckDB."""
    url = f"{bucket}/capture"
    process, _ = start_feeder(url, worker_rows)
    written = kill_feeder(process, lambda: written_rows(url))
    assert open_capture(url).count() == written == duckdb_count(url)


def test_sigterm_on_s3_loses_nothing(bucket: str) -> None:
    """SIGTERM unwinds a recorder writing to S3, and its exit hook writes every row added and
    marks the manifest closed (its S3 client still works then)."""
    url = f"{bucket}/capture"
    added = terminate_feeder(start_feeder(url, None)[0])
    assert (written_rows(url) == np.arange(added)).all()
    manifest = open_capture(url).recorders().iloc[0]
    assert manifest["closed"] and manifest["events"] == added


@pytest.fixture(scope="module")
def live() -> Iterator[Platform]:
    """A platform with simulated chat for this module's recordings."""
    from tests.databases import start

    with start(channels=200, simulate=True, rate_limits=True) as running:
        yield running


def test_explorer_record_to_s3_killed_mid_run_reads_back(
    live: Platform, bucket: str, tmp_path: Path
) -> None:
    """``explorer record --out s3://...`` (a watch and a tracker) killed with SIGKILL mid-run:
    open_capture and DuckDB read the same events, and each recorder's objects hold at least
    the rows its last manifest counted."""
    url = f"{bucket}/capture"
    command = [sys.executable, "-m", "explorer.cli", "record", "--url", live.base_url]
    command += ["--out", url, "--top", "20", "--flush-every", "0.1s", "--snapshot-every", "0.5s"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_for(lambda: sum("/events/" in key for key in keys(bucket)) >= 5)
        process.send_signal(signal.SIGKILL)
        process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == -signal.SIGKILL
    capture = open_capture(url)
    events = capture.count()
    assert events > 0 and duckdb_count(url) == events
    fs = s3fs.S3FileSystem(skip_instance_cache=True)
    bucket_name = bucket.removeprefix("s3://")
    rows = {
        key: pq.read_metadata(f"{bucket_name}/{key}", filesystem=fs).num_rows
        for key in keys(bucket)
        if key.endswith(".parquet")
    }
    assert sum(n for key, n in rows.items() if "/events/" in key) == events
    for manifest in capture.recorders().itertuples():
        mine = sum(
            n for key, n in rows.items() if key.split("/")[-1].startswith(f"{manifest.name}-")
        )
        assert mine >= manifest.events + manifest.snapshots
