"""``explorer coverage``: read a capture (a folder or a URL such as ``s3://bucket/prefix``)
and report which shard wrote what and the gaps (:mod:`explorer.recording.coverage`): shards no
recorder wrote, expected channels without rows, intervals a shard missed.

Exit codes: 0 complete, 1 something is missing, 2 bad arguments or no capture there.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from explorer.cli.record import _channels, _duration
from explorer.cli.terminal import say
from explorer.wire.numbers import identifier

#: Exit codes (see the module docstring).
COMPLETE, INCOMPLETE, BAD_ARGUMENTS = 0, 1, 2


def add_parser(add: Callable[..., argparse.ArgumentParser]) -> None:
    """Register ``explorer coverage`` and its flags."""
    parser = add(
        "coverage",
        help="report which shard wrote what in a capture, and the gaps",
        description=(
            "Read the recorders' manifests and the channels of a capture (a folder or a URL "
            "such as s3://bucket/prefix) and report the shards no recorder wrote, the "
            "--channels without rows and the intervals a shard missed. Exit codes: 0 complete, "
            "1 something missing, 2 bad arguments or no capture."
        ),
    )
    parser.add_argument("capture", help="the capture folder or URL")
    parser.add_argument(
        "--channels", type=_channels, default=None, help="comma-separated channel ids expected"
    )
    parser.add_argument(
        "--tolerance",
        type=_duration,
        default=None,
        help="ignore shorter gaps (default: twice the longest flush interval)",
    )
    parser.add_argument("--start", default=None, help="look for gaps from this time (UTC)")
    parser.add_argument("--end", default=None, help="look for gaps until this time (UTC)")


def run(args: argparse.Namespace) -> int:
    """The ``explorer coverage`` command."""
    from explorer.recording.capture import open_capture

    expected = None
    if args.channels is not None:
        ids = [identifier(name) for name in args.channels]
        if None in ids:
            print("explorer coverage: --channels takes channel ids", file=sys.stderr)
            return BAD_ARGUMENTS
        expected = [number for number in ids if number is not None]
    try:
        capture = open_capture(args.capture)
        found = capture.coverage(expected, start=args.start, end=args.end, tolerance=args.tolerance)
    except (FileNotFoundError, ValueError) as exc:
        print(f"explorer coverage: {exc}", file=sys.stderr)
        return BAD_ARGUMENTS
    say(found.report())
    return COMPLETE if found.complete else INCOMPLETE
