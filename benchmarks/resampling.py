"""How sure a realism row's figure is: a 95% interval from resampling the units it was measured
over (the bootstrap), for the rows that rest on a few simulated days or a sample of channels.

A week's window sees 2 weekend days and a few dozen snapshots per hour of the day, and the
world's audiences are heavy-tailed: the quick run's week read the busiest hour ÷ the quietest
(row 14a) at 3.55-3.65 where 30-day runs read 2.66 (the same 50,000 channels) and 2.13
(100,000). A row then passes when its interval meets the target band, as the rare counts of
rows 12 do: what fails is a figure the window's own spread cannot explain, not a short window.

The units are those that vary independently: whole UTC days of snapshots (the streams running
at one hour are the ones running the next), drawn apart for weekend days and weekdays so
each draw keeps the window's mix; and channels for recordings (a channel's sessions share
its habits).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import numpy as np
import pandas as pd

#: Draws behind an interval: on a synthetic week, five seeds moved each end of rows 14a, 15a
#: and 16a's intervals by 3-9 % of its width.
RESAMPLES = 200

#: The figures of one or more rows computed from a frame, by row.
Measure = Callable[[pd.DataFrame], Mapping[str, float]]
#: A 95% interval by row.
Intervals = dict[str, tuple[float, float]]


def by_days(
    snapshots: pd.DataFrame, measure: Measure, rng: np.random.Generator, draws: int = RESAMPLES
) -> Intervals:
    """95% intervals of ``measure``'s figures over ``snapshots`` (with a ``time`` column),
    resampling whole UTC days with replacement, weekend days and weekdays apart. Each drawn
    day is moved on by whole weeks, one stride per draw position, so that a day drawn twice
    stays two days (its snapshots are not merged) on the same day of the week."""
    times = pd.DatetimeIndex(snapshots["time"])
    day = times.floor("D")
    days = pd.DatetimeIndex(day.unique())
    rows = {moment: np.flatnonzero(day == moment) for moment in days}
    kinds = [list(days[days.day_of_week >= 5]), list(days[days.day_of_week < 5])]
    stride = 7 * (math.ceil(((days.max() - days.min()).days + 1) / 7) + 1)
    figures = []
    for _ in range(draws):
        drawn = [kind[i] for kind in kinds if kind for i in rng.integers(0, len(kind), len(kind))]
        taken = [rows[moment] for moment in drawn]
        moved = np.repeat(np.arange(len(drawn)) * stride, [len(part) for part in taken])
        frame = snapshots.iloc[np.concatenate(taken)].copy()
        frame["time"] = frame["time"] + pd.to_timedelta(moved, unit="D")
        figures.append(measure(frame))
    return _percentiles(figures)


def by_groups(
    frames: Mapping[str, pd.DataFrame],
    column: str,
    measure: Callable[[Mapping[str, pd.DataFrame]], Mapping[str, float]],
    rng: np.random.Generator,
    draws: int = RESAMPLES,
) -> Intervals:
    """95% intervals of ``measure``'s figures over named ``frames``, resampling each frame's
    groups of equal ``column`` (a channel's recordings) with replacement."""
    grouped = {
        name: [group for _, group in frame.groupby(column)] for name, frame in frames.items()
    }
    figures = []
    for _ in range(draws):
        drawn = {
            name: pd.concat([groups[i] for i in rng.integers(0, len(groups), len(groups))])
            if groups
            else frames[name]
            for name, groups in grouped.items()
        }
        figures.append(measure(drawn))
    return _percentiles(figures)


def _percentiles(figures: list[Mapping[str, float]]) -> Intervals:
    """The 2.5th and 97.5th percentiles of each row's figures over the draws (draws where a
    figure is undefined left out)."""
    intervals: Intervals = {}
    for row in figures[0] if figures else ():
        values = np.array([figure[row] for figure in figures], float)
        values = values[np.isfinite(values)]
        if len(values):
            low, high = np.percentile(values, [2.5, 97.5])
            intervals[row] = (float(low), float(high))
    return intervals
