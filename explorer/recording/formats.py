"""The files a recorder writes: Parquet (the default, what ``open_capture`` reads), CSV or JSON
Lines (``explorer.events.textformats``, what spreadsheets, ``jq`` and ``explorer.import_chat``
read), with all the events columns or a choice of them.

:class:`CaptureFiles` is a capture folder with its format: a path (``os.PathLike``), so it goes
wherever a capture folder does (``api.watch(to=...)``, ``api.track(to=...)``, ``Recorder``)
and only the recorder looks further. A Parquet capture with chosen ``fields`` keeps every
column, the others empty (nothing to store), so ``open_capture`` and replays still read it;
a CSV or JSON Lines file holds the chosen columns only. Snapshot files are written in the
format too, with all their columns.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterable
from dataclasses import dataclass

import pyarrow as pa

from explorer.events.textformats import TEXT_FORMATS, fields_of, write_csv, write_jsonl

PARQUET = "parquet"
#: The formats a recorder writes.
FORMATS = (PARQUET, *TEXT_FORMATS)


@dataclass(frozen=True, init=False)
class CaptureFiles(os.PathLike[str]):
    """A capture folder (a path or a URL such as ``s3://bucket/prefix``), its ``format`` (one
    of :data:`FORMATS`) and the events ``fields`` written (None: all). Raises ``ValueError``
    for another format or a name that is not an events column."""

    path: str | os.PathLike[str]
    format: str
    fields: tuple[str, ...] | None

    def __init__(
        self,
        path: str | os.PathLike[str],
        format: str = PARQUET,
        fields: Iterable[str] | None = None,
    ) -> None:
        if format not in FORMATS:
            raise ValueError(f"A capture's format is one of {', '.join(FORMATS)}, not {format!r}.")
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "format", format)
        object.__setattr__(self, "fields", None if fields is None else tuple(fields_of(fields)))

    def __fspath__(self) -> str:
        return os.fspath(self.path)

    @property
    def suffix(self) -> str:
        """The files' name ending: ``.parquet``, ``.csv`` or ``.jsonl``."""
        return f".{self.format}"

    def events(self, table: pa.Table) -> pa.Table:
        """An events table with the chosen fields: the others left out of a text file, and
        empty in a Parquet one (the schema stays whole)."""
        if self.fields is None:
            return table
        if self.format != PARQUET:
            return table.select(list(self.fields))
        return pa.table(
            [
                column if name in self.fields else pa.nulls(len(table), column.type)
                for name, column in zip(table.column_names, table.columns, strict=True)
            ],
            schema=table.schema,
        )

    def encode(self, table: pa.Table) -> bytes:
        """``table`` as the bytes of one CSV or JSON Lines file."""
        sink = io.BytesIO()
        (write_csv if self.format == "csv" else write_jsonl)([table], sink)
        return sink.getvalue()


def capture_files(path: str | os.PathLike[str]) -> CaptureFiles:
    """``path`` as :class:`CaptureFiles` (a plain path: Parquet, every field)."""
    return path if isinstance(path, CaptureFiles) else CaptureFiles(path)
