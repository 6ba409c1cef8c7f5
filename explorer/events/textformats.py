"""Event tables as CSV and JSON Lines: the text forms of a capture's events, written and read.

Both hold the columns of :data:`~explorer.events.tables.EVENT_SCHEMA` (or a choice of them), in
that order, one event a line, so that a file written here is read back into the same table
(``explorer.import_chat(path, format="csv")``): nothing is lost.

- Times are ISO 8601 in UTC with milliseconds (``2026-01-02 03:04:05.678Z``).
- ``poll_answers`` (a list) and ``poll_responses`` (answer -> votes) are JSON: text in a CSV
  field, a JSON array and object in a line of JSON Lines; ``packet`` is the raw packet's JSON
  text in both.
- Missing values are ``null`` in JSON Lines and an empty unquoted field in CSV, where text
  is always quoted: ``""`` is an empty text, an empty field a missing one.

Writing goes a batch at a time (pyarrow's CSV writer in C; JSON Lines through orjson), so a
capture bigger than memory is exported in constant memory. Pure: no I/O but the sink given.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from typing import IO, Any

import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

from explorer.events.tables import EVENT_SCHEMA
from explorer.wire.numbers import integer

#: The text formats, by the name ``format=`` takes.
TEXT_FORMATS = ("csv", "jsonl")
_NESTED = ("poll_answers", "poll_responses")


def fields_of(fields: Iterable[str] | None) -> list[str]:
    """The events columns chosen (all of :data:`EVENT_SCHEMA` for None), in the schema's
    order; raises ``ValueError`` naming any that is not a column."""
    names = EVENT_SCHEMA.names
    if fields is None:
        return list(names)
    wanted = set(fields)
    unknown = sorted(wanted - set(names))
    if unknown:
        raise ValueError(
            f"Not an events column: {', '.join(unknown)}; the columns are {', '.join(names)}."
        )
    if not wanted:
        raise ValueError("Choose at least one events column.")
    return [name for name in names if name in wanted]


def _as_text(table: pa.Table) -> pa.Table:
    """``table`` with times as ISO text and the nested columns as JSON text."""
    columns = []
    for field, column in zip(table.schema, table.columns, strict=True):
        if pa.types.is_timestamp(field.type):
            column = _iso(column)
        elif field.name in _NESTED:
            column = pa.array(
                [None if v is None else orjson.dumps(v).decode() for v in _plain(column)],
                pa.string(),
            )
        columns.append(column)
    return pa.table(columns, names=table.column_names)


def _iso(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """Times as ISO 8601 text in UTC, to the millisecond: ``2026-01-02 03:04:05.678Z``."""
    return pc.strftime(column.cast(pa.timestamp("ms", tz="UTC")), format="%Y-%m-%d %H:%M:%SZ")


def _plain(column: pa.ChunkedArray) -> list[Any]:
    """Python values of a column, maps as dicts."""
    values = column.to_pylist()
    if pa.types.is_map(column.type):
        return [None if v is None else dict(v) for v in values]
    return values


def write_csv(batches: Iterable[pa.RecordBatch | pa.Table], sink: IO[bytes]) -> int:
    """Write ``batches`` (of one schema) to ``sink`` as CSV with a header; the rows written."""
    writer: pcsv.CSVWriter | None = None
    rows = 0
    options = pcsv.WriteOptions(quoting_style="needed")
    for batch in batches:
        table = _as_text(
            pa.Table.from_batches([batch]) if isinstance(batch, pa.RecordBatch) else batch
        )
        if writer is None:
            writer = pcsv.CSVWriter(sink, table.schema, write_options=options)
        writer.write_table(table)
        rows += table.num_rows
    if writer is not None:
        writer.close()
    return rows


def write_jsonl(batches: Iterable[pa.RecordBatch | pa.Table], sink: IO[bytes]) -> int:
    """Write ``batches`` to ``sink`` as JSON Lines; the rows written."""
    rows = 0
    for batch in batches:
        table = pa.Table.from_batches([batch]) if isinstance(batch, pa.RecordBatch) else batch
        names = table.column_names
        columns = []
        for field, column in zip(table.schema, table.columns, strict=True):
            if pa.types.is_timestamp(field.type):
                columns.append(_iso(column).to_pylist())
            else:
                columns.append(_plain(column))
        sink.write(
            b"".join(
                orjson.dumps(dict(zip(names, values, strict=True))) + b"\n"
                for values in zip(*columns, strict=True)
            )
        )
        rows += table.num_rows
    return rows


# Reading back.


def _time(value: Any) -> int:
    if not isinstance(value, str):
        raise ValueError(value)
    return round(datetime.fromisoformat(value).timestamp() * 1000)


def _int(value: Any) -> int:
    number = integer(value) if isinstance(value, str) else value
    if type(number) is not int:
        raise ValueError(value)
    return number


def _bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if value in ("true", "false"):
        return value == "true"
    raise ValueError(value)


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(value)
    return value


def _answers(value: Any) -> list[str]:
    answers = orjson.loads(value) if isinstance(value, str) else value
    if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
        raise ValueError(value)
    return answers


def _responses(value: Any) -> list[tuple[str, int | None]]:
    counts = orjson.loads(value) if isinstance(value, str) else value
    if not isinstance(counts, dict):
        raise ValueError(value)
    return [(str(k), None if v is None else _int(v)) for k, v in counts.items()]


def _reader(kind: pa.DataType, name: str) -> Callable[[Any], Any]:
    if name == "poll_answers":
        return _answers
    if name == "poll_responses":
        return _responses
    if pa.types.is_timestamp(kind):
        return _time
    if pa.types.is_integer(kind):
        return _int
    if pa.types.is_boolean(kind):
        return _bool
    return _text


_READERS = {field.name: _reader(field.type, field.name) for field in EVENT_SCHEMA}


class Columns:
    """Events columns filled a record at a time from text values (a CSV row's, or a JSON Lines
    object's), each value read as its column's type; a record with a value that is not one is
    refused whole (:meth:`add` returns False) and counted by the caller."""

    def __init__(self) -> None:
        self.values: dict[str, list[Any]] = {name: [] for name in EVENT_SCHEMA.names}
        self.rows = 0

    def add(self, record: dict[str, Any]) -> bool:
        """Add ``record`` (column -> value; missing columns are null); False when refused."""
        try:
            read = {
                name: None if value is None else _READERS[name](value)
                for name, value in record.items()
                if name in _READERS
            }
        except (ValueError, TypeError, OverflowError, orjson.JSONDecodeError):
            return False
        if read.get("received_at") is None or read.get("event") is None:
            return False
        for name, column in self.values.items():
            column.append(read.get(name))
        self.rows += 1
        return True

    def table(self) -> pa.Table:
        """The records added so far as a table of :data:`EVENT_SCHEMA`; empties the columns."""
        arrays = [
            pa.array(self.values[field.name], pa.int64()).cast(field.type)
            if pa.types.is_timestamp(field.type)
            else pa.array(self.values[field.name], field.type)
            for field in EVENT_SCHEMA
        ]
        self.values = {name: [] for name in EVENT_SCHEMA.names}
        self.rows = 0
        return pa.Table.from_arrays(arrays, schema=EVENT_SCHEMA)


def csv_records(path: str, bad: Callable[[], None]) -> Iterator[dict[str, Any]]:
    """The rows of a CSV file written by :func:`write_csv`, as dicts of text (None for an
    empty unquoted field), read in blocks by pyarrow; ``bad`` is called for each row of the
    wrong number of fields (skipped)."""
    with open(path, newline="", encoding="utf-8") as file:
        names = next(csv.reader(file), [])

    def invalid(row: Any) -> str:
        bad()
        return "skip"

    reader = pcsv.open_csv(
        path,
        read_options=pcsv.ReadOptions(column_names=names, skip_rows=1),
        parse_options=pcsv.ParseOptions(newlines_in_values=True, invalid_row_handler=invalid),
        convert_options=pcsv.ConvertOptions(
            column_types=dict.fromkeys(names, pa.string()),
            strings_can_be_null=True,
            quoted_strings_can_be_null=False,
        ),
    )
    for batch in reader:
        for values in zip(*(column.to_pylist() for column in batch.columns), strict=True):
            yield dict(zip(names, values, strict=True))
