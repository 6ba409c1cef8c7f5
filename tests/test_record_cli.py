"""``explorer record`` as a real process against a platform started here: a timed run read
back from disk, Ctrl-C and SIGTERM mid-run writing everything, exit codes, the display."""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import orjson
import pandas as pd
import pytest

import explorer
from explorer.cli import main
from explorer.cli import record as record_cli
from explorer.cli.record import INTERRUPTED, TERMINATED, Display, Recording
from explorer.emulator import Platform
from explorer.recording.capture import open_capture


@pytest.fixture(scope="module")
def live() -> Iterator[Platform]:
    """A platform with simulated chat for this module's recordings (1,000 channels: over five
    live; at speed 30, so chat is lively)."""
    from tests.databases import start

    with start(channels=1000, speed=30, simulate=True, rate_limits=True) as running:
        yield running


def record(base_url: str, out: Path, *flags: str) -> subprocess.Popen[str]:
    """Start ``explorer record`` on ``base_url`` into ``out`` with fast flushes."""
    fast = ("--flush-every", "0.2s", "--snapshot-every", "0.5s")
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "explorer.cli",
            "record",
            "--url",
            base_url,
            "--out",
            str(out),
            *fast,
            *flags,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


def written(stdout: str, what: str) -> int:
    """A count from the summary at the end of ``stdout``: ``events`` written or snapshot
    ``rows``."""
    pattern = r"events written:\s+([\d,]+)" if what == "events" else r"taken:.*\(([\d,]+) rows"
    found = re.search(pattern, stdout.rpartition("explorer record:")[2])
    assert found, stdout
    return int(found.group(1).replace(",", ""))


def rows_on_disk(out: Path, kind: str) -> int:
    """Rows in the capture's ``kind`` (events or snapshots) files, each file read alone."""
    return sum(len(pd.read_parquet(path)) for path in (out / kind).rglob("*.parquet"))


def wait_for(condition: Callable[[], bool], timeout: float = 60.0) -> None:
    """Poll ``condition`` until true, failing after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.05)


def test_a_timed_run_writes_a_capture_that_reads_back(live: Platform, tmp_path: Path) -> None:
    """--top 5 for 2 s: exit 0, plain progress lines (no carriage returns), a summary that
    says what may be missing (nothing here), and on disk exactly the events and snapshot rows
    the summary counts, typed as in memory."""
    out = tmp_path / "capture"
    process = record(live.base_url, out, "--top", "5", "--duration", "2s")
    stdout, stderr = process.communicate(timeout=90)
    assert process.returncode == 0, stderr
    assert "\r" not in stdout
    assert "channels" in stdout.splitlines()[0]
    assert "explorer record: done after" in stdout
    assert "possible gaps:     0 intervals" in stdout and "dropped channel" not in stdout
    manifests = [json.loads(m.read_text()) for m in (out / "recorders").glob("*.json")]
    (losses,) = [m["losses"] for m in manifests if "losses" in m]  # the watch's recorder
    assert (losses["gaps"], losses["failed"]) == (0, [])
    capture = open_capture(out)
    snapshots = capture.snapshots()
    assert len(snapshots) == written(stdout, "rows") >= 5
    assert snapshots["channel"].nunique() >= 5
    assert str(snapshots["time"].dtype) == "datetime64[ms, UTC]"
    assert {"viewersCurrent", "online", "numFollowers", "viewersTotal"} <= set(snapshots)
    assert capture.count() == written(stdout, "events") > 0
    assert capture.events(columns=["channel"])["channel"].notna().all()


def test_a_run_in_json_lines_with_chosen_fields_imports_back(
    live: Platform, tmp_path: Path
) -> None:
    """--format jsonl --fields: JSON Lines files of those events columns only (snapshots in
    JSON Lines too), which explorer.import_chat reads back to the events the summary counts."""
    out = tmp_path / "capture"
    fields = "received_at,event,channel,user_name,text"
    process = record(
        live.base_url,
        out,
        "--top",
        "5",
        "--duration",
        "2s",
        "--format",
        "jsonl",
        "--fields",
        fields,
    )
    stdout, stderr = process.communicate(timeout=90)
    assert process.returncode == 0, stderr
    events = sorted((out / "events").rglob("*.jsonl"))
    assert events and not list(out.rglob("*.parquet"))
    assert list(orjson.loads(events[0].read_bytes().splitlines()[0])) == fields.split(",")
    assert list((out / "snapshots").rglob("*.jsonl"))
    back = explorer.import_chat(out, to=tmp_path / "back")
    assert back.count() == written(stdout, "events") > 0
    assert back.events()["user_id"].isna().all()


def test_the_recording_keeps_only_its_tail_in_memory(
    live: Platform, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The watch of a recording keeps ``TAIL_ROWS`` rows in memory (here 1), not every row
    it wrote."""
    monkeypatch.setattr(record_cli, "TAIL_ROWS", 1)
    args = argparse.Namespace(
        top=5,
        channels=None,
        snapshot_every=60.0,
        out=str(tmp_path / "capture"),
        format="parquet",
        fields=None,
        flush_every=0.2,
        shard=None,
        refresh=60.0,
        exclude_users=None,
        redact_users=None,
    )
    with explorer.connect(live.base_url, progress=False) as api:
        recording = Recording.start(api, args)
        try:
            watch = recording.watch
            assert watch is not None and watch.recorder is not None
            recorder = watch.recorder
            wait_for(lambda: recorder.stats.events >= 2)
            # The log lets go of written rows once the recorder has them: wait for that.
            wait_for(lambda: len(watch.log.tail(10**6)) < watch.log.total)
        finally:
            recording.close()


@pytest.mark.parametrize(
    ("signum", "code", "reason"),
    [(signal.SIGINT, INTERRUPTED, "Ctrl-C"), (signal.SIGTERM, TERMINATED, "SIGTERM")],
)
def test_a_signal_mid_run_stops_cleanly_with_everything_written(
    live: Platform, tmp_path: Path, signum: int, code: int, reason: str
) -> None:
    """Ctrl-C (130) or SIGTERM (143) during an hour-long run: the summary's rows are all on
    disk and readable."""
    out = tmp_path / "capture"
    process = record(live.base_url, out, "--channels", "streamer,100001", "--duration", "1h")
    try:
        wait_for(lambda: any((out / "snapshots").rglob("*.parquet")))
        process.send_signal(signum)
        stdout, stderr = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == code, stderr
    assert f"stopped by {reason}" in stdout
    assert rows_on_disk(out, "snapshots") == written(stdout, "rows") >= 2
    assert rows_on_disk(out, "events") == written(stdout, "events")


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--top", "0"], "positive whole number"),
        (["--top", "5", "--duration", "soon"], "Not a duration"),
        (["--top", "5", "--shard", "3/2"], "K/N"),
        (["--channels", ","], "at least one"),
        (["--top", "5", "--snapshot-every", "0s"], "positive"),
    ],
)
def test_bad_flags_exit_2_with_a_message(
    flags: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bad value is refused before anything starts: exit code 2 and what was wrong."""
    with pytest.raises(SystemExit) as stopped:
        main(["record", *flags])
    assert stopped.value.code == 2
    assert message in capsys.readouterr().err


def test_nothing_to_record_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    """Neither --top nor --channels: exit 2 saying to give one."""
    assert main(["record", "--duration", "1s"]) == 2
    assert "--top" in capsys.readouterr().err


def test_an_out_that_is_a_file_exits_2(live: Platform, tmp_path: Path) -> None:
    """--out naming a file, not a folder: exit 2 saying so."""
    (tmp_path / "file").write_text("not a capture")
    process = record(live.base_url, tmp_path / "file", "--top", "5")
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 2
    assert "is a file" in stderr


def test_an_unknown_channel_name_exits_2_naming_it(
    live: Platform, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--channels with a token no channel has: exit 2 naming it, not "cannot reach"."""
    flags = ["--url", live.base_url, "--out", str(tmp_path / "capture"), "--duration", "1s"]
    assert main(["record", *flags, "--channels", "no-such-streamer"]) == 2
    err = capsys.readouterr().err
    assert "no channel is called 'no-such-streamer'" in err and "reach" not in err


def test_a_misspelt_channel_name_suggests_the_close_one(
    live: Platform, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """--channels with a token one letter off a channel's: exit 2 suggesting that channel."""
    flags = ["--url", live.base_url, "--out", str(tmp_path / "capture"), "--duration", "1s"]
    assert main(["record", *flags, "--channels", "streamr"]) == 2
    assert "did you mean 'streamer'?" in capsys.readouterr().err


def test_an_unreachable_platform_exits_1(tmp_path: Path) -> None:
    """Nothing listening at --url: exit 1 with one line naming the URL once and what to do,
    no capture started."""
    process = record("http://127.0.0.1:1/api/v1", tmp_path / "capture", "--top", "5")
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 1
    assert "Cannot reach the platform at http://127.0.0.1:1/api/v1 (" in stderr
    assert stderr.count("127.0.0.1:1") == 1 and "explorer serve" in stderr
    assert len(stderr.strip().splitlines()) == 1
    assert not (tmp_path / "capture").exists()


def test_an_unwritable_out_is_said_to_be_the_folder(live: Platform, tmp_path: Path) -> None:
    """--out inside a file (so not writable): exit 2 saying the folder cannot be written,
    not that the platform cannot be reached."""
    (tmp_path / "file").write_text("not a folder")
    process = record(live.base_url, tmp_path / "file" / "capture", "--top", "5")
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 2
    assert "cannot write the capture at" in stderr and "--out" in stderr
    assert "reach" not in stderr


class Terminal(io.StringIO):
    """A text stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def test_on_a_terminal_the_progress_line_is_redrawn_in_place() -> None:
    """On a TTY each update rewrites one line (carriage return, padded over the longer one)
    and finishing ends it; to a file, one plain line per update."""
    screen, file = Terminal(), io.StringIO()
    for stream in (screen, file):
        display = Display(stream)
        display.show("10 channels  1,000 events")
        display.show("9 channels")
        display.finish()
    assert screen.getvalue() == "\r10 channels  1,000 events\r9 channels" + " " * 15 + "\n"
    assert file.getvalue() == "10 channels  1,000 events\n9 channels\n"


def test_kill_9_mid_run_leaves_a_readable_capture(live: Platform, tmp_path: Path) -> None:
    """SIGKILL while flushing every 50 ms: every file reads, no half-written file shows, and
    each recorder's files hold at least the rows its last manifest counted."""
    out = tmp_path / "capture"
    process = record(live.base_url, out, "--top", "20", "--flush-every", "0.05s")
    try:
        wait_for(lambda: len(list((out / "events").rglob("*.parquet"))) >= 5)
        process.send_signal(signal.SIGKILL)
        process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == -signal.SIGKILL
    files = list(out.rglob("*.parquet"))
    per_file = {path: len(pd.read_parquet(path)) for path in files}  # each one readable
    capture = open_capture(out)
    assert capture.count() == sum(n for p, n in per_file.items() if p.parts[-3] == "events")
    for manifest in (out / "recorders").glob("*.json"):
        facts = pd.read_json(manifest, typ="series")
        mine = sum(n for p, n in per_file.items() if p.name.startswith(f"{facts['name']}-"))
        assert mine >= facts["events"] + facts["snapshots"]
