"""Live events of channels and users in one event log: ``api.live(channels, users=...)``.

Where ``api.watch`` reads chats and ``api.track`` polls the directory, ``api.live`` follows
the platform's live-events service (Constellation, docs/live.md) over one
:class:`~explorer.live.constellation.LiveSocket`: for each channel the events named in ``events``
(``channel:{id}:update``, ``:followed``, ``:hosted``, ...), for each user those in
``user_events``, plus any full event names in ``topics`` (``announcement:announce``). Each
event becomes a row of an :class:`~explorer.events.log.EventLog` (event ``channel:update``,
``channel`` the id, ``text`` the payload as JSON; see ``events/rows.py``), so the log's frame, its
views (``changes()``: the fields each update changed, e.g. audience counts), the watch widget,
recording with ``to=`` and replay work as for chat.

:class:`AsyncLive` is the async core (``live = await api.live(...)`` from ``AsyncClient``);
:class:`Live` its blocking twin from ``Client``, already subscribed, running on the toolkit's
loop. ``add``/``remove`` change what is followed while it runs.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Self

import pandas as pd

from explorer.core import loop
from explorer.core.closing import AsyncClosing
from explorer.core.durations import Duration
from explorer.core.loop import Blocking
from explorer.events.log import EventLog, LogViews, tidy
from explorer.live.constellation import LiveSocket
from explorer.live.follows import CHANNEL_EVENTS, USER_EVENTS
from explorer.rest.channel import Channel
from explorer.rest.channelrefs import ChannelRef, Channels, refs
from explorer.views.twins import Described, FeedTwin, Mirror, recording_line
from explorer.wire import topics as wire_topics

if TYPE_CHECKING:
    from explorer.recording.recorder import Recorder

#: Rates are events per second over this many seconds.
RATE_WINDOW = 10.0


def names(
    channels: Iterable[int],
    users: Iterable[int],
    events: Sequence[str],
    user_events: Sequence[str],
    topics: Iterable[str] = (),
) -> list[str]:
    """The event names to subscribe to, in order, each once."""
    found = [wire_topics.name("channel", c, e) for c in channels for e in events]
    found += [wire_topics.name("user", u, e) for u in users for e in user_events]
    return list(dict.fromkeys([*found, *topics]))


class AsyncLive(Described, AsyncClosing, LogViews):
    """Live events feeding one :class:`~explorer.events.log.EventLog` (see the module
    docstring). Made by ``AsyncClient.live(...)``; ``await`` it (or ``async with``) to
    subscribe, :meth:`aclose` to stop.

    ``channel`` makes a channel handle of the client (to resolve tokens), ``url`` is the
    live-events address, ``base_url`` the REST base (for the widget). ``clock`` times the rate;
    ``world_clock`` dates the events (the platform's world clock from a client);
    ``socket_options`` go to the :class:`~explorer.live.constellation.LiveSocket`.
    """

    def __init__(
        self,
        channel: Callable[[ChannelRef], Channel[Any]],
        url: str,
        channels: Channels = None,
        *,
        users: Iterable[int] = (),
        events: Sequence[str] = CHANNEL_EVENTS,
        user_events: Sequence[str] = USER_EVENTS,
        topics: Iterable[str] = (),
        to: str | os.PathLike[str] | None = None,
        flush_every: Duration = 5.0,
        max_rows: int | None = None,
        base_url: str | None = None,
        clock: Callable[[], float] = time.monotonic,
        world_clock: Callable[[], float] = time.time,
        **socket_options: Any,
    ) -> None:
        self._channel = channel
        self._initial = (channels, list(users), list(topics))
        self.events = tuple(events)
        self.user_events = tuple(user_events)
        self.base_url = base_url
        self.recorder: Recorder | None = None
        if to is not None:
            from explorer.recording.recorder import RECORDING_ROWS, Recorder

            self.recorder = Recorder(to, flush_every=flush_every)
            max_rows = RECORDING_ROWS if max_rows is None else max_rows
        #: Every live event, one row each.
        self.log = EventLog(max_rows=max_rows)
        self.socket = LiveSocket(url, self._add, clock=world_clock, **socket_options)
        self._counts: dict[str, int] = {}
        self._clock = clock
        self._samples: deque[tuple[float, int]] = deque()
        self._tasks: list[asyncio.Task[Any]] = []
        self._started = self._closed = False

    def _add(self, data: dict[str, Any], received_at: float) -> None:
        """Log one live event as ``kind:name`` (``channel:update``)."""
        name = data.get("channel")
        if not isinstance(name, str):
            return
        event = wire_topics.without_id(name)
        self._counts[name] = self._counts.get(name, 0) + 1
        self.log.append({"type": "event", "event": event, "data": data}, received_at)

    # What it knows.

    @property
    def subscribed(self) -> list[str]:
        """The event names followed now."""
        return list(self.socket.wanted)

    @property
    def closed(self) -> bool:
        """Whether :meth:`aclose` was called."""
        return self._closed

    def stats(self) -> pd.DataFrame:
        """One row per event name (index ``event_name``): ``state`` (``subscribed`` or
        ``refused``), ``events`` received, ``error`` (the service's refusal); busiest first."""
        socket = self.socket
        names = [*socket.wanted, *socket.refused]
        frame = pd.DataFrame(
            {
                "state": pd.array(
                    ["refused" if n in socket.refused else "subscribed" for n in names],
                    dtype="string",
                ),
                "events": pd.array([self._counts.get(n, 0) for n in names], dtype="int64"),
                "error": pd.array([socket.refused.get(n) for n in names], dtype="string"),
            },
            index=pd.Index(names, dtype="string", name="event_name"),
        )
        return frame.sort_values("events", ascending=False, kind="stable")

    def rate(self) -> float:
        """Events per second over the last 10 s."""
        now, total = self._clock(), self.log.total
        self._samples.append((now, total))
        while len(self._samples) > 1 and now - self._samples[0][0] > RATE_WINDOW:
            self._samples.popleft()
        then, before = self._samples[0]
        return (total - before) / (now - then) if now > then else 0.0

    def status(self) -> dict[str, str]:
        """What a view shows above the table: state, subscriptions, events, rate, recording."""
        socket = self.socket
        shown = {
            "state": "closed" if self._closed else socket.state,
            "subscriptions": f"{len(socket.wanted):,} subscribed"
            + (f", {len(socket.refused):,} refused" if socket.refused else ""),
            "events": f"{self.log.total:,}",
            "rate": f"{self.rate():,.1f}/s",
        }
        if socket.reconnects:
            shown["reconnects"] = f"{socket.reconnects:,}"
        if self.recorder is not None:
            shown["recording"] = recording_line(self.recorder)
        return shown

    def _summary(self) -> str:
        facts = self.status()
        return f"{facts['state']}, {facts['subscriptions']}, {facts['events']} events"

    # Starting and stopping.

    async def start(self) -> Self:
        """Connect, subscribe to the initial channels, users and topics, start recording;
        returns once every subscription was answered."""
        if self._started:
            raise RuntimeError("start() was already called on this live feed.")
        self._started = True
        running = asyncio.get_running_loop()
        self._tasks = [running.create_task(tidy(self.log))]
        if self.recorder is not None:
            self.recorder.follow(self.log)
            self._tasks.append(running.create_task(self.recorder.run()))
        try:
            await self.socket.start()
            channels, users, topics = self._initial
            await self.add(channels, users=users, topics=topics)
        except BaseException:
            await self.aclose()
            raise
        return self

    async def aclose(self) -> None:
        """Disconnect, stop the background tasks, then close the recorder. Idempotent."""
        if self._closed:
            return
        self._closed = True
        await self.socket.aclose()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self.recorder is not None:
            self.recorder.close()

    # Following more or less.

    async def add(
        self, channels: Channels = None, *, users: Iterable[int] = (), topics: Iterable[str] = ()
    ) -> None:
        """Follow ``channels`` (ids, tokens or a channels frame), ``users`` (ids) and
        ``topics`` (full event names) too; returns once the service answered."""
        ids = await self._ids(channels)
        await self.socket.subscribe(names(ids, users, self.events, self.user_events, topics))

    async def remove(
        self, channels: Channels = None, *, users: Iterable[int] = (), topics: Iterable[str] = ()
    ) -> None:
        """Stop following ``channels``, ``users`` and ``topics``."""
        ids = await self._ids(channels)
        await self.socket.unsubscribe(names(ids, users, self.events, self.user_events, topics))

    async def _ids(self, channels: Channels) -> list[int]:
        found = []
        for ref, _ in refs(channels):
            found.append(ref if isinstance(ref, int) else await Channel.id(self._channel(ref)))
        return found


class Live(FeedTwin[AsyncLive]):
    """Live events from blocking code (see :class:`AsyncLive`): made by
    ``explorer.connect().live(...)``, already subscribed, running on the toolkit's loop so
    events keep arriving while a cell blocks. ``live.widget()`` (or ``live`` as a cell's last
    line) shows them in a :class:`~explorer.views.watch.WatchView`. Use ``with`` or
    :meth:`close`."""

    subscribed: Mirror[list[str]] = Mirror("The event names followed now.")
    recorder: Mirror[Recorder | None] = Mirror("The recorder writing the capture (``to=``).")

    add = Blocking(AsyncLive.add)
    remove = Blocking(AsyncLive.remove)


def start(live: AsyncLive) -> Live:
    """Start ``live`` on the toolkit's loop and wrap it for blocking code."""
    return Live(loop.run(live.start()))
