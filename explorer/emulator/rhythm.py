"""The world's day and week: when channels stream (pure, seeded, numpy-vectorised).

A real platform is global: streamers in the Americas, Europe and Asia each stream in their
own evening, so the number of live channels swings only about twofold over the UTC day
(``realism.md`` row 13) and the audience peaks in the US evening, about 23-03 UTC (row 14).
Each channel's *preferred hour* is the middle of its streams, spread over :data:`REGIONS`
(local evenings in UTC, and a share spread over the whole day); a session starts half its
channel's mean length before it, so long streams (the big channels') are centred on the same
evenings as short ones and the mix of small and big channels live, and so the mean audience
of a live channel, stays about the same at every hour (row 1 at every hour).

The week is nearly flat (row 15: weekends about 7% more viewing than weekdays, published
2021-22): :data:`WEEKLY_SESSIONS` and :data:`WEEKLY_AUDIENCE` weight the days. A channel's
sessions of a month are spread over it evenly (:func:`session_days`), as a streamer with a
schedule does, with the weekly weights warping the spacing: a big channel's share of weekend
streams is then within a session of its expected share, not a coin toss that a handful of big
channels would carry into the whole platform's figures.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

#: Where streamers are: (share of channels, mean and spread in hours of the middle of their
#: streams, UTC). The Americas' evening (about 20-21 h Eastern), Europe's (21-22 h Central),
#: Asia's and Oceania's (21-22 h in Seoul and Shanghai), and streamers at any hour.
REGIONS: tuple[tuple[float, float, float], ...] = (
    (0.42, 0.5, 3.5),
    (0.26, 20.0, 3.0),
    (0.11, 13.0, 3.0),
)
#: Share of channels streaming at any hour of the day (the rest of :data:`REGIONS`).
ANY_HOUR = 1.0 - sum(share for share, _, _ in REGIONS)
#: Monday-first weights of a day's sessions, and of their audiences.
WEEKLY_SESSIONS = (1.0, 1.0, 1.0, 1.0, 1.02, 1.06, 1.05)
WEEKLY_AUDIENCE = (1.0, 1.0, 1.0, 1.0, 1.01, 1.04, 1.04)
#: Audiences swing with the hour of day, highest at 01:00 UTC (the US evening), by this much.
DIURNAL_SWING = 0.05
#: Where the biggest channel's hour falls among the quantiles of the regions' mixture.
PHASE = 0.7
_GOLDEN = (5**0.5 - 1) / 2
_ROOT_TAU = (2 * np.pi) ** 0.5


def middle_hours(audience: FloatArray) -> FloatArray:
    """Each channel's preferred middle-of-stream hour, UTC (may fall outside 0-24).

    Hours are spread by audience rank (a golden-ratio sequence over the quantiles of the
    regions' mixture from :data:`PHASE`), not drawn one by one: the few big channels that
    hold most of the viewing are spread over the day as the many small ones are, so the
    audience of every hour, and of the world's starting instant, is not a coin toss."""
    grid = np.linspace(-12.0, 36.0, 4801)
    density = np.full(len(grid), ANY_HOUR / 24.0)
    for share, mean, spread in REGIONS:
        density += share * np.exp(-0.5 * ((grid - mean) / spread) ** 2) / (spread * _ROOT_TAU)
    cumulative = np.cumsum(density)
    cumulative /= cumulative[-1]
    rank = np.empty(len(audience))
    rank[np.argsort(-audience, kind="stable")] = np.arange(len(audience))
    quantile = np.mod(rank * _GOLDEN + PHASE, 1.0)
    hours: FloatArray = np.interp(quantile, cumulative, grid)
    return np.where((hours >= 0) & (hours < 24), hours, np.mod(hours, 24.0))


def weekday(moments: FloatArray) -> IntArray:
    """The day of the week (Monday 0) of each epoch second in ``moments``."""
    days: IntArray = ((moments // 86_400).astype(np.int64) + 3) % 7  # epoch day 0: Thursday
    return days


def session_days(rng: np.random.Generator, counts: IntArray, first_day: int, days: int) -> IntArray:
    """The day (0 to ``days - 1``) of each of the sessions of channels streaming ``counts``
    sessions each, channel after channel: each channel's sessions evenly spaced over the
    block from a random phase, the spacing warped by :data:`WEEKLY_SESSIONS`."""
    weights = np.asarray(WEEKLY_SESSIONS)[(np.arange(first_day, first_day + days) + 3) % 7]
    edges = np.concatenate([[0.0], np.cumsum(weights) / weights.sum()])
    owner = np.repeat(np.arange(len(counts)), counts)
    starts = np.cumsum(counts) - counts
    rank = np.arange(len(owner)) - starts[owner]
    phase = rng.random(len(counts))[owner]
    where = (rank + phase) / np.maximum(counts[owner], 1)
    day: IntArray = np.clip(np.searchsorted(edges, where, "right") - 1, 0, days - 1)
    return day


def typical_instant(
    audience: FloatArray, low: float, high: float, most: float
) -> npt.NDArray[np.bool_]:
    """Which of the sessions live at one instant (their ``audience`` there) to keep so that
    their mean audience falls within ``[low, high]``: the biggest dropped while it is above,
    then the smallest while it is below, no more than the share ``most`` of them in all.

    A world of tens of thousands of channels has a few channels so big that one of them live
    or not moves the mean audience of all live channels by half: the world's starting
    instant, where a user's first listing happens, is made a typical one this way (a few
    sessions that would have run across it do not happen)."""
    count = len(audience)
    ascending = np.sort(audience)
    spare = int(most * count)
    sizes = np.arange(1, count + 1)
    # The biggest dropped: the fewest whose drop brings the mean down to ``high``.
    means = np.cumsum(ascending) / sizes  # the mean of the smallest k
    fitting = np.flatnonzero(means <= high)
    top = count - (int(fitting[-1]) + 1 if len(fitting) else 0)
    top = min(top, spare)
    rest = ascending[: count - top]
    # Then the smallest dropped: the fewest whose drop brings the mean up to ``low``.
    means = np.cumsum(rest[::-1]) / sizes[: len(rest)]  # the mean of the biggest k
    fitting = np.flatnonzero(means >= low)
    bottom = len(rest) - (int(fitting[-1]) + 1 if len(fitting) else len(rest))
    bottom = min(bottom, spare - top)
    order = np.argsort(audience, kind="stable")
    keep = np.ones(count, dtype=bool)
    keep[order[count - top :]] = False
    keep[order[:bottom]] = False
    return keep
