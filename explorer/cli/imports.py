"""``explorer import``: read a chat log of a real platform (chat-downloader, TwitchDownloader,
justlog/rustlog raw IRC, yt-dlp ``live_chat.json``) or a CSV / JSON Lines export into a
capture folder (:mod:`explorer.recording.chatimport`), and say what was read and what was left out.

Exit codes: 0 imported (records left out are reported, not an error), 2 bad arguments (no
such file, an unknown or undetectable format, a capture folder that cannot be written).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from explorer.cli.terminal import inert, say
from explorer.wire.numbers import identifier

#: Exit codes (see the module docstring).
DONE, BAD_ARGUMENTS = 0, 2


def _channel(text: str) -> int:
    number = identifier(text.strip())
    if number is None:
        raise argparse.ArgumentTypeError(f"a channel is an id (digits), not {text!r}")
    return number


def add_parser(add: Callable[..., argparse.ArgumentParser]) -> None:
    """Register ``explorer import`` and its flags."""
    parser = add(
        "import",
        help="read a chat log of a real platform into a capture",
        description=(
            "Read a chat log written by chat-downloader, TwitchDownloader, justlog or rustlog "
            "(raw IRC) or yt-dlp (live_chat.json), or a CSV / JSON Lines export of a capture, "
            "into a capture folder that open_capture, replays and the recipes read. Exit "
            "codes: 0 imported, 2 bad arguments."
        ),
    )
    parser.add_argument("log", help="the chat log file (or a folder of CSV / JSON Lines files)")
    parser.add_argument(
        "--format",
        default=None,
        help=(
            "chat-downloader, twitchdownloader, irc (justlog, rustlog), yt-dlp, csv or jsonl "
            "(default: told from the file)"
        ),
    )
    parser.add_argument(
        "--out", default="capture", help="the capture folder or URL to write (default: capture)"
    )
    parser.add_argument(
        "--channel", type=_channel, default=None, help="the channel id, where the log names none"
    )


def run(args: argparse.Namespace) -> int:
    """The ``explorer import`` command."""
    from explorer.recording.chatimport import import_report

    try:
        capture, report = import_report(args.log, args.format, to=args.out, channel=args.channel)
    except (OSError, ValueError) as exc:
        print(inert(f"explorer import: {exc}"), file=sys.stderr)
        return BAD_ARGUMENTS
    say(f"explorer import: {report.summary()}\n  capture: {capture!r}")
    return DONE
