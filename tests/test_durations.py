"""Durations as options take them (explorer/core/durations.py)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from explorer.core.durations import describe, seconds


@pytest.mark.parametrize(
    ("text", "expected"),
    [("30s", 30.0), ("5m", 300.0), ("1h30m", 5400.0), ("250ms", 0.25), ("2", 2.0), ("1d", 86400.0)],
)
def test_text_durations_are_read_in_seconds(text: str, expected: float) -> None:
    """Number-unit parts add up to seconds; a bare number is seconds."""
    assert seconds(text) == expected


def test_numbers_and_timedeltas_pass_through() -> None:
    """A number is already seconds and a timedelta gives its total seconds."""
    assert (seconds(1.5), seconds(timedelta(minutes=2))) == (1.5, 120.0)


@pytest.mark.parametrize("bad", ["", "soon", "5 parsecs", "-3s", "0", "nan", "1x", True, None])
def test_anything_else_is_a_clear_error(bad: object) -> None:
    """Unreadable, zero, negative or non-finite spans raise ValueError naming the value."""
    with pytest.raises(ValueError, match="uration"):
        seconds(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("value", [0.25, 30.0, 90.0, 3600.0, 5400.5])
def test_describe_reads_back(value: float) -> None:
    """describe() writes a span that seconds() reads back unchanged."""
    assert seconds(describe(value)) == value
