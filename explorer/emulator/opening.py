"""What the world's channel rows say at its instant (``world.WORLD_NOW``): the opening that
``sessions.opening`` computes from the streaming habits and ``world.generate`` seeds the rows
from. Apart from both so that neither imports the other (pure data)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt


@dataclass(frozen=True, slots=True)
class Opening:
    """What the channels' rows say at the world's instant, from their streaming habits
    (``sessions.py``): average audience while live, hours a month, whether it streams at all
    (arrays by position in the world), and who is live and how many watch them."""

    audience: npt.NDArray[np.float64]
    hours: npt.NDArray[np.float64]
    active: npt.NDArray[np.bool_]
    live: dict[int, int]
    #: Each channel's partnership and language (an index into ``world.LANGUAGES``).
    partnered: npt.NDArray[np.bool_]
    language: npt.NDArray[np.intp]
    #: Each channel's category (type id) then, and the types beyond ``world.TYPE_NAMES``:
    #: filled in by ``categories.opening``, which the world is seeded from.
    category: npt.NDArray[np.int64] | None = None
    types: tuple[dict[str, Any], ...] = ()
