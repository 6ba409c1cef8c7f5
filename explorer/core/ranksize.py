"""The rank-size law of audiences: ``viewers ∝ rank^-α`` fitted over the top of a ranking.

Published measurements of live-streaming platforms speak of live audiences in this form (see
``docs/realism.md``, row 3); the tour and the realism benchmark fit it the same way: least
squares of log viewers against log rank over the top share of channels with viewers, the part
of the ranking the law describes (a long tail of channels with a viewer or two flattens out
below it).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

#: The share of channels (with viewers) the fit uses, and the fewest it fits at all.
TOP = 0.10
FEWEST = 5


def rank_size_exponent(viewers: Iterable[float], top: float = TOP) -> tuple[float, int]:
    """(α, channels fitted): minus the least-squares slope of log viewers against log rank
    over the ``top`` share of the positive ``viewers`` (at least :data:`FEWEST`); α is NaN when
    fewer than that many have viewers."""
    ordered = np.sort(np.fromiter(viewers, dtype=float))[::-1]
    ordered = ordered[ordered > 0]
    count = max(FEWEST, int(len(ordered) * top))
    if len(ordered) < count:
        return math.nan, 0
    ranks = np.arange(1, count + 1)
    slope, _ = np.polyfit(np.log(ranks), np.log(ordered[:count]), 1)
    return float(-slope), count
