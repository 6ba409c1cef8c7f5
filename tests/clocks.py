"""A clock tests move by hand, for ``start(clock=...)``: TTLs expire without real waiting."""

from __future__ import annotations

import time


class ManualClock:
    """Epoch seconds that stand still until the test calls :meth:`advance`.

    It starts at the current whole second, so that adding short durations (0.5, 1.5) stays
    exact. The platform only reads it (from its own thread); the test thread alone moves it.
    """

    def __init__(self) -> None:
        self.now = float(int(time.time()))

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        """Move the clock ``seconds`` forward."""
        self.now += seconds
