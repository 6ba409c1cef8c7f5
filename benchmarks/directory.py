"""What the tracked live directory says over a simulated week or month, as an analyst reads it
(the realism targets of round 2, rows 13-20, and row 1 hour by hour and at the start).

Pure functions over the long frame of ``api.track({"where": {"online": True}}, ...)``: one
row per live channel per snapshot, with ``time`` (the platform's world clock), ``channel``,
``viewersCurrent`` and, where a row needs them, ``typeId``, ``languageId``, ``partnered``
and ``numFollowers``. Snapshots come at a steady pace, so a mean over snapshots is a mean
over time: summed viewers per snapshot are concurrent viewers, and their mean over a day is
that day's viewer-hours over 24.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

#: UTC hours within which the platform's daily peak of viewers should fall (row 14).
PEAK_HOURS = frozenset({23, 0, 1, 2, 3})
#: Categories over which viewers per live channel are compared (row 17b): the busiest ones.
TOP_CATEGORIES = 20
#: Row 18 reads channels averaging at least this many viewers, seen live at least this many
#: simulated days apart (their followers at first and last sight).
BIG_AUDIENCE = 1_000
GROWTH_SPAN_DAYS = 7.0
DAY = 86_400.0


def per_snapshot(snapshots: pd.DataFrame) -> pd.DataFrame:
    """Per snapshot (indexed by ``time``): live channels and summed viewers."""
    grouped = snapshots.groupby("time")["viewersCurrent"]
    return pd.DataFrame({"live": grouped.size(), "viewers": grouped.sum()})


def by_hour(snapshots: pd.DataFrame) -> pd.DataFrame:
    """Per UTC hour of day: mean live channels and mean summed viewers per snapshot, and
    viewers per live channel (hours watched ÷ hours streamed at that hour)."""
    counts = per_snapshot(snapshots)
    hours = pd.DatetimeIndex(counts.index).hour
    table = counts.groupby(hours).mean()
    table.index.name = "hour"
    table["per_channel"] = table["viewers"] / table["live"]
    return table


@dataclass(frozen=True, slots=True)
class DaySwing:
    """The day's rhythm (rows 13, 14 and row 1 by hour)."""

    #: Mean live channels in the busiest UTC hour ÷ in the quietest.
    live: float
    #: The same for summed concurrent viewers, and the hour of the viewers' peak.
    viewers: float
    peak_hour: int
    #: Viewers per live channel in the hour where it is lowest, and where it is highest.
    per_channel_low: float
    per_channel_high: float
    hours_seen: int


def day_swing(snapshots: pd.DataFrame) -> DaySwing:
    """Rows 13 and 14 and row 1 hour by hour, from snapshots spanning whole days."""
    table = by_hour(snapshots)
    return DaySwing(
        float(table["live"].max() / table["live"].min()),
        float(table["viewers"].max() / table["viewers"].min()),
        int(table["viewers"].idxmax()),
        float(table["per_channel"].min()),
        float(table["per_channel"].max()),
        len(table),
    )


@dataclass(frozen=True, slots=True)
class WeekSwing:
    """Weekend ÷ weekday (row 15): mean daily viewer-hours, and mean live channels."""

    viewers: float
    live: float
    weekend_days: int
    weekdays: int


def week_swing(snapshots: pd.DataFrame) -> WeekSwing:
    """Row 15: the mean over the hours of the day of the weekend days' mean in that hour, ÷ the
    same for weekdays (Saturday and Sunday, UTC). Hour by hour, so an hour that snapshots
    missed on some day (they come unevenly when the platform is busy, and least often at its
    busiest) weighs neither kind of day; NaN without both kinds."""
    counts = per_snapshot(snapshots)
    times = pd.DatetimeIndex(counts.index)
    day = times.floor("D")
    hourly = counts.groupby([day, times.hour]).mean()
    weekend = pd.DatetimeIndex(hourly.index.get_level_values(0)).day_of_week >= 5
    ends = hourly.loc[weekend].groupby(level=1).mean()
    weekdays = hourly.loc[~weekend].groupby(level=1).mean()
    hours = ends.index.intersection(weekdays.index)
    days = pd.DatetimeIndex(day.unique()).day_of_week >= 5
    if hours.empty:
        return WeekSwing(math.nan, math.nan, int(days.sum()), int((~days).sum()))
    return WeekSwing(
        float(ends.loc[hours, "viewers"].sum() / weekdays.loc[hours, "viewers"].sum()),
        float(ends.loc[hours, "live"].sum() / weekdays.loc[hours, "live"].sum()),
        int(days.sum()),
        int((~days).sum()),
    )


@dataclass(frozen=True, slots=True)
class Categories:
    """Rows 16 and 17: how viewing spreads over categories."""

    #: Shares of viewer-time in the top category and the top ten.
    top: float
    top_ten: float
    #: Distinct categories streamed (seen live) in the window.
    distinct: int
    #: Viewers per live channel across the :data:`TOP_CATEGORIES` busiest categories:
    #: the 90th percentile ÷ the 10th.
    spread: float
    #: Share of live channel-time with no category.
    uncategorised: float


def categories(snapshots: pd.DataFrame) -> Categories:
    """Rows 16 and 17 from snapshots with ``typeId``."""
    typed = snapshots.dropna(subset=["typeId"])
    grouped = typed.groupby("typeId")["viewersCurrent"]
    viewer_time = grouped.sum().sort_values(ascending=False)
    total = float(viewer_time.sum())
    busiest = viewer_time.index[:TOP_CATEGORIES]
    per_channel = (viewer_time / grouped.size()).loc[busiest]
    low, high = np.quantile(per_channel.to_numpy(float), [0.1, 0.9])
    return Categories(
        float(viewer_time.iloc[0] / total) if total else math.nan,
        float(viewer_time.iloc[:10].sum() / total) if total else math.nan,
        int(typed["typeId"].nunique()),
        float(high / low) if low > 0 else math.inf,
        1 - len(typed) / max(1, len(snapshots)),
    )


@dataclass(frozen=True, slots=True)
class Growth:
    """Row 18: followers gained over 30 days ÷ followers, for the big channels."""

    median: float
    channels: int


def follower_growth(snapshots: pd.DataFrame) -> Growth:
    """Row 18: for each channel averaging at least :data:`BIG_AUDIENCE` viewers while live and
    seen live at least :data:`GROWTH_SPAN_DAYS` apart, its followers gained between its first
    and last sight ÷ its followers at first sight, scaled to 30 days; the median."""
    ordered = snapshots.sort_values("time")
    grouped = ordered.groupby("channel")
    table = pd.DataFrame(
        {
            "audience": grouped["viewersCurrent"].mean(),
            "first": grouped["numFollowers"].first().astype(float),
            "last": grouped["numFollowers"].last().astype(float),
            "span": (grouped["time"].last() - grouped["time"].first()).dt.total_seconds() / DAY,
        }
    )
    big = table.loc[
        (table["audience"] >= BIG_AUDIENCE)
        & (table["span"] >= GROWTH_SPAN_DAYS)
        & (table["first"] > 0)
    ]
    if big.empty:
        return Growth(math.nan, 0)
    monthly = (big["last"] - big["first"]) / big["first"] * 30 / big["span"]
    return Growth(float(monthly.median()), len(big))


def partners(snapshots: pd.DataFrame) -> list[int]:
    """The partnered channels seen live in the window, in id order."""
    partnered = snapshots["partnered"].fillna(False).astype(bool)
    return sorted(int(channel) for channel in snapshots.loc[partnered, "channel"].unique())


def partners_seen(snapshots: pd.DataFrame) -> int:
    """How many partnered channels were seen live in the window (row 19's numerator)."""
    return len(partners(snapshots))


@dataclass(frozen=True, slots=True)
class Languages:
    """Row 20: English's share of viewer-time; English ÷ Spanish live channel-time."""

    english_share: float
    english_to_spanish: float


def languages(snapshots: pd.DataFrame) -> Languages:
    """Row 20 from snapshots with ``languageId`` (channels without one count in the whole)."""
    language = snapshots["languageId"].astype(object)
    english = (language == "en").to_numpy()
    spanish = int((language == "es").sum())
    viewers = snapshots["viewersCurrent"].to_numpy(float)
    total = viewers.sum()
    return Languages(
        float(viewers[english].sum() / total) if total else math.nan,
        float(english.sum() / spanish) if spanish else math.inf,
    )


def largest_gap(snapshots: pd.DataFrame) -> float:
    """The longest stretch of world time between two snapshots, in seconds."""
    times = pd.Series(snapshots["time"].unique()).sort_values()
    return float(times.diff().dt.total_seconds().max()) if len(times) > 1 else math.nan
