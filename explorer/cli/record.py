"""``explorer record``: watch the busiest channels' chat and track the directory into a capture
folder for a while, with a live progress display and a summary at the end.

It runs a :class:`~explorer.collect.watch.Watch` (``api.watch(top=..., to=out)``) and a
:class:`~explorer.collect.track.Tracker` per target (``api.track(top query or channels, to=out)``),
each with its own :class:`~explorer.recording.recorder.Recorder` in the one Parquet dataset, until
``--duration`` ends, Ctrl-C or SIGTERM (or a tracker stops because the platform refuses its
query). Every stop closes them, which writes everything.

Memory: nothing reads the recording's rows in this process (the progress line and the summary
come from counters), so its watch and trackers keep a tail of :data:`TAIL_ROWS` rows each,
not the 100,000 of a recording in a notebook (``RECORDING_ROWS``): about 3.5 MB of events
(~75 bytes a row compressed, ~270 more once the watch has built its rows), filled within
minutes at any busy rate, after which the resident memory is level. Rows not written yet are
kept beyond it, up to the recorder's ``pending_rows`` (100,000) while writing fails.

``--format csv`` or ``jsonl`` writes CSV or JSON Lines files instead of Parquet, and
``--fields`` only the events columns named (:mod:`explorer.recording.formats`).

Exit codes: 0 done (the duration ended), 2 bad arguments (``--channels`` naming a token no
channel has among them, an ``--out`` that cannot be written), 1 the platform could not be
reached or refused, 130 interrupted by Ctrl-C and 143 by SIGTERM (128 + the signal, as a shell
reports it, so a supervisor sees the run was cut short; everything is written either way).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import select
import signal
import socket
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType
from typing import IO, TYPE_CHECKING, Any

import explorer
from explorer.cli.terminal import inert, say
from explorer.core.durations import describe, seconds
from explorer.errors import ConnectionFailed, ExplorerError, NotFound
from explorer.wire.numbers import identifier, integer

if TYPE_CHECKING:
    from explorer.collect.track import Tracker
    from explorer.collect.watch import Watch
    from explorer.recording.recorder import Recorder

#: Exit codes (see the module docstring).
DONE, FAILED, BAD_ARGUMENTS = 0, 1, 2
INTERRUPTED = 128 + signal.SIGINT
TERMINATED = 128 + signal.SIGTERM
#: The ``api.channels`` query of ``--top``: online channels, most viewers first.
TOP = {"where": {"online": True}, "order": "viewersCurrent:desc"}
#: Seconds between redraws on a terminal, and between plain lines to a file or pipe.
TTY_EVERY, PLAIN_EVERY = 0.5, 5.0
#: Rows of events (and of snapshots) the watch (and each tracker) keeps in memory, written or
#: not: its tail, which no one here reads (see the module docstring).
TAIL_ROWS = 10_000


def _duration(text: str) -> float:
    try:
        return seconds(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _positive(text: str) -> int:
    value = integer(text.strip(), 1)
    if value is None:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, not {text!r}")
    return value


def _shard(text: str) -> tuple[int, int]:
    k, _, n = text.partition("/")
    shard, shards = identifier(k), identifier(n)
    if shard is None or shards is None or not 1 <= shard <= shards:
        raise argparse.ArgumentTypeError(f"a shard is K/N with 1 <= K <= N, not {text!r}")
    return shard, shards


def _channels(text: str) -> list[str]:
    """The ids and tokens of ``--channels`` as given (``api.watch`` and ``api.track`` read
    digits as ids)."""
    names = [part.strip() for part in text.split(",") if part.strip()]
    if not names:
        raise argparse.ArgumentTypeError("--channels needs at least one id or token")
    return names


def _users(text: str) -> list[str]:
    """The ids and names of ``--exclude-users`` / ``--redact-users`` (digits are ids)."""
    names = [part.strip() for part in text.split(",") if part.strip()]
    if not names:
        raise argparse.ArgumentTypeError("needs at least one user id or name")
    return names


def _fields(text: str) -> tuple[str, ...]:
    """The events columns of ``--fields``, checked against the events schema."""
    from explorer.events.textformats import fields_of

    try:
        return tuple(fields_of(part.strip() for part in text.split(",") if part.strip()))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_parser(add: Callable[..., argparse.ArgumentParser]) -> None:
    """Register ``explorer record`` and its flags."""
    parser = add(
        "record",
        help="record the top channels' chat and directory snapshots to a Parquet capture",
        description=(
            "Watch the chat of the top channels (and/or --channels) and snapshot their "
            "directory fields into a Parquet capture folder until --duration ends or Ctrl-C. "
            "Talks to --url (or EXPLORER_BASE_URL), else starts the embedded platform. Exit "
            "codes: 0 done, 1 platform unreachable or failed, 2 bad arguments, 130 Ctrl-C, "
            "143 SIGTERM (everything written in every case)."
        ),
    )
    parser.add_argument(
        "--top", type=_positive, default=None, help="watch the N online channels with most viewers"
    )
    parser.add_argument(
        "--channels", type=_channels, default=None, help="comma-separated channel ids or tokens"
    )
    parser.add_argument(
        "--duration", type=_duration, default=None, help="how long, e.g. 1h (default: until ^C)"
    )
    parser.add_argument(
        "--snapshot-every", type=_duration, default=30.0, help="directory snapshots (30s)"
    )
    parser.add_argument(
        "--out",
        default="capture",
        help="the capture folder, or a URL such as s3://bucket/prefix (default: capture)",
    )
    parser.add_argument(
        "--exclude-users",
        type=_users,
        default=None,
        help="comma-separated user ids or names whose events are never recorded",
    )
    parser.add_argument(
        "--redact-users",
        type=_users,
        default=None,
        help="comma-separated user ids or names recorded without their names, ids and texts",
    )
    parser.add_argument(
        "--format",
        choices=["parquet", "csv", "jsonl"],
        default="parquet",
        help="the files written: parquet (default; what open_capture reads), csv or jsonl",
    )
    parser.add_argument(
        "--fields",
        type=_fields,
        default=None,
        help="comma-separated events columns to write (default: all)",
    )
    parser.add_argument("--shard", type=_shard, default=None, help="K/N: this recorder's share")
    parser.add_argument(
        "--flush-every", type=_duration, default=5.0, help="seconds between writes (5s)"
    )
    parser.add_argument(
        "--refresh", type=_duration, default=60.0, help="re-evaluate the top channels (1m)"
    )
    parser.add_argument(
        "--url",
        "--base-url",
        dest="url",
        default=None,
        help="the platform's REST base URL (default: EXPLORER_BASE_URL, else embedded)",
    )


def run(args: argparse.Namespace) -> int:
    """The ``explorer record`` command."""
    if args.top is None and args.channels is None:
        print("explorer record: give --top N and/or --channels a,b,c", file=sys.stderr)
        return BAD_ARGUMENTS
    # The progress line is the interface: keep request and server logs out of it.
    logging.getLogger().setLevel(logging.WARNING)
    try:
        api = explorer.connect(args.url, progress=False)
    except (ExplorerError, OSError) as exc:
        print(inert(f"explorer record: {exc}"), file=sys.stderr)
        return FAILED
    with api, _signals() as stopped:
        try:
            recording = Recording.start(api, args)
        except ConnectionFailed as exc:  # (also an OSError: said before the folder's errors)
            print(inert(f"explorer record: {exc}"), file=sys.stderr)
            return FAILED
        except OSError as exc:
            print(f"explorer record: {unwritable(args.out, exc)}", file=sys.stderr)
            return BAD_ARGUMENTS
        except ExplorerError as exc:
            print(inert(f"explorer record: the platform refused: {exc}"), file=sys.stderr)
            return FAILED
        except ValueError as exc:  # unknown --channels, what the recorder says of --out, say
            print(inert(f"explorer record: {exc}"), file=sys.stderr)
            return BAD_ARGUMENTS
        try:
            recording.run(args.duration, stopped)
            failure = recording.failure()
        finally:
            recording.close()
        say(recording.summary(stopped.reason))
    if failure is not None:
        print(inert(f"explorer record: tracking stopped: {failure}"), file=sys.stderr)
        return FAILED
    return {None: DONE, "Ctrl-C": INTERRUPTED, "SIGTERM": TERMINATED}[stopped.reason]


def unwritable(out: str, exc: OSError) -> str:
    """One line for a capture folder that cannot be written: which, why, and what to do."""
    where = exc.filename or out
    why = exc.strerror or str(exc)
    return (
        f"cannot write the capture at {out} ({why}: {where}): choose a folder you can write "
        "with --out, or fix that folder's permissions."
    )


class Stop:
    """Ctrl-C or SIGTERM, caught: ``reason`` says which (None: neither yet). The handlers
    only set ``reason``; :meth:`wait` wakes on the signal through the wakeup socket, so no
    lock is taken inside a handler."""

    def __init__(self) -> None:
        self.reason: str | None = None
        self._read, self._write = socket.socketpair()
        for end in (self._read, self._write):
            end.setblocking(False)

    def is_set(self) -> bool:
        """Whether a stop was asked for."""
        return self.reason is not None

    def wait(self, timeout: float) -> None:
        """Return after ``timeout`` seconds, or at once when a signal arrives."""
        if not self.is_set():
            select.select([self._read], [], [], timeout)
        with contextlib.suppress(BlockingIOError):
            self._read.recv(4096)

    def close(self) -> None:
        """Free the sockets."""
        self._read.close()
        self._write.close()


@contextmanager
def _signals() -> Iterator[Stop]:
    """Turn the first Ctrl-C or SIGTERM into a clean stop (a second Ctrl-C interrupts)."""
    stopped = Stop()

    def handle(signum: int, frame: FrameType | None) -> None:
        if stopped.is_set() and signum == signal.SIGINT:
            raise KeyboardInterrupt
        stopped.reason = "Ctrl-C" if signum == signal.SIGINT else "SIGTERM"

    previous = {s: signal.signal(s, handle) for s in (signal.SIGINT, signal.SIGTERM)}
    wakeup = signal.set_wakeup_fd(stopped._write.fileno())
    try:
        yield stopped
    finally:
        signal.set_wakeup_fd(wakeup)
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        stopped.close()


def _check_tokens(api: explorer.Client, channels: list[str]) -> None:
    """Raise ValueError naming the ``--channels`` tokens no channel has (one listing call)."""
    from explorer.rest.channelrefs import refs

    tokens = [ref for ref, _ in refs(channels) if isinstance(ref, str)]
    if not tokens:
        return
    listed = api.channels(
        where={"token": tokens}, fields=("id", "token"), max_rows=len(tokens), progress=False
    )
    known = {str(token).lower() for token in listed["token"]}
    unknown = [token for token in tokens if token.lower() not in known]
    if unknown:
        raise ValueError(
            f"--channels: no channel is called {', '.join(map(repr, unknown))} "
            f"(a channel is its id or its token{_suggestion(api, unknown[0])})"
        )


def _suggestion(api: explorer.Client, token: str) -> str:
    """The close tokens the channel handle's 404 suggests for ``token``, as a clause ("" when
    it has none)."""
    try:
        api.channel(token).info(fields=("id",))
    except NotFound as missing:
        hint = missing.message.partition("; ")[2]
        return f"; {hint}" if hint.startswith("did you mean") else ""
    return ""


@dataclass
class Recording:
    """One recording: the watch, the trackers, and the clock of the display."""

    watch: Watch | None
    trackers: list[Tracker]
    out: str
    started: float
    clock: Callable[[], float] = time.monotonic
    #: Channels joined (or tracked) at the latest progress line.
    joined: int = 0

    @classmethod
    def start(cls, api: explorer.Client, args: argparse.Namespace) -> Recording:
        """Check the platform answers and knows the ``--channels`` tokens, then start
        tracking and watching."""
        api.channels(fields="id", max_rows=1)
        if args.channels is not None:
            _check_tokens(api, args.channels)
        targets: list[Any] = []
        if args.top is not None:
            targets.append({**TOP, "max_rows": args.top})
        if args.channels is not None:
            targets.append(args.channels)
        from explorer.recording.formats import CaptureFiles

        trackers: list[Tracker] = []
        recording = cls(None, trackers, args.out, time.monotonic())
        out = CaptureFiles(args.out, args.format, args.fields)
        try:
            for target in targets:
                trackers.append(
                    api.track(
                        target,
                        every=args.snapshot_every,
                        to=out,
                        flush_every=args.flush_every,
                        shard=args.shard,
                        max_rows=TAIL_ROWS,
                    )
                )
            recording.watch = api.watch(
                args.channels,
                top=args.top,
                refresh=args.refresh,
                to=out,
                flush_every=args.flush_every,
                shard=args.shard,
                max_rows=TAIL_ROWS,
                exclude_users=args.exclude_users,
                redact_users=args.redact_users,
            )
        except BaseException:
            recording.close()
            raise
        return recording

    def recorders(self) -> list[Recorder]:
        """Every recorder writing into the capture."""
        found = [t.recorder for t in self.trackers]
        if self.watch is not None:
            found.append(self.watch.recorder)
        return [r for r in found if r is not None]

    def totals(self) -> dict[str, int]:
        """Rows of events and snapshots, bytes and files written so far, over all recorders."""
        totals = dict.fromkeys(("events", "snapshots", "bytes", "files"), 0)
        for recorder in self.recorders():
            stats = recorder.stats
            totals["events"] += stats.events
            totals["snapshots"] += stats.snapshots
            totals["bytes"] += stats.bytes
            totals["files"] += stats.files
        return totals

    def line(self) -> str:
        """The progress line: elapsed, channels, events/s, rows and bytes written."""
        watch, totals = self.watch, self.totals()
        tracked = {c for t in self.trackers for c in t.channels}
        channels = self.joined = len(watch.channels) if watch is not None else len(tracked)
        rate = f"{watch.rate():,.1f} events/s  " if watch is not None else ""
        snapshots = sum(t.taken for t in self.trackers)
        return (
            f"{self._elapsed()}  {channels} channels  "
            f"{rate}{totals['events']:,} events  {snapshots} snapshots "
            f"({totals['snapshots']:,} rows)  {_size(totals['bytes'])} in {totals['files']} files"
        )

    def _elapsed(self) -> str:
        """Whole seconds since the start, as a duration: 1m30s."""
        elapsed = round(self.clock() - self.started)
        return describe(elapsed) if elapsed else "0s"

    def run(self, duration: float | None, stopped: Stop) -> None:
        """Show progress until ``duration`` passes or ``stopped`` is set."""
        display = Display(sys.stdout)
        end = None if duration is None else self.started + duration
        while not stopped.is_set() and self.failure() is None:
            left = None if end is None else end - self.clock()
            if left is not None and left <= 0:
                break
            display.show(self.line())
            stopped.wait(display.every if left is None else min(display.every, left))
        display.show(self.line())
        display.finish()

    def failure(self) -> BaseException | None:
        """Why a tracker stopped by itself (the platform refused its query), if one did."""
        stopped = [t.error for t in self.trackers if not t.running]
        return stopped[0] if stopped else None

    def close(self) -> None:
        """Stop every tracker and the watch; each closes its recorder, writing the rest."""
        for tracker in self.trackers:
            tracker.close()
        if self.watch is not None:
            self.watch.close()

    def summary(self, reason: str | None) -> str:
        """What was recorded, for the end of the run."""
        totals = self.totals()
        how = f"stopped by {reason}" if reason else "done"
        late = sum(t.late for t in self.trackers)
        failed = sum(t.failures for t in self.trackers)
        lines = [
            f"explorer record: {how} after {self._elapsed()}",
            f"  events written:    {totals['events']:,}",
            f"  snapshots taken:   {sum(t.taken for t in self.trackers)} "
            f"({totals['snapshots']:,} rows; {late} late, {failed} failed)",
            f"  files:             {totals['files']} ({_size(totals['bytes'])}) in {self.out}",
        ]
        gaps = [gap for recorder in self.recorders() for gap in recorder.stats.gaps]
        if gaps:
            lines.append(
                f"  write gaps:        {len(gaps)} ({sum(g.failures for g in gaps)} failed "
                f"writes; {sum(g.events for g in gaps):,} events and "
                f"{sum(g.snapshots for g in gaps):,} snapshot rows dropped; last error: "
                f"{gaps[-1].error}); see recorders/*.json"
            )
        if self.watch is not None:
            lines.insert(1, f"  channels watched:  {self.joined}")
            lines.extend(_losses(self.watch.losses()))
        return "\n".join(lines)


def _losses(losses: dict[str, Any]) -> list[str]:
    """The summary's lines on what the capture may be missing (the manifest has each
    interval under ``losses``)."""
    outages = losses["outages"]
    unfilled = [o for o in outages if o["loss"] != "events"]
    lines = [
        f"  reconnects:        {len(outages)} (longest {_longest(outages)}; other events than "
        "messages sent meanwhile are missing)",
        f"  possible gaps:     {len(unfilled)} intervals where messages may be missing"
        + "".join(
            f"\n    channel {o['channel']}: {_interval(o)} ({o['loss']})" for o in unfilled[:10]
        ),
        f"  removed meanwhile: {losses['removed']} messages removed while away",
    ]
    lines += [f"  dropped channel:   {f['channel']}: {f['error']}" for f in losses["failed"]]
    return lines


def _longest(outages: list[dict[str, Any]]) -> str:
    longest = max((o["end"] - o["start"] for o in outages), default=0.0)
    return f"{longest:.1f} s"


def _interval(outage: dict[str, Any]) -> str:
    start, end = (time.strftime("%H:%M:%S", time.gmtime(outage[k])) for k in ("start", "end"))
    return f"{start}-{end} UTC"


class Display:
    """One progress line: redrawn in place on a terminal, else printed now and then as plain
    lines (no carriage returns in a file or pipe)."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self._tty = stream.isatty()
        self.every = TTY_EVERY if self._tty else PLAIN_EVERY
        self._width = 0

    def show(self, text: str) -> None:
        """Draw ``text`` as the current progress."""
        if self._tty:
            pad = " " * max(self._width - len(text), 0)
            self._stream.write(f"\r{inert(text)}{pad}")
            self._width = len(text)
        else:
            self._stream.write(inert(text) + "\n")
        self._stream.flush()

    def finish(self) -> None:
        """End the redrawn line so later output starts on its own."""
        if self._tty and self._width:
            self._stream.write("\n")
            self._stream.flush()


def _size(count: int) -> str:
    """Bytes as text people read: 950 B, 3.1 MB."""
    if count < 1000:
        return f"{count} B"
    size = count / 1000
    for unit in ("kB", "MB"):
        if size < 1000:
            return f"{size:,.1f} {unit}"
        size /= 1000
    return f"{size:,.1f} GB"
