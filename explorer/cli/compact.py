"""``explorer compact``: merge a capture's small files into a day file per partition while
recorders keep writing, dropping the doubles of redundant recorders
(:mod:`explorer.recording.compaction`), and say what it did.

Exit codes: 0 done, 1 a file could not be read or written, 2 bad arguments or no capture.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from explorer.cli.record import _duration
from explorer.cli.terminal import say

#: Exit codes (see the module docstring).
DONE, FAILED, BAD_ARGUMENTS = 0, 1, 2


def _grace(text: str) -> float:
    from explorer.recording.compaction import grace_seconds

    try:
        return grace_seconds(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_parser(add: Callable[..., argparse.ArgumentParser]) -> None:
    """Register ``explorer compact`` and its flags."""
    parser = add(
        "compact",
        help="merge a capture's small files into day files, dropping doubles",
        description=(
            "Merge each partition of a capture (a folder or a URL such as s3://bucket/prefix) "
            "into one day file while recorders keep writing, dropping the doubles of recorders "
            "of the same channels; safe to kill at any point and run again. Run one at a time "
            "per capture. Exit codes: 0 done, 1 a file could not be read or written, 2 bad "
            "arguments or no capture."
        ),
    )
    parser.add_argument("capture", help="the capture folder or URL")
    parser.add_argument(
        "--grace",
        type=_grace,
        default=60.0,
        help="keep replaced files this long after the commit, for readers under way (default 60s)",
    )
    parser.add_argument(
        "--tolerance",
        type=_duration,
        default=10.0,
        help="identical events of two recorders this close in time are one (default 10s)",
    )


def run(args: argparse.Namespace) -> int:
    """The ``explorer compact`` command."""
    from explorer.errors import CaptureError, CaptureNotFound
    from explorer.recording.compaction import compact

    def step(name: str, kind: str, partition: str) -> None:
        if name == "committed":
            say(f"{kind}/{partition}: merged")

    try:
        done = compact(args.capture, grace=args.grace, tolerance=args.tolerance, progress=step)
    except CaptureNotFound as exc:
        print(f"explorer compact: {exc}", file=sys.stderr)
        return BAD_ARGUMENTS
    except (CaptureError, OSError) as exc:
        print(f"explorer compact: {exc}", file=sys.stderr)
        return FAILED
    say(
        f"{done.partitions} partitions, {done.merged:,} files merged, {done.rows:,} rows "
        f"written, {done.doubles:,} doubles dropped, {done.removed:,} files removed"
    )
    return DONE
