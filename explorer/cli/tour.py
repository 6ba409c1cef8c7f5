"""``explorer tour``: the command line of :mod:`explorer.cli.guide` (the recipes in a terminal)."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable
from pathlib import Path

from explorer.cli.terminal import inert
from explorer.errors import ExplorerError


def add_parser(add: Callable[..., argparse.ArgumentParser]) -> None:
    """Register ``explorer tour`` and its flags."""
    parser = add(
        "tour",
        help="rank channels, watch chat, run a poll, sample history; save the plots as PNGs",
        description=(
            "Rank every channel, watch the busiest chat for a few seconds, run a poll as "
            "`streamer`, and sample chat history; print compact tables and save the plots as "
            "PNG files. Talks to EXPLORER_BASE_URL (or --base-url), else starts the embedded "
            "platform."
        ),
    )
    parser.add_argument(
        "--out", type=Path, default=Path("explorer-tour"), help="folder for the PNG files"
    )
    parser.add_argument("--watch", type=float, default=5.0, help="seconds to watch chat")
    parser.add_argument("--poll", type=float, default=10.0, help="the poll's length in seconds")
    parser.add_argument(
        "--sample", type=int, default=10, help="channels per history sample (top and random)"
    )
    parser.add_argument(
        "--base-url",
        default=None,
        help="the platform's REST base URL (default: EXPLORER_BASE_URL, else embedded)",
    )


def run(args: argparse.Namespace) -> int:
    """The ``explorer tour`` command."""
    from explorer.cli.guide import Tour

    if args.watch <= 0 or args.poll <= 0 or args.sample < 1:
        print("explorer tour: --watch, --poll and --sample must be positive", file=sys.stderr)
        return 2
    # The tour's printed tables are its interface: keep request and server logs out of them.
    logging.getLogger().setLevel(logging.WARNING)
    tour = Tour(
        out=args.out, watch=args.watch, poll=args.poll, sample=args.sample, base_url=args.base_url
    )
    try:
        tour.run()
    except (ExplorerError, TimeoutError) as exc:
        print(inert(f"explorer tour: {exc}"), file=sys.stderr)
        return 1
    return 0
