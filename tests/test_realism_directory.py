"""The realism benchmark's readings of the tracked live directory (``benchmarks/directory.py``)
on snapshot frames whose answer is known."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from benchmarks import chatstats, directory


def _snapshots(
    days: int, live_at: dict[int, int], viewers: int = 10, **fields: object
) -> pd.DataFrame:
    """Hourly snapshots over ``days`` days from a Monday: ``live_at[hour]`` channels live at
    that UTC hour (channels 0..n-1), each with ``viewers`` viewers."""
    rows = []
    start = pd.Timestamp("2020-07-20", tz="UTC")  # a Monday
    for hour in range(days * 24):
        at = start + pd.Timedelta(hours=hour)
        for channel in range(live_at.get(hour % 24, 1)):
            rows.append({"time": at, "channel": channel, "viewersCurrent": viewers, **fields})
    return pd.DataFrame(rows)


def test_day_swing_is_the_busiest_hour_over_the_quietest() -> None:
    """Two live channels at 01 UTC and one at every other hour give a swing of 2, peak at 1."""
    swing = directory.day_swing(_snapshots(2, {1: 2}))
    assert swing.live == pytest.approx(2.0)
    assert swing.viewers == pytest.approx(2.0)
    assert swing.peak_hour == 1
    assert swing.hours_seen == 24


def test_viewers_per_channel_by_hour_is_flat_when_every_channel_is_alike() -> None:
    """Channels of equal audience give the same viewers per live channel at every hour."""
    swing = directory.day_swing(_snapshots(1, {5: 4, 20: 3}, viewers=26))
    assert swing.per_channel_low == swing.per_channel_high == 26


def test_week_swing_compares_whole_weekend_days_with_weekdays() -> None:
    """Twice the channels on Saturday and Sunday read 2 for both rows of row 15."""
    frame = _snapshots(7, {})
    weekend = frame["time"].dt.day_of_week >= 5
    doubled = frame.loc[weekend].assign(channel=1)
    week = directory.week_swing(pd.concat([frame, doubled], ignore_index=True))
    assert week.live == pytest.approx(2.0)
    assert week.viewers == pytest.approx(2.0)
    assert (week.weekend_days, week.weekdays) == (2, 5)


def test_week_swing_counts_days_however_partial() -> None:
    """A window that ends an hour into a day counts that day too, hour by hour."""
    frame = _snapshots(8, {})
    cut = frame.loc[frame["time"] <= frame["time"].min() + pd.Timedelta(days=7, hours=1)]
    assert directory.week_swing(cut).weekdays == 6


def test_week_swing_is_blind_to_hours_missed_on_some_days() -> None:
    """A weekend whose busiest hour went unseen one day reads as the weekend it was: 1 where
    weekends and weekdays are alike, not the lower mean of the hours that were seen."""
    frame = _snapshots(7, {1: 5})
    saturday_one = frame["time"] == frame["time"].min() + pd.Timedelta(days=5, hours=1)
    week = directory.week_swing(frame.loc[~saturday_one])
    assert week.viewers == pytest.approx(1.0)
    assert week.live == pytest.approx(1.0)


def test_week_swing_without_a_weekend_is_not_a_number() -> None:
    """Three weekdays alone give NaN, not a ratio."""
    assert math.isnan(directory.week_swing(_snapshots(3, {})).viewers)


def test_categories_share_spread_and_count() -> None:
    """Viewer-time by typeId gives the top shares, the distinct count and the spread of
    viewers per live channel across the busiest categories."""
    frame = pd.DataFrame(
        {
            "time": pd.Timestamp("2020-07-20", tz="UTC"),
            "channel": range(13),
            "viewersCurrent": [50, 50, 40, 30, 20, 10, 10, 10, 10, 10, 5, 5, 7],
            "typeId": [1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, None],
        }
    )
    kinds = directory.categories(frame)
    total = 250
    assert kinds.top == pytest.approx(100 / total)
    assert kinds.top_ten == pytest.approx(245 / total)
    assert kinds.distinct == 11
    assert kinds.uncategorised == pytest.approx(1 / 13)
    per_channel = np.array([50, 40, 30, 20, 10, 10, 10, 10, 10, 5, 5], dtype=float)
    low, high = np.quantile(per_channel, [0.1, 0.9])
    assert kinds.spread == pytest.approx(high / low)


def test_follower_growth_scales_to_thirty_days_for_big_channels_only() -> None:
    """A 1,000-viewer channel that goes from 100,000 to 101,000 followers in 10 days grows
    3% a month; a small one is left out."""
    times = pd.to_datetime(["2020-07-01", "2020-07-11"], utc=True)
    frame = pd.DataFrame(
        {
            "time": list(times) * 2,
            "channel": [1, 1, 2, 2],
            "viewersCurrent": [1000, 1000, 50, 50],
            "numFollowers": [100_000, 101_000, 1_000, 2_000],
        }
    )
    growth = directory.follower_growth(frame)
    assert growth.channels == 1
    assert growth.median == pytest.approx(0.03)


def test_partners_seen_counts_channels_not_snapshots() -> None:
    """A partner seen live in ten snapshots counts once."""
    frame = _snapshots(1, {}, partnered=True)
    assert directory.partners_seen(frame) == 1


def test_languages_weigh_viewers_and_channel_time() -> None:
    """English's share of viewer-time, and English over Spanish channel-time."""
    frame = pd.DataFrame(
        {
            "viewersCurrent": [30, 10, 10, 50],
            "languageId": ["en", "en", "es", None],
        }
    )
    spoken = directory.languages(frame)
    assert spoken.english_share == pytest.approx(0.4)
    assert spoken.english_to_spanish == pytest.approx(2.0)


def test_emote_only_counts_messages_of_emotes_alone() -> None:
    """A line of two emotes is emote-only; an emote with words or plain text is not."""
    messages = pd.DataFrame(
        {"text": ["Kappa Kappa", "gg Kappa", "hello there", ":)"], "emotes": [2, 1, 0, 1]}
    )
    assert chatstats.emote_only(messages) == pytest.approx(0.5)


def test_week_swing_weighs_each_hour_alike_however_often_it_was_seen() -> None:
    """Extra snapshots crowded into one quiet hour of the weekend do not pull its mean."""
    frame = _snapshots(7, {})
    sunday = frame["time"].min() + pd.Timedelta(days=6, hours=3)
    crowd = pd.DataFrame(
        {
            "time": [sunday + pd.Timedelta(minutes=minute) for minute in range(1, 50)],
            "channel": 0,
            "viewersCurrent": 0,
        }
    )
    week = directory.week_swing(pd.concat([frame, crowd], ignore_index=True))
    assert week.live == pytest.approx(1.0)
    assert week.viewers == pytest.approx((1 + (23 + 0.02) / 24) / 2)
