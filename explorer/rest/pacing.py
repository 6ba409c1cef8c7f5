"""Pacing: hold each request until its bucket and ``global`` allow it, learning from answers.

Before each request the transport asks the bucket's :class:`~explorer.wire.ratelimit.Allowance`
(learnt from ``X-Rate-Limit``, ``X-RateLimit-Remaining`` and ``X-RateLimit-Reset``) and the
locally counted ``global`` bucket whether it may send, and sleeps until the window resets when
not, so a full ranking draws no 429 (a progress bar's status counts the wait down second by
second). A platform that enforces nothing says so
(``X-RateLimit-Enforced: false``); then no bucket, ``global`` included, holds a request back.
Endpoints sharing a bucket share one allowance; which
bucket an endpoint is charged to comes from its row (``rest/endpoints.py``).
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable, Mapping

from explorer.wire.ratelimit import (
    BUCKETS,
    ENFORCED_HEADER,
    LIMIT_HEADER,
    REMAINING_HEADER,
    RESET_HEADER,
    Allowance,
)

#: Reports what a request waits for (None: nothing any more); a progress bar's status line.
Status = Callable[[str | None], None]

#: Waits shorter than this are not worth a word in the progress bar.
_QUIET_WAIT = 0.5
_DEFAULT_INTERVAL = 60.0


def header_number(headers: Mapping[str, str], name: str) -> int | None:
    """The integer value of header ``name``, None when absent or not a number."""
    raw = headers.get(name)
    try:
        return int(raw) if raw is not None else None
    except ValueError:
        return None


class Pacer:
    """Holds each request until its bucket and ``global`` allow it (see the module docstring)."""

    def __init__(self) -> None:
        self._allowances: dict[str, Allowance] = {}
        self._global = Allowance.assumed(BUCKETS["global"])
        self._changed = asyncio.Event()

    def forget(self) -> None:
        """Start over, e.g. after signing in: buckets are counted per identity."""
        self._allowances.clear()
        self._global = Allowance.assumed(BUCKETS["global"])

    def _allowance(self, bucket: str) -> Allowance:
        found = self._allowances.get(bucket)
        if found is None:
            known = BUCKETS.get(bucket)
            interval = known.interval if known else _DEFAULT_INTERVAL
            found = self._allowances[bucket] = Allowance(interval)
        return found

    async def acquire(self, bucket: str, status: Status | None) -> None:
        """Wait until one more request to ``bucket`` may go, and count it."""
        allowance, waited = self._allowance(bucket), False
        while True:
            now = time.time()
            delays = (allowance.delay(now), self._global.delay(now))
            if delays == (0.0, 0.0):
                allowance.take()
                self._global.take()
                if waited and status is not None:
                    status(None)
                return
            timed = [d for d in delays if d]
            timeout = max(timed) if timed else None
            if status is not None and timeout is not None and timeout > _QUIET_WAIT:
                # A countdown: wake when the whole seconds shown drop by one, and say it again.
                shown = math.ceil(timeout)
                status(f"waiting {shown} s for {bucket}")
                timeout -= shown - 1
            waited = True
            changed = self._changed
            try:
                async with asyncio.timeout(timeout):
                    await changed.wait()
            except TimeoutError:
                pass

    def settle(self, bucket: str, status: int, headers: Mapping[str, str], attempt: int) -> None:
        """Learn from the answer (``status`` and ``headers``) to a request :meth:`acquire`
        let through."""
        self._allowance(bucket).settle(
            time.time(),
            status,
            header_number(headers, LIMIT_HEADER),
            header_number(headers, REMAINING_HEADER),
            header_number(headers, RESET_HEADER),
            attempt,
        )
        if headers.get(ENFORCED_HEADER) == "false":
            self._allowance(bucket).unlimited = self._global.unlimited = True
        self._global.release()
        self._notify()

    def release(self, bucket: str) -> None:
        """Forget a request that got no answer."""
        self._allowance(bucket).release()
        self._global.release()
        self._notify()

    def budget(self, now: float) -> list[dict[str, object]]:
        """Each bucket's state as the answers told it (the bucket table's, for one no answer
        has reported yet): ``bucket``, ``limit``, ``remaining`` (None until an answer said),
        ``resets`` (epoch seconds; None when no window is open), ``in_flight``,
        ``reported`` (an answer told it, or the local count of ``global``) and
        ``unlimited`` (the platform enforces none). Reads without changing anything."""
        rows: list[dict[str, object]] = []
        for name in sorted({*BUCKETS, *self._allowances}):
            allowance = self._global if name == "global" else self._allowances.get(name)
            table = BUCKETS.get(name)
            limit = allowance.limit if allowance and allowance.limit is not None else None
            remaining = allowance.remaining if allowance else None
            resets: float | None = allowance.resets_at if allowance else None
            if remaining is not None and resets is not None and now >= resets:
                remaining, resets = limit, None  # the window passed: full again
            rows.append(
                {
                    "bucket": name,
                    "limit": limit if limit is not None else (table.count if table else None),
                    "remaining": remaining,
                    "resets": resets if remaining is not None else None,
                    "in_flight": allowance.in_flight if allowance else 0,
                    "reported": allowance is not None and allowance.remaining is not None,
                    "unlimited": bool(allowance and allowance.unlimited),
                }
            )
        return rows

    def _notify(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()
