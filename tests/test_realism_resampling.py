"""The realism rows' 95% intervals from resampling days of snapshots and channels' recordings
(``benchmarks/resampling.py``), on frames whose spread is known."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from benchmarks import directory, resampling
from benchmarks.realism import (
    RESAMPLED_ROWS,
    TARGETS,
    Phases,
    Result,
    measure_directory,
    measure_sessions,
)

MONDAY = pd.Timestamp("2020-07-20", tz="UTC")


def _days(levels: list[int]) -> pd.DataFrame:
    """Hourly snapshots over ``len(levels)`` days from a Monday, ``levels[d]`` channels live
    at every hour of day ``d``, each with 10 viewers."""
    rows = [
        {"time": MONDAY + pd.Timedelta(hours=24 * day + hour), "channel": channel}
        for day, level in enumerate(levels)
        for hour in range(24)
        for channel in range(level)
    ]
    return pd.DataFrame(rows).assign(viewersCurrent=10)


def _level(frame: pd.DataFrame) -> dict[str, float]:
    """The mean live channels per snapshot."""
    return {"level": float(directory.per_snapshot(frame)["live"].mean())}


def test_days_alike_give_an_interval_of_no_width() -> None:
    """When every day is the same, every draw reads the same figure."""
    intervals = resampling.by_days(_days([3] * 8), _level, np.random.default_rng(0))
    assert intervals["level"] == (3.0, 3.0)


def test_days_that_differ_give_an_interval_inside_their_range() -> None:
    """Weekdays of 1 to 5 channels give an interval around their mean, within 1-5."""
    intervals = resampling.by_days(_days([1, 2, 3, 4, 5, 3, 3]), _level, np.random.default_rng(0))
    low, high = intervals["level"]
    assert 1 <= low < 3 < high <= 5


def test_a_day_drawn_twice_stays_two_days_of_the_same_kind() -> None:
    """Each draw has the window's count of days and of weekend days, none merged."""

    def kinds(frame: pd.DataFrame) -> dict[str, float]:
        days = pd.DatetimeIndex(frame["time"].dt.floor("D").unique())
        return {
            "days": len(days),
            "weekend": int((days.day_of_week >= 5).sum()),
            "snapshots": frame["time"].nunique(),
        }

    intervals = resampling.by_days(_days([1] * 14), kinds, np.random.default_rng(1), draws=50)
    assert intervals == {"days": (14, 14), "weekend": (4, 4), "snapshots": (336, 336)}


def test_groups_are_drawn_whole() -> None:
    """A channel drawn brings all its recordings: row counts stay multiples of each size."""
    frame = pd.DataFrame({"channel": [1, 2, 2, 3, 3, 3], "hours": 1.0})

    def sizes(frames: dict[str, pd.DataFrame]) -> dict[str, float]:
        counts = frames["sampled"].groupby("channel").size()
        return {"whole": float(all(counts[c] % c == 0 for c in counts.index))}

    intervals = resampling.by_groups(
        {"sampled": frame}, "channel", sizes, np.random.default_rng(0), draws=50
    )
    assert intervals["whole"] == (1.0, 1.0)


def test_a_session_row_outside_the_band_passes_when_its_interval_meets_it() -> None:
    """Row 7b at 0.19 (band 0.2-0.4) from 20 channels of mixed habits passes by its interval."""
    channels = np.repeat(np.arange(20), 5)
    long = np.isin(channels, [0, 1, 2]) | np.isin(np.arange(100), [50, 60, 70, 80])
    sampled = pd.DataFrame(
        {"channel": channels, "hours": np.where(long, 5.0, 2.0), "in_month": True}
    )
    big = sampled.iloc[:0]
    out = Phases()
    measure_sessions(sampled, big, 20, np.random.default_rng(0), out)
    result = out.results["7b"]
    assert result.value == pytest.approx(0.19)
    assert not Result(result.value, "").passed(TARGETS["7b"])
    assert result.interval is not None and result.interval[0] < TARGETS["7b"].low
    assert result.passed(TARGETS["7b"])
    assert out.results["7c"].value is None


def test_the_directory_rows_carry_their_interval_over_the_window_days() -> None:
    """Round 2's rows of the directory come with an interval, which a steady week pins."""
    frame = _days([4] * 8).assign(typeId=1.0, numFollowers=100)
    frame["languageId"] = np.where(frame["channel"] == 0, "es", "en")
    out = Phases()
    measure_directory(frame, 50_000, np.random.default_rng(0), out)
    for row in RESAMPLED_ROWS:
        assert out.results[row].interval is not None, row
    assert out.results["13"].interval == (1.0, 1.0)
    assert "over 8 days resampled" in out.results["13"].method
    assert out.results["14b"].interval is None
