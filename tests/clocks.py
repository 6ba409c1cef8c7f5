"""Clocks tests move by hand, for ``start(clock=...)``: TTLs expire without real waiting."""

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


class ShiftedClock:
    """Wall time plus an offset the test moves forward: for tests whose platform must keep
    real time flowing (reconnect backoff, keepalives) while a TTL is made to pass at once."""

    def __init__(self) -> None:
        self.offset = 0.0

    def __call__(self) -> float:
        return time.time() + self.offset

    def advance(self, seconds: float) -> None:
        """Move the clock ``seconds`` forward."""
        self.offset += seconds
