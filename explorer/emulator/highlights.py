"""Highlights: the moments of a session when something happens on stream (pure, seeded).

Now and then a minute of a stream is a highlight: chat multiplies about five-fold and fades
over a few minutes (``chatter.ChannelVoice.intensity``; a raid arriving bursts alike, see
``Streams.highlight``), and viewers follow the channel right after it (``streams.followers``).
Both read the same moments, drawn per minute of the session from the seed and the session's
id, so a user who sees chat spike sees the follows spike with it.
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Iterable

from explorer.emulator.sessions import Session

#: Chance a minute starts a highlight, its peak excess over the base chat rate, and the share
#: of the excess left a minute later.
HIGHLIGHT_ODDS = 1 / 45
HIGHLIGHT_PEAK = (3.0, 5.0)
HIGHLIGHT_DECAY = 0.5
#: The highlight excess's long-run mean: dividing by ``1 + MEAN_EXCESS`` keeps the mean
#: intensity 1, so the chat rate law stays the long-run rate.
MEAN_EXCESS = HIGHLIGHT_ODDS * sum(HIGHLIGHT_PEAK) / 2 / (1 - HIGHLIGHT_DECAY)


def drawn(rng: random.Random) -> float:
    """The peak of a highlight starting this minute, or 0.0 (most minutes)."""
    return _peak(rng) if rng.random() < HIGHLIGHT_ODDS else 0.0


def _peak(rng: random.Random) -> float:
    return rng.uniform(*HIGHLIGHT_PEAK)


@functools.lru_cache(maxsize=65_536)
def of_session(seed: int, item: Session) -> tuple[tuple[int, float], ...]:
    """``(world minute, peak)`` of each highlight of ``item``, oldest first: each minute
    starts one with odds :data:`HIGHLIGHT_ODDS`, drawn as geometric gaps (a few draws per
    session, not one per minute)."""
    rng = random.Random(f"{seed}:{item.id}:highlights")
    minute, last = int(item.start // 60) - 1, int(item.end // 60)
    found: list[tuple[int, float]] = []
    while True:
        minute += 1 + int(math.log(1 - rng.random()) / math.log(1 - HIGHLIGHT_ODDS))
        if minute >= last:
            return tuple(found)
        found.append((minute, _peak(rng)))


def excess(seed: int, item: Session, since: int, minute: int) -> float:
    """The excess of ``item``'s highlights of minutes ``(since, minute]`` left at ``minute``:
    what a chat that last looked at minute ``since`` adds to its intensity at ``minute``."""
    return fading(of_session(seed, item), since, minute)


def fading(moments: Iterable[tuple[int, float]], since: int, minute: int) -> float:
    """The excess ``(world minute, peak)`` bursts of minutes ``(since, minute]`` leave at
    ``minute``, each fading by :data:`HIGHLIGHT_DECAY` a minute."""
    return sum(
        peak * HIGHLIGHT_DECAY ** (minute - at) for at, peak in moments if since < at <= minute
    )
