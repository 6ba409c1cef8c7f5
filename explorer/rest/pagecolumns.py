"""Listing pages to a typed DataFrame in native code: each page's JSON read by Arrow into
columns, typed by the wire schema, without a Python object per record or value.

A listing's frame (``rest/tables.py``) used to start from every page decoded to Python dicts;
at 5,000 channels that is 15,000 dicts, and decoding them and reading their values back into
columns took about five times as long as downloading the pages. Here each page is read, as it
arrives and in a worker thread (Arrow's reader releases the GIL, so reading overlaps the next
pages' downloads), by ``pyarrow.json.read_json`` given the schema's types
(``core/columns.py``'s :data:`~explorer.core.columns.ARROW_TYPES`), so a column's dtype never
depends on the data and an all-null column keeps it. Arrow reads newline-delimited JSON and the
platform answers arrays, so a page's bytes are wrapped as one line, ``{"r": <page>}``, whose one
field is the list of records: no splitting, no Python object per record. Reads run one at a
time, and the pages that arrived while one ran are read together, one line each, in one call
(up to :data:`BATCH`): a call's set-up costs about 0.5 ms, a quarter of a 100-record page's read,
and 4 pages in one call cost about 0.7 of reading them one by one (the latest round, CPU, same
bytes). A batch Arrow cannot read is read again page by page.
(Cutting a page to one record a line instead was measured no cheaper than the wrapped page.)
Since reads left ``pageplan``'s download places, the next pages download while pages are read.

What follows a call works on its whole batch, and the frame on the whole listing, never page by
page: a batch's records are checked once (their Arrow type against the fields the reader was
told of; a type already found good is not walked again), cut to their declared fields by one
cast, and their free-form values made Python values once; a page keeps its slice of the batch.
The frame joins every page's records into one array and flattens it once into its columns.
Flattening and converting page by page had cost 47-52 ms of CPU on top of Arrow's own 71-77 ms
for a ranking's 50 pages (read and frame); this way 35-37 ms (the latest round, the same bytes,
one process alternating, best of 15, shared machine). Arrow's own read is now the larger part.

Why Arrow (issue 42's reader comparison, ``docs/performance.md``: the same 50 pages of 100
channels, 6.3 MB, CPU medians of 15 alternating rounds on the shared 2-core machine): Arrow
reads them in 33-36 ms 4 pages a call (41-44 ms all 50 in one call, 50-52 ms page by page; its
own threads save 3 ms of CPU and no wall beyond the noise), and read and frame together cost
64-67 ms, about 0.85 of orjson + ``tables.frame``. No other native reader is cheaper to the
same frame: Polars (``pl.read_json`` given the schema, page by page; simd-json inside) reads in
33-34 ms but its columns cost more to bring to pandas (70-72 ms to the frame without the
free-form column), and Polars is an optional extra; DuckDB (``read_json`` given the columns,
all pages in one call) reads in 44-45 ms (59-61 ms to the frame), casts mismatched values
(``12.0`` into an integer, ``7`` into text, ``1`` into a flag) and ignores undeclared fields,
and checking those itself (``json_structure``) costs 60 ms more; pysimdjson parses the 50 pages
in 3 ms but gives Python values, about 0.7 ms a column of 5,000 read back. Arrow is already a
dependency (pandas keeps text in it), and it is strict: a value of another type than declared,
or a field the schema does not declare, is an error rather than a guess.

The frame is the one ``tables.frame`` builds from the same pages, same columns, dtypes and
values (``tests/test_pagecolumns.py`` compares them); whenever Arrow cannot promise that, the
listing goes the old way, every page decoded by orjson and ``tables.frame`` (a page is kept as
its bytes until the frame is built, which costs less memory than its records did):

- a value of another type than its column's (``columns.py`` would leave it missing, or write
  a number in a text column as text), an integer beyond int64, times as epoch numbers (times
  as text Arrow cannot parse go ``columns.py``'s slower ways, column by column);
- a field the schema does not declare, or an optional one (``streamKey``): the old way adds
  their columns; an answer that is not a JSON array;
- free-form fields (``object`` kind, ``user.social``) are the one part Arrow infers, and turns
  back into Python values: text that looks like a timestamp (Arrow would read a time) sends
  the listing the old way. Arrow reads an absent member and a null one alike, so a member
  whose value is ``null`` inside a free-form object is left out of its dict, and a field
  mixing integers and fractions gives floats (``1.0``, equal to ``1``): the values that
  differ from the old way (the seeded world's ``social`` objects hold a link or nothing;
  ``{}`` stays ``{}`` and a missing object stays None).

Projections (``fields=``) read only the named fields. Listings of undeclared records
(``GENERIC``) and time series go the old way.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj

from explorer.core import columns
from explorer.rest import tables
from explorer.rest.schemas import Schema
from explorer.wire.kinds import Kind

#: A page's free-form columns (``object`` kind): their Python values by dotted name.
Columns = dict[str, list[Any]]
_READ = pj.ReadOptions(use_threads=False)
#: At most this many pages in one Arrow call: 4 pages cost about 0.7 of reading them one by one
#: (the 50 of a ranking at once were no cheaper than 4 at a time).
BATCH = 8


@dataclass(frozen=True, slots=True)
class Leaf:
    """One column of the frame: its dotted name, its path in a record, kind and categories."""

    name: str
    path: tuple[str, ...]
    kind: Kind
    categories: tuple[Any, ...] = ()


@dataclass(slots=True)
class Page:
    """One page: its bytes, and its records as Arrow read them when it read them as the schema
    says (else None, and the listing's frame is built the old way): ``typed``, the declared
    fields (a slice of its batch's array), and ``free``, the free-form fields' values. ``len``
    is its number of records."""

    body: bytes
    typed: pa.StructArray | None
    count: int = 0
    records: list[Any] = field(default_factory=list)
    free: Columns = field(default_factory=dict)

    def __len__(self) -> int:
        return self.count


class Reader:
    """Reads the pages of one listing of ``schema`` (``fields``: its projection)."""

    def __init__(self, schema: Schema, fields: Iterable[str] | None = None) -> None:
        self.schema = schema
        self.fields = tuple(fields) if fields is not None else None
        self.leaves: list[Leaf] = []
        #: The free-form fields by path of their embedding object ('' at the top).
        self._free: dict[tuple[str, ...], set[str]] = {}
        names = self.fields if self.fields is not None else _shown(schema)
        self.native = bool(schema.fields) and all(n in schema.fields for n in names)
        #: Pages waiting for their read, and the lock that makes reads one at a time.
        self._waiting: list[tuple[bytes, asyncio.Future[Page | None]]] = []
        self._reading = asyncio.Lock()
        if self.native:
            #: A record's declared (typed) fields: what Arrow is told, and what a page keeps.
            self._typed = self._plan(schema, names, ())
            #: The last type of records found to hold only fields the reader was told of.
            self._fitting: pa.DataType | None = None
            self._options = pj.ParseOptions(
                explicit_schema=pa.schema([pa.field("r", pa.list_(self._typed))]),
                unexpected_field_behavior="infer",
                newlines_in_values=True,
            )

    def _plan(self, schema: Schema, names: Sequence[str], path: tuple[str, ...]) -> pa.StructType:
        """Add the leaves of ``names`` of ``schema`` at ``path``; the Arrow type to read."""
        typed: list[pa.Field] = []
        for name in names:
            spec, here = schema.fields[name], (*path, name)
            if isinstance(spec, Schema):
                typed.append(pa.field(name, self._plan(spec, _shown(spec), here)))
                continue
            self.leaves.append(
                Leaf(".".join(here), here, spec, tuple(schema.categories.get(name, ())))
            )
            if spec == "object":
                self._free.setdefault(path, set()).add(name)
            else:
                typed.append(pa.field(name, columns.ARROW_TYPES[spec]))
        return pa.struct(typed)

    async def read(self, body: bytes, decode: Callable[[], list[Any]]) -> Page:
        """``body`` as a :class:`Page`, read in a worker thread; ``decode`` gives its records
        the old way when Arrow cannot read it as the schema says."""
        page = await self._in_turn(body) if self.native else None
        if page is not None:
            return page
        rows = decode()
        return Page(body, None, len(rows), rows)

    async def _in_turn(self, body: bytes) -> Page | None:
        """``body`` read in its turn (one read at a time), with the pages that arrived while
        the read before ran: one Arrow call for several pages pays its set-up (about 0.5 ms of
        a page's 2) once."""
        done: asyncio.Future[Page | None] = asyncio.get_running_loop().create_future()
        self._waiting.append((body, done))
        async with self._reading:
            while not done.done():  # else read with an earlier page's batch
                batch, self._waiting = self._waiting[:BATCH], self._waiting[BATCH:]
                try:
                    pages = await asyncio.to_thread(self.pages, [b for b, _ in batch])
                except BaseException:
                    # Cancelled (or failed): the others of the batch are read in their turn.
                    self._waiting[:0] = [(b, later) for b, later in batch if later is not done]
                    raise
                for (_, later), page in zip(batch, pages, strict=True):
                    later.set_result(page)
            return done.result()

    def columns(self, body: bytes) -> Page | None:
        """One page read by Arrow, or None where the schema cannot say what ``tables.frame``
        would make of it (see the module docstring)."""
        return self.pages([body])[0]

    def pages(self, bodies: Sequence[bytes]) -> list[Page | None]:
        """Pages read by Arrow in one call (each as :meth:`columns` reads it alone); page by
        page when one of them cannot be read."""
        if all(body.lstrip().startswith(b"[") for body in bodies):
            lines = b"".join(b'{"r":' + body + b"}\n" for body in bodies)
            lists = self._lists(lines, len(bodies))
            if lists is not None:
                return self._split(bodies, lists)
        if len(bodies) == 1:
            return [None]
        return [self.columns(body) for body in bodies]

    def _lists(self, lines: bytes, count: int) -> pa.ListArray | None:
        """Each of ``count`` lines' list of records, or None when Arrow cannot read them."""
        try:
            table = pj.read_json(
                pa.py_buffer(lines), read_options=_READ, parse_options=self._options
            )
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
            return None
        if table.num_rows != count:
            return None
        lists = table.column("r").combine_chunks()
        assert isinstance(lists, pa.ListArray)
        return lists

    def _split(self, bodies: Sequence[bytes], lists: pa.ListArray) -> list[Page | None]:
        """The pages of ``bodies`` from their lists of records as Arrow read them in one call:
        the batch's records checked, cut to their declared fields and their free-form values
        made Python values once, then sliced page by page."""
        records = lists.flatten()
        if lists.null_count:
            return [None] * len(bodies)
        if records.type != self._fitting:  # a ranking's batches mostly read as one type
            if not self._fits(records.type, self._typed, ()):
                return [None] * len(bodies)
            self._fitting = records.type
        free: Columns = {}
        for leaf in self.leaves:
            if leaf.kind == "object":
                values = _free_values(records, leaf.path)
                if values is None:
                    return [None] * len(bodies)
                free[leaf.name] = values
        typed = records.cast(self._typed)
        offsets = lists.offsets.to_pylist()
        ends = [end - offsets[0] for end in offsets]  # flatten() starts at the first offset
        return [
            Page(
                body,
                typed.slice(start, end - start),
                end - start,
                free={name: values[start:end] for name, values in free.items()},
            )
            for body, start, end in zip(bodies, ends[:-1], ends[1:], strict=True)
        ]

    def _fits(self, kind: pa.StructType, declared: pa.StructType, path: tuple[str, ...]) -> bool:
        """Whether records of ``kind`` (as Arrow read them) hold only the fields the reader
        was told of at ``path`` (beyond a projection's top level, which the platform left)."""
        free = self._free.get(path, set())
        for child in kind:
            name = child.name
            if name in free:
                continue
            index = declared.get_field_index(name)
            if index < 0:
                if self.fields is not None and not path:
                    continue
                return False
            sub = declared.field(index).type
            if pa.types.is_struct(sub) and not self._fits(child.type, sub, (*path, name)):
                return False
        return True

    def frame(self, pages: Sequence[Page], max_rows: int | None = None) -> pd.DataFrame:
        """The listing's frame from its ``pages`` (the first ``max_rows`` rows): the pages'
        records joined once, then each column taken from them."""
        typed = [page.typed for page in pages if page.typed is not None]
        if len(typed) < len(pages) or not pages:
            return self._old(pages, max_rows)
        count = sum(len(page) for page in pages)
        rows = count if max_rows is None else min(count, max_rows)
        found = _flat(pa.concat_arrays(typed).slice(0, rows), ())
        built: dict[str, Any] = {}
        for leaf in self.leaves:
            if leaf.kind == "object":
                values = list(chain.from_iterable(page.free[leaf.name] for page in pages))
                built[leaf.name] = columns.column(values[:rows], "object")
            else:
                built[leaf.name] = columns.from_arrow(found[leaf.path], leaf.kind, leaf.categories)
        key = self.schema.index
        index = tables.index_of(built.pop(key), key) if key in built else pd.RangeIndex(rows)
        return pd.DataFrame(built, index=index, copy=False)

    def _old(self, pages: Sequence[Page], max_rows: int | None) -> pd.DataFrame:
        """The frame the old way: every page's records decoded by orjson."""
        records: list[Any] = []
        for page in pages:
            records += page.records if page.typed is None else _decode(page.body)
        if max_rows is not None:
            records = records[:max_rows]
        return tables.frame(records, self.schema, fields=self.fields)


def _flat(records: pa.StructArray, path: tuple[str, ...]) -> dict[tuple[str, ...], pa.Array]:
    """Every leaf array under ``records`` by path, each with its parents' nulls."""
    found: dict[tuple[str, ...], pa.Array] = {}
    for child, values in zip(records.type, records.flatten(), strict=True):
        here = (*path, child.name)
        if pa.types.is_struct(child.type):
            found.update(_flat(values, here))
        else:
            found[here] = values
    return found


def _free_values(records: pa.StructArray, path: tuple[str, ...]) -> list[Any] | None:
    """The free-form field at ``path`` of ``records`` as decoded JSON values (None for each
    record when no record holds it); None when Arrow read a time in it (it was text)."""
    kind: pa.DataType = records.type
    for name in path:
        index = kind.get_field_index(name)
        if index < 0:
            return [None] * len(records)
        kind = kind.field(index).type
    if _has_time(kind):
        return None
    return [_members(value) for value in pc.struct_field(records, list(path)).to_pylist()]


def _decode(body: bytes) -> list[Any]:
    """A page Arrow read, as the records orjson decodes (always a JSON array: Arrow read it)."""
    rows = orjson.loads(body)
    assert isinstance(rows, list)
    return rows


def _shown(schema: Schema) -> list[str]:
    """The fields a frame of ``schema`` shows when no record holds an optional one."""
    return [n for n in schema.fields if n not in schema.optional]


def _has_time(kind: pa.DataType) -> bool:
    """Whether Arrow inferred a timestamp anywhere in ``kind`` (it was text)."""
    if pa.types.is_timestamp(kind) or pa.types.is_date(kind):
        return True
    if pa.types.is_struct(kind):
        return any(_has_time(f.type) for f in kind)
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        return _has_time(kind.value_type)
    return False


def _members(value: Any) -> Any:
    """A free-form value as decoded JSON: objects without the members Arrow filled with null
    because another record had them."""
    if isinstance(value, dict):
        return {k: _members(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_members(v) for v in value]
    return value
