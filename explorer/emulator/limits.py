"""Where the platform's rate-limit windows live: one interface, kept in this process or in Redis.

A request's :class:`~explorer.emulator.policy.Tally` counts through :class:`Limits`: it
:meth:`~Limits.admit`\\ s a request (every window it counts in allows one more, and then holds a
place in each), then :meth:`~Limits.settle`\\ s it (charges the windows its answer counts in,
giving back the held places). :class:`LocalLimits` keeps the windows in this process (a
:class:`~explorer.wire.ratelimit.Ledger`); with a Redis broker every REST process counts in
:class:`~explorer.emulator.redislimits.RedisLimits` instead, so that a limit is one limit however
many processes serve it. Both follow :class:`~explorer.wire.ratelimit.Window`'s rules.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

from explorer.wire.ratelimit import Bucket, Ledger

#: One window: (bucket name, identity).
Key = tuple[str, str]


def hold_name() -> str:
    """A name for the places one request holds, unique among every process's (random: a
    forked process draws its own)."""
    return os.urandom(8).hex()


@dataclass(frozen=True, slots=True)
class Standing:
    """A window as the rate-limit headers describe it: its limit, the requests it still
    allows (those in flight taken off), and when it resets (epoch seconds)."""

    limit: int
    remaining: int
    resets_at: float


class Limits(ABC):
    """The windows of every (bucket, identity) of a platform."""

    def __init__(self, buckets: dict[str, Bucket]) -> None:
        self.buckets = buckets

    @abstractmethod
    def admit(self, keys: Sequence[Key], now: float, hold: str) -> tuple[int, Standing] | None:
        """The index of the first of ``keys`` whose window is full at ``now``, with its
        standing; else None, a place held named ``hold`` in every window until
        :meth:`settle` gives it back."""

    @abstractmethod
    def settle(
        self,
        keys: Sequence[Key],
        now: float,
        counted: Sequence[bool],
        hold: str | None,
        report: int | None,
    ) -> Standing | None:
        """Charge the windows of ``keys`` whose ``counted`` is true, giving back the place
        ``hold`` held in each (None: nothing was held); the standing of ``keys[report]``
        afterwards (None when ``report`` is None)."""

    def standing(self, key: Key, now: float) -> Standing:
        """The standing of ``key``'s window at ``now``, changing nothing."""
        found = self.settle((key,), now, (False,), None, 0)
        assert found is not None
        return found

    def close(self) -> None:  # noqa: B027 (only a shared store has something to close)
        """Let go of what the windows are kept in."""


class LocalLimits(Limits):
    """The windows in this process: what one REST process counts alone."""

    def __init__(self, buckets: dict[str, Bucket]) -> None:
        super().__init__(buckets)
        self.ledger = Ledger(buckets=buckets)

    def admit(self, keys: Sequence[Key], now: float, hold: str) -> tuple[int, Standing] | None:
        windows = [self.ledger.window(*key) for key in keys]
        for index, window in enumerate(windows):
            if not window.allows(now):
                return index, self.standing(keys[index], now)
        for window in windows:
            window.hold()
        return None

    def settle(
        self,
        keys: Sequence[Key],
        now: float,
        counted: Sequence[bool],
        hold: str | None,
        report: int | None,
    ) -> Standing | None:
        for key, charge in zip(keys, counted, strict=True):
            window = self.ledger.window(*key)
            if hold is not None:
                window.release(now, charge)
            elif charge:
                window.charge(now)
        if report is None:
            return None
        window = self.ledger.window(*keys[report])
        remaining = window.remaining(now)  # first: it opens the window a request falls in
        return Standing(window.bucket.count, remaining, window.resets_at)
