"""Raids and hosts: which sessions end by sending their audience to another live channel (pure).

Real streamers often end a stream by hosting or raiding another channel that is live at that
moment, usually one of their category and smaller than their own: the channel shows the other's
stream (``hosteeId``) and most of its viewers land in the other's audience, where most leave
again within minutes. No published source gives how often this happens or how big raids are,
so the figures here are a modelling choice (see ``docs/realism.md``):

- a session ends in a raid with odds that grow with its audience (:func:`raid_odds`: about one
  session in six of a channel of two viewers, one in three at a hundred, half at a thousand);
- its target is drawn among the sessions live at that moment with at least
  :data:`MIN_LEFT` to go, preferring a smaller channel and, when the world knows channels'
  categories, the raider's own (:data:`SMALLER_WEIGHT`, :data:`SAME_CATEGORY_WEIGHT`); a
  session with no such channel in reach ends without a raid;
- the raid carries :data:`CARRY` of the raider's viewers in its last minute (``audience_at``,
  whose curve has wound down to about a third of the session's mean by then); they leave the
  target along two exponentials (:func:`still_there`): most within minutes (:data:`FAST`), a
  few stay for an hour or so (:data:`STAY`, :data:`SLOW`).

Everything is decided per 30-day block of the schedule, vectorised over its sessions, and
keyed by the raider's session: the directory (``streams.py``), the owner's analytics and the
follows all read the same raids from :func:`of`.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from explorer.emulator import categories
from explorer.emulator.sessions import (
    BLOCK,
    HISTORY_START,
    SESSION_IDS,
    Block,
    FloatArray,
    IntArray,
    Schedule,
    Session,
    audience_at,
    session,
)
from explorer.emulator.world import FIRST_CHANNEL_ID

# --- the model (modelling choices: no source gives the frequency or size of raids) ---------
#: Odds that a session ends in a raid: ``BASE_ODDS + PER_DECADE * log10(1 + audience)``, at
#: most ``MOST_ODDS`` (bigger channels raid more often).
BASE_ODDS = 0.1
PER_DECADE = 0.13
MOST_ODDS = 0.6
#: A target must stay live at least this long after the raid (seconds).
MIN_LEFT = 30 * 60.0
#: Candidates drawn per raider among the sessions started in the last ``REACH`` seconds.
CANDIDATES = 16
REACH = 8 * 3600.0
#: Preference weights of a candidate: smaller than the raider, of the raider's category.
SMALLER_WEIGHT = 4.0
SAME_CATEGORY_WEIGHT = 10.0
#: Share of the raider's last-minute viewers the raid carries to the target.
CARRY = 0.8
#: The raiders' stay: a share ``1 - STAY`` leaves with time constant ``FAST``, the rest with
#: ``SLOW`` (seconds); after ``HORIZON`` none is left.
STAY = 0.15
FAST = 4 * 60.0
SLOW = 60 * 60.0
HORIZON = 3 * 3600.0
#: Rows of raiders handled at once (bounds memory in a million-channel world).
CHUNK = 65_536


def raid_odds(audience: FloatArray) -> FloatArray:
    """The odds that sessions of mean ``audience`` end in a raid."""
    odds: FloatArray = np.minimum(BASE_ODDS + PER_DECADE * np.log10(1 + audience), MOST_ODDS)
    return odds


def still_there(carried: int, elapsed: float) -> int:
    """How many of ``carried`` raiders are still in the target's audience ``elapsed`` seconds
    after the raid (none before it, and none after :data:`HORIZON`)."""
    if not 0 <= elapsed < HORIZON:
        return 0
    share = (1 - STAY) * math.exp(-elapsed / FAST) + STAY * math.exp(-elapsed / SLOW)
    return round(carried * share)


@dataclass(frozen=True, slots=True)
class Raid:
    """One raid: ``raider``'s session ended at ``at`` sending its viewers to ``target``."""

    raider: Session
    target: Session
    at: float

    @property
    def raider_channel(self) -> int:
        """The raiding channel's id."""
        return FIRST_CHANNEL_ID + self.raider.channel

    @property
    def target_channel(self) -> int:
        """The raided (hosted) channel's id."""
        return FIRST_CHANNEL_ID + self.target.channel

    def carried(self, seed: int) -> int:
        """Viewers the raid brings: :data:`CARRY` of the raider's audience in its last minute."""
        return round(CARRY * audience_at(self.raider, self.at - 60, seed))

    def arrivals(self, seed: int, moment: float) -> int:
        """The raiders still watching the target at ``moment`` (0 once the target ended)."""
        if moment >= self.target.end:
            return 0
        return still_there(self.carried(seed), moment - self.at)


@dataclass(frozen=True, slots=True)
class BlockRaids:
    """The raids of the sessions of one block: positions of the raiders in the block (sorted),
    and each raid's target as (block index, position); ``by_target`` orders the raids by
    target session id (``target_id``) for the lookup of a target's raids."""

    index: int
    raider: IntArray
    target_block: IntArray
    target_position: IntArray
    target_id: IntArray
    at: FloatArray
    by_target: IntArray


def _ids(block: Block) -> IntArray:
    """The session id of every row of ``block`` (see ``sessions.Block``)."""
    first = np.searchsorted(block.channel, block.channel, "left")
    rank = np.arange(len(block.channel)) - first
    ids: IntArray = (FIRST_CHANNEL_ID + block.channel) * SESSION_IDS + block.index * 1000 + rank
    return ids


class Raiding:
    """The raids of a schedule's sessions, block by block, computed on first use and cached."""

    def __init__(self, schedule: Schedule, category: IntArray | None = None) -> None:
        """``category``: each channel's category by position (None: categories are ignored)."""
        self.schedule = schedule
        self.category = category
        self._blocks: dict[int, BlockRaids] = {}

    def block(self, index: int) -> BlockRaids:
        """The raids of the sessions of block ``index`` (their targets in it or the one before)."""
        cached = self._blocks.get(index)
        if cached is None:
            cached = self._blocks[index] = self._plan(index)
        return cached

    def _plan(self, index: int) -> BlockRaids:
        schedule, seed = self.schedule, self.schedule.seed
        own = schedule.block(index)
        pool = [schedule.block(index - 1), own] if index > 0 else [own]
        # Of the block before, only the sessions still live once this one begins can be hit.
        begin = float(own.start.min()) if len(own.start) else 0.0
        rows = [
            np.flatnonzero(b.end > begin) if b is not own else np.arange(len(b.start)) for b in pool
        ]
        block_of = np.concatenate(
            [np.full(len(r), b.index) for b, r in zip(pool, rows, strict=True)]
        )
        position = np.concatenate(rows)
        start = np.concatenate([b.start[r] for b, r in zip(pool, rows, strict=True)])
        order = np.argsort(start, kind="stable")
        block_of, position, start = block_of[order], position[order], start[order]

        def pooled(values: list[npt.NDArray[Any]]) -> npt.NDArray[Any]:
            return np.concatenate([v[r] for v, r in zip(values, rows, strict=True)])[order]

        end = pooled([b.end for b in pool])
        channel = pooled([b.channel for b in pool])
        size = pooled([b.audience for b in pool])
        ids = pooled([_ids(b) for b in pool])

        rng = np.random.default_rng([seed, 7, index])
        raider = np.flatnonzero(rng.random(len(own.start)) < raid_odds(own.audience))
        # In order of the raids' moments (the pool's lookups are then in order: fast).
        raider = raider[np.argsort(own.end[raider], kind="stable")]
        chosen = np.full(len(raider), -1, dtype=np.int64)
        for low in range(0, len(raider), CHUNK):
            part = raider[low : low + CHUNK]
            chosen[low : low + CHUNK] = self._targets(rng, own, part, (start, end, channel, size))
        kept = chosen >= 0
        back = np.argsort(raider[kept], kind="stable")
        raider, chosen = raider[kept][back], chosen[kept][back]
        target_id = ids[chosen]
        return BlockRaids(
            index,
            raider,
            block_of[chosen],
            position[chosen],
            target_id,
            own.end[raider],
            np.argsort(target_id, kind="stable"),
        )

    def _targets(
        self,
        rng: np.random.Generator,
        own: Block,
        rows: IntArray,
        pool: tuple[FloatArray, FloatArray, IntArray, FloatArray],
    ) -> IntArray:
        """For raiders at ``rows`` of ``own``, the index into the start-sorted ``pool`` of
        each one's target (-1: none in reach)."""
        start, end, channel, size = pool
        at = own.end[rows]
        low = np.searchsorted(start, at - REACH, "left")
        high = np.searchsorted(start, at, "left")
        span = high - low
        picks = low[:, None] + (rng.random((len(rows), CANDIDATES)) * span[:, None]).astype(
            np.int64
        )
        picks = np.minimum(picks, len(start) - 1)
        live = (span[:, None] > 0) & (end[picks] >= at[:, None] + MIN_LEFT)
        live &= channel[picks] != own.channel[rows][:, None]
        weight = 1 + (SMALLER_WEIGHT - 1) * (size[picks] < own.audience[rows][:, None])
        if self.category is not None:
            same = self.category[channel[picks]] == self.category[own.channel[rows]][:, None]
            weight = weight * np.where(same, SAME_CATEGORY_WEIGHT, 1.0)
        # Weighted choice among the live candidates: the largest of u^(1/w) (Efraimidis-Spirakis).
        key = np.where(live, rng.random(picks.shape) ** (1 / weight), -1.0)
        best = np.argmax(key, axis=1)
        found = live[np.arange(len(rows)), best]
        chosen: IntArray = np.where(found, picks[np.arange(len(rows)), best], -1)
        return chosen

    def _begin(self, moment: float) -> float:
        """The start of the block holding ``moment``."""
        return HISTORY_START + self.schedule.block_of(moment) * BLOCK

    def _session(self, index: int, position: int) -> Session:
        return session(self.schedule.block(index), position)

    def _raid(self, raids: BlockRaids, row: int) -> Raid:
        raider = self._session(raids.index, int(raids.raider[row]))
        target = self._session(int(raids.target_block[row]), int(raids.target_position[row]))
        return Raid(raider, target, float(raids.at[row]))

    def of_session(self, item: Session) -> Raid | None:
        """The raid ``item`` ends with, or None."""
        index = (item.id % SESSION_IDS) // 1000
        block = self.schedule.block(index)
        position = block.of(item.channel).start + (item.id % 1000)
        raids = self.block(index)
        row = int(np.searchsorted(raids.raider, position))
        if row < len(raids.raider) and raids.raider[row] == position:
            return self._raid(raids, row)
        return None

    def into(self, item: Session, until: float) -> list[Raid]:
        """The raids into ``item`` up to ``until``, oldest first."""
        index = (item.id % SESSION_IDS) // 1000
        found = []
        for raider_block in (index, index + 1):
            if raider_block > self.schedule.block_of(until):
                break
            raids = self.block(raider_block)
            ordered = raids.target_id[raids.by_target]
            low = int(np.searchsorted(ordered, item.id, "left"))
            high = int(np.searchsorted(ordered, item.id, "right"))
            for row in raids.by_target[low:high]:
                if raids.at[row] <= until:
                    found.append(self._raid(raids, int(row)))
        return sorted(found, key=lambda raid: raid.at)

    def between(self, since: float, until: float) -> list[Raid]:
        """Every raid in ``(since, until]``, oldest first."""
        found = []
        first = max(self.schedule.block_of(since) - 1, 0)
        # A block's raids come after its start: one starting at ``until`` has none yet.
        last = self.schedule.block_of(until) - (until == self._begin(until))
        for index in range(first, last + 1):
            raids = self.block(index)
            rows = np.flatnonzero((raids.at > since) & (raids.at <= until))
            found += [self._raid(raids, int(row)) for row in rows]
        return sorted(found, key=lambda raid: (raid.at, raid.raider.id))


_RAIDINGS: weakref.WeakKeyDictionary[Schedule, Raiding] = weakref.WeakKeyDictionary()


def of(schedule: Schedule) -> Raiding:
    """The raids of ``schedule`` (one per schedule: every part of a platform reads the same),
    preferring the raider's usual category (``categories.py``)."""
    found = _RAIDINGS.get(schedule)
    if found is None:
        usual = categories.catalogue(schedule.seed, len(schedule.habits)).usual
        found = _RAIDINGS[schedule] = Raiding(schedule, usual)
    return found
