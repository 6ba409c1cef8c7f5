"""Typed pandas columns from lists of Python values: the one place where a kind becomes a dtype.

REST frames (``rest/tables.py``) and chat event frames (``events/rows.py``) build every column here,
one vectorised call per column, so both show the same dtypes:

=============  ===========================  ===============================================
kind           dtype                        values
=============  ===========================  ===============================================
``int``        ``Int64``                    integers (integral floats too)
``float``      ``float64``                  numbers, missing as NaN
``bool``       ``boolean``                  booleans
``str``        ``str``                      text: pandas' default string dtype (pyarrow),
                                            missing as NaN, what ``pd.Series(["a", None])``
                                            gives
``category``   ``category``                 the declared categories first, then the others
                                            seen, sorted
``time``       ``datetime64[ms, UTC]``      ISO-8601 text or epoch milliseconds
``seconds``    ``datetime64[ms, UTC]``      epoch seconds
``object``     ``object``                   anything (lists, dicts), as they are
=============  ===========================  ===============================================

Timestamps have millisecond resolution, the platform's precision, so they display without a
tail of nanosecond digits. Missing values are ``None``. A value that cannot be read as its
kind (a word in an integer column, an integer beyond int64, a boolean in a time column)
becomes missing rather than failing the whole table; other values in a ``str`` column are
written as text.

The common cases take short cuts, measured on chat frames of 100,000 rows: all-missing columns
are built directly (most columns of a chat chunk are empty), text goes straight into pyarrow
(ten times faster than ``pd.array``, which checks every value first), and booleans without
gaps skip validation. Listing pages read by Arrow (``rest/pagecolumns.py``) come in as Arrow
arrays instead (:func:`from_arrow`) and become the same arrays without a Python value each.
Pure: pandas, numpy and pyarrow.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from explorer.wire.kinds import Kind

#: The dtype of ``time`` and ``seconds`` columns.
TIME = pd.DatetimeTZDtype("ms", "UTC")
#: The dtype of ``str`` columns: pandas' default for text (``"str"``).
STR = pd.StringDtype(na_value=np.nan)
INT = pd.Int64Dtype()
BOOL = pd.BooleanDtype()

_DTYPES: dict[str, Any] = {
    "int": INT,
    "float": np.dtype("float64"),
    "bool": BOOL,
    "str": STR,
    "time": TIME,
    "seconds": TIME,
    "object": np.dtype(object),
}
_INT64_MAX = 2**63 - 1
_NAT = np.iinfo(np.int64).min
_NONE = type(None)
_LARGE = pa.large_string()
_ARROW_TIME = pa.timestamp("ms", "UTC")
#: Text goes straight into pyarrow when pandas keeps ``str`` there (with pyarrow installed).
_ARROW_STRINGS = STR.storage == "pyarrow"


def dtype(kind: Kind, categories: Sequence[Any] = ()) -> Any:
    """The dtype of a ``kind`` column (``categories``: a category column's declared ones)."""
    if kind == "category":
        return pd.CategoricalDtype(list(categories))
    return _DTYPES[kind]


def as_int(value: Any) -> int | None:
    """``value`` as an int64 integer, or None when it is not one (integral floats count)."""
    if type(value) is float and value.is_integer():
        value = int(value)
    return value if type(value) is int and abs(value) <= _INT64_MAX else None


def column(values: Sequence[Any], kind: Kind, categories: Sequence[Any] = ()) -> Any:
    """An array of ``kind``'s dtype from Python ``values`` (None for missing).

    ``categories`` are a ``category`` column's declared categories, in order; values outside
    them are kept as further categories.
    """
    n = len(values)
    if kind == "object":
        return np.fromiter(values, dtype=object, count=n)
    if kind == "category":
        return _categorical(values, categories)
    if (not n or values[0] is None) and values.count(None) == n:  # a full count only then
        return _missing(kind, n)
    if kind == "str":
        return _strings(values)
    if kind == "int":
        return _integers(values)
    types = set(map(type, values))
    if kind == "bool":
        if types == {bool}:
            return pd.arrays.BooleanArray(np.array(values, bool), np.zeros(n, bool))
        return pd.array([v if type(v) is bool else None for v in values], dtype=BOOL)
    if kind == "float":
        return _floats(values, types)
    if kind == "seconds" or str not in types:
        return _utc(_epoch(_floats(values, types), 1000.0 if kind == "seconds" else 1.0))
    return _iso(values)


#: The Arrow type :func:`from_arrow` takes for each kind but ``object``: what a JSON reader
#: reads a field of that kind as (times as their ISO text, parsed here as :func:`column` does).
ARROW_TYPES: dict[str, pa.DataType] = {
    "int": pa.int64(),
    "float": pa.float64(),
    "bool": pa.bool_(),
    "str": pa.string(),
    "category": pa.string(),
    "time": pa.string(),
    "seconds": pa.float64(),
}


def from_arrow(array: pa.Array, kind: Kind, categories: Sequence[Any] = ()) -> Any:
    """The array :func:`column` gives for the same values, from an Arrow ``array`` of
    :data:`ARROW_TYPES`'s type for ``kind`` (nulls for missing): same dtype, same values."""
    n = len(array)
    if kind == "category":
        return _categorical_arrow(array, categories)
    if array.null_count == n:
        return _missing(kind, n)
    if kind == "str":
        if _ARROW_STRINGS:
            return pd.arrays.ArrowStringArray(pa.chunked_array([array.cast(_LARGE)]), dtype=STR)
        return pd.array(array.to_pylist(), dtype=STR)
    missing = array.is_null().to_numpy(zero_copy_only=False)
    if kind == "int":
        return pd.arrays.IntegerArray(array.fill_null(0).to_numpy(), missing)
    if kind == "bool":
        values = array.fill_null(False).to_numpy(zero_copy_only=False)
        return pd.arrays.BooleanArray(values, missing)
    numbers = array.to_numpy(zero_copy_only=False)  # float64, NaN where missing
    if kind == "float":
        return numbers
    if kind == "seconds":
        return _utc(_epoch(numbers, 1000.0))
    try:
        parsed = array.cast(_ARROW_TIME)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return _iso(array.to_pylist())
    return parsed.to_pandas().array


def _missing(kind: Kind, n: int) -> Any:
    """An all-missing array of ``n`` values, built directly: most columns of a chat chunk are
    empty."""
    if kind == "int":
        return pd.arrays.IntegerArray(np.zeros(n, np.int64), np.ones(n, bool))
    if kind == "bool":
        return pd.arrays.BooleanArray(np.zeros(n, bool), np.ones(n, bool))
    if kind == "float":
        return np.full(n, math.nan)
    if kind in ("time", "seconds"):
        return _utc(np.full(n, _NAT, np.int64))
    if _ARROW_STRINGS:
        return pd.arrays.ArrowStringArray(pa.chunked_array([pa.nulls(n, _LARGE)]), dtype=STR)
    return pd.array([None] * n, dtype=STR)


def _strings(values: Sequence[Any]) -> Any:
    if _ARROW_STRINGS:
        try:
            chunked = pa.chunked_array([pa.array(values, _LARGE)])
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            pass  # not all text: pd.array() below writes other values as text
        else:
            return pd.arrays.ArrowStringArray(chunked, dtype=STR)
    return pd.array(values, dtype=STR)


def _integers(values: Sequence[Any]) -> Any:
    try:
        return pd.array(values, dtype=INT)
    except (TypeError, ValueError, OverflowError):
        return pd.array([as_int(v) for v in values], dtype=INT)


def _floats(values: Sequence[Any], types: set[type]) -> Any:
    if types <= {int, float, _NONE}:
        return np.array(values, dtype=np.float64)  # None becomes NaN
    return np.array([_number(v) for v in values], dtype=np.float64)


def _number(value: Any) -> float:
    return float(value) if type(value) is int or type(value) is float else math.nan


def _categorical(values: Sequence[Any], categories: Sequence[Any]) -> Any:
    """Categories as declared, then the others seen (sorted); codes looked up in one dict."""
    codes: dict[Any, int] = {name: code for code, name in enumerate(categories)}
    codes[None] = -1
    try:
        found = [codes[v] for v in values]
        observed: list[Any] = []
    except KeyError:
        observed = sorted({v for v in values if v not in codes})
        codes.update((name, code) for code, name in enumerate(observed, len(categories)))
        found = [codes[v] for v in values]
    kind = pd.CategoricalDtype([*categories, *observed])
    return pd.Categorical.from_codes(np.array(found, np.int32), dtype=kind)


def _categorical_arrow(array: pa.Array, categories: Sequence[Any]) -> Any:
    """:func:`_categorical` of an Arrow text array, the codes looked up by Arrow."""
    known = set(categories)
    observed = sorted(v for v in pc.unique(array.drop_null()).to_pylist() if v not in known)
    names = [*categories, *observed]
    codes = pc.index_in(array, value_set=pa.array(names, array.type)).fill_null(-1)
    kind = pd.CategoricalDtype(names)
    return pd.Categorical.from_codes(codes.to_numpy().astype(np.int32), dtype=kind)


def _epoch(numbers: np.ndarray, ms_per_unit: float) -> np.ndarray:
    """Epoch milliseconds (int64, NaT's value where missing) from float64 epoch ``numbers``
    (NaN where missing) in units of ``ms_per_unit`` milliseconds; out of range is missing."""
    ms = np.round(numbers * ms_per_unit)
    valid = np.isfinite(ms) & (np.abs(ms) < 2.0**63 - 1024)
    out = np.full(len(ms), _NAT, np.int64)
    out[valid] = ms[valid]
    return out


def _utc(ms: np.ndarray) -> Any:
    """``datetime64[ms, UTC]`` from int64 epoch milliseconds (int64 min is NaT)."""
    return pd.array(ms.view("datetime64[ms]")).tz_localize("UTC")


def _iso(values: Sequence[Any]) -> Any:
    """Timestamps from ISO-8601 text.

    pyarrow reads text with a zone (``Z`` or an offset) at up to millisecond precision in C,
    about three times faster than numpy below and with no pass in Python; what it refuses
    (finer digits, no zone, other values) goes the older ways. The platform writes UTC as
    ``...Z``; numpy parses those (without the ``Z``) about three times faster than pandas'
    general ISO-8601 parser, which handles everything else.
    """
    try:
        parsed = pa.array(values, pa.string()).cast(_ARROW_TIME)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        pass
    else:
        return parsed.to_pandas().array
    if all(v is None or (type(v) is str and v.endswith("Z")) for v in values):
        try:
            naive = np.array([v[:-1] if v else "NaT" for v in values], dtype="datetime64[ms]")
        except ValueError:
            pass
        else:
            return pd.array(naive).tz_localize("UTC")
    return pd.to_datetime(values, utc=True, format="ISO8601").as_unit("ms").array
