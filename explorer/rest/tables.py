"""JSON records to pandas DataFrames, with declared columns and dtypes per resource.

Every REST listing ends here once, after all its pages arrived: one list of values per column,
each converted to its dtype in one vectorised call. On 5,000 channels that is about twice as
fast as ``json_normalize`` + ``concat`` per page, and the columns come out typed (see
``benchmarks/rest_client.py``).

What a frame looks like:

- Embedded objects flatten to dotted columns (``user.username``, ``type.name``); a null object
  gives missing values in all its columns. Lists and free-form objects (``user.social``,
  ``groups``) stay as Python objects in one column.
- Declared dtypes, built by ``core/columns.py`` as for chat frames: ``Int64`` for integers
  (nullable), ``boolean``, ``float64``, pandas' default ``str`` for text (missing values are
  NaN), ``category`` for small enums (``audience``, ``languageId``) and
  ``datetime64[ms, UTC]`` for timestamps (ISO strings or epoch milliseconds; the platform's
  precision is the millisecond). A value of the wrong type for its column is left missing.
- The column set is the schema's, whatever the records hold, so code written against a frame
  keeps working on an empty page. A column marked optional (``streamKey``, only in the
  owner's view) appears only when a record has it. Fields the schema does not declare are
  kept after the declared ones, with inferred dtypes.
- ``fields=`` (the API's projection) keeps exactly the named fields in that order (an object
  field brings all of its dotted columns), still typed.
- ``id`` becomes the index where it identifies the record (channels, users, types, games,
  invoices, ...); a few records are keyed otherwise (achievements by ``slug``, chat users by
  ``userId``, ingests by ``name``, emoticons by ``code``). Single records without a key
  (follow state, hosting) keep a ``RangeIndex``.
- :func:`time_series` gives a sorted UTC ``DatetimeIndex`` for time-series endpoints
  (``ANALYTICS`` declares the points of every analytics series).

Pure: pandas and the standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from itertools import chain
from operator import itemgetter
from typing import Any, TypeAlias

import pandas as pd

from explorer.core import columns
from explorer.rest.schemas import GENERIC, Schema
from explorer.wire.kinds import Kind

Record: TypeAlias = Mapping[str, Any]

_ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)", re.ASCII)


def frame(
    records: Sequence[Record],
    schema: Schema = GENERIC,
    *,
    fields: Iterable[str] | None = None,
) -> pd.DataFrame:
    """One DataFrame from ``records`` shaped by ``schema`` (see the module docstring).

    ``fields`` is the projection the records were fetched with: only those columns come back.
    """
    rows = list(records)
    built: dict[str, Any] = {}
    _flatten(rows, schema, "", built, tuple(fields) if fields is not None else None)
    index = None
    if schema.index is not None and schema.index in built:
        index = index_of(built.pop(schema.index), schema.index)
    result = pd.DataFrame(built, index=index, copy=False)
    if index is None:
        result.index = pd.RangeIndex(len(rows))
    return result


def time_series(
    records: Sequence[Record], time_field: str = "time", schema: Schema = GENERIC
) -> pd.DataFrame:
    """A frame of ``records`` indexed by ``time_field`` as a sorted UTC ``DatetimeIndex``."""
    fields = {**schema.fields, time_field: "time"}
    table = frame(records, Schema(fields, None, schema.categories, schema.optional))
    return table.set_index(time_field).sort_index(kind="stable")


def _flatten(
    rows: Sequence[Record],
    schema: Schema,
    prefix: str,
    out: dict[str, Any],
    projection: tuple[str, ...] | None,
) -> None:
    """Add the columns of ``rows`` (records or embedded objects) to ``out``."""
    declared = schema.fields
    if projection is not None:
        names = list(projection)
        table = [_values(rows, name) for name in names]
    else:
        names, table = _declared(rows, schema)
    for name, values in zip(names, table, strict=True):
        spec = declared.get(name)
        if spec is None and _objects(values):
            spec = GENERIC
        if isinstance(spec, Schema):
            # A missing object reads as one with every field null, so its rows stay uniform.
            null = dict.fromkeys(n for n in spec.fields if n not in spec.optional)
            embedded = [v if isinstance(v, dict) else null for v in values]
            _flatten(embedded, spec, f"{prefix}{name}.", out, None)
        else:
            kind = spec if spec is not None else _infer(values)
            out[prefix + name] = columns.column(values, kind, schema.categories.get(name, ()))


def _declared(rows: Sequence[Record], schema: Schema) -> tuple[list[str], list[list[Any]]]:
    """The fields of ``rows`` the frame shows, in order, and each one's values.

    The common case, every row holding exactly the schema's fields that are not optional,
    is recognised without collecting the fields of every row: the rows hold as many fields
    as that set, and each row has each of them.
    """
    declared = schema.fields
    names = [n for n in declared if n not in schema.optional]
    if sum(map(len, rows)) == len(rows) * len(names):
        try:
            return names, [list(map(itemgetter(name), rows)) for name in names]
        except KeyError:
            pass
    present: set[str] = set().union(*rows) if rows else set()
    names = [n for n in declared if n not in schema.optional or n in present]
    if not present.issubset(declared):
        names += [n for n in dict.fromkeys(chain.from_iterable(rows)) if n not in declared]
    return names, [_values(rows, name) for name in names]


def _values(rows: Sequence[Record], name: str) -> list[Any]:
    """The values of field ``name`` in ``rows`` (None where absent), in one pass:
    ``itemgetter`` in C when every row has the field, about twice as fast as ``dict.get``
    in Python on freshly decoded records."""
    try:
        return list(map(itemgetter(name), rows))
    except KeyError:
        return [row.get(name) for row in rows]


def _objects(values: list[Any]) -> bool:
    """Whether an undeclared field's values are objects, flattened as embedded records."""
    objects = [v for v in values if v is not None]
    return bool(objects) and all(isinstance(v, dict) for v in objects)


def _infer(values: list[Any]) -> Kind:
    """The kind of an undeclared field, from its values (ISO-8601 text is a timestamp)."""
    kinds = {type(v) for v in values if v is not None}
    if not kinds:
        return "object"
    if kinds == {bool}:
        return "bool"
    if kinds == {int}:
        return "int"
    if kinds <= {int, float}:
        return "float"
    if kinds == {str}:
        sample = next(v for v in values if v is not None)
        return "time" if _ISO.fullmatch(sample) else "str"
    return "object"


def index_of(values: Any, name: str) -> pd.Index:
    """The index from an identifier column: plain ``int64`` when it has no gaps."""
    index = pd.Index(values, name=name)
    if isinstance(index.dtype, pd.Int64Dtype) and not index.hasnans:
        return index.astype("int64")
    return index
