"""Scheduled events (tournaments): a few channels' weekend sessions drawing many times their
usual audience (pure, seeded).

Each 30-day block of the schedule (``sessions.py``) holds :data:`PER_BLOCK` tournaments, on
the block's first and third weekends. A tournament is held by one of the platform's
big-but-not-biggest channels (rank :data:`RANKS` among the channels that stream, by average
audience), on a Saturday or Sunday afternoon (UTC), for a few hours, with :data:`MULTIPLIER`
times the channel's usual audience, so it jumps into the top of the live directory while it
runs; it streams an esports category (:data:`CATEGORIES`, ids of the catalogue's named types:
``categories.py``). The schedule puts the tournament's session in place of the channel's own
sessions that would overlap it, as it does the demo channel's documented ones.

Nothing here imports the schedule: the schedule calls :func:`scheduled` with its block's
start and the channels' habits, and ``categories.py`` calls it again to know which sessions
are tournaments.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

DAY = 86_400.0
HOUR = 3_600.0
#: Tournaments in each 30-day block, on its first and third weekends (at most four): few
#: enough that the weekend's extra viewing stays within realism row 15.
PER_BLOCK = 2
#: Rank range (among channels that stream, by average audience, 0 the biggest) of the
#: channels that hold them: big enough to be followed, small enough that the jump shows.
RANKS = (8, 80)
#: The audience of a tournament, as a multiple of its channel's average (uniform range).
MULTIPLIER = (8.0, 15.0)
#: Its start, UTC hour on a weekend afternoon (uniform range), and its length in hours.
START_HOURS = (14.0, 18.0)
LENGTH_HOURS = (3.0, 5.0)
#: Type ids of the esports categories tournaments stream (``categories.py``'s catalogue:
#: Ranked Arena, Shadow Ops, Card Masters, Soccer Pro, Arena Legends, Hero Shooter).
CATEGORIES = (10, 12, 13, 25, 39, 40)

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class Tournaments:
    """One block's tournaments: channel (position in the world), start and end (epoch
    seconds), mean audience, and category (type id)."""

    channel: IntArray
    start: FloatArray
    end: FloatArray
    audience: FloatArray
    category: IntArray


def scheduled(
    seed: int, index: int, begin: float, audience: FloatArray, active: npt.NDArray[np.bool_]
) -> Tournaments:
    """The tournaments of block ``index`` (starting at ``begin``) for the channels' average
    ``audience`` and whether each streams at all (``active``); none for the demo channel
    (position 0) and none in a world too small to have the ranks."""
    streaming = np.flatnonzero(active)
    streaming = streaming[streaming != 0]
    low, high = RANKS
    if len(streaming) <= high:
        empty = np.zeros(0)
        return Tournaments(empty.astype(np.int64), empty, empty, empty, empty.astype(np.int64))
    top = streaming[np.argpartition(-audience[streaming], high)[:high]]
    ranked = top[np.lexsort((top, -audience[top]))]
    rng = np.random.default_rng([seed, 9, index])
    channel = ranked[low + rng.choice(high - low, size=PER_BLOCK, replace=False)]
    first_day = int(begin // DAY)
    # One a weekend: the block's days 1-28 hold exactly four Saturdays (epoch day 0: a Thursday).
    saturdays = 1 + np.flatnonzero((np.arange(first_day + 1, first_day + 29) + 3) % 7 == 5)
    day = saturdays[2 * np.arange(PER_BLOCK) % len(saturdays)] + rng.integers(2, size=PER_BLOCK)
    hour = rng.uniform(*START_HOURS, PER_BLOCK)
    start = first_day * DAY + day * DAY + np.floor(hour * 60) * 60
    start = np.maximum(start, begin)
    length = np.floor(rng.uniform(*LENGTH_HOURS, PER_BLOCK) * 60) * 60
    level = audience[channel] * rng.uniform(*MULTIPLIER, PER_BLOCK)
    category = np.asarray(CATEGORIES, dtype=np.int64)[rng.integers(len(CATEGORIES), size=PER_BLOCK)]
    return Tournaments(channel, start, start + length, level, category)


def with_tournaments(
    held: Tournaments,
    channel: IntArray,
    start: FloatArray,
    length: FloatArray,
    audience: FloatArray,
) -> tuple[IntArray, FloatArray, FloatArray, FloatArray]:
    """A block's sessions (channel, start, length, audience) with the tournaments ``held`` in
    place of their channels' sessions that overlap them."""
    keep = np.ones(len(channel), dtype=bool)
    for holder, begin, end in zip(held.channel, held.start, held.end, strict=True):
        keep &= ~((channel == holder) & (start < end) & (start + length > begin))
    return (
        np.concatenate([channel[keep], held.channel]),
        np.concatenate([start[keep], held.start]),
        np.concatenate([length[keep], held.end - held.start]),
        np.concatenate([audience[keep], held.audience]),
    )
