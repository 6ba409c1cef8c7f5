"""Rate-limit buckets: the one table shared by the platform and the toolkit, plus window math.

The platform enforces these buckets and the toolkit paces itself by them, so both import this
module and neither keeps a copy. Counting uses fixed windows: a window opens at the first
counted request and closes ``interval`` seconds later, which makes ``X-RateLimit-Reset`` an
exact promise a client can sleep until. The platform counts with :class:`Ledger`; the toolkit
estimates each bucket from the response headers with :class:`Allowance`. Pure: no clock is
read here, ``now`` is passed in.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Bucket:
    """A named limit: at most ``count`` counted requests per ``interval`` seconds."""

    name: str
    count: int
    interval: float


#: The spec's Limits table, exactly.
BUCKETS: dict[str, Bucket] = {
    b.name: b
    for b in (
        Bucket("channel-follow", 100, 60),
        Bucket("channel-read", 1000, 300),
        Bucket("channel-search", 250, 300),
        Bucket("channel-write", 250, 300),
        Bucket("chats", 500, 60),
        Bucket("contact", 3, 60),
        Bucket("global", 1000, 60),
        Bucket("ingest", 5, 60),
        Bucket("mail-subscribe", 3, 60),
        Bucket("notification-read", 100, 60),
        Bucket("report", 10, 60),
        Bucket("upload", 5, 600),
        Bucket("user-email", 2, 86400),
        Bucket("user-login", 50, 60),
        Bucket("user-login-failed", 8, 900),
        Bucket("user-read", 500, 60),
        Bucket("user-register", 2, 60),
        Bucket("user-write", 100, 60),
    )
}

#: Response headers that describe the bucket of the endpoint answered (historical spellings).
LIMIT_HEADER = "X-Rate-Limit"
REMAINING_HEADER = "X-RateLimit-Remaining"
RESET_HEADER = "X-RateLimit-Reset"
#: ``false`` when the platform enforces no bucket (``--no-rate-limits``); it then sends this
#: header instead of the three above, which would count down to nothing.
ENFORCED_HEADER = "X-RateLimit-Enforced"
#: On a 429: the bucket whose window is full (the other headers describe that bucket), so a
#: client can say which limit was hit, e.g. the failed sign-in lockout.
BUCKET_HEADER = "X-RateLimit-Bucket"


def counts_status(bucket: str, status: int) -> bool:
    """Whether a response with ``status`` is charged to ``bucket``.

    As on the historical platform: ``global`` counts every response, ``user-login-failed``
    only 401s, every other bucket only successes and redirects.
    """
    if bucket == "global":
        return True
    if bucket == "user-login-failed":
        return status == 401
    return 200 <= status < 400


@dataclass(slots=True)
class Window:
    """One identity's usage of one bucket in the current fixed window.

    A request admitted but not answered yet (its handler awaiting a page, a thread, the
    database) holds a place: ``pending`` counts against the window until it is settled, so
    requests arriving meanwhile cannot all pass the same last free place.
    """

    bucket: Bucket
    used: int = 0
    resets_at: float = 0.0
    pending: int = 0

    def _roll(self, now: float) -> None:
        if now >= self.resets_at:
            self.used = 0
            self.resets_at = now + self.bucket.interval

    def allows(self, now: float) -> bool:
        """True while another counted request fits in the window at ``now``, the requests
        in flight counted as if they will be charged."""
        self._roll(now)
        return self.used + self.pending < self.bucket.count

    def charge(self, now: float) -> None:
        """Count one request at ``now``."""
        self._roll(now)
        self.used += 1

    def hold(self) -> None:
        """Keep a place for an admitted request until :meth:`release`."""
        self.pending += 1

    def release(self, now: float, counted: bool) -> None:
        """Give back a held place, charging it at ``now`` when its answer counts."""
        self.pending -= 1
        if counted:
            self.charge(now)

    def refund(self, resets_at: float) -> None:
        """Give back a charge made in the window that resets at ``resets_at``, if this is
        still that window (a charge made ahead for an answer that did not count)."""
        if self.resets_at == resets_at and self.used > 0:
            self.used -= 1

    def remaining(self, now: float) -> int:
        """Requests still allowed in the window at ``now`` (those in flight taken off)."""
        self._roll(now)
        return max(self.bucket.count - self.used - self.pending, 0)


@dataclass(slots=True)
class Ledger:
    """All windows, keyed by (bucket name, identity); the platform's counting state."""

    buckets: dict[str, Bucket] = field(default_factory=lambda: dict(BUCKETS))
    windows: dict[tuple[str, str], Window] = field(default_factory=dict)

    def window(self, bucket: str, identity: str) -> Window:
        """The window for ``identity`` in ``bucket``, created on first use."""
        key = (bucket, identity)
        found = self.windows.get(key)
        if found is None:
            found = self.windows[key] = Window(self.buckets[bucket])
        return found


#: Seconds added after a promised reset before sending again, for clock granularity.
RESET_MARGIN = 0.05
#: Pause after a 429 that says nothing about its reset, doubled per attempt by the caller.
UNKNOWN_RESET_PAUSE = 1.0


@dataclass(slots=True)
class Allowance:
    """A client's running estimate of one bucket, learnt from the rate-limit headers.

    The client calls :meth:`delay` before sending; 0 means "send now" and is followed by
    :meth:`take`. Every answer goes to :meth:`settle` (or :meth:`release` when none came).
    Until the first answer the estimate is unknown and only one request is let through: a probe
    whose headers tell the bucket's state. An answer without rate-limit headers marks the
    bucket unlimited. With requests in flight the estimate stays conservative: what the server
    last reported minus everything still in flight, which that report may not have counted.
    When a window passes without news the bucket is assumed full again, and the next report
    corrects the guess (the server's window opens at its first counted request, which a
    client cannot see).

    Built with :meth:`assumed` for a bucket that never reports (``global``): it is counted
    locally from the bucket table.
    """

    interval: float
    limit: int | None = None
    remaining: int | None = None
    resets_at: float = 0.0
    in_flight: int = 0
    unlimited: bool = False
    guessed: bool = False

    @classmethod
    def assumed(cls, bucket: Bucket) -> Allowance:
        """An allowance counted locally from the table, starting full."""
        return cls(interval=bucket.interval, limit=bucket.count, remaining=bucket.count)

    def delay(self, now: float) -> float | None:
        """Seconds to wait before the next request: 0 to send now, None to wait for an answer."""
        if self.unlimited:
            return 0.0
        if self.remaining is not None and now >= self.resets_at:
            self.remaining = self.limit
            self.resets_at = now + self.interval
            self.guessed = True
        if self.remaining is None:
            return 0.0 if self.in_flight == 0 else None
        if self.remaining > 0:
            return 0.0
        return self.resets_at - now + RESET_MARGIN

    def take(self) -> None:
        """Count one request sent."""
        self.in_flight += 1
        if self.remaining is not None:
            self.remaining -= 1

    def release(self) -> None:
        """Forget one request that got no answer."""
        self.in_flight = max(self.in_flight - 1, 0)

    def settle(
        self,
        now: float,
        status: int,
        limit: int | None,
        remaining: int | None,
        reset_ms: float | None,
        attempt: int = 1,
    ) -> None:
        """Learn from the answer to one request: its status and rate-limit headers.

        A 429 empties the bucket until its reset (or, without one, for a pause that doubles
        with each ``attempt``); its headers may describe another bucket (``global``), so its
        limit is not learnt.
        """
        self.release()
        if status == 429:
            pause = UNKNOWN_RESET_PAUSE * 2 ** (attempt - 1)
            self.remaining, self.unlimited, self.guessed = 0, False, False
            self.resets_at = reset_ms / 1000.0 if reset_ms is not None else now + pause
            return
        if remaining is None or reset_ms is None:
            self.unlimited = self.remaining is None
            return
        reset = reset_ms / 1000.0
        if reset <= now:
            return
        estimate = remaining - self.in_flight
        self.unlimited = False
        if limit is not None:
            self.limit = limit
        if self.remaining is None or (reset > self.resets_at + 1.0 and not self.guessed):
            self.remaining, self.resets_at = estimate, reset
        elif self.guessed or reset >= self.resets_at - 1.0:
            self.remaining = min(self.remaining, estimate)
            self.resets_at = reset
            self.guessed = False
