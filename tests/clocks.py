"""A clock tests move by hand, for ``start(clock=...)``: TTLs expire without real waiting."""

from __future__ import annotations

import time


class ManualClock:
    """Epoch seconds that stand still until the test calls :meth:`advance`.

    The platform only reads it (from its own thread); the test thread alone moves it.
    """

    def __init__(self, now: float | None = None) -> None:
        self.now = time.time() if now is None else now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        """Move the clock ``seconds`` forward."""
        self.now += seconds
