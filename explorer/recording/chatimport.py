"""Real chat in: chat logs of real platforms, as chat-downloader, TwitchDownloader,
justlog/rustlog and yt-dlp write them (``explorer.recording.chatformats``), or a capture exported as
CSV or JSON Lines (``explorer.events.textformats``), read into a capture: the same Parquet files,
columns and dtypes as a recording, so every view, query, replay and recipe works on them.

:func:`import_chat` streams its input: line formats (raw IRC, yt-dlp's JSON Lines, the CSV and
JSON Lines exports) a line at a time and JSON documents (chat-downloader, TwitchDownloader)
parsed whole, each a JSON value in memory; rows are flattened the event log's way
(``eventrows.flatten``) and built into tables :data:`CHUNK_ROWS` at a time, column by column,
each written as the events files of one flush (``recorder._write_files``: a file per date,
staged and then published). Nothing is guessed: what a format lacks is missing. Messages are
``from_history``, as a ``history`` reply's are: they come from a log, not from this toolkit's
live connection (so recipe 3's analysis of history, ``messages().query("from_history")``,
runs on them unchanged); other events are not, as on the platform, where only messages come
from history.

Nothing is dropped silently either: records that are not of the format's shape (or have no
time) are counted as ``malformed``, records of kinds with no platform event (IRC
``ROOMSTATE``, YouTube's membership items, ...) as ``skipped`` by kind. Both are in the
capture's manifest (``recorders/import-<name>.json``, shown by ``Capture.recorders()``),
and a :class:`ChatImportWarning` says them when there are any.

``format=None`` tells the format from the file's start: ``[`` a chat-downloader array; an
object naming ``replayChatItemAction`` a yt-dlp line, ``received_at`` and ``event`` a JSON
Lines export, and otherwise one with ``comments`` a TwitchDownloader file; ``@`` or ``:``
an IRC line; a ``"received_at"`` header a CSV export. A folder is a capture exported with
``--format csv`` or ``jsonl``: its ``events/`` files, in name order. Gzipped files are read
as they are (TwitchDownloader's ``.json.gz``, justlog's ``.txt.gz``).
"""

from __future__ import annotations

import gzip
import os
import secrets
import socket
import tempfile
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from explorer.events.rows import flatten, rows_frame
from explorer.events.tables import frame_table
from explorer.events.textformats import TEXT_FORMATS, Columns, csv_records
from explorer.recording import chatformats
from explorer.recording.capture import Capture
from explorer.recording.chatformats import FOREIGN_FORMATS, Event, Malformed
from explorer.recording.recorder import EVENTS, RECORDERS, _write_files
from explorer.recording.storage import Staged, open_store

#: Every ``format=``: the tools' formats, then the text forms of a capture.
FORMATS = (*FOREIGN_FORMATS, *TEXT_FORMATS)
_ALIASES = {"justlog": "irc", "rustlog": "irc", "chat_downloader": "chat-downloader"}
#: Rows built into one table (and written as one flush's files) at a time.
CHUNK_ROWS = 16_384
#: The longest line read (a YouTube action with its thumbnails is some kilobytes).
MAX_LINE = 1 << 23
#: Examples of malformed records kept for the report.
_EXAMPLES = 5
_HEAD = 65_536


class ChatImportWarning(UserWarning):
    """An import left records out (malformed, or of kinds with no platform event)."""


@dataclass
class ImportReport:
    """What an import read: events written, records skipped by kind, malformed records
    (with a few examples: record number and why)."""

    format: str
    source: str
    events: int = 0
    malformed: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    examples: list[str] = field(default_factory=list)

    def bad(self, where: int, why: str) -> None:
        """Count a malformed record ``where`` (its number in the input)."""
        self.malformed += 1
        if len(self.examples) < _EXAMPLES:
            self.examples.append(f"record {where}: {why}")

    def summary(self) -> str:
        """One line: what was imported and what was left out."""
        text = f"{self.events:,} events imported from {self.source} ({self.format})"
        if self.skipped:
            kinds = ", ".join(f"{n:,} {kind}" for kind, n in self.skipped.most_common())
            skipped = sum(self.skipped.values())
            text += f"; skipped {skipped:,} records with no platform event ({kinds})"
        if self.malformed:
            why = "; ".join(self.examples)
            text += f"; {self.malformed:,} malformed records left out ({why})"
        return text


def import_chat(
    path: str | os.PathLike[str],
    format: str | None = None,
    *,
    to: str | os.PathLike[str] | None = None,
    channel: int | None = None,
) -> Capture:
    """Read the chat log at ``path`` (a file, or a folder of CSV / JSON Lines exports) in
    ``format`` (one of :data:`FORMATS`; None: told from the file, see the module docstring)
    into the capture folder ``to`` (local or a URL; None: a new temporary folder) and open it.

    ``channel`` fills the ``channel`` column where the log names none (chat-downloader,
    yt-dlp). Malformed and skipped records are counted in the manifest and warned about
    (:class:`ChatImportWarning`). Raises ``ValueError`` for an unknown or undetectable
    format and ``FileNotFoundError`` for a missing ``path``.
    """
    capture, report = import_report(path, format, to=to, channel=channel)
    if report.malformed or report.skipped:
        warnings.warn(report.summary(), ChatImportWarning, stacklevel=2)
    return capture


def import_report(
    path: str | os.PathLike[str],
    format: str | None = None,
    *,
    to: str | os.PathLike[str] | None = None,
    channel: int | None = None,
) -> tuple[Capture, ImportReport]:
    """:func:`import_chat` without the warning: the capture and what was read (``explorer
    import`` prints it)."""
    source = Path(path)
    if not source.exists():
        raise FileNotFoundError(f"No chat log at {str(source)!r}.")
    files = _files(source)
    chosen = _ALIASES.get(format, format) if format is not None else detect(files[0])
    if chosen not in FORMATS:
        raise ValueError(f"Unknown chat format {format!r}: one of {', '.join(FORMATS)}.")
    out = to if to is not None else tempfile.mkdtemp(prefix="explorer-import-")
    report = ImportReport(chosen, source.name)
    writer = _Writer(out, f"import-{secrets.token_hex(3)}")
    for file in files:
        if chosen in TEXT_FORMATS:
            _read_text(file, chosen, report, writer)
        else:
            _read_foreign(file, chosen, channel, report, writer)
    writer.finish(report)
    return Capture(out), report


def _files(source: Path) -> list[Path]:
    """The files to read: ``source``, or a capture folder's events files in name order."""
    if not source.is_dir():
        return [source]
    found = [p for p in sorted((source / EVENTS).glob("*/*")) if p.suffix in (".csv", ".jsonl")]
    if not found:
        raise ValueError(
            f"{str(source)!r} is a folder without CSV or JSON Lines events files: give a file."
        )
    return found


def _open(path: Path) -> IO[bytes]:
    """``path`` for reading, gunzipped when it is gzip."""
    with open(path, "rb") as file:
        magic = file.read(2)
    if magic == b"\x1f\x8b":
        return gzip.open(path, "rb")  # type: ignore[return-value]
    return open(path, "rb")


def detect(path: Path) -> str:
    """The format of the file at ``path``, told from its first bytes (module docstring)."""
    with _open(path) as file:
        head = file.read(_HEAD).lstrip(b"\xef\xbb\xbf \t\r\n")
    first = head.split(b"\n", 1)[0]
    if head.startswith(b"["):
        return "chat-downloader"
    if head.startswith(b"{"):
        try:
            line = orjson.loads(first)
        except orjson.JSONDecodeError:
            line = None
        if isinstance(line, dict) and "replayChatItemAction" in line:
            return "yt-dlp"
        if isinstance(line, dict) and "received_at" in line and "event" in line:
            return "jsonl"
        if b'"comments"' in head:
            return "twitchdownloader"
    if head[:1] in (b"@", b":"):
        return "irc"
    if first.startswith(b'"received_at"') or first.startswith(b"received_at"):
        return "csv"
    raise ValueError(
        f"Cannot tell the chat format of {str(path)!r}: give format= one of {', '.join(FORMATS)}."
    )


def _records(path: Path, format: str) -> tuple[Any, Iterator[Any]]:
    """The channel a foreign-format file names (TwitchDownloader's streamer) and its records:
    lines, or a JSON document's items."""
    if format not in ("chat-downloader", "twitchdownloader"):
        return None, _lines(path)
    with _open(path) as file:
        try:
            document = orjson.loads(file.read())
        except orjson.JSONDecodeError as error:
            raise ValueError(f"{str(path)!r} is not a JSON document: {error}") from None
    if format == "chat-downloader":
        if not isinstance(document, list):
            raise ValueError(f"{str(path)!r} is not a chat-downloader array of items.")
        return None, iter(document)
    comments = document.get("comments") if isinstance(document, dict) else None
    if not isinstance(comments, list):
        raise ValueError(f"{str(path)!r} has no TwitchDownloader comments list.")
    return (document.get("streamer") or {}).get("id"), iter(comments)


class _TooLong(bytes):
    """A line longer than :data:`MAX_LINE` (its start only): malformed, not read whole."""


def _lines(path: Path) -> Iterator[bytes]:
    """The lines of ``path``, each at most :data:`MAX_LINE` bytes read: a longer one (a
    file with no line breaks, a gzip bomb) is a :class:`_TooLong`, its rest skipped."""
    with _open(path) as file:
        while line := file.readline(MAX_LINE):
            if len(line) == MAX_LINE and not line.endswith(b"\n"):
                while (rest := file.readline(MAX_LINE)) and not rest.endswith(b"\n"):
                    pass
                line = _TooLong(line[:80])
            yield line


_READERS: dict[str, Callable[[Any, int | None], Iterator[chatformats.Result]]] = {
    "chat-downloader": chatformats.chat_downloader,
    "twitchdownloader": chatformats.twitchdownloader,
    "irc": chatformats.irc,
    "yt-dlp": chatformats.yt_dlp,
}


def _read_foreign(
    path: Path, format: str, channel: int | None, report: ImportReport, writer: _Writer
) -> None:
    read = _READERS[format]
    named, records = _records(path, format)
    if channel is None:
        channel = chatformats.numeric_id(named)
    for number, record in enumerate(records):
        try:
            if isinstance(record, _TooLong):
                raise Malformed(f"a line longer than {MAX_LINE:,} bytes")
            if isinstance(record, bytes):
                if not record.strip():
                    continue
                text = record.decode("utf-8")
                record = text if format == "irc" else orjson.loads(text)
            results = list(read(record, channel))
        except (Malformed, UnicodeDecodeError, orjson.JSONDecodeError) as error:
            report.bad(number, str(error) or type(error).__name__)
            continue
        for result in results:
            if isinstance(result, Event):
                writer.add(result)
            else:
                report.skipped[result] += 1


def _read_text(path: Path, format: str, report: ImportReport, writer: _Writer) -> None:
    number = 0

    def bad() -> None:
        report.bad(number, "a row of the wrong number of fields")

    if format == "csv":
        records: Iterator[Any] = csv_records(str(path), bad)
    else:
        records = _json_lines(path, report)
    for number, record in enumerate(records):
        if not writer.columns.add(record):
            report.bad(number, "a value not of its column's type, or no time or event")
        elif writer.columns.rows >= CHUNK_ROWS:
            writer.write(writer.columns.table())
    if writer.columns.rows:
        writer.write(writer.columns.table())


def _json_lines(path: Path, report: ImportReport) -> Iterator[dict[str, Any]]:
    for number, raw in enumerate(_lines(path)):
        if isinstance(raw, _TooLong):
            report.bad(number, f"a line longer than {MAX_LINE:,} bytes")
            continue
        if not raw.strip():
            continue
        try:
            record = orjson.loads(raw)
        except orjson.JSONDecodeError:
            report.bad(number, "not a JSON line")
            continue
        if isinstance(record, dict):
            yield record
        else:
            report.bad(number, "a line that is not an object")


class _Writer:
    """Rows built :data:`CHUNK_ROWS` at a time and written as events files of the capture."""

    def __init__(self, out: str | os.PathLike[str], name: str) -> None:
        self.store = open_store(out)
        if self.store.kind() == "file":
            raise ValueError(f"A capture is a directory, and {str(out)!r} is a file.")
        self.store.make_folders(EVENTS, RECORDERS)
        self.name = name
        self.columns = Columns()
        self._rows: list[tuple[Any, ...]] = []
        self._packets: list[str] = []
        self._seq = 0
        self._count = 0
        self._files = 0
        self._bytes = 0
        self._channels: set[int] = set()
        self._span: list[float] = []

    def add(self, event: Event) -> None:
        """Flatten ``event`` into a row (the event log's way) and keep its packet."""
        history = event.packet["event"] == "ChatMessage"
        self._rows.append(flatten(event.packet, event.at, from_history=history))
        self._packets.append(orjson.dumps(event.packet).decode())
        if len(self._rows) >= CHUNK_ROWS:
            self._flush()

    def _flush(self) -> None:
        if not self._rows:
            return
        frame = rows_frame(self._rows, pd.CategoricalDtype(sorted({r[1] for r in self._rows})))
        frame.index = pd.RangeIndex(self._count, self._count + len(frame))
        frame["packet"] = self._packets
        self._rows, self._packets = [], []
        self.write(frame_table(frame))

    def write(self, table: pa.Table) -> None:
        """Write ``table`` (of the events schema) as one flush's files: a file per date."""
        staged: list[Staged] = _write_files(
            self.store, self.name, EVENTS, table, "received_at", self._seq
        )
        for file in staged:
            self.store.publish(file)
        self._seq += len(staged)
        self._files += len(staged)
        self._bytes += sum(file.nbytes for file in staged)
        self._count += table.num_rows
        self._channels.update(c for c in table["channel"].unique().to_pylist() if c is not None)
        times = table["received_at"].cast(pa.int64())
        if table.num_rows:
            low, high = (t.as_py() / 1000 for t in (pc.min(times), pc.max(times)))
            self._span = [min([low, *self._span]), max([high, *self._span])]

    def finish(self, report: ImportReport) -> None:
        """Write what is left and the manifest (``recorders/<name>.json``)."""
        self._flush()
        report.events = self._count
        first, last = self._span if self._span else (None, None)
        manifest = {  # a recorder's manifest (coverage reads it): the import covers its span
            "name": self.name,
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "started": first,
            "last_flush": last,
            "flush_every": 0.0,
            "shard": None,
            "channels": sorted(self._channels),
            "closed": True,
            "events": self._count,
            "snapshots": 0,
            "files": self._files,
            "bytes": self._bytes,
            "rows": self._count,
            "gaps": [],
            "import": {
                "format": report.format,
                "source": report.source,
                "malformed": report.malformed,
                "skipped": dict(report.skipped),
                "examples": report.examples,
            },
        }
        self.store.write_whole(
            f"{RECORDERS}/{self.name}.json", orjson.dumps(manifest, option=orjson.OPT_INDENT_2)
        )
