"""The bulk draws are Python's ``random.Random`` stream, word for word."""

from __future__ import annotations

import random

import numpy as np

from explorer.emulator.draws import Draws, doubles, hex128


def test_doubles_are_what_random_returns() -> None:
    """Each pair of words is the double ``random()`` returns next, from any state."""
    rng = random.Random(42)
    rng.random()
    pairs = Draws(rng).pairs(1000)
    assert doubles(pairs).tolist() == [rng.random() for _ in range(1000)]


def test_hex128_is_getrandbits() -> None:
    """Two pairs read as 128 bits are ``getrandbits(128)``, prefixed as asked."""
    rng = random.Random(7)
    pairs = Draws(rng).pairs(6)
    expected = [f"{n}-{rng.getrandbits(128):032x}" for n in (1, 2, 3)]
    assert hex128(pairs, np.array([0, 2, 4]), [1, 2, 3]) == expected
