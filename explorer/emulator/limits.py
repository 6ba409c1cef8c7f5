"""Where the platform's rate-limit windows live: one interface, kept in this process or in Redis.

A request's :class:`~explorer.emulator.policy.Tally` counts through :class:`Limits`: it
:meth:`~Limits.admit`\\ s a request (every window it counts in allows one more), charging ahead
the windows a success would count in and holding a place in the others; when the answer counts
otherwise (an error, a failed sign-in), :meth:`~Limits.settle` corrects the windows: it gives a
charge back, gives a held place back, charges it. A successful answer is so counted by one call,
which is what a shared store (Redis) charges for. :class:`LocalLimits` keeps the windows in this
process (a :class:`~explorer.wire.ratelimit.Ledger`); with a Redis broker every REST process
counts in :class:`~explorer.emulator.redislimits.RedisLimits` instead, so that a limit is one
limit however many processes serve it. Both follow :class:`~explorer.wire.ratelimit.Window`'s
rules.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

from explorer.wire.ratelimit import Bucket, Ledger

#: One window: (bucket name, identity).
Key = tuple[str, str]


@dataclass(frozen=True, slots=True)
class Standing:
    """A window as the rate-limit headers describe it: its limit, the requests it still
    allows (those in flight taken off), and when it resets (epoch seconds)."""

    limit: int
    remaining: int
    resets_at: float


@dataclass(frozen=True, slots=True)
class Refusal:
    """A request refused: the index of the first of its windows that was full, and that
    window's standing."""

    index: int
    standing: Standing


@dataclass(frozen=True, slots=True)
class Admission:
    """What admitting a request did to each of its windows: charged ahead (``ahead``) or a place
    held under ``hold``; each window's standing just after, and so the window it fell in
    (a charge is given back only in that window)."""

    ahead: tuple[bool, ...]
    standings: tuple[Standing, ...]
    #: The name of the places held in a shared store (none in process: its places are counts).
    hold: str = ""
    #: Counted in this process's own windows (a shared store did not answer).
    alone: bool = False

    def settled_by(self, counted: Sequence[bool]) -> bool:
        """Whether an answer counting in ``counted`` leaves nothing to correct: every window
        charged ahead counts, and no place is held."""
        return all(self.ahead) and all(counted)


class Limits(ABC):
    """The windows of every (bucket, identity) of a platform."""

    def __init__(self, buckets: dict[str, Bucket]) -> None:
        self.buckets = buckets

    @abstractmethod
    def admit(self, keys: Sequence[Key], now: float, ahead: Sequence[bool]) -> Admission | Refusal:
        """A :class:`Refusal` naming the first of ``keys`` whose window is full at ``now``;
        else every window charged (``ahead`` true) or a place held in it until :meth:`settle`."""

    @abstractmethod
    def settle(
        self,
        keys: Sequence[Key],
        now: float,
        counted: Sequence[bool],
        admission: Admission | None,
        report: int | None,
    ) -> Standing | None:
        """Count an answer in the windows of ``keys`` whose ``counted`` is true: a window
        ``admission`` charged ahead but the answer does not count in gets its charge back (if
        it is still the same window), a held place is given back and charged if it counts;
        without an admission the counted windows are charged. The standing of ``keys[report]``
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

    def admit(self, keys: Sequence[Key], now: float, ahead: Sequence[bool]) -> Admission | Refusal:
        windows = [self.ledger.window(*key) for key in keys]
        for index, window in enumerate(windows):
            if not window.allows(now):
                return Refusal(index, self._standing(keys[index], now))
        for window, charge in zip(windows, ahead, strict=True):
            if charge:
                window.charge(now)
            else:
                window.hold()
        standings = tuple(self._standing(key, now) for key in keys)
        return Admission(tuple(ahead), standings)

    def settle(
        self,
        keys: Sequence[Key],
        now: float,
        counted: Sequence[bool],
        admission: Admission | None,
        report: int | None,
    ) -> Standing | None:
        for index, (key, charge) in enumerate(zip(keys, counted, strict=True)):
            window = self.ledger.window(*key)
            if admission is None:
                if charge:
                    window.charge(now)
            elif not admission.ahead[index]:
                window.release(now, charge)
            elif not charge:
                window.refund(admission.standings[index].resets_at)
        return None if report is None else self._standing(keys[report], now)

    def _standing(self, key: Key, now: float) -> Standing:
        window = self.ledger.window(*key)
        remaining = window.remaining(now)  # first: it opens the window a request falls in
        return Standing(window.bucket.count, remaining, window.resets_at)
