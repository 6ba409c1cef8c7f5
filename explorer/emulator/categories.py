"""Categories (the platform's *types*, ``typeId``): the catalogue, and what every session
streams, when it switches, new releases and tournaments (pure, seeded).

**The catalogue** (:func:`catalogue`): the named types of ``world.TYPE_NAMES`` (ids 1-36, kept),
a few more named ones (:data:`ADDED`), two new releases (:data:`RELEASES`) and a generated long
tail that grows with the world (:data:`TAIL_PER_CHANNEL`). Each category but the releases has a
target share of the platform's viewer-hours (:data:`HEAD`, then a Zipf tail) and an audience
*pull*, its viewers per live channel relative to the platform's: a chatting category holds 12%
of viewing on 4% of the hours streamed, some games draw few viewers per channel.

**Each channel's usual category** follows from its habits, not the other way round (its
audience and hours are ``sessions.habits``'s, untouched): a channel of average audience ``a``
picks from a mixture of two distributions over the catalogue, one weighted for viewer-hours
(with probability ``a / (a + HALF_PULL)``) and one for hours streamed. The two are solved from
the targets and the world's habits so that the categories' shares of viewer-hours and of hours
come out as the targets ask, whatever the world's size.

**Each session** (keyed by its id, vectorised per block): streams its channel's usual category,
or another one (:data:`VARIETY`); some switch once at a seeded moment (:data:`SWITCH`), half
of them from a warm-up in the chatting category to the usual one, the rest to another
category; in the days after a release's ``availableAt`` a rising, then fading share of sessions
streams the release (:func:`release_share`); a tournament (``tournaments.py``) streams its
esports category. :func:`at_instant` gives what every channel shows at an instant (its live
session's category, else its last session's, else its usual one): the seeded rows at the
world's instant; :class:`Live` what ``streams.py`` writes as world time passes.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from explorer.emulator import sessions, tournaments
from explorer.emulator.sessions import (
    BLOCK,
    DAY,
    HISTORY_START,
    HOUR,
    SESSION_IDS,
    Block,
    Opening,
    Schedule,
    Session,
    world_schedule,
)
from explorer.emulator.world import FIRST_CHANNEL_ID, TYPE_NAMES, WORLD_NOW, WORLD_START, iso

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

# --- the catalogue (realism.md rows 16 and 17) ----------------------------------------------
#: Named categories after ``world.TYPE_NAMES`` (ids 37 on), then the releases (ids after them).
ADDED = ("Just Talking", "Grand Heist Online", "Arena Legends", "Hero Shooter", "In Real Life")
RELEASES = ("Starfall Frontier", "Hollow Crown")
#: The category warm-ups stream (and the biggest).
CHATTING = "Just Talking"
#: The biggest categories: (name, share of viewer-hours, pull); the top ten hold 0.56.
HEAD: tuple[tuple[str, float, float], ...] = (
    ("Just Talking", 0.160, 4.0),
    ("Grand Heist Online", 0.070, 1.8),
    ("Arena Legends", 0.055, 2.2),
    ("Hero Shooter", 0.055, 0.6),
    ("Battle Royale Island", 0.050, 0.4),
    ("Block Craft", 0.045, 0.3),
    ("Shadow Ops", 0.035, 1.6),
    ("Ranked Arena", 0.035, 1.4),
    ("Open World Saga", 0.030, 0.45),
    ("Card Masters", 0.025, 1.0),
)
#: Categories of the generated tail per channel of the world (at least :data:`MIN_TAIL`).
TAIL_PER_CHANNEL = 0.0012
MIN_TAIL = 4
#: The rest's pulls: log-normal around ``REST_PULL`` (sigma ``PULL_SPREAD``).
REST_PULL = 0.8
PULL_SPREAD = 0.4
#: The biggest channels, which hold most viewer-hours, are given categories in balance with
#: the targets (:func:`_balanced`): those holding ``HEAD_SHARE`` of them, at most
#: ``HEAD_CHANNELS``.
HEAD_SHARE = 0.7
HEAD_CHANNELS = 2000
#: A channel of this average audience picks its category half for viewers, half for hours.
HALF_PULL = 20.0
#: Sessions streaming another category than their channel's usual one: ``VARIETY``, and
#: more for the biggest channels (variety streamers), ``VARIETY_RISE`` times the channel's
#: share of the platform's viewer-hours more, at most ``MOST_VARIETY``: the biggest channel
#: of the default world holds a fifth of them, which one category must not take whole.
VARIETY = 0.15
VARIETY_RISE = 8.0
MOST_VARIETY = 0.8
#: Sessions of an hour or more that switch once; the share of those that warm up chatting.
SWITCH = 0.2
WARM_UP = 0.3
#: A release's share of sessions peaks at ``RELEASE_PEAK`` ``RELEASE_RISE`` days after its
#: ``availableAt`` and fades (``share = peak * x * e^(1 - x)``, ``x`` in rise times), down to
#: ``RELEASE_KEEP``, which it keeps as an ordinary game.
RELEASE_PEAK = 0.2
RELEASE_RISE = 2.0
RELEASE_KEEP = 0.01

_TAIL_WORDS = (
    ("Neon", "Iron", "Lost", "Crystal", "Hollow", "Wild", "Silent", "Broken", "Golden", "Frost"),
    ("Harbor", "Kingdom", "Drift", "Legion", "Orbit", "Garden", "Circuit", "Valley", "Tide"),
    ("", " Tactics", " Online", " II", " Remastered", " Arena", " Tycoon", " Chronicles"),
)
_MASK = (1 << 64) - 1
_GOLDEN = (math.sqrt(5) - 1) / 2


def _uniform(seed: int, keys: IntArray, stream: int) -> FloatArray:
    """A uniform draw in [0, 1) per key for ``seed`` and ``stream`` (a splitmix64 hash: the
    same key always draws the same, whatever else is drawn)."""
    salt = np.uint64((seed * 0x100000001B3 + stream * 0x632BE59BD9B4E019 + 1) & _MASK)
    x = keys.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15) + salt
    x ^= x >> np.uint64(30)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    result: FloatArray = (x >> np.uint64(11)).astype(np.float64) * 2.0**-53
    return result


@dataclass(frozen=True, slots=True)
class Catalogue:
    """The world's categories: the type rows beyond ``world.TYPE_NAMES``, the categories
    channels and sessions pick from (type ids, cumulative weights of the viewers side and of
    the hours side), each channel's viewers-side probability and usual category, and the
    releases (type id, ``availableAt`` epoch seconds)."""

    rows: tuple[dict[str, Any], ...]
    ids: IntArray
    viewers: FloatArray
    hours: FloatArray
    pull: FloatArray
    usual: IntArray
    variety: FloatArray
    releases: tuple[tuple[int, float], ...]
    chatting: int

    def draw(self, pull: FloatArray, branch: FloatArray, pick: FloatArray) -> IntArray:
        """A category per draw: from the viewers side where ``branch < pull``, else from the
        hours side, at ``pick`` along its cumulative weights."""
        viewers = branch < pull
        side = np.empty(len(pick), dtype=np.int64)
        side[viewers] = np.searchsorted(self.viewers, pick[viewers], "right")
        side[~viewers] = np.searchsorted(self.hours, pick[~viewers], "right")
        chosen: IntArray = self.ids[np.minimum(side, len(self.ids) - 1)]
        return chosen


def _targets(seed: int, tail: int) -> tuple[list[str], FloatArray, FloatArray]:
    """Names of the categories to pick from, best watched first, with their target shares of
    viewer-hours and of hours streamed."""
    head = [name for name, _, _ in HEAD]
    rest = [name for name in (*TYPE_NAMES, *ADDED) if name not in head]
    names = head + rest + _tail_names(seed, tail, set(head + rest))
    ranks = np.arange(len(HEAD) + 1, len(names) + 1, dtype=np.float64)
    zipf = 1.0 / ranks
    left = 1.0 - sum(share for _, share, _ in HEAD)
    viewers = np.concatenate([[share for _, share, _ in HEAD], left * zipf / zipf.sum()])
    rng = np.random.default_rng([seed, 11])
    spread = rng.lognormal(math.log(REST_PULL), PULL_SPREAD, len(names) - len(HEAD))
    pull = np.concatenate([[value for _, _, value in HEAD], spread])
    hours = viewers / pull
    return names, viewers, hours / hours.sum()


def _tail_names(seed: int, count: int, taken: set[str]) -> list[str]:
    """``count`` generated category names, none in ``taken``."""
    rng = np.random.default_rng([seed, 12])
    names: list[str] = []
    while len(names) < count:
        parts = [words[int(rng.integers(len(words)))] for words in _TAIL_WORDS]
        name = f"{parts[0]} {parts[1]}{parts[2]}"
        if name in taken:
            name = f"{name} {len(names) + 2}"
        taken.add(name)
        names.append(name)
    return names


def _mixture(
    viewers: FloatArray, hours: FloatArray, audience: FloatArray, streamed: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Each channel's viewers-side probability, and the two sides' weights, solved so that
    the categories' shares of viewer-hours and of hours are ``viewers`` and ``hours``."""
    pull = audience / (audience + HALF_PULL)
    watched = audience * streamed
    big = float((watched * pull).sum() / watched.sum())
    small = float((streamed * pull).sum() / streamed.sum())
    if big - small < 1e-6:  # a world too small or too even to tell the two apart
        return pull, viewers, hours
    side_v = ((1 - small) * viewers - (1 - big) * hours) / (big - small)
    side_h = (big * hours - small * viewers) / (big - small)
    side_v, side_h = np.maximum(side_v, 0.0), np.maximum(side_h, 0.0)
    return pull, side_v / side_v.sum(), side_h / side_h.sum()


@functools.lru_cache(maxsize=4)
def catalogue(seed: int, channels: int) -> Catalogue:
    """The catalogue of the world for ``seed`` with ``channels`` channels."""
    traits = world_schedule(seed, channels).habits
    tail = max(MIN_TAIL, round(channels * TAIL_PER_CHANNEL))
    names, viewers, hours = _targets(seed, tail)
    pull, side_v, side_h = _mixture(viewers, hours, traits.audience, traits.hours)
    first_added = len(TYPE_NAMES) + 1
    ids_of = {name: index for index, name in enumerate(TYPE_NAMES, start=1)}
    ids_of |= {name: index for index, name in enumerate(ADDED, start=first_added)}
    first_release = first_added + len(ADDED)
    first_tail = first_release + len(RELEASES)
    tail_names = names[len(names) - tail :]
    ids_of |= {name: index for index, name in enumerate(tail_names, start=first_tail)}
    ids = np.asarray([ids_of[name] for name in names], dtype=np.int64)
    draws = _uniform(seed, np.arange(2, dtype=np.int64), 20)
    moments = (
        _release_moment(HISTORY_START + (8 + 10 * float(draws[0])) * DAY),
        _release_moment(WORLD_NOW.timestamp() + (2 + 3 * float(draws[1])) * DAY),
    )
    releases = tuple(
        (first_release + k, moment) for k, moment in enumerate(moments[: len(RELEASES)])
    )
    rows = _rows(seed, [*ADDED, *RELEASES, *tail_names], first_added, dict(releases))
    made = Catalogue(
        rows,
        ids,
        np.cumsum(side_v),
        np.cumsum(side_h),
        pull,
        np.zeros(0, dtype=np.int64),
        np.zeros(0),
        releases,
        ids_of[CHATTING],
    )
    positions = np.arange(channels, dtype=np.int64)
    usual = made.draw(pull, _uniform(seed, positions, 1), _uniform(seed, positions, 2))
    watched = traits.audience * traits.hours
    variety = np.clip(VARIETY + VARIETY_RISE * watched / watched.sum(), VARIETY, MOST_VARIETY)
    head = _head(watched)
    tied = watched[head] * (1 - variety[head])
    # The biggest channels' own categories are named ones: one star in a niche of the tail
    # would make it the platform's best watched per channel by far.
    named = viewers[: len(names) - tail]
    usual[head] = ids[_balanced(tied, named / named.sum(), _uniform(seed, head, 1))]
    return dataclasses.replace(made, usual=usual, variety=variety)


def _head(watched: FloatArray) -> IntArray:
    """The channels expected to hold :data:`HEAD_SHARE` of the viewer-hours, biggest first
    (at most :data:`HEAD_CHANNELS`)."""
    most = min(HEAD_CHANNELS, len(watched))
    top = np.argpartition(-watched, most - 1)[:most]
    order = top[np.lexsort((top, -watched[top]))]
    held = np.cumsum(watched[order]) / watched.sum()
    count = min(int(np.searchsorted(held, HEAD_SHARE)) + 1, most)
    head: IntArray = order[:count]
    return head


def _balanced(weights: FloatArray, shares: FloatArray, draws: FloatArray) -> IntArray:
    """A category (index into ``shares``) for each of the biggest channels (``weights``,
    descending), drawn in turn with chances proportional to how far each category's share of
    the weight so far falls short of ``shares``: the viewer-hours of the categories meet their
    targets within about one channel, where independent draws would leave the biggest
    category to the luck of where the few biggest channels fall."""
    assigned = np.zeros(len(shares))
    chosen = np.empty(len(weights), dtype=np.int64)
    total = 0.0
    for position, weight in enumerate(weights.tolist()):
        total += weight
        short = np.maximum(shares * total - assigned, 0.0)
        cumulative = np.cumsum(short)
        pick = int(np.searchsorted(cumulative, draws[position] * cumulative[-1], "right"))
        chosen[position] = min(pick, len(shares) - 1)
        assigned[chosen[position]] += weight
    return chosen


def _release_moment(day: float) -> float:
    """A release's ``availableAt``: 17:00 UTC of the day holding ``day``."""
    return math.floor(day / DAY) * DAY + 17 * HOUR


_CHATTY = frozenset({"Just Talking", "In Real Life"})
_FROM_MS = int(datetime(2000, 1, 1, tzinfo=UTC).timestamp() * 1000)
_TO_MS = int(WORLD_START.timestamp() * 1000)


def _rows(
    seed: int, names: list[str], first: int, releases: dict[int, float]
) -> tuple[dict[str, Any], ...]:
    """The ``types`` rows of ``names`` (ids from ``first``), shaped as ``world.py``'s."""
    rows = []
    draws = _uniform(seed, np.arange(first, first + len(names), dtype=np.int64), 21)
    for offset, name in enumerate(names):
        index = first + offset
        slug = name.lower().replace(" ", "-")
        moment = releases.get(index)
        available = (
            iso(datetime.fromtimestamp(moment, UTC))
            if moment is not None
            else iso(
                datetime.fromtimestamp(
                    (_FROM_MS + draws[offset] * (_TO_MS - _FROM_MS)) // 1000, UTC
                )
            )
        )
        rows.append(
            {
                "id": index,
                "name": name,
                "parent": "Web Show" if name in _CHATTY else "Games",
                "description": f"{name} streams.",
                "source": "player.me" if index % 3 else "giantbomb",
                "coverUrl": f"/api/v1/static/types/{slug}/cover.jpg",
                "backgroundUrl": f"/api/v1/static/types/{slug}/background.jpg",
                "availableAt": available,
            }
        )
    return tuple(rows)


def release_share(days: FloatArray) -> FloatArray:
    """The share of sessions starting ``days`` after a release that stream it."""
    x = np.minimum(np.maximum(days, 0.0) / RELEASE_RISE, 50.0)
    curve = np.maximum(RELEASE_PEAK * x * np.exp(1 - x), RELEASE_KEEP)
    share: FloatArray = np.where(days >= 0, curve, 0.0)
    return share


# --- sessions -------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Segments:
    """Sessions' categories: the type id a session starts in, the one it switches to (the same
    if it does not) and when (its end if it does not)."""

    first: IntArray
    second: IntArray
    switch: FloatArray

    def at(self, moment: float) -> IntArray:
        """Each session's category at ``moment`` (its last one once it has ended)."""
        shown: IntArray = np.where(moment < self.switch, self.first, self.second)
        return shown


def segments(
    seed: int, channels: int, ids: IntArray, channel: IntArray, start: FloatArray, end: FloatArray
) -> Segments:
    """The categories of the sessions with ``ids`` (of channels at positions ``channel``,
    running from ``start`` to ``end``) in the world for ``seed`` (see the module docstring)."""
    made = catalogue(seed, channels)
    first = made.usual[channel]
    variety = _uniform(seed, ids, 3) < made.variety[channel]
    first[variety] = _draw(made, seed, ids[variety], channel[variety], 4)
    switching = (end - start >= HOUR) & (_uniform(seed, ids, 6) < SWITCH)
    warm = switching & (_uniform(seed, ids, 7) < WARM_UP)
    second = first.copy()
    later = switching & ~warm
    second[later] = _draw(made, seed, ids[later], channel[later], 8)
    first[warm] = made.chatting
    fraction = np.where(warm, 0.1, 0.3) + np.where(warm, 0.25, 0.4) * _uniform(seed, ids, 10)
    switch = np.where(first != second, np.floor((start + fraction * (end - start)) / 60) * 60, end)
    for k, (type_id, available) in enumerate(made.releases):
        hit = _uniform(seed, ids, 11 + k) < release_share((start - available) / DAY)
        first, second = np.where(hit, type_id, first), np.where(hit, type_id, second)
        switch = np.where(hit, end, switch)
    held, category = _tournament_keys(seed, channels, start)
    key = channel * 2**32 + start.astype(np.int64)
    found = np.minimum(np.searchsorted(held, key), max(len(held) - 1, 0))
    event = (held[found] == key) if len(held) else np.zeros(len(key), dtype=bool)
    if event.any():
        first = np.where(event, category[found], first)
        second = np.where(event, category[found], second)
        switch = np.where(event, end, switch)
    return Segments(first.astype(np.int64), second.astype(np.int64), switch)


def _draw(made: Catalogue, seed: int, ids: IntArray, channel: IntArray, stream: int) -> IntArray:
    """A category drawn for each session with ``ids`` (of channels ``channel``) as its channel
    picks (:meth:`Catalogue.draw`). Along the catalogue, a channel's successive sessions step
    by the golden ratio from a seeded point (a low-discrepancy sequence), so a big variety
    streamer's few dozen sessions a month cover the categories in proportion rather than
    clumping by chance, which would decide the top categories' shares."""
    step = (ids % SESSION_IDS) * _GOLDEN
    pick = np.mod(_uniform(seed, channel, stream + 1) + step, 1.0)
    return made.draw(made.pull[channel], _uniform(seed, ids, stream), pick)


def _tournament_keys(seed: int, channels: int, start: FloatArray) -> tuple[IntArray, IntArray]:
    """The (channel, start) keys of the tournaments of the blocks ``start`` falls in, sorted,
    with their categories."""
    if not len(start):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    keys, categories = [], []
    first, last = (Schedule.block_of(float(moment)) for moment in (start.min(), start.max()))
    for index in range(max(first, 0), last + 1):
        held = tournaments_in(seed, channels, index)
        keys.append(held.channel * 2**32 + held.start.astype(np.int64))
        categories.append(held.category)
    key = np.concatenate(keys) if keys else np.zeros(0, dtype=np.int64)
    category = np.concatenate(categories) if categories else np.zeros(0, dtype=np.int64)
    order = np.argsort(key)
    return key[order], category[order]


@functools.lru_cache(maxsize=16)
def tournaments_in(seed: int, channels: int, index: int) -> tournaments.Tournaments:
    """Block ``index``'s tournaments, as the schedule places them."""
    traits = world_schedule(seed, channels).habits
    begin = HISTORY_START + index * BLOCK
    return tournaments.scheduled(seed, index, begin, traits.audience, traits.active)


def block_ids(block: Block) -> IntArray:
    """The session id of every session of ``block`` (``sessions.session``'s, vectorised)."""
    size = len(block.channel)
    runs = np.flatnonzero(np.concatenate([[True], block.channel[1:] != block.channel[:-1]]))
    first = np.repeat(runs, np.diff(np.concatenate([runs, [size]])))
    rank = np.arange(size, dtype=np.int64) - first
    ids: IntArray = (FIRST_CHANNEL_ID + block.channel) * SESSION_IDS + block.index * 1000 + rank
    return ids


def of_block(seed: int, channels: int, block: Block) -> Segments:
    """The categories of every session of ``block``."""
    return segments(seed, channels, block_ids(block), block.channel, block.start, block.end)


def of_sessions(seed: int, channels: int, items: Sequence[Session]) -> Segments:
    """The categories of ``items``."""
    return segments(
        seed,
        channels,
        np.asarray([item.id for item in items], dtype=np.int64),
        np.asarray([item.channel for item in items], dtype=np.int64),
        np.asarray([item.start for item in items], dtype=np.float64),
        np.asarray([item.end for item in items], dtype=np.float64),
    )


def at_instant(schedule: Schedule, moment: float) -> IntArray:
    """The category every channel shows at ``moment``: its running session's, else the one
    its last session ended in, else its usual one (from the world's history on)."""
    seed, channels = schedule.seed, len(schedule.habits)
    shown = catalogue(seed, channels).usual.copy()
    for index in range(0, max(Schedule.block_of(moment), 0) + 1):
        block = schedule.block(index)
        began = block.start <= moment
        following = np.concatenate([block.channel[1:] != block.channel[:-1], [True]])
        last = began & (following | ~np.concatenate([began[1:], [False]]))
        at = np.flatnonzero(last)
        found = segments(
            seed, channels, block_ids(block)[at], block.channel[at], block.start[at], block.end[at]
        )
        shown[block.channel[at]] = found.at(moment)
    return shown


def opening(seed: int, channels: int) -> Opening:
    """What the channels' rows say at the world's instant (``sessions.opening``) with each
    channel's category then and the catalogue's types beyond ``world.TYPE_NAMES``."""
    schedule = world_schedule(seed, channels)
    return dataclasses.replace(
        sessions.opening(seed, channels),
        category=at_instant(schedule, WORLD_NOW.timestamp()),
        types=catalogue(seed, channels).rows,
    )


class Live:
    """The categories the live channels show as the world's streams advance (``streams.py``):
    each started session's segments, and the ``typeId`` writes when one changes."""

    def __init__(self, schedule: Schedule, live: Sequence[Session], moment: float) -> None:
        self.seed, self.channels = schedule.seed, len(schedule.habits)
        self._segments: dict[int, tuple[int, int, float]] = {}
        self._shown: dict[int, int] = {}
        self.begin(live)
        for item in live:
            self._shown[item.id] = self._category(item, moment)

    def begin(self, items: Sequence[Session]) -> None:
        """Note the segments of sessions that started."""
        if not items:
            return
        found = of_sessions(self.seed, self.channels, items)
        for item, first, second, switch in zip(
            items, found.first.tolist(), found.second.tolist(), found.switch.tolist(), strict=True
        ):
            self._segments[item.id] = (first, second, switch)

    def _category(self, item: Session, moment: float) -> int:
        first, second, switch = self._segments[item.id]
        return first if moment < switch else second

    def writes(
        self, live: Sequence[Session], ended: Sequence[Session], moment: float
    ) -> list[tuple[int, int]]:
        """``(type id, channel id)`` of every channel whose category changed by ``moment``:
        a live one that started or switched, an ended one left in its last category."""
        changed = []
        for item in live:
            category = self._category(item, moment)
            if self._shown.get(item.id) != category:
                self._shown[item.id] = category
                changed.append((category, FIRST_CHANNEL_ID + item.channel))
        for item in ended:
            category = self._category(item, math.inf)
            if self._shown.pop(item.id, None) != category:
                changed.append((category, FIRST_CHANNEL_ID + item.channel))
            self._segments.pop(item.id, None)
        return changed


@dataclass(frozen=True, slots=True)
class Streamed:
    """One block's streams by day and category: a row per session and category it streamed
    (the UTC day number it started on, the category, its channel's position and its
    viewer-hours in that category), sorted by day, category, then viewer-hours, most first."""

    day: IntArray
    category: IntArray
    channel: IntArray
    watched: FloatArray

    def on(self, day: int) -> slice:
        """The rows of ``day``."""
        low, high = np.searchsorted(self.day, [day, day + 1])
        return slice(int(low), int(high))


@functools.lru_cache(maxsize=4)
def streamed(seed: int, channels: int, index: int) -> Streamed:
    """The :class:`Streamed` of block ``index`` of the world for ``seed`` (what owners'
    game rankings read: the same sessions and categories as the directory)."""
    block = world_schedule(seed, channels).block(index)
    found = of_block(seed, channels, block)
    before = (found.switch - block.start) / HOUR * block.audience
    after = (block.end - found.switch) / HOUR * block.audience
    two = found.first != found.second
    day = np.floor(block.start / DAY).astype(np.int64)
    rows = (
        np.concatenate([day, day[two]]),
        np.concatenate([found.first, found.second[two]]),
        np.concatenate([block.channel, block.channel[two]]),
        np.concatenate([before, after[two]]),
    )
    order = np.lexsort((-rows[3], rows[1], rows[0]))
    return Streamed(*(column[order] for column in rows))
