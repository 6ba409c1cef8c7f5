"""The world's stream sessions applied to the store as world time passes.

:class:`Streams` holds the sessions running at its cursor (a world instant) and, on
:meth:`Streams.advance`, applies every session start and end up to a later instant in one
transaction: ``online`` and ``viewersCurrent`` of channels going live or offline, the audience
of every live channel (its curve, ``sessions.audience_at``), ``typeId`` as sessions start, switch
category and end (``categories.py``), ``viewersTotal`` (views) and
``numFollowers`` growing from each ended session with its follow records. (Each ended session's
recording is written by the simulator through ``resources/recordings.py``.) The cursor is kept
in ``meta`` (``streams_at``) with the world clock's position, so what the REST resources derive
from the schedule (recordings, followers of the past) stops where the store's channels stop,
and a restarted world resumes from there.

The schedule itself is pure (``sessions.py``); nothing here draws a random number that is
not keyed by a session, so the same seed gives the same world at the same instant."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime

from explorer.emulator import categories, sessions
from explorer.emulator.clock import WORLD_TIME_KEY
from explorer.emulator.sessions import Schedule, Session, audience_at
from explorer.emulator.store import Store
from explorer.emulator.world import DEMO_ACCOUNTS, FIRST_CHANNEL_ID, WORLD_NOW, iso

#: Views a session adds to ``viewersTotal`` per viewer-hour, and to its recording.
VIEWS_PER_VIEWER_HOUR = 1.5
VOD_VIEWS_PER_VIEWER_HOUR = 0.2
#: New followers per viewer-hour of a session, and at most per session.
FOLLOWS_PER_VIEWER_HOUR = 0.05
MAX_FOLLOWS = 500
_CURSOR = "streams_at"


def schedule_of(store: Store) -> Schedule:
    """The schedule of the world in ``store`` (its seed and size from ``meta``)."""
    return sessions.world_schedule(int(store.meta("seed") or 0), int(store.meta("channels") or 0))


def applied(store: Store) -> float:
    """The world instant up to which the store's channels follow the schedule."""
    saved = store.meta(_CURSOR)
    return float(saved) if saved is not None else WORLD_NOW.timestamp()


def channel_id(item: Session) -> int:
    """The id of the channel a session belongs to."""
    return FIRST_CHANNEL_ID + item.channel


def index_of(store: Store, channel: int) -> int | None:
    """The schedule position of channel id ``channel``, or None for a channel made later
    (registered through the API: it has no habits)."""
    index = channel - FIRST_CHANNEL_ID
    return index if 0 <= index < int(store.meta("channels") or 0) else None


def views(item: Session) -> int:
    """Views a session adds to its channel's ``viewersTotal``."""
    return round(item.audience * item.hours * VIEWS_PER_VIEWER_HOUR)


def followers(item: Session, seed: int, users: int) -> list[tuple[int, str]]:
    """The ``(user id, followedAt)`` of the people a session brings to its channel: about
    ``FOLLOWS_PER_VIEWER_HOUR`` per viewer-hour (at most ``MAX_FOLLOWS``), drawn from the
    non-demo users and dated within the session; the same for a seed and session."""
    rng = random.Random(f"{seed}:{item.id}:follows")
    wanted = item.audience * item.hours * FOLLOWS_PER_VIEWER_HOUR * rng.uniform(0.5, 1.5)
    count = min(MAX_FOLLOWS, int(wanted) + (rng.random() < wanted % 1))
    first, owner = len(DEMO_ACCOUNTS) + 1, item.channel + 1
    if users < first:
        return []
    picked = {first + int(rng.random() * (users - first + 1)) for _ in range(count)} - {owner}
    span = item.end - item.start
    return [
        (user, iso(datetime.fromtimestamp(item.start + rng.random() * span, UTC)))
        for user in sorted(picked)
    ]


_FOLLOW = "INSERT OR IGNORE INTO channel_follows (channelId, userId, createdAt) VALUES (?, ?, ?)"


@dataclass(frozen=True, slots=True)
class Changes:
    """What one :meth:`Streams.advance` applied."""

    started: list[Session]
    ended: list[Session]


class Streams:
    """The schedule's sessions applied to a store (see the module docstring)."""

    def __init__(self, store: Store, schedule: Schedule, seed: int) -> None:
        self.store = store
        self.schedule = schedule
        self.seed = seed
        self.cursor = applied(store)
        self.users = int(store.scalar("SELECT MAX(id) FROM users") or 0)
        #: The sessions running at the cursor, by channel id.
        self.live: dict[int, Session] = {}
        for block, position in schedule.live_at(self.cursor):
            item = sessions.session(block, position)
            self.live[channel_id(item)] = item
        #: The categories the live channels show (``categories.py``).
        self.categories = categories.Live(schedule, list(self.live.values()), self.cursor)

    def audiences(self) -> list[tuple[int, int]]:
        """``(channel id, viewers)`` of every live channel at the cursor, busiest first."""
        pairs = [
            (channel, audience_at(item, self.cursor, self.seed))
            for channel, item in self.live.items()
        ]
        return sorted(pairs, key=lambda pair: (-pair[1], pair[0]))

    def advance(self, now: float) -> Changes:
        """Apply every start and end in ``(cursor, now]`` and every live audience at ``now``,
        in one transaction; the cursor moves to ``now``."""
        if now <= self.cursor:
            return Changes([], [])
        started = self.schedule.starting(self.cursor, now)
        self.categories.begin(started)
        for item in started:
            self.live[channel_id(item)] = item
        ended = [item for item in self.live.values() if item.end <= now]
        for item in ended:
            del self.live[channel_id(item)]
        self.cursor = now
        self._write(now, ended)
        return Changes([item for item in started if item.end > now], ended)

    def _write(self, now: float, ended: list[Session]) -> None:
        live = [(viewers, channel) for channel, viewers in self.audiences()]
        switched = self.categories.writes(list(self.live.values()), ended, now)
        with self.store.transaction() as conn:
            conn.executemany(
                "UPDATE channels SET online = 1, viewersCurrent = ? WHERE id = ?", live
            )
            conn.executemany(
                "UPDATE channels SET online = 0, viewersCurrent = 0, "
                "viewersTotal = viewersTotal + ? WHERE id = ?",
                [(views(item), channel_id(item)) for item in ended],
            )
            conn.executemany("UPDATE channels SET typeId = ? WHERE id = ?", switched)
            for item in ended:
                channel = channel_id(item)
                before = conn.total_changes
                conn.executemany(
                    _FOLLOW,
                    [(channel, user, at) for user, at in followers(item, self.seed, self.users)],
                )
                added = conn.total_changes - before
                if added:
                    conn.execute(
                        "UPDATE channels SET numFollowers = numFollowers + ? WHERE id = ?",
                        (added, channel),
                    )
            conn.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?), (?, ?)",
                (_CURSOR, repr(now), WORLD_TIME_KEY, repr(now)),
            )
