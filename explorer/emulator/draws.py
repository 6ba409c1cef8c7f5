"""Python's ``random.Random`` stream, drawn in bulk: the seeded world's draws at numpy speed.

The world (``world.py``) is defined by a ``random.Random`` stream, one draw at a time. That
generator is a Mersenne Twister, and numpy's ``MT19937`` set to the same state yields the same
32-bit words; ``random()`` is two words (53 bits), ``getrandbits(128)`` four. So a block of
draws costs one numpy call, and the world stays byte-identical for the same seed.
"""

from __future__ import annotations

import random
from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

#: ``random()`` is ``(a >> 5) * 2**26 + (b >> 6)``, scaled by ``2**-53`` (CPython's genrand_res53).
_HIGH_SCALE = 67108864.0
_RES53 = 1.0 / 9007199254740992.0

Words = npt.NDArray[np.uint64]
Doubles = npt.NDArray[np.float64]


class Draws:
    """The draws of ``rng`` from its current state on, in blocks of pairs of words (every
    draw the world makes is a whole number of pairs: a double is one, 128 bits two)."""

    def __init__(self, rng: random.Random) -> None:
        state = rng.getstate()[1]
        self._bits = np.random.MT19937()
        self._bits.state = {
            "bit_generator": "MT19937",
            "state": {"key": np.array(state[:624], dtype=np.uint32), "pos": state[624]},
        }

    def pairs(self, count: int) -> Words:
        """The next ``count`` pairs of 32-bit words, shape (count, 2)."""
        words: Words = self._bits.random_raw(count * 2).reshape(count, 2)
        return words


def doubles(pairs: Words) -> Doubles:
    """What ``random()`` returns for each pair of words."""
    values: Doubles = ((pairs[:, 0] >> 5) * _HIGH_SCALE + (pairs[:, 1] >> 6)) * _RES53
    return values


def hex128(pairs: Words, first: npt.NDArray[np.int64], prefixes: Iterable[int]) -> list[str]:
    """``f"{prefix}-{rng.getrandbits(128):032x}"`` for each prefix and the draws starting at
    pair ``first``: its four words, least significant first (so written last)."""
    low, high = pairs[first], pairs[first + 1]
    words = np.stack([high[:, 1], high[:, 0], low[:, 1], low[:, 0]], axis=1).astype(">u4")
    text = words.tobytes().hex()
    return [
        f"{prefix}-{text[at : at + 32]}"
        for prefix, at in zip(prefixes, range(0, len(text), 32), strict=True)
    ]
