"""The world clock: the simulated instant the platform's world is at, running ``speed`` times
faster than the wall clock.

Two clocks run a platform, and each reading goes to exactly one of them:

- the **wall clock** (``Services.clock``, epoch seconds, injected by tests): everything that
  guards access or bounds use, so that ``--speed`` never shortens a credential or a limit:
  session, token, code and JWT lifetimes, CSRF, chat authkeys, rate-limit windows, chat
  allowances, timeouts and slow mode, poll and giveaway durations, presence;
- the **world clock** (``Services.world``, this module): what the world says happened when:
  ``createdAt``/``updatedAt`` of every record written through the API, follows, chat message
  times in history, recordings, stream sessions, analytics' "now", the simulator's sessions.

A world clock starts at the world's instant (``world.WORLD_NOW``) the first time a store is
seeded; the simulator writes its position to ``meta`` (``world_time``), so a restarted
persistent world resumes where it stopped. The process that starts a platform owns its clock and
writes where it started (``world_anchor``); the processes that join it (chat nodes, more REST
processes) read the same world time from that anchor (:func:`join`). It reads its wall clock,
so a test that injects a manual wall clock moves the world by hand too (``speed`` world seconds
per wall second).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime

from explorer.emulator.db.engine import Store
from explorer.emulator.world import WORLD_NOW, iso

#: Header names of every REST response: world time, speed, and the chat kept when thinned.
CLOCK_HEADER = "X-Explorer-Clock"
SPEED_HEADER = "X-Explorer-Speed"
KEPT_HEADER = "X-Explorer-Chat-Kept"
#: Fastest and slowest speeds accepted (``explorer serve --speed``).
MIN_SPEED = 1.0
MAX_SPEED = 100_000.0
#: The ``meta`` key of the world clock's saved position.
WORLD_TIME_KEY = "world_time"
#: The ``meta`` key of the running world clock's anchor: its world and wall seconds at its
#: start, written by the process that owns the clock, read by processes that join it.
ANCHOR_KEY = "world_anchor"


def check_speed(speed: float) -> float:
    """``speed`` if it is within bounds, else ValueError naming them."""
    if not MIN_SPEED <= speed <= MAX_SPEED:
        raise ValueError(f"speed must be between {MIN_SPEED:g} and {MAX_SPEED:g}, not {speed:g}")
    return speed


class WorldClock:
    """World epoch seconds: ``start`` when made, then ``speed`` world seconds per wall second.

    ``kept`` is the fraction of the natural chat the simulator performs (1.0 unless it thins
    chat at a high speed); it is set by the simulator and reported in the response headers.
    """

    def __init__(
        self, start: float, speed: float = 1.0, wall: Callable[[], float] = time.time
    ) -> None:
        self.speed = check_speed(speed)
        self.kept = 1.0
        self._wall = wall
        self._start = start
        self._wall_start = wall()
        #: The last headers made, by (world millisecond, kept): every response carries them,
        #: and at thousands of requests a second most share their millisecond.
        self._last: tuple[tuple[int, float], dict[str, str]] = ((-1, 1.0), {})

    def __call__(self) -> float:
        """The world's instant now, in epoch seconds."""
        return self._start + (self._wall() - self._wall_start) * self.speed

    def iso(self) -> str:
        """The world's instant now as the platform writes timestamps (ISO-8601 UTC, ms)."""
        return iso(datetime.fromtimestamp(self(), UTC))

    def headers(self) -> dict[str, str]:
        """The clock headers every REST response carries (a new dict the caller may extend)."""
        now = self()
        key = (int(now * 1000), self.kept)
        if key != self._last[0]:
            headers = {
                CLOCK_HEADER: iso(datetime.fromtimestamp(now, UTC)),
                SPEED_HEADER: f"{self.speed:g}",
            }
            if self.kept < 1.0:
                headers[KEPT_HEADER] = f"{self.kept:.4g}"
            self._last = key, headers
        return dict(self._last[1])

    def describe(self) -> dict[str, object]:
        """``GET /_emulator/clock``: the world's instant, the speed and the chat kept."""
        return {"now": self.iso(), "speed": self.speed, "chatKept": self.kept}

    def save(self, store: Store) -> None:
        """Write the world's position, for :func:`resume` after a restart."""
        store.set_meta({WORLD_TIME_KEY: repr(self())})

    def anchor(self, store: Store) -> None:
        """Write where this clock started, world and wall, for the processes that
        :func:`join` it."""
        store.set_meta({ANCHOR_KEY: f"{self._start!r} {self._wall_start!r}"})


def resume(store: Store, speed: float, wall: Callable[[], float] = time.time) -> WorldClock:
    """The world clock of ``store``: where it last stopped, or at the world's instant."""
    saved = store.meta(WORLD_TIME_KEY)
    start = float(saved) if saved is not None else WORLD_NOW.timestamp()
    return WorldClock(start, speed, wall)


def join(store: Store, speed: float, wall: Callable[[], float] = time.time) -> WorldClock:
    """The world clock of a process joining a running platform (chat-node and more REST
    processes): the clock of the process that owns it, from the anchor that one wrote at its
    start (at the same ``speed``, on wall clocks that agree); :func:`resume`'s without one.

    A joining process that resumed instead would start at the last saved position and trail
    the owner's world time by as much as its saves are apart, dating what it writes earlier."""
    anchor = store.meta(ANCHOR_KEY)
    if anchor is None:
        return resume(store, speed, wall)
    world, at = (float(part) for part in anchor.split())
    return WorldClock(world + (wall() - at) * speed, speed, wall)
