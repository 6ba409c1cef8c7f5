"""The world's day and week, computed from the session schedule (``realism.md`` rows 13-15
and row 1 at every hour and at the world's starting instant)."""

from __future__ import annotations

import functools

import numpy as np
import numpy.typing as npt

from explorer.emulator import rhythm, sessions
from explorer.emulator.sessions import BLOCK, DAY, HISTORY_START, HOUR, Block, Schedule

CHANNELS = 50_000


@functools.cache
def month(channels: int = CHANNELS) -> Block:
    """The first month after the world's instant of the seed-0 world."""
    return Schedule(0, sessions.habits(0, channels)).block(1)


def snapshots(block: Block) -> tuple[npt.NDArray[np.float64], ...]:
    """(instants every half hour, live channels, summed viewers) over the block's month."""
    moments = HISTORY_START + block.index * BLOCK + np.arange(48, 48 * 30) * 1800.0
    starts, ends = np.sort(block.start), np.sort(block.end)
    by_start = np.concatenate([[0.0], np.cumsum(block.audience[np.argsort(block.start)])])
    by_end = np.concatenate([[0.0], np.cumsum(block.audience[np.argsort(block.end)])])
    begun = np.searchsorted(starts, moments, "right")
    over = np.searchsorted(ends, moments, "right")
    swing = np.array([sessions.diurnal(moment) for moment in moments])
    return moments, (begun - over).astype(float), (by_start[begun] - by_end[over]) * swing


def hourly(moments: npt.NDArray[np.float64], values: npt.NDArray[np.float64]) -> np.ndarray:
    """The mean of ``values`` in each UTC hour of the day."""
    hour = ((moments % DAY) // HOUR).astype(int)
    return np.array([values[hour == h].mean() for h in range(24)])


def test_live_channels_swing_about_twofold_over_the_day() -> None:
    """Live channels in the busiest UTC hour are 1.6-3.0 times those in the quietest."""
    moments, live, _ = snapshots(month())
    by_hour = hourly(moments, live)
    assert 1.6 <= by_hour.max() / by_hour.min() <= 3.0


def test_viewers_swing_two_to_threefold_and_peak_in_the_us_evening() -> None:
    """Summed viewers swing 1.6-3.5 times over the day, busiest between 23 and 03 UTC."""
    moments, _, viewers = snapshots(month())
    by_hour = hourly(moments, viewers)
    assert 1.6 <= by_hour.max() / by_hour.min() <= 3.5
    assert int(by_hour.argmax()) in (23, 0, 1, 2, 3)


def test_a_live_channel_averages_26_viewers_within_40_percent_at_every_hour() -> None:
    """The mean audience of a live channel stays within 26 +- 40% at every UTC hour."""
    moments, live, viewers = snapshots(month())
    per_channel = hourly(moments, viewers) / hourly(moments, live)
    assert per_channel.min() >= 26 * 0.6 and per_channel.max() <= 26 * 1.4


def test_weekends_stream_and_watch_a_little_more_than_weekdays() -> None:
    """Weekends hold 1.0-1.12x the live channels of weekdays, and 1.02-1.12x the viewing of
    all but the twenty biggest channels (whose few streams make a month's figure a toss)."""
    block = month()
    traits = sessions.habits(0, CHANNELS)
    small = traits.audience[block.channel] < np.sort(traits.audience)[-20]
    moments, live, _ = snapshots(block)
    viewing = snapshots(
        Block(1, block.channel[small], block.start[small], block.end[small], block.audience[small])
    )[2]
    weekend = rhythm.weekday(moments) >= 5
    assert 1.0 <= live[weekend].mean() / live[~weekend].mean() <= 1.12
    assert 1.02 <= viewing[weekend].mean() / viewing[~weekend].mean() <= 1.12


def test_the_worlds_starting_instant_is_a_typical_one() -> None:
    """At the world's instant a live channel averages 26 +- 6 viewers, in worlds of any seed."""
    for seed, channels in ((0, CHANNELS), (1, CHANNELS), (0, 100_000)):
        live = sessions.opening(seed, channels).live
        assert 20 <= sum(live.values()) / len(live) <= 32


def test_a_typical_instant_drops_the_biggest_then_the_smallest_within_its_share() -> None:
    """typical_instant drops the biggest sessions, then the smallest, at most its share."""
    audience = np.array([1.0, 1.0, 2.0, 3.0, 30.0, 400.0])
    assert rhythm.typical_instant(audience, 9.0, 10.0, 0.5).tolist() == [
        False,
        True,
        True,
        True,
        True,
        False,
    ]
    assert rhythm.typical_instant(audience, 9.0, 10.0, 1 / 6).tolist()[-1] is False
    assert rhythm.typical_instant(audience, 0.0, 1000.0, 0.5).all()


def test_sessions_of_a_channel_are_spread_evenly_over_the_month() -> None:
    """A channel streaming 15 sessions in 30 days streams every other day or so."""
    days = rhythm.session_days(np.random.default_rng(1), np.array([15, 1]), 18_000, 30)
    gaps = np.diff(days[:15])
    assert gaps.min() >= 1 and gaps.max() <= 3 and 0 <= days[15] < 30
