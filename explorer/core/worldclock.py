"""The platform's world clock as the toolkit reads it: one clock for every time it records.

The platform dates what happens in its world (records, follows, sessions, chat history) on its
world clock, which runs ``speed`` times faster than real time (``explorer serve --speed N``)
from a simulated instant, and sends it on every REST response (``X-Explorer-Clock``,
``X-Explorer-Speed``). Chat and live events carry no time on the wire, so the toolkit dates
them itself when they arrive; to keep one clock per capture (a capture's chat joined to its
snapshots by time), it dates them on the same world clock as the snapshots: the world time of
the latest answer, run forward at the answer's speed on this machine's clock.
:attr:`Transport.clock <explorer.rest.transport.Transport.clock>` keeps one per client; chats,
watches, live events and trackers made from the client read it. A platform that sends no clock
(one that is not this emulator) is dated by this machine's clock.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from datetime import datetime

#: The platform's world time on every response (the emulator's ``clock.CLOCK_HEADER``) and
#: how fast it runs (``clock.SPEED_HEADER``).
CLOCK_HEADER = "X-Explorer-Clock"
SPEED_HEADER = "X-Explorer-Speed"


def world_time(headers: Mapping[str, str]) -> float | None:
    """The world time a response's ``X-Explorer-Clock`` header gives (epoch seconds), or
    None when it has none (or one that is not a timestamp)."""
    raw = headers.get(CLOCK_HEADER)
    if raw is None:
        return None
    try:
        return datetime.fromisoformat(raw).timestamp()
    except ValueError:
        return None


def _speed(headers: Mapping[str, str]) -> float:
    """The speed a response's ``X-Explorer-Speed`` header gives; 1 when absent or not a
    positive number."""
    try:
        speed = float(headers.get(SPEED_HEADER, "1"))
    except ValueError:
        return 1.0
    return speed if 0 < speed < float("inf") else 1.0


class PlatformClock:
    """The platform's world time (epoch seconds), learnt from its answers' headers
    (:meth:`observe`) and run forward between them; ``wall`` is this machine's clock."""

    def __init__(self, wall: Callable[[], float] = time.time) -> None:
        self._wall = wall
        #: The world time of the latest answer that carried one (None before any did).
        self.latest: float | None = None
        self._at = 0.0
        self._speed = 1.0

    def observe(self, headers: Mapping[str, str]) -> None:
        """Learn the world time and speed of an answer received now."""
        moment = world_time(headers)
        if moment is not None:
            self.latest, self._at, self._speed = moment, self._wall(), _speed(headers)

    def world(self) -> float | None:
        """The world time now: the latest answer's, run forward at its speed since it came;
        None while no answer carried one."""
        if self.latest is None:
            return None
        return self.latest + self._speed * (self._wall() - self._at)

    def now(self) -> float:
        """:meth:`world`, or this machine's time while no answer carried a world time."""
        world = self.world()
        return self._wall() if world is None else world
