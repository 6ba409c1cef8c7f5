"""Listing progress written to a pipe: plain lines, never carriage-return redraws."""

from __future__ import annotations

import subprocess
import sys

from explorer.emulator import Platform

LISTING = """
import sys
import explorer
import explorer.rest.progress

explorer.rest.progress.LINE_INTERVAL = float(sys.argv[2])
with explorer.connect(sys.argv[1], progress=True) as api:
    rows = api.channels(limit=20, max_rows=200)
print(len(rows))
"""


def list_channels(platform: Platform, interval: float) -> tuple[str, str]:
    """Run a paged listing in a child process with stdout and stderr to pipes."""
    done = subprocess.run(
        [sys.executable, "-c", LISTING, platform.base_url, str(interval)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout, done.stderr


def test_progress_to_a_pipe_is_plain_lines(platform: Platform) -> None:
    """To a pipe, progress is whole lines with the label and counts, the last one final,
    and no carriage return anywhere."""
    stdout, stderr = list_channels(platform, 0.0)
    assert stdout.strip() == "200"
    assert "\r" not in stderr and "\x1b" not in stderr
    lines = stderr.splitlines()
    assert len(lines) >= 2 and all(line.startswith("/channels: ") for line in lines), lines
    assert "200/200" in lines[-1]


def test_short_listing_to_a_pipe_writes_nothing(platform: Platform) -> None:
    """A listing done before the first line is due leaves stderr empty (as the terminal bar
    leaves nothing behind)."""
    stdout, stderr = list_channels(platform, 600.0)
    assert (stdout.strip(), stderr) == ("200", "")
