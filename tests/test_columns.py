"""Typed columns from Python values: one dtype per kind, for REST and chat frames alike."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest
from pandas.testing import assert_extension_array_equal

from explorer.core import columns
from explorer.wire.kinds import Kind

UTC_MS = "datetime64[ms, UTC]"


def utc(*stamps: str | None) -> Any:
    return pd.array([pd.Timestamp(s) if s else pd.NaT for s in stamps], dtype=UTC_MS)


@pytest.mark.parametrize(
    ("kind", "values", "dtype"),
    [
        ("int", [1, None], "Int64"),
        ("float", [1.5, None], "float64"),
        ("bool", [True, None], "boolean"),
        ("str", ["a", None], "str"),
        ("time", ["2020-01-01T00:00:00.000Z", None], UTC_MS),
        ("seconds", [1.5, None], UTC_MS),
        ("object", [[1], None], object),
    ],
)
def test_each_kind_has_its_dtype(kind: Kind, values: list[Any], dtype: Any) -> None:
    """Every kind gives its documented dtype, with values and when all missing."""
    assert columns.column(values, kind).dtype == dtype
    assert columns.column([None, None], kind).dtype == dtype
    assert columns.dtype(kind) == dtype


def test_text_is_pandas_default_string_dtype() -> None:
    """Text columns have the dtype pandas gives text by default, missing values as NaN."""
    built = columns.column(["a", None], "str")
    assert built.dtype == pd.Series(["a", None]).dtype
    assert pd.isna(built[1]) and built[1] is not pd.NA


def test_other_values_in_a_text_column_are_written_as_text() -> None:
    """A number in a text column becomes its text."""
    assert list(columns.column(["a", 7, None], "str")[:2]) == ["a", "7"]


@pytest.mark.parametrize(
    ("kind", "values"),
    [
        ("int", [1, "one", 2**63]),
        ("bool", [True, "yes", 1]),
        ("float", [1.5, "x", [2]]),
        ("time", [1577836800000, True, [1]]),
    ],
)
def test_values_of_the_wrong_type_become_missing(kind: Kind, values: list[Any]) -> None:
    """A value that cannot be read as the column's kind is missing; the others are kept."""
    built = pd.Series(columns.column(values, kind))
    assert built.isna().tolist() == [False, True, True]


def test_categories_declared_first_then_the_others_sorted() -> None:
    """A category column keeps the declared order and appends unknown values, sorted."""
    built = columns.column(["kids", "teen", None, "adult"], "category", ("family", "teen"))
    assert list(built.categories) == ["family", "teen", "adult", "kids"]
    assert list(built) == ["kids", "teen", np.nan, "adult"]


@pytest.mark.parametrize(
    ("kind", "values"),
    [
        ("time", ["2020-01-01T00:00:01.234Z", None]),
        ("time", ["2020-01-01T02:00:01.234+02:00", None]),
        ("time", ["2020-01-01T00:00:01.234", None]),
        ("time", [1577836801234, None]),
        ("time", [1577836801234.4, None]),
        ("seconds", [1577836801.2341, None]),
    ],
)
def test_timestamps_are_utc_milliseconds(kind: Kind, values: list[Any]) -> None:
    """ISO text (any offset, none meaning UTC), epoch milliseconds and epoch seconds land on
    the same UTC millisecond."""
    expected = utc("2020-01-01T00:00:01.234Z", None)
    assert_extension_array_equal(columns.column(values, kind), expected)


def test_finer_iso_timestamps_are_cut_to_milliseconds() -> None:
    """ISO text with microseconds keeps milliseconds only (the platform's precision)."""
    built = columns.column(["2020-01-01T00:00:01.234567Z"], "time")
    assert_extension_array_equal(built, utc("2020-01-01T00:00:01.234Z"))


def test_as_int_accepts_int64_integers_only() -> None:
    """as_int keeps integers (integral floats too) within int64 and refuses the rest."""
    assert [columns.as_int(v) for v in (3, 3.0, 3.5, "3", True, 2**63)] == [
        3,
        3,
        None,
        None,
        None,
        None,
    ]
