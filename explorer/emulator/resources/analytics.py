"""Channel analytics: ``/analytics/viewers`` and every ``/analytics/tsdb/*`` series.

Owner-only, as on the historical platform (the owner or staff; a bearer token needs
``channel:analytics:self``). Every series is a deterministic simulation of the channel's past,
so the same query always gives the same numbers:

- A channel's *profile* (audience size, followers, game, partnership, creation time) is taken
  from its row the first time its analytics are read and kept in ``analytics_profiles``
  (``db/analytics_profiles.py``). Later drift of the live counters (the simulator moves
  ``viewersCurrent``) does not rewrite history.
- When the channel streamed and how many watched are its stream sessions (``sessions.py``, the
  schedule the simulator plays: the same sessions become its recordings, and its
  ``online``/``viewersCurrent`` while they run); an hour's audience is its sessions' mean
  audiences over the part of the hour they cover, times the hour of day's swing.
- Host events are the world's raids (``raids.py``), the same the directory shows.
- Everything else comes from RNGs keyed by (world seed, channel, what, when): origins,
  which emotes viewers used. A bucket's value never depends on the range asked for, so
  overlapping ranges agree.

Ranges: ``from``/``to`` are ISO-8601 (a timestamp without offset is UTC). Defaults: ``to`` =
now, ``from`` = ``to`` - 7 days; ``from`` must be before ``to`` and the span at most 90 days,
else 400 with ``details``. A series holds the buckets (UTC hours or UTC days) that overlap the
range and have fully elapsed by the world clock (no data from the future, and the current
hour or day appears once it is over), and none before the channel was created. Event series
(``streamSessions``, ``streamHosts``) hold the events inside the range up to now.

Every point carries ``channel`` (id) and ``time`` (ISO, the start of its bucket or the event's
moment); the shapes per series are in ``SCHEMAS`` and follow the historical clients' models.

This module holds the machinery (range, profile, timeline, route factory) and the audience
series; ``analytics_earnings`` (subscriptions, revenue, ads, sparks) and ``analytics_rankings``
(emotes, games) build their series on it.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from explorer.emulator import categories, raids, streams
from explorer.emulator.access import channel_ref, require_owner
from explorer.emulator.context import Context
from explorer.emulator.db import analytics_profiles, channels
from explorer.emulator.policy import Handler, Param, Route
from explorer.emulator.responses import bad_request
from explorer.emulator.sessions import Schedule, Session, diurnal
from explorer.emulator.world import WORLD_NOW, iso
from explorer.wire import channel_routes as channel_wire
from explorer.wire.endpoint import Endpoint

HOUR = 3600
DAY = 86400
DEFAULT_SPAN = 7 * DAY
MAX_SPAN = 90 * DAY
#: The day the seeded world describes: counters (followers, subscribers) reach the profile's
#: values on this day and keep growing along the same curve after it.
WORLD_DAY = int(WORLD_NOW.timestamp()) // DAY
COUNTRIES = (
    ("US", 36), ("GB", 9), ("DE", 8), ("CA", 6), ("FR", 5), ("BR", 5), ("AU", 4),
    ("ES", 4), ("NL", 3), ("SE", 3), ("PL", 3), ("MX", 3), ("JP", 2), ("RU", 2),
)  # fmt: skip
BROWSERS = (("chrome", 55), ("firefox", 14), ("edge", 12), ("safari", 9), ("app", 10))
PLATFORMS = (("windows", 52), ("mac", 9), ("linux", 3), ("android", 17), ("ios", 12), ("xbox", 7))


@dataclass(frozen=True, slots=True)
class TimeRange:
    """The validated range of one query, in epoch seconds: ``[start, end)``, ``end`` <= now."""

    start: float
    end: float
    now: float

    def buckets(self, size: int, since: float) -> list[int]:
        """Indices ``i`` of the buckets ``[i*size, (i+1)*size)`` that overlap the range, have
        elapsed by now and end after ``since`` (the channel's creation)."""
        first, stop = int(self.start // size), math.ceil(self.end / size)
        return [i for i in range(first, stop) if since < (i + 1) * size <= self.now]

    def holds(self, moment: float) -> bool:
        """True when an event at ``moment`` belongs to the range."""
        return self.start <= moment < self.end


def _moment(ctx: Context, name: str) -> float | None:
    """Query parameter ``name`` as epoch seconds (None when absent, 400 when malformed)."""
    raw = ctx.params.get(name)
    if raw is None:
        return None
    try:
        if len(raw) > 40:
            raise ValueError(raw)
        moment = datetime.fromisoformat(raw)
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return moment.timestamp()
    except (ValueError, OverflowError):
        raise bad_request(
            f"{name} must be an ISO-8601 timestamp such as 2020-07-01T00:00:00.000Z.",
            name,
            "date",
        ) from None


def parse_window(ctx: Context) -> TimeRange:
    """The ``from``/``to`` range of the request, validated (400 naming the bad parameter)."""
    now = ctx.world_now
    to = _moment(ctx, "to")
    to = now if to is None else to
    start = _moment(ctx, "from")
    start = to - DEFAULT_SPAN if start is None else start
    if start >= to:
        raise bad_request("from must be before to.", "from", "range")
    if to - start > MAX_SPAN:
        raise bad_request(f"The range may span at most {MAX_SPAN // DAY} days.", "to", "range")
    return TimeRange(start, min(to, now), now)


@dataclass(frozen=True, slots=True)
class Profile:
    """What the simulation knows about one channel (snapshotted, see the module docstring)."""

    seed: int
    channel: int
    viewers: int
    followers: int
    partnered: bool
    created: float
    world_channels: int
    #: The world's session schedule and this channel's place in it (None: made later).
    schedule: Schedule
    index: int | None

    def rng(self, *key: object) -> random.Random:
        """The RNG for one (what, when) of this channel: same key, same numbers."""
        return random.Random(":".join(str(k) for k in (self.seed, self.channel, *key)))

    def sessions(self, since: float, until: float) -> list[Session]:
        """The channel's stream sessions overlapping ``[since, until)`` (``sessions.py``)."""
        if self.index is None:
            return []
        found = self.schedule.of_channel(self.index, since, until)
        return [item for item in found if item.start >= self.created]

    def counter(self, base: int, day: int, key: str) -> int:
        """A growing total (followers, subscribers) on ``day``: ``base`` on the world's day,
        a power curve since the channel's creation around it, with a little daily wobble."""
        born = int(self.created // DAY)
        growth = (max(day - born + 1, 1) / max(WORLD_DAY - born + 1, 1)) ** 0.8
        wobble = 1 + 0.0005 * (self.rng(key, day).random() - 0.5)
        return max(0, round(base * growth * wobble))


def load_profile(ctx: Context, channel_id: int) -> Profile:
    """The channel's profile, snapshotted from its row on first use."""
    store = ctx.store
    row = analytics_profiles.profile(store, channel_id)
    if row is None:
        names = ("viewersTotal", "viewersCurrent", "numFollowers", "partnered", "createdAt")
        channel = channels.fields(store, channel_id, *names)
        assert channel is not None  # channel_ref found it in this same request
        total, current, followers, partnered, created = channel
        analytics_profiles.take(
            store,
            channel_id,
            max(current, total // 500, 1),
            followers,
            partnered,
            datetime.fromisoformat(created).timestamp(),
            ctx.iso_now(),
        )
        row = analytics_profiles.profile(store, channel_id)
        assert row is not None
    return Profile(
        seed=int(store.meta("seed") or 0),
        channel=channel_id,
        viewers=row[0],
        followers=row[1],
        partnered=bool(row[2]),
        created=row[3],
        world_channels=int(store.meta("channels") or 0),
        schedule=streams.schedule_of(store),
        index=streams.index_of(store, channel_id),
    )


@dataclass(slots=True)
class Timeline:
    """One channel's simulated activity around one window, computed once per request."""

    profile: Profile
    window: TimeRange
    sessions: list[Session] = field(init=False)
    _audience: dict[int, tuple[int, int]] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        # Whole days around the range: the hourly and daily buckets it overlaps.
        first = (self.window.start // DAY) * DAY
        found = self.profile.sessions(first, self.window.end + DAY)
        self.sessions = [item for item in found if item.start <= self.window.now]

    def point(self, moment: float, **values: Any) -> dict[str, Any]:
        """A series point: channel, ISO time, then ``values``."""
        stamp = iso(datetime.fromtimestamp(moment, UTC))
        return {"channel": self.profile.channel, "time": stamp, **values}

    def hours(self) -> list[int]:
        """The hourly buckets of the window."""
        return self.window.buckets(HOUR, self.profile.created)

    def days(self) -> list[int]:
        """The daily buckets of the window."""
        return self.window.buckets(DAY, self.profile.created)

    def _overlaps(self, hour: int) -> list[tuple[Session, float]]:
        lo, hi = hour * HOUR, (hour + 1) * HOUR
        pairs = ((item, min(hi, item.end) - max(lo, item.start)) for item in self.sessions)
        return [(item, seconds / HOUR) for item, seconds in pairs if seconds > 0]

    def on_air(self, hour: int) -> float:
        """The fraction of ``hour`` the channel was live."""
        return sum(share for _, share in self._overlaps(hour))

    def audience(self, hour: int) -> tuple[int, int]:
        """Average (anonymous, signed-in) viewers during ``hour``."""
        cached = self._audience.get(hour)
        if cached is None:
            overlaps = self._overlaps(hour)
            if not overlaps:
                cached = (0, 0)
            else:
                rng = self.profile.rng("audience", hour)
                mean = sum(item.audience * share for item, share in overlaps)
                level = mean * diurnal((hour + 0.5) * HOUR) * rng.lognormvariate(0, 0.1)
                total = round(level)
                anon = round(total * rng.uniform(0.25, 0.45))
                cached = (anon, total - anon)
            self._audience[hour] = cached
        return cached

    def watched(self, day: int) -> list[int]:
        """Viewers per hour of UTC ``day`` (24 values)."""
        return [sum(self.audience(hour)) for hour in range(day * 24, day * 24 + 24)]


Series = Callable[[Timeline, Context], list[dict[str, Any]]]


def viewer_summary(t: Timeline, ctx: Context) -> list[dict[str, Any]]:
    """Daily: peak and average concurrent viewers, viewer-hours and hours live."""
    points = []
    for day in t.days():
        hourly = t.watched(day)
        live = sum(1 for hour in range(day * 24, day * 24 + 24) if t.on_air(hour))
        total = sum(hourly)
        points.append(
            t.point(
                day * DAY,
                peak=max(hourly),
                average=round(total / live, 1) if live else 0.0,
                viewerHours=total,
                hoursLive=live,
            )
        )
    return points


def viewers(t: Timeline, ctx: Context) -> list[dict[str, Any]]:
    """Hourly: average anonymous and signed-in viewers (0 while offline)."""
    points = []
    for hour in t.hours():
        anon, authed = t.audience(hour)
        points.append(t.point(hour * HOUR, anon=anon, authed=authed))
    return points


def pick(rng: random.Random, pairs: tuple[tuple[str, int], ...]) -> str:
    """One name from (name, weight) ``pairs``."""
    return rng.choices([p[0] for p in pairs], weights=[p[1] for p in pairs])[0]


def viewer_metrics(t: Timeline, ctx: Context) -> list[dict[str, Any]]:
    """Daily: unique viewers of the day's ten most common (country, browser, platform)
    combinations, estimated from a sample of at most 200 viewers."""
    points = []
    for day in t.days():
        uniques = round(sum(t.watched(day)) * 1.4)
        if not uniques:
            continue
        rng = t.profile.rng("metrics", day)
        sample = min(uniques, 200)
        combos = Counter(
            (pick(rng, COUNTRIES), pick(rng, BROWSERS), pick(rng, PLATFORMS)) for _ in range(sample)
        )
        for (country, browser, platform), seen in combos.most_common(10):
            count = max(1, round(seen * uniques / sample))
            points.append(
                t.point(day * DAY, country=country, browser=browser, platform=platform, count=count)
            )
    return points


def stream_sessions(t: Timeline, ctx: Context) -> list[dict[str, Any]]:
    """Events: the channel going online, then offline with the stream's duration and the game
    it ended in (``categories.py``)."""
    points = []
    partnered = t.profile.partnered
    profile = t.profile
    last = categories.of_sessions(profile.seed, profile.world_channels, t.sessions).second
    for item, type_id in zip(t.sessions, last.tolist(), strict=True):
        if t.window.holds(item.start):
            points.append(t.point(item.start, online=True, partnered=partnered))
        if t.window.holds(item.end):
            points.append(
                t.point(
                    item.end,
                    online=False,
                    partnered=partnered,
                    duration=int(item.end - item.start),
                    type=type_id,
                )
            )
    return points


def stream_hosts(t: Timeline, ctx: Context) -> list[dict[str, Any]]:
    """Events: another channel raiding (hosting) this one (``hoster``), or this one raiding
    another as its stream ends (``hostee``): the world's raids (``raids.py``), the same the
    directory's ``hosteeId`` and viewers show."""
    raiding = raids.of(t.profile.schedule)
    found: list[tuple[float, int | None, int | None]] = []
    for item in t.sessions:
        own = raiding.of_session(item)
        if own is not None:
            found.append((own.at, None, own.target_channel))
        found += [(raid.at, raid.raider_channel, None) for raid in raiding.into(item, t.window.now)]
    return [
        t.point(at, hoster=hoster, hostee=hostee)
        for at, hoster, hostee in sorted(found, key=lambda e: (e[0], e[1] or 0, e[2] or 0))
        if t.window.holds(at)
    ]


def counter_series(t: Timeline, base: int, key: str) -> list[dict[str, Any]]:
    """Daily: a ``Profile.counter`` total at ``base`` scale and its change over the day."""
    points = []
    for day in t.days():
        total = t.profile.counter(base, day, key)
        delta = total - t.profile.counter(base, day - 1, key)
        points.append(t.point(day * DAY, total=total, delta=delta))
    return points


def followers(t: Timeline, ctx: Context) -> list[dict[str, Any]]:
    """Daily: total followers at the end of the day and the change over the day."""
    return counter_series(t, t.profile.followers, "followers")


# --- the route table ---------------------------------------------------------------------

STR = {"type": "string"}


@dataclass(frozen=True, slots=True)
class SeriesRoute:
    """One analytics endpoint: its wire row and the series (its points' record is the row's,
    declared in the wire)."""

    endpoint: Endpoint
    compute: Series
    summary: str
    extra: tuple[Param, ...] = ()


RANGE_PARAMS = (
    Param("from", {"type": "string", "format": "date-time"}, "range start (default: to - 7 days)"),
    Param("to", {"type": "string", "format": "date-time"}, "range end (default: now)"),
)


def _endpoint(series: SeriesRoute) -> Handler:
    async def handle(ctx: Context) -> list[dict[str, Any]]:
        channel = channel_ref(ctx)
        require_owner(ctx, channel)
        window = parse_window(ctx)
        return series.compute(Timeline(load_profile(ctx, channel.id), window), ctx)

    handle.__doc__ = f"GET {series.endpoint.path}: {series.summary}."
    return handle


def series_routes(table: tuple[SeriesRoute, ...]) -> list[Route]:
    """The owner-only routes of a table of series."""
    return [
        Route(
            series.endpoint,
            _endpoint(series),
            summary=f"{series.summary} (owner only)",
            params=RANGE_PARAMS + series.extra,
            errors=(400, 401, 403, 404, 461),
        )
        for series in table
    ]


SERIES: tuple[SeriesRoute, ...] = (
    SeriesRoute(
        channel_wire.CHANNEL_ANALYTICS_VIEWER_SUMMARY,
        viewer_summary,
        "Daily viewer summary",
    ),
    SeriesRoute(
        channel_wire.CHANNEL_ANALYTICS_VIEWERS,
        viewers,
        "Viewers per hour",
    ),
    SeriesRoute(
        channel_wire.CHANNEL_ANALYTICS_VIEWERS_METRICS,
        viewer_metrics,
        "Viewers by origin per day",
    ),
    SeriesRoute(
        channel_wire.CHANNEL_ANALYTICS_STREAM_SESSIONS,
        stream_sessions,
        "Going online and offline",
    ),
    SeriesRoute(
        channel_wire.CHANNEL_ANALYTICS_STREAM_HOSTS,
        stream_hosts,
        "Hosting events",
    ),
    SeriesRoute(channel_wire.CHANNEL_ANALYTICS_FOLLOWERS, followers, "Followers per day"),
)

routes = series_routes(SERIES)
