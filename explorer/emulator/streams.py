"""The world's stream sessions applied to the store as world time passes.

:class:`Streams` holds the sessions running at its cursor (a world instant) and, on
:meth:`Streams.advance`, applies every session start and end up to a later instant in one
transaction: ``online`` and ``viewersCurrent`` of channels going live or offline, the audience
of every live channel (its curve, ``sessions.audience_at``), ``typeId`` as sessions start,
switch category and end (``categories.py``), ``viewersTotal`` (views) and
``numFollowers`` growing from each ended session with its follow records, and raids
(``raids.py``): a session that ends in one sets its channel's ``hosteeId`` (cleared when the
channel goes live again or its hostee goes offline) and adds its viewers to the target's
audience while they stay. (Each ended session's
recording is written by the simulator through ``resources/recordings.py``.) The cursor is kept
in ``meta`` (``streams_at``) with the world clock's position, so what the REST resources derive
from the schedule (recordings, followers of the past) stops where the store's channels stop,
and a restarted world resumes from there.

The schedule itself is pure (``sessions.py``); nothing here draws a random number that is
not keyed by a session, so the same seed gives the same world at the same instant."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from explorer.emulator import categories, growth, highlights, raids, sessions
from explorer.emulator.clock import WORLD_TIME_KEY
from explorer.emulator.db import channels, follows, users
from explorer.emulator.db.engine import Store, Transaction
from explorer.emulator.live import happenings
from explorer.emulator.raids import Raid
from explorer.emulator.sessions import Schedule, Session, audience_at
from explorer.emulator.world import DEMO_ACCOUNTS, FIRST_CHANNEL_ID, WORLD_NOW, iso

#: Views a session adds to ``viewersTotal`` per viewer-hour, and to its recording.
VIEWS_PER_VIEWER_HOUR = 1.5
VOD_VIEWS_PER_VIEWER_HOUR = 0.2
_CURSOR = "streams_at"


def schedule_of(store: Store) -> Schedule:
    """The schedule of the world in ``store`` (its seed and size from ``meta``)."""
    return sessions.world_schedule(int(store.meta("seed") or 0), int(store.meta("channels") or 0))


def applied(store: Store) -> float:
    """The world instant up to which the store's channels follow the schedule."""
    saved = store.meta(_CURSOR)
    return float(saved) if saved is not None else WORLD_NOW.timestamp()


def standing_since(cursor: float) -> float:
    """The start of the raids that may still stand at ``cursor`` (their viewers at the target,
    or the raider's host): the longest session and a raid's reach before it."""
    return cursor - sessions.LONGEST - raids.REACH


def prepare(seed: int, channels: int) -> None:
    """Work out the raids standing at a new world's instant, which :class:`Streams` reads when
    the simulator starts; they stay cached with the world's schedule. A platform seeding a new
    world runs this in a thread while the database builds its indexes, which leaves the GIL
    free: 0.5-0.8 s of CPU at a million channels that the start no longer waits for."""
    moment = WORLD_NOW.timestamp()
    raids.of(sessions.world_schedule(seed, channels)).between(standing_since(moment), moment)


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


#: Share of a session's follows that come right after one of its highlights or raids (the
#: rest spread over the session), their mean delay (seconds), and a raid's weight against a
#: highlight's (modelling choices: no source gives them).
SPIKE_SHARE = 0.6
SPIKE_DELAY = 180.0
RAID_SPIKE_WEIGHT = 4.0
#: A raid's burst of the target's chat, as a highlight's peak (``highlights.HIGHLIGHT_PEAK``).
RAID_HYPE = 4.0


def spikes(schedule: Schedule, seed: int, item: Session) -> list[tuple[float, float]]:
    """``(moment, weight)`` of the moments follows of ``item`` cluster after: its highlights
    (``highlights.py``) and the raids into it (``raids.py``)."""
    found = [(minute * 60.0, 1.0) for minute, _ in highlights.of_session(seed, item)]
    found += [(raid.at, RAID_SPIKE_WEIGHT) for raid in raids.of(schedule).into(item, item.end)]
    return found


def followers(
    item: Session, seed: int, users: int, spiked: Sequence[tuple[float, float]] = ()
) -> list[tuple[int, str]]:
    """The ``(user id, followedAt)`` of the people a session brings to its channel: about
    ``growth.expected_follows`` (at most ``growth.MAX_FOLLOWS``), drawn from the non-demo
    users and dated within the session, most right after its ``spiked`` moments
    (:func:`spikes`); the same for a seed and session."""
    rng = random.Random(f"{seed}:{item.id}:follows")
    wanted = growth.expected_follows(item.audience, item.hours) * rng.uniform(0.5, 1.5)
    count = min(growth.MAX_FOLLOWS, int(wanted) + (rng.random() < wanted % 1))
    first, owner = len(DEMO_ACCOUNTS) + 1, item.channel + 1
    if users < first:
        return []
    picked = {first + int(rng.random() * (users - first + 1)) for _ in range(count)} - {owner}
    return [
        (user, iso(datetime.fromtimestamp(_followed(rng, item, spiked), UTC)))
        for user in sorted(picked)
    ]


def _followed(rng: random.Random, item: Session, spiked: Sequence[tuple[float, float]]) -> float:
    """When one follow of ``item`` happens: :data:`SPIKE_SHARE` of them shortly after one of
    the ``spiked`` moments (by weight), the others (and any past the end) at any time."""
    if spiked and rng.random() < SPIKE_SHARE:
        moment = rng.choices([at for at, _ in spiked], [weight for _, weight in spiked])[0]
        moment += rng.expovariate(1 / SPIKE_DELAY)
        if moment < item.end:
            return moment
    return item.start + rng.random() * (item.end - item.start)


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
        self.users = users.highest_id(store) or 0
        #: The sessions running at the cursor, by channel id.
        self.live: dict[int, Session] = {}
        for block, position in schedule.live_at(self.cursor):
            item = sessions.session(block, position)
            self.live[channel_id(item)] = item
        #: The categories the live channels show (``categories.py``).
        self.categories = categories.Live(schedule, list(self.live.values()), self.cursor)
        self.raiding = raids.of(schedule)
        #: Raids whose viewers may still be at their live target (with the viewers carried),
        #: and the hosts they set that stand (raider id: raid), written on the next advance.
        self.arrived: dict[int, list[tuple[Raid, int]]] = {}
        self.hosting: dict[int, Raid] = {}
        self._new_hosts: list[Raid] = []
        self._restore_raids()

    def _restore_raids(self) -> None:
        """The raids standing at the cursor: their viewers at live targets, and the hosts of
        raiders offline since (a later raid of the same raider replaces an earlier one)."""
        for raid in self.raiding.between(standing_since(self.cursor), self.cursor):
            if raid.target.end <= self.cursor:
                continue
            if raid.at > self.cursor - raids.HORIZON:
                self._arrive(raid)
            if channel_id(raid.raider) not in self.live and not self.schedule.of_channel(
                raid.raider.channel, raid.at, self.cursor
            ):
                self.hosting[raid.raider_channel] = raid
        self._new_hosts = list(self.hosting.values())

    def _arrive(self, raid: Raid) -> None:
        self.arrived.setdefault(raid.target_channel, []).append((raid, raid.carried(self.seed)))

    def highlight(self, channel: int, since: int, minute: int) -> float:
        """The chat excess live channel id ``channel``'s highlights and raids of world minutes
        ``(since, minute]`` leave at ``minute`` (``highlights.fading``; 0.0 when offline): the
        raiders arrive greeting and spamming emotes as at a highlight."""
        item = self.live.get(channel)
        if item is None:
            return 0.0
        landed = [(int(raid.at // 60), RAID_HYPE) for raid, _ in self.arrived.get(channel, ())]
        return highlights.excess(self.seed, item, since, minute) + highlights.fading(
            landed, since, minute
        )

    def raided(self, channel: int) -> int:
        """Viewers raids brought to live channel id ``channel`` still watching at the cursor."""
        return sum(
            raids.still_there(carried, self.cursor - raid.at)
            for raid, carried in self.arrived.get(channel, ())
        )

    def audiences(self) -> list[tuple[int, int]]:
        """``(channel id, viewers)`` of every live channel at the cursor, busiest first: its
        session's audience curve plus the raiders still there."""
        pairs = [
            (channel, audience_at(item, self.cursor, self.seed) + self.raided(channel))
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
        unhosts = self._move_raids(started, ended, now)
        self._write(now, ended, unhosts)
        return Changes([item for item in started if item.end > now], ended)

    def _move_raids(self, started: list[Session], ended: list[Session], now: float) -> list[Raid]:
        """Apply the raids of ``ended`` sessions whose target is still live (their hosts go to
        ``_new_hosts``); returns the standing hosts that end: the raider went live again or
        its hostee went offline. Raiders whose viewers have all left are forgotten."""
        over = [raid for raid in self.hosting.values() if raid.target.end <= now]
        over += [
            self.hosting[channel_id(item)] for item in started if channel_id(item) in self.hosting
        ]
        for gone in over:
            self.hosting.pop(gone.raider_channel, None)
        for item in ended:
            raid = self.raiding.of_session(item)
            if raid is not None and raid.target.end > now:
                self._arrive(raid)
                self.hosting[raid.raider_channel] = raid
                self._new_hosts.append(raid)
        for target in list(self.arrived):
            kept = [
                (raid, carried)
                for raid, carried in self.arrived[target]
                if now - raid.at < raids.HORIZON and raid.target.end > now
            ]
            if kept:
                self.arrived[target] = kept
            else:
                del self.arrived[target]
        return over

    def _write(self, now: float, ended: list[Session], unhosts: list[Raid]) -> None:
        live = [(viewers, channel) for channel, viewers in self.audiences()]
        switched = self.categories.writes(list(self.live.values()), ended, now)
        hosts = [raid for raid in self._new_hosts if self.hosting.get(raid.raider_channel) is raid]
        self._new_hosts = []
        with self.store.transaction() as tx:
            channels.set_live(tx, live)
            channels.set_offline(tx, [(views(item), channel_id(item)) for item in ended])
            channels.set_types(tx, switched)
            for item in ended:
                follows.add_many(
                    tx,
                    channel_id(item),
                    followers(item, self.seed, self.users, spikes(self.schedule, self.seed, item)),
                )
            _write_hosts(tx, hosts, unhosts)
            self.store.set_meta({_CURSOR: repr(now), WORLD_TIME_KEY: repr(now)})


def _write_hosts(tx: Transaction, hosts: list[Raid], unhosts: list[Raid]) -> None:
    """Set the ``hosteeId`` of raids' raiders and clear it where their host ended (only where
    it still names that hostee: an owner may have changed it since), with the live events a
    host by the REST API sends."""
    for raid in unhosts:
        if channels.clear_hostee(tx, raid.raider_channel, raid.target_channel):
            happenings.hosted(tx, raid.raider_channel, raid.target_channel, hosting=False)
    for raid in hosts:
        if channels.set_hostee(tx, raid.raider_channel, raid.target_channel):
            happenings.hosted(tx, raid.raider_channel, raid.target_channel, hosting=True)
