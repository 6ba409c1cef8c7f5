"""Tracking the directory: periodic snapshots of channel fields into one long DataFrame.

``api.track(channels_or_query, every="30s")`` makes an :class:`AsyncTracker` (from
``AsyncClient``) or its blocking twin :class:`Tracker` (from ``Client``), whose background task
on the client's loop takes a snapshot every ``every``: for explicit channels one listing call
per 100 of them (``where={"id": [...]}``, tokens by ``where={"token": [...]}``), for a query
(a dict of ``api.channels`` keyword arguments) that listing, each projected to ``id``,
``token`` and the tracked fields. Every snapshot becomes rows ``time``, ``channel``, ``token``,
fields of :meth:`AsyncTracker.frame`.

Pacing: requests go through the client's pacer, so a tight ``every`` waits for the rate-limit
buckets instead of drawing a 429. Snapshots never overlap: one that takes longer than ``every``
delays the next, which then starts at once and is counted in :attr:`AsyncTracker.late`.

Live mode (``live=True``): one snapshot as above, then, instead of polling, the tracker follows
``channel:{id}:update`` of the snapshot's channels over the platform's live-events service
(:class:`~explorer.live.constellation.LiveSocket`, docs/live.md): each update that changes a
tracked field becomes a row with the channel's fields as they now are (the others carried
over), gathered every :data:`LIVE_FLUSH` seconds into one part. Audience changes are seen
as they happen, at no request cost, for thousands of channels (one socket, subscriptions in
batches of 500). A query's channels are those of its first snapshot. :attr:`AsyncTracker.updates`
counts the rows updates made.

Memory: each snapshot's frame is kept as it came (rows are never appended one by one); the
long frame is their concatenation, built when asked and cached until the next snapshot, and
``max_rows`` drops the oldest rows beyond it. With ``to=`` a
:class:`~explorer.recording.recorder.Recorder` writes every snapshot to a Parquet dataset as
well, and ``max_rows`` defaults to :data:`~explorer.recording.recorder.RECORDING_ROWS`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

import pandas as pd

from explorer.core import loop
from explorer.core.closing import AsyncClosing
from explorer.core.deprecation import CalledFrame
from explorer.core.durations import Duration, seconds
from explorer.core.loop import Blocking
from explorer.core.renames import Renamed
from explorer.core.worldclock import PlatformClock
from explorer.errors import ExplorerError, RateLimited, ServerError
from explorer.live.constellation import LiveSocket
from explorer.live.follows import FIELDS
from explorer.rest import channelrefs, schemas, tables
from explorer.views.twins import BlockingTwin, Mirror
from explorer.wire import topics as wire_topics
from explorer.wire.numbers import identifier

if TYPE_CHECKING:
    import os

    from explorer.recording.recorder import Recorder
    from explorer.views.track import TrackChart

log = logging.getLogger(__name__)

#: What ``api.track`` takes: ids, tokens, a channels DataFrame, or ``api.channels`` arguments.
Target: TypeAlias = "Mapping[str, Any] | pd.DataFrame | Iterable[int | str] | int | str"

#: Ids (or tokens) per listing call of an explicit channel list: one page each.
CHUNK = 100
#: The ``api.channels`` arguments a query may give (``fields`` is the tracker's own).
QUERY_KEYS = frozenset({"order", "where", "limit", "pages", "max_rows", "q", "scope"})
#: Fields a snapshot can carry: the channel record's own scalar fields.
TRACKABLE = frozenset(
    name
    for name, kind in schemas.CHANNEL.fields.items()
    if isinstance(kind, str) and name not in ("id", "token", "streamKey")
)

#: Seconds between the parts a live tracker adds (updates that arrive meanwhile are batched).
LIVE_FLUSH = 0.25

Clock = Callable[[], float]
Sleep = Callable[[float], Awaitable[None]]


def _fields(fields: str | Iterable[str]) -> tuple[str, ...]:
    """The tracked fields, checked: at least one, each a channel field."""
    names = (fields,) if isinstance(fields, str) else tuple(fields)
    if not names:
        raise ValueError("Track at least one field.")
    unknown = sorted(set(names) - TRACKABLE)
    if unknown:
        raise ValueError(
            f"Unknown channel field {unknown[0]!r}; trackable: {', '.join(sorted(TRACKABLE))}."
        )
    return tuple(dict.fromkeys(names))


def _query(target: Mapping[str, Any]) -> dict[str, Any]:
    """A query's ``api.channels`` arguments, checked."""
    unknown = sorted(set(target) - QUERY_KEYS)
    if unknown:
        raise ValueError(
            f"A tracking query takes api.channels arguments ({', '.join(sorted(QUERY_KEYS))}),"
            f" not {unknown[0]!r} (name the fields with fields=)."
        )
    return dict(target)


def _channels(target: pd.DataFrame | Iterable[int | str] | int | str) -> list[int | str]:
    """Explicit channels as ids (ints) and tokens (other text), in order, each once."""
    found = [ref for ref, _ in channelrefs.refs(target)]
    if not found:
        raise ValueError("No channels to track: give ids, tokens, a channels frame or a query.")
    return list(dict.fromkeys(found))


def _chunks(values: Sequence[Any]) -> list[Sequence[Any]]:
    return [values[i : i + CHUNK] for i in range(0, len(values), CHUNK)]


class Snapshots:
    """The per-snapshot frames of one tracker and their concatenation (cached), trimmed to
    ``max_rows``; safe to read from another thread than the one adding."""

    def __init__(self, empty: pd.DataFrame, max_rows: int | None) -> None:
        self._empty, self._max_rows = empty, max_rows
        self._parts: list[pd.DataFrame] = []
        self._rows = 0
        self._cache: pd.DataFrame | None = empty
        self._lock = threading.Lock()

    def add(self, part: pd.DataFrame) -> None:
        """Keep one snapshot's rows, dropping the oldest beyond ``max_rows``."""
        if part.empty:
            return
        with self._lock:
            self._parts.append(part)
            self._rows += len(part)
            limit = self._max_rows
            while limit is not None and self._rows > limit:
                excess, first = self._rows - limit, self._parts[0]
                if excess >= len(first):
                    self._parts.pop(0)
                    self._rows -= len(first)
                else:
                    self._parts[0] = first.iloc[excess:]
                    self._rows -= excess
            self._cache = None

    @property
    def frame(self) -> pd.DataFrame:
        """Every kept row, oldest first, on a fresh ``RangeIndex``."""
        with self._lock:
            if self._cache is None:
                self._cache = pd.concat(self._parts, ignore_index=True)
            return self._cache

    def __len__(self) -> int:
        return self._rows


class AsyncTracker(AsyncClosing):
    """Snapshots of channel fields taken in the background (see the module docstring).

    Made by ``AsyncClient.track`` inside a running event loop; the task runs on that loop
    until :meth:`aclose` (or ``async with``). ``clock`` (epoch seconds) times the schedule and
    ``sleep`` waits between snapshots (tests pass manual ones); ``world`` is the client's
    :class:`~explorer.core.worldclock.PlatformClock`: a snapshot is dated by the world time of its
    latest answer and a live update by the world time it arrived (``clock`` dates both while
    the platform sends no clock), so they join a watch's chat by time.
    """

    def __init__(
        self,
        listing: channelrefs.ChannelListing,
        target: Target,
        *,
        every: Duration = "30s",
        fields: str | Iterable[str] = FIELDS,
        to: str | os.PathLike[str] | None = None,
        flush_every: Duration = 5.0,
        max_rows: int | None = None,
        shard: tuple[int, int] | None = None,
        clock: Clock = time.time,
        sleep: Sleep = asyncio.sleep,
        world: PlatformClock | None = None,
        live_url: str | None = None,
    ) -> None:
        #: The live-events address followed after the first snapshot (None: polling).
        self.live_url = live_url
        self.every = seconds(every)
        self.fields = _fields(fields)
        if to is not None and max_rows is None:
            from explorer.recording.recorder import RECORDING_ROWS

            max_rows = RECORDING_ROWS
        if max_rows is not None and max_rows < 1:
            raise ValueError(f"max_rows must be positive, not {max_rows}.")
        if shard is not None and not 1 <= shard[0] <= shard[1]:
            raise ValueError(f"A shard is (K, N) with 1 <= K <= N, not {shard}.")
        self._query: dict[str, Any] | None = None
        self._targets: list[int | str] = []
        if isinstance(target, Mapping):
            self._query = _query(target)
        else:
            self._targets = _channels(target)
        self._listing, self._shard, self._clock, self._sleep = listing, shard, clock, sleep
        self._world = world if world is not None else PlatformClock()
        #: Snapshots taken, those started late (the previous one overran ``every``), and those
        #: that failed (counted and retried at the next tick; the last error in :attr:`error`).
        self.taken = self.late = self.failures = self.updates = 0
        #: The live-events socket of a live tracker, once it follows updates.
        self.socket: LiveSocket | None = None
        #: Whether a live tracker is subscribed to its channels' updates (after its snapshot).
        self.following = False
        self._state: dict[int, dict[str, Any]] = {}
        self._pending: list[dict[str, Any]] = []
        self.error: BaseException | None = None
        self.last: pd.Timestamp | None = None
        #: The channels of the latest snapshot.
        self.channels: list[int] = []
        self._rows = Snapshots(self._long(self._empty()), max_rows)
        self._progress = asyncio.Condition()
        self.recorder: Recorder | None = None
        self._tasks: list[asyncio.Task[None]] = []
        if to is not None:
            from explorer.recording.recorder import Recorder

            self.recorder = Recorder(to, flush_every=flush_every, shard=shard)
            self._tasks.append(asyncio.create_task(self.recorder.run()))
        self._tasks.insert(0, asyncio.create_task(self._run()))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self._summary()}>"

    def _summary(self) -> str:
        what = f"query {self._query}" if self._query is not None else f"{len(self._targets)} ch"
        return (
            f"{what} every {self.every:g} s: {self.taken} snapshots, {len(self._rows)} rows,"
            f" {self.late} late, {self.failures} failed"
        )

    @property
    def running(self) -> bool:
        """Whether snapshots are still being taken."""
        return not self._tasks[0].done()

    @property
    def frame(self) -> pd.DataFrame:
        """The long frame: ``time`` (datetime64[ms, UTC]), ``channel`` (Int64), ``token``
        (str), then the fields, one row per channel per snapshot, oldest first (a property,
        as ``EventLog.frame``; calling it, the old spelling, still works for one release)."""
        return CalledFrame.of(self._rows.frame, f"{type(self).__name__}.frame")

    snapshots = Renamed("taken")

    async def wait(
        self, snapshots: int = 1, timeout: float | None = None, *, failures: int | None = None
    ) -> bool:
        """Wait until ``snapshots`` have been taken in all, or ``failures`` have failed (or the
        tracker stopped, or ``timeout`` seconds passed); whether either count was reached."""

        def reached() -> bool:
            return self.taken >= snapshots or (failures is not None and self.failures >= failures)

        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout), self._progress:
                await self._progress.wait_for(lambda: reached() or not self.running)
        return reached()

    async def aclose(self) -> None:
        """Stop taking snapshots and close the recorder (writing what it holds)."""
        if self.socket is not None:
            await self.socket.aclose()
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self.recorder is not None:
            await asyncio.to_thread(self.recorder.close)

    async def _run(self) -> None:
        """Take snapshots on schedule, never two at once, until cancelled. A failure that may
        pass (rate limit, server error, lost connection, timeout) is counted and retried at the
        next tick; any other (a query the platform refuses) stops the tracker."""
        due = self._clock()
        while True:
            try:
                await self._take()
            except (RateLimited, ServerError, ConnectionError, TimeoutError) as exc:
                self.failures += 1
                self.error = exc
                log.warning("track: a snapshot failed (retried next time): %s", exc)
                await self._notify()
            except Exception as exc:
                self.error = exc
                log.error("track: stopped, the snapshot cannot work: %s", exc)
                await self._notify()
                return
            if self.live_url is not None and self.taken:
                try:
                    await self._follow(self.live_url)
                except (ExplorerError, OSError) as exc:
                    self.error = exc
                    log.error("track: stopped, the live events cannot be followed: %s", exc)
                    await self._notify()
                return
            due += self.every
            now = self._clock()
            if now > due:
                self.late += 1
                due = now
            else:
                await self._sleep(due - now)

    async def _take(self) -> None:
        """One snapshot: list, project, date, keep (and queue for the recorder)."""
        listed = await self._fetch()
        world = self._world.latest
        taken = self._clock() if world is None else world
        part = self._long(listed, taken)
        if self._shard is not None:
            k, n = self._shard
            part = part[part["channel"] % n == k - 1].reset_index(drop=True)
        self._rows.add(part)
        if self.recorder is not None:
            self.recorder.add_snapshots(part)
        self.last = pd.Timestamp(taken, unit="s", tz="UTC").floor("ms")
        self.channels = [int(c) for c in part["channel"]]
        self.taken += 1
        await self._notify()

    async def _follow(self, url: str) -> None:
        """Follow the last snapshot's channels' updates, adding a part every LIVE_FLUSH s."""
        latest = self._rows.frame.tail(len(self.channels))
        self._state = {
            int(row["channel"]): {"token": row["token"], **{f: row[f] for f in self.fields}}
            for row in latest.to_dict("records")
        }
        self.socket = await LiveSocket(url, self._update, clock=self._now).start()
        await self.socket.subscribe(wire_topics.name("channel", c, "update") for c in self._state)
        self.following = True
        await self._notify()
        while True:
            await self._sleep(LIVE_FLUSH)
            await self._flush()

    def _update(self, data: dict[str, Any], received_at: float) -> None:
        """One ``channel:{id}:update``: a row when it changed a tracked field."""
        payload, topic = data.get("payload"), str(data.get("channel"))
        ident = topic.split(":")[1] if topic.count(":") == 2 else ""
        number = identifier(ident)
        state = self._state.get(number) if number is not None else None
        if state is None or not isinstance(payload, dict):
            return
        changed = {f: payload[f] for f in self.fields if f in payload}
        if changed:
            state.update(changed)
            self._pending.append({"time": received_at, "channel": int(ident), **state})

    def _now(self) -> float:
        """The platform's world time now (``clock``'s while it sends none)."""
        world = self._world.world()
        return self._clock() if world is None else world

    async def _flush(self) -> None:
        """The updates gathered since the last flush as one part of the long frame."""
        if not self._pending:
            return
        pending, self._pending = self._pending, []
        empty = self._long(self._empty())
        part = pd.DataFrame(pending, columns=list(empty.columns))
        part["time"] = pd.to_datetime(part["time"], unit="s", utc=True).dt.floor("ms")
        part = part.astype(empty.dtypes.to_dict())
        self._rows.add(part)
        if self.recorder is not None:
            self.recorder.add_snapshots(part)
        self.updates += len(part)
        self.last = part["time"].iloc[-1]
        await self._notify()

    async def _fetch(self) -> pd.DataFrame:
        """The listing rows of this snapshot, indexed by channel id."""
        projection = ("id", "token", *self.fields)
        if self._query is not None:
            return await self._listing(**self._query, fields=projection, progress=False)
        ids = [t for t in self._targets if isinstance(t, int)]
        tokens = [t for t in self._targets if isinstance(t, str)]
        calls = [("id", chunk) for chunk in _chunks(ids)]
        calls += [("token", chunk) for chunk in _chunks(tokens)]
        parts = [
            await self._listing(where={key: list(chunk)}, fields=projection, progress=False)
            for key, chunk in calls
        ]
        return parts[0] if len(parts) == 1 else pd.concat(parts)

    def _empty(self) -> pd.DataFrame:
        """A listing answer with no rows, typed as the platform's would be."""
        return tables.frame([], schemas.CHANNEL, fields=("id", "token", *self.fields))

    def _long(self, listed: pd.DataFrame, taken: float = 0.0) -> pd.DataFrame:
        """Listing rows as long rows dated ``taken`` (epoch seconds)."""
        stamp = pd.Timestamp(taken, unit="s", tz="UTC").floor("ms")
        long = pd.DataFrame(
            {
                "time": pd.Series(stamp, index=range(len(listed)), dtype="datetime64[ms, UTC]"),
                "channel": pd.array(listed.index, dtype="Int64"),
                "token": listed["token"].array,
            }
        )
        for name in self.fields:
            long[name] = listed[name].array
        return long

    async def _notify(self) -> None:
        async with self._progress:
            self._progress.notify_all()


class Tracker(BlockingTwin[AsyncTracker, "TrackChart"]):
    """An :class:`AsyncTracker` from blocking code (``explorer.connect().track(...)``): its
    snapshots are taken on the toolkit's loop while cells run. ``tracker.widget()`` (or the
    tracker as a cell's last line) charts the top channels; use ``with`` or :meth:`close`."""

    taken: Mirror[int] = Mirror("Snapshots taken so far.")
    snapshots = Renamed("taken")
    late: Mirror[int] = Mirror("Snapshots that started late (the previous one overran).")
    failures: Mirror[int] = Mirror("Snapshots that failed (retried at the next tick).")
    error: Mirror[BaseException | None] = Mirror("The last failed snapshot's error, if any.")
    last: Mirror[pd.Timestamp | None] = Mirror("When the latest snapshot was taken.")
    channels: Mirror[list[int]] = Mirror("The channels of the latest snapshot.")
    updates: Mirror[int] = Mirror("Rows added by live updates (``live=True``).")
    following: Mirror[bool] = Mirror("Whether a live tracker follows its channels' updates.")
    running: Mirror[bool] = Mirror("Whether snapshots are still being taken.")
    recorder: Mirror[Recorder | None] = Mirror("The recorder writing the snapshots (``to=``).")
    fields: Mirror[tuple[str, ...]] = Mirror("The tracked fields.")

    @property
    def frame(self) -> pd.DataFrame:
        """The long frame (see :attr:`AsyncTracker.frame`)."""
        return CalledFrame.of(self._aio.frame, "Tracker.frame")

    def widget(self, top: int = 10) -> TrackChart:
        """A live chart of the ``top`` channels' viewers over time."""
        from explorer.views.track import TrackChart

        return TrackChart(lambda: self._aio.frame, top=top, loop=loop.get_loop())

    wait = Blocking(AsyncTracker.wait)


def start(
    listing: channelrefs.ChannelListing, target: Target, blocking: bool, **options: Any
) -> AsyncTracker | Tracker:
    """A tracker of ``target`` over ``listing``: an :class:`AsyncTracker` on the running loop,
    or (``blocking``) a :class:`Tracker` on the toolkit's loop."""
    if not blocking:
        return AsyncTracker(listing, target, **options)

    async def make() -> AsyncTracker:
        return AsyncTracker(listing, target, **options)

    return Tracker(loop.run(make()))
