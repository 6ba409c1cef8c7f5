"""Stream sessions: when each channel goes live, for how long, and how many watch (pure, seeded).

Every channel has *habits* (:func:`habits`), a pure function of the seed and the world's size:
an average audience while live (heavy-tailed: most channels have a handful of viewers, a few
have thousands), the hours it streams in 30 days (more the bigger it is; many accounts are
dormant and stream rarely or never), a mean session length (longer for bigger channels) and a
preferred start hour (half a session before the middle of its streams, in the evenings of the
Americas, Europe or Asia, or at any hour: ``rhythm.py``; the platform peaks at about 23-01
UTC). Calibrated against ``realism.md`` rows 1-7 (Twitch-like profile: about 26 concurrent
viewers per live channel; see ``docs/realism.md``).

The *schedule* (:class:`Schedule`) is the world's sessions, month by month from 30 days before
the world's instant (:data:`HISTORY_START`): for each 30-day block, each channel streams a
Poisson number of sessions with its rate, evenly spaced over days weighted by the weekly cycle
(weekends a little busier and watched more), at its preferred hour plus jitter, with
gamma-distributed lengths. A channel's sessions never overlap (a later one that would is
dropped), and a few that would run across the world's instant do not happen, so that instant
is a typical one. Generation is vectorised over the sessions (numpy), so a million-channel
world's month takes a fraction of a second.

Within a session the audience rises over the first minutes, wobbles, and falls at the end
(:func:`audience_at`); its mean over the session is the session's ``audience``.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from datetime import datetime

import numpy as np
import numpy.typing as npt

from explorer.emulator import rhythm, status, tournaments
from explorer.emulator.opening import Opening
from explorer.emulator.world import DEMO_ACCOUNTS, FIRST_CHANNEL_ID, WORLD_NOW

DAY = 86_400.0
HOUR = 3_600.0
BLOCK_DAYS = 30
BLOCK = BLOCK_DAYS * DAY
#: The world's history starts 30 days before its instant: the first block of the schedule.
HISTORY_START = WORLD_NOW.timestamp() - BLOCK

# --- calibration (realism.md rows 1-7; see the module docstring) ---------------------------
#: Share of channels that stream in a typical month; the rest are dormant accounts.
ACTIVE_SHARE = 0.45
#: Average audience of active channels: a Pareto body (scale, exponent) whose top 1% is then
#: stretched so that the platform's hour-weighted mean audience is :data:`MEAN_AUDIENCE`.
AUDIENCE_SCALE = 0.55
AUDIENCE_EXPONENT = 1.3
MEAN_AUDIENCE = 28.0
#: Hours streamed per 30 days: ``HOURS_SCALE * audience ** HOURS_EXPONENT``, log-normal noise,
#: at most ``MAX_HOURS``; dormant accounts stream ``DORMANT_HOURS`` on average.
HOURS_SCALE = 5.0
HOURS_EXPONENT = 0.75
HOURS_NOISE = 0.4
MAX_HOURS = 200.0
DORMANT_HOURS = 0.3
#: Mean session length (hours): ``LENGTH_SCALE * audience ** LENGTH_EXPONENT``, at most
#: ``MAX_LENGTH``; lengths are gamma-distributed with shape ``LENGTH_SHAPE``.
LENGTH_SCALE = 2.8
LENGTH_EXPONENT = 0.15
MAX_LENGTH = 8.0
LENGTH_SHAPE = 1.6
SHORTEST, LONGEST = 0.25 * HOUR, 16 * HOUR
#: A session's audience varies around its channel's (log-normal sigma).
SESSION_NOISE = 0.25

#: The demo channel ``streamer`` (index 0): a mid-sized partner who streams most evenings,
#: live at the world's instant and on 2020-07-01 (the README's analytics example).
STREAMER_AUDIENCE = 150.0
STREAMER_HOURS = 150.0
STREAMER_LENGTH = 4.5
STREAMER_HOUR = 20.0
STREAMER_SESSIONS: tuple[tuple[float, float], ...] = (
    (datetime.fromisoformat("2020-07-01T19:00:00+00:00").timestamp(), 5 * HOUR),
    (WORLD_NOW.timestamp() - 1.5 * HOUR, 6 * HOUR),
)
assert DEMO_ACCOUNTS[0].username == "streamer"

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class Habits:
    """Each channel's habits, indexed by its position in the world (id - first id)."""

    #: Average concurrent viewers while live.
    audience: FloatArray
    #: Expected hours streamed in 30 days.
    hours: FloatArray
    #: Mean session length, hours.
    length: FloatArray
    #: Preferred start hour, UTC (may fall outside 0-24; taken modulo the day).
    start_hour: FloatArray
    #: Whether the channel streams at all in a typical month.
    active: npt.NDArray[np.bool_]

    def __len__(self) -> int:
        return len(self.audience)


def habits(seed: int, channels: int) -> Habits:
    """The habits of a world of ``channels`` channels for ``seed`` (see the module docstring).

    Audiences are spread by rank among the active channels (stratified, not drawn), so the
    biggest channels of every world of the same size are as big, whatever the seed.
    """
    rng = np.random.default_rng([seed, 1])
    active = rng.random(channels) < ACTIVE_SHARE
    active[0] = True
    count = int(active.sum())
    rank = np.empty(channels)
    rank[active] = (rng.permutation(count) + 0.5) / count
    rank[~active] = 0.1 + 0.9 * rng.random(channels - count)
    audience = AUDIENCE_SCALE * rank ** (-1 / AUDIENCE_EXPONENT)
    noise = rng.lognormal(0.0, HOURS_NOISE, channels)
    hours = np.where(active, HOURS_SCALE * audience**HOURS_EXPONENT * noise, DORMANT_HOURS)
    hours = np.minimum(hours, MAX_HOURS)
    audience = _stretch_top(audience, hours)
    audience[0], hours[0] = STREAMER_AUDIENCE, STREAMER_HOURS
    middle = rhythm.middle_hours(audience)
    length = np.minimum(LENGTH_SCALE * audience**LENGTH_EXPONENT, MAX_LENGTH)
    length[0] = STREAMER_LENGTH
    start_hour = middle - length / 2
    start_hour[0] = STREAMER_HOUR
    return Habits(audience, hours, length, start_hour, active)


def _stretch_top(audience: FloatArray, hours: FloatArray) -> FloatArray:
    """``audience`` with its values above the body's 99th percentile stretched so that the
    hour-weighted mean is :data:`MEAN_AUDIENCE`: the body (rows 4 and 5) stays put while the
    head, whose size would otherwise drift with the world's size, carries row 1."""
    threshold = AUDIENCE_SCALE * 0.01 ** (-1 / AUDIENCE_EXPONENT)
    top = audience > threshold
    if not top.any():
        return audience
    wanted = MEAN_AUDIENCE * hours.sum()
    rest = float((audience * hours)[~top].sum()) + threshold * float(hours[top].sum())
    spread = float(((audience - threshold) * hours)[top].sum())
    factor = max((wanted - rest) / spread, 0.1) if spread > 0 else 1.0
    return np.where(top, threshold + (audience - threshold) * factor, audience)


@dataclass(frozen=True, slots=True)
class Block:
    """The sessions starting in one 30-day block, sorted by (channel, start).

    A session's id (its recording's too) names its channel: ``channel id * SESSION_IDS +
    block * 1,000 + its rank among the channel's sessions of the block``.
    """

    index: int
    channel: IntArray
    start: FloatArray
    end: FloatArray
    audience: FloatArray

    def ids(self) -> IntArray:
        """The session id of every row (:func:`session`'s, vectorised)."""
        first = np.searchsorted(self.channel, self.channel, "left")
        rank = np.arange(len(self.channel), dtype=np.int64) - first
        ids: IntArray = (FIRST_CHANNEL_ID + self.channel) * SESSION_IDS + self.index * 1000 + rank
        return ids

    def of(self, channel: int) -> range:
        """Positions of ``channel``'s sessions in this block."""
        low = int(np.searchsorted(self.channel, channel, "left"))
        high = int(np.searchsorted(self.channel, channel, "right"))
        return range(low, high)


#: Session ids per channel (see :class:`Block`): a channel id times this, plus the session's
#: block times 1,000 and its rank in the block.
SESSION_IDS = 1_000_000


def _raw_block(
    seed: int, index: int, traits: Habits
) -> tuple[IntArray, FloatArray, FloatArray, FloatArray]:
    """One block's sessions before overlaps are dropped: (channel, start, end, audience)."""
    rng = np.random.default_rng([seed, 2, index])
    begin = HISTORY_START + index * BLOCK
    rate = traits.hours / traits.length * (BLOCK_DAYS / 30)
    counts = rng.poisson(rate)
    channel = np.repeat(np.arange(len(traits), dtype=np.int64), counts)
    size = len(channel)
    day = rhythm.session_days(rng, counts, int(begin // DAY), BLOCK_DAYS)
    hour = traits.start_hour[channel] + rng.normal(0.0, 1.5, size)
    offset = np.mod(day * DAY + hour * HOUR, BLOCK)
    start = begin + np.floor(offset / 60) * 60
    mean = traits.length[channel] * HOUR
    length = np.clip(rng.gamma(LENGTH_SHAPE, mean / LENGTH_SHAPE), SHORTEST, LONGEST)
    length = np.floor(length / 60) * 60
    weekend = np.asarray(rhythm.WEEKLY_AUDIENCE)[rhythm.weekday(start)]
    audience = traits.audience[channel] * weekend * rng.lognormal(0, SESSION_NOISE, size)
    if index == 0:
        channel, start, length, audience = _with_streamer(channel, start, length, audience)
    held = tournaments.scheduled(seed, index, begin, traits.audience, traits.active)
    channel, start, length, audience = tournaments.with_tournaments(
        held, channel, start, length, audience
    )
    order = _by_channel_then_start(channel, start)
    return channel[order], start[order], start[order] + length[order], audience[order]


def _by_channel_then_start(channel: IntArray, start: FloatArray) -> IntArray:
    """The stable order by channel, then start (``np.lexsort((start, channel))``), from one
    integer key (starts are whole seconds): the rows come almost in channel order already,
    which a stable sort of one key makes use of, five times faster than the lexsort."""
    if not len(start):
        return np.arange(0, dtype=np.int64)
    low = float(start.min())
    span = int(start.max() - low) + 1
    key = channel * span + (start - low).astype(np.int64)
    order: IntArray = np.argsort(key, kind="stable")
    return order


def _with_streamer(
    channel: IntArray, start: FloatArray, length: FloatArray, audience: FloatArray
) -> tuple[IntArray, FloatArray, FloatArray, FloatArray]:
    """The first block with the demo channel's documented sessions in place of any of its
    own that overlap them."""
    keep = np.ones(len(channel), dtype=bool)
    for begin, span in STREAMER_SESSIONS:
        clash = (channel == 0) & (start < begin + span) & (start + length > begin)
        keep &= ~clash
    extra = len(STREAMER_SESSIONS)
    return (
        np.concatenate([channel[keep], np.zeros(extra, dtype=np.int64)]),
        np.concatenate([start[keep], [begin for begin, _ in STREAMER_SESSIONS]]),
        np.concatenate([length[keep], [span for _, span in STREAMER_SESSIONS]]),
        np.concatenate([audience[keep], np.full(extra, STREAMER_AUDIENCE)]),
    )


def _drop_overlaps(
    channel: IntArray, start: FloatArray, end: FloatArray, busy_until: FloatArray
) -> npt.NDArray[np.bool_]:
    """Which sessions to keep: none that starts before the channel's previous session (in
    this block, or carried over from the last one: ``busy_until``) has ended."""
    stride = 4 * BLOCK
    origin = float(start.min()) if len(start) else 0.0
    keyed_end = channel * stride + (end - origin)
    running = np.maximum.accumulate(keyed_end)
    previous = np.concatenate([[-np.inf], running[:-1]])
    keep = channel * stride + (start - origin) >= previous
    return keep & (start >= busy_until[channel])


#: The mean audience of the channels live at the world's instant (as listed: the curve within
#: each session and the hour's swing): within this band (``rhythm.typical_instant``), dropping
#: at most the share ``OPENING_TRIM`` of the sessions that would run across it.
OPENING_AUDIENCE = (25.0, 29.0)
OPENING_TRIM = 0.3


def _typical_opening(
    channel: IntArray,
    start: FloatArray,
    end: FloatArray,
    audience: FloatArray,
    kept: npt.NDArray[np.bool_],
) -> npt.NDArray[np.bool_]:
    """Which of the first block's sessions to keep so that the world's instant is a typical
    one (row 1 there): all but some running across it (never the demo channel's)."""
    moment = WORLD_NOW.timestamp()
    live = np.flatnonzero(kept & (start <= moment) & (end > moment) & (channel != 0))
    span = end[live] - start[live]
    shape = np.minimum(1.0, (moment - start[live]) / (RAMP_MINUTES * 60))
    shape *= np.minimum(1.0, 0.3 + 0.7 * (end[live] - moment) / (FALL_SHARE * span))
    listed = audience[live] * shape * _LEVEL * diurnal(moment)
    keep = np.ones(len(channel), dtype=bool)
    keep[live] = rhythm.typical_instant(listed, *OPENING_AUDIENCE, OPENING_TRIM)
    return keep


class Schedule:
    """The world's sessions, block by block, generated on first use and cached."""

    def __init__(self, seed: int, traits: Habits) -> None:
        self.seed = seed
        self.habits = traits
        self._blocks: dict[int, Block] = {}
        self._raw: dict[int, tuple[IntArray, FloatArray, FloatArray, FloatArray]] = {}
        self._orders: dict[int, IntArray] = {}

    @staticmethod
    def block_of(moment: float) -> int:
        """The index of the block holding ``moment`` (negative before the history)."""
        return math.floor((moment - HISTORY_START) / BLOCK)

    def _raw_of(self, index: int) -> tuple[IntArray, FloatArray, FloatArray, FloatArray]:
        if index not in self._raw:
            self._raw[index] = _raw_block(self.seed, index, self.habits)
        return self._raw[index]

    def block(self, index: int) -> Block:
        """Block ``index`` (>= 0): its sessions, none overlapping another of its channel."""
        if index < 0:
            raise ValueError("the world's history starts at block 0")
        cached = self._blocks.get(index)
        if cached is not None:
            return cached
        channel, start, end, audience = self._raw_of(index)
        busy = np.full(len(self.habits), -np.inf)
        if index > 0:
            # Sessions of the block before that run into this one (none drop between blocks:
            # a session is shorter than a block).
            before_channel, _, before_end, _ = self._raw_of(index - 1)
            np.maximum.at(busy, before_channel, before_end)
        keep = _drop_overlaps(channel, start, end, busy)
        if index == 0:
            keep &= _typical_opening(channel, start, end, audience, keep)
        block = Block(
            index,
            channel[keep],
            start[keep],
            end[keep],
            audience[keep],
        )
        self._blocks[index] = block
        self._raw.pop(index - 1, None)
        return block

    def starting(self, since: float, until: float) -> list[Session]:
        """Every session starting in ``(since, until]``, in order of start."""
        found = []
        for index in range(max(self.block_of(since), 0), self.block_of(until) + 1):
            block = self.block(index)
            order = self._by_start(block)
            starts = block.start[order]
            low = int(np.searchsorted(starts, since, "right"))
            high = int(np.searchsorted(starts, until, "right"))
            found += [session(block, int(position)) for position in order[low:high]]
        return found

    def _by_start(self, block: Block) -> IntArray:
        cached = self._orders.get(block.index)
        if cached is None:
            cached = self._orders[block.index] = np.argsort(block.start, kind="stable")
        return cached

    def live_at(self, moment: float) -> list[tuple[Block, int]]:
        """Every session running at ``moment``, as (block, position)."""
        found = []
        for index in (self.block_of(moment) - 1, self.block_of(moment)):
            if index < 0:
                continue
            block = self.block(index)
            for position in np.flatnonzero((block.start <= moment) & (block.end > moment)):
                found.append((block, int(position)))
        return found

    def of_channel(self, channel: int, since: float, until: float) -> list[Session]:
        """``channel``'s sessions that overlap ``[since, until)``, oldest first."""
        first = max(self.block_of(since) - 1, 0)
        last = self.block_of(until)
        found = []
        for index in range(first, last + 1):
            block = self.block(index)
            for position in block.of(channel):
                if block.start[position] < until and block.end[position] > since:
                    found.append(session(block, position))
        return found


@dataclass(frozen=True, slots=True)
class Session:
    """One session of one channel: epoch seconds, and its mean audience."""

    id: int
    channel: int
    start: float
    end: float
    audience: float

    @property
    def hours(self) -> float:
        """Its length in hours."""
        return (self.end - self.start) / HOUR


def session(block: Block, position: int) -> Session:
    """The session at ``position`` of ``block``."""
    channel = int(block.channel[position])
    rank = position - int(np.searchsorted(block.channel, channel, "left"))
    return Session(
        (FIRST_CHANNEL_ID + channel) * SESSION_IDS + block.index * 1000 + rank,
        channel,
        float(block.start[position]),
        float(block.end[position]),
        float(block.audience[position]),
    )


#: The audience curve: minutes to ramp up, and the share of the session over which it falls.
RAMP_MINUTES = 20.0
FALL_SHARE = 0.08
#: Peak of the curve relative to its mean (the ramp and fall cost about this much).
_LEVEL = 1.07


def diurnal(moment: float) -> float:
    """How many more (or fewer) viewers watch at ``moment``'s hour of day than on average
    (``rhythm.DIURNAL_SWING``: most of the day's swing is in how many channels are live)."""
    return 1 + rhythm.DIURNAL_SWING * math.cos(2 * math.pi * ((moment % DAY) / HOUR - 1) / 24)


def audience_at(item: Session, moment: float, seed: int) -> int:
    """Concurrent viewers of ``item`` at ``moment``: a ramp over the first minutes, a plateau
    with a wobble (deterministic per session and minute) following the hour of day, and a
    fall over its last part."""
    if not item.start <= moment < item.end:
        return 0
    elapsed = moment - item.start
    span = item.end - item.start
    shape = min(1.0, elapsed / (RAMP_MINUTES * 60))
    left = (item.end - moment) / (FALL_SHARE * span)
    shape *= min(1.0, 0.3 + 0.7 * left)
    minute = int(moment // 60)
    wobble = 1 + 0.08 * math.sin(minute / 7.0 + item.id % 97) + 0.04 * math.sin(minute / 2.3)
    level = item.audience * _LEVEL * diurnal(moment)
    return max(0, round(level * shape * wobble + (seed + item.id) % 3 - 1))


@functools.lru_cache(maxsize=4)
def world_schedule(seed: int, channels: int) -> Schedule:
    """The schedule of the world for ``seed`` with ``channels`` channels (one per process and
    world: every part of a platform reads the same)."""
    return Schedule(seed, habits(seed, channels))


def opening(seed: int, channels: int) -> Opening:
    """The :class:`Opening` of the world for ``seed``: its sessions running at ``WORLD_NOW``."""
    schedule = world_schedule(seed, channels)
    moment = WORLD_NOW.timestamp()
    live = {}
    for block, position in schedule.live_at(moment):
        item = session(block, position)
        live[item.channel] = audience_at(item, moment, seed)
    traits = schedule.habits
    return Opening(
        traits.audience,
        traits.hours,
        traits.active,
        live,
        status.partnered(traits.audience),
        status.languages(traits.audience),
    )
