"""Watch many channels at once: one chat client per channel, all feeding one event log.

``api.watch(channels)`` joins every channel (anonymously by default) with its own
:class:`~explorer.chat.ChatClient`, so each channel reconnects and fills its gaps from
``history`` exactly as a single chat does, and all of them write into one shared
:class:`~explorer.events.log.EventLog` whose ``channel`` column says where each row came from.
They all run on one event loop, so the log keeps its single writer; one task builds the log's
rows while the sockets are quiet (:func:`explorer.events.log.tidy`) instead of one per chat.

The set of channels changes while watching: :meth:`AsyncWatch.add` and
:meth:`AsyncWatch.remove`, and the rule ``top=N``: the N online channels with the most
``viewersCurrent``, listed again every ``refresh`` by a background task that joins the
channels that entered and leaves those that dropped out (explicit channels stay). ``shard=(K,
N)`` keeps only channels with ``id % N == K - 1``, so N processes (or machines) split a watch
between them. Joins run concurrently, at most :data:`JOIN_CONCURRENCY` at a time; the REST
requests behind them are paced like every other (``rest/pacing.py``). A channel that cannot be
joined is reported by :meth:`AsyncWatch.stats` (state ``failed`` and the error) and does not
fail the watch; adding it again, or the top rule's next refresh, tries it again. A channel
named by a token that no channel has is reported the same way (its ``channel`` is missing).

The platform caps connections: anonymous ones at ``chat_address_connections`` per address
(1,000 by default, ``explorer serve --chat-address-connections``), signed-in ones at
``chat_user_connections`` per user (10); a connection over the cap is closed (4008) and its
join tried again until ``give_up_after`` (a chat option, 60 s) before it counts as failed.
Joins the platform refuses as too fast are tried again after a backoff (``chat/client.py``).

Rates (events per second over the last :data:`~explorer.collect.members.RATE_WINDOW` seconds)
come from the rows each chat client counts as it records them, sampled every second and
whenever stats are read: a few hundred integers per sample, cheap enough for a view that reads
ten times a second (``collect/members.py`` keeps the members, their past totals and the rates).

What was lost is said, per channel and interval: :meth:`AsyncWatch.outages` lists every time a
chat was away (a reconnect, or a chat that gave up: ``unfilled`` up to the give-up), with what
may be missing there (``chat/session.py``, :class:`~explorer.chat.session.Outage`);
:meth:`stats` counts them, and keeps the totals of every channel the watch ever had (a
channel that left, by :meth:`AsyncWatch.remove` or the top rule, stays as ``left``); a recording's
manifest carries both (``Recorder.losses``).

``to="capture/"`` records as it goes: a :class:`~explorer.recording.recorder.Recorder` follows the
combined log (its ``run()`` task on the same loop) and keeps only a bounded tail in memory
(``max_rows`` defaults to :data:`~explorer.recording.recorder.RECORDING_ROWS`); the builtin
emoticons' sprite sheets are kept with the capture (``recording/sprites.py``), for a replay offline.

Each event's stream session: the watch looks up its channels' broadcasts as it starts and at
every ``refresh`` (``collect/broadcasts.py``); :meth:`AsyncWatch.events` adds ``session`` and
``session_offset``, and a recording keeps the looks in its manifest.

:class:`AsyncWatch` is the async core (``watch = await api.watch(...)`` from ``AsyncClient``);
:class:`Watch` is its blocking twin from ``Client``, already started, running on the toolkit's
loop, as :class:`~explorer.chat.Chat` is to ``ChatClient``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Self

import pandas as pd

from explorer.chat import Chat, ChatClient
from explorer.chat.session import Outage
from explorer.collect import broadcasts
from explorer.collect.members import Rates, Totals, WatchedChannel, channel_totals
from explorer.core import loop
from explorer.core.closing import AsyncClosing
from explorer.core.durations import Duration, seconds
from explorer.core.loop import Blocking
from explorer.errors import ExplorerError, NotFound
from explorer.events.exclusions import Screen, UsersLike
from explorer.events.log import EventLog, LogViews, tidy
from explorer.events.marks import stamp
from explorer.recording import sprites as capturesprites
from explorer.rest.channel import Channel
from explorer.rest.channelrefs import ChannelListing, ChannelRef, Channels, refs
from explorer.views.twins import Described, FeedTwin, Mirror, recording_line

if TYPE_CHECKING:
    from explorer.recording.recorder import Recorder

log = logging.getLogger(__name__)

#: Joins in progress at most at once.
JOIN_CONCURRENCY = 16
#: How often the counters are sampled in the background, in seconds.
SAMPLE_INTERVAL = 1.0
#: Channel ids whose tokens one listing request looks up.
_TOKEN_BATCH = 100
#: What the top rule lists of each channel.
TOP_FIELDS = ("id", "token", "viewersCurrent")


#: A channel's row of :meth:`AsyncWatch.stats`: token, state, rate, error, totals.
_Row = tuple[str | None, str, float, str | None, Totals]


class AsyncWatch(Described, AsyncClosing, LogViews):
    """Many channels' live chats feeding one :class:`~explorer.events.log.EventLog` (see the
    module docstring). Made by ``AsyncClient.watch(...)``; ``await`` it (or ``async with``)
    to join, :meth:`aclose` to leave.

    ``channel`` makes a channel handle of the client, ``listing`` is its ``channels()``
    listing, ``base_url`` its REST base, ``user_id`` fetches the signed-in user's id (None:
    join anonymously), ``world`` the world time of the client's latest answer and
    ``world_clock`` the world time now (what dates the events, their outages and the
    broadcasts' starts: ``explorer.core.worldclock``, ``broadcasts.py``). ``exclude_users`` (ids
    or names) are never logged, ``redact_users`` are logged without their names, ids and texts
    (``exclusions.py``). ``sleep`` waits between re-evaluations of the top rule and ``clock``
    times the rates (tests inject both). ``chat_options`` go to every
    :class:`~explorer.chat.ChatClient`.
    """

    def __init__(
        self,
        channel: Callable[[ChannelRef], Channel[Any]],
        listing: ChannelListing,
        channels: Channels = None,
        *,
        top: int | None = None,
        refresh: Duration = "1m",
        user_id: Callable[[], Awaitable[int]] | None = None,
        to: str | os.PathLike[str] | None = None,
        flush_every: Duration = 5.0,
        shard: tuple[int, int] | None = None,
        max_rows: int | None = None,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
        clock: Callable[[], float] = time.monotonic,
        base_url: str | None = None,
        world: Callable[[], float | None] = lambda: None,
        world_clock: Callable[[], float] = time.time,
        exclude_users: UsersLike = None,
        redact_users: UsersLike = None,
        **chat_options: Any,
    ) -> None:
        if top is not None and top < 1:
            raise ValueError("top must be at least 1.")
        if shard is not None and not 1 <= shard[0] <= shard[1]:
            raise ValueError(f"shard must be (K, N) with 1 <= K <= N, not {shard!r}.")
        if {"log", "tidy"} & chat_options.keys():
            raise TypeError("A watch's chats share its log: log= and tidy= are not options.")
        self._channel = channel
        self._listing = listing
        self._sessions = broadcasts.Sessions(world, wall=world_clock)
        self._initial = channels
        self.top = top
        self.refresh = seconds(refresh)
        self.shard = shard
        self._user_id = user_id
        self._sleep = sleep
        self._chat_options = {"clock": world_clock, **chat_options}
        #: The platform's REST base, where the view finds emoticon sprite sheets.
        self.base_url = base_url
        self.recorder: Recorder | None = None
        if to is not None:
            from explorer.recording.recorder import RECORDING_ROWS, Recorder

            self.recorder = Recorder(to, flush_every=flush_every, shard=shard)
            self.recorder.losses = self.losses
            self.recorder.sessions = self._sessions.marks
            max_rows = RECORDING_ROWS if max_rows is None else max_rows
        #: Every event of every channel, with the ``channel`` column set.
        screen = Screen(exclude_users, redact_users)
        self.log = EventLog(max_rows=max_rows, screen=screen if screen else None)
        self._members: dict[int, WatchedChannel] = {}
        #: The token of every channel the watch had, for the names in :meth:`messages`.
        self._names: dict[int, str] = {}
        #: Tokens that name no channel, and the error that said so (reported as failed).
        self._unknown: dict[str, NotFound] = {}
        #: Totals of the chats each channel had before its current one.
        self._past: dict[int, Totals] = {}
        self._rates = Rates(clock)
        self._joins = asyncio.Semaphore(JOIN_CONCURRENCY)
        self._tasks: list[asyncio.Task[Any]] = []
        self._rule: asyncio.Task[None] | None = None
        self._started = False
        self._closed = False
        #: Times the top rule was evaluated, and why the last evaluation failed (if it did).
        self.refreshes = 0
        self.refresh_error: BaseException | None = None

    # What the watch knows.

    @property
    def channels(self) -> list[int]:
        """The channels joined now (not those joining or failed), by id."""
        members = list(self._members.values())
        return sorted(m.channel for m in members if m.state not in ("joining", "failed"))

    @property
    def closed(self) -> bool:
        """Whether :meth:`aclose` was called."""
        return self._closed

    def messages(self) -> pd.DataFrame:
        """ChatMessage rows of the log so far (:meth:`EventLog.messages`) with ``token``, the
        channel's name, beside its id ``channel`` (missing where the watch never learnt it).
        Safe from any thread."""
        frame = self.log.messages()
        self._names.update((m.channel, m.token) for m in list(self._members.values()) if m.token)
        names = dict(self._names)
        tokens = pd.array([names.get(c) for c in frame["channel"].tolist()], dtype="string")
        frame.insert(frame.columns.get_loc("channel") + 1, "token", tokens)
        return frame

    def sessions(self) -> pd.DataFrame:
        """What the looks at the channels' broadcasts found (``events/marks.py``)."""
        return self._sessions.frame()

    def events(self) -> pd.DataFrame:
        """The log's frame with each event's ``session`` and ``session_offset``
        (``events/marks.py``). Safe from any thread."""
        return stamp(self.log.frame, self.sessions())

    def chat(self, channel: int) -> ChatClient | None:
        """The chat client of ``channel`` (None while it is not part of the watch or joining)."""
        member = self._members.get(channel)
        return None if member is None else member.chat

    def stats(self) -> pd.DataFrame:
        """One row per channel the watch ever had, index ``channel`` (Int64): ``token``,
        ``state`` (``joining``, ``connected``, ``authenticated``, ``reconnecting``,
        ``failed``, or ``left``), ``events`` and ``messages`` recorded, ``rate`` (events per
        second over the last 10 s), ``reconnects``, ``gaps`` (reconnects that may have missed
        messages), ``removed`` (messages removed while away), ``outages`` (times away, see
        :meth:`outages`) and ``error``; totals over every chat the channel had; busiest
        first; a token that names no channel is a failed row without a channel. Safe from any
        thread."""
        rows = self._rows()
        channels = sorted(rows)
        totals = [rows[c][4] for c in channels]
        unknown = dict(self._unknown)
        frame = pd.DataFrame(
            {
                "token": pd.array([rows[c][0] for c in channels], dtype="string"),
                "state": pd.array([rows[c][1] for c in channels], dtype="string"),
                "events": [t.events for t in totals],
                "messages": [t.messages for t in totals],
                "rate": [rows[c][2] for c in channels],
                "reconnects": [t.reconnects for t in totals],
                "gaps": [t.gaps for t in totals],
                "removed": [t.removed for t in totals],
                "outages": [len(t.outages) for t in totals],
                "error": pd.array([rows[c][3] for c in channels], dtype="string"),
            },
            index=pd.Index(channels, dtype="Int64", name="channel"),
        )
        if unknown:
            missing = pd.DataFrame(
                {
                    "token": pd.array(list(unknown), dtype="string"),
                    "state": pd.array(["failed"] * len(unknown), dtype="string"),
                    "error": pd.array([str(e) for e in unknown.values()], dtype="string"),
                },
                index=pd.Index([None] * len(unknown), dtype="Int64", name="channel"),
            )
            frame = pd.concat([frame, missing])
        counts = ("events", "messages", "reconnects", "gaps", "removed", "outages")
        frame = frame.fillna({**dict.fromkeys(counts, 0), "rate": 0.0})
        frame = frame.astype({**dict.fromkeys(counts, "int64"), "rate": "float64"})
        return frame.sort_values("rate", ascending=False, kind="stable")

    def _rows(self) -> dict[int, _Row]:
        """Each channel the watch ever had: its token, state, rate, error and totals."""
        members = list(self._members.values())
        rates = self._sample(members)
        past = dict(self._past)
        rows: dict[int, _Row] = {
            channel: (None, "left", 0.0, totals.error, channel_totals(totals, None))
            for channel, totals in past.items()
        }
        for m in members:
            totals = channel_totals(past.get(m.channel), m.chat)
            rows[m.channel] = (m.token, m.state, rates[m.channel], m.failure, totals)
        return rows

    def outages(self) -> pd.DataFrame:
        """Every time a chat of the watch was away, oldest first: ``channel``, ``start`` and
        ``end`` (UTC), ``seconds``, ``loss`` (``events``: messages filled, other events sent
        meanwhile missing; ``messages``: more messages than ``history`` holds may be missing;
        ``unfilled``: every message of the interval may be missing) and ``removed`` (messages
        removed while away). An analyst excludes or flags these intervals. Safe from any
        thread."""
        found = self._outages()
        return pd.DataFrame(
            {
                "channel": pd.array([o.channel for o in found], dtype="Int64"),
                "start": pd.to_datetime([o.start for o in found], unit="s", utc=True),
                "end": pd.to_datetime([o.end for o in found], unit="s", utc=True),
                "seconds": pd.array([o.end - o.start for o in found], dtype="float64"),
                "loss": pd.array([str(o.loss) for o in found], dtype="string"),
                "removed": pd.array([o.removed for o in found], dtype="int64"),
            }
        )

    def _outages(self) -> list[Outage]:
        found = [o for totals in list(self._past.values()) for o in totals.outages]
        found += [o for m in list(self._members.values()) if m.chat for o in m.chat.outages]
        return sorted(found, key=lambda o: (o.start, o.channel or 0))

    def losses(self) -> dict[str, Any]:
        """What a recording's manifest says was lost: ``outages`` (as :meth:`outages`, times
        in epoch seconds), ``gaps`` and ``removed`` totals, and ``failed``: the channels
        dropped (a join or a reconnect that gave up) with the error."""
        rows = self._rows()
        failed: list[tuple[int | None, object]] = [
            (c, rows[c][3]) for c in sorted(rows) if rows[c][3] is not None
        ]
        failed += [(None, e) for e in dict(self._unknown).values()]
        return {
            "outages": [
                {"channel": o.channel, "start": o.start, "end": o.end, "loss": str(o.loss)}
                | {"removed": o.removed}
                for o in self._outages()
            ],
            "gaps": sum(row[4].gaps for row in rows.values()),
            "removed": sum(row[4].removed for row in rows.values()),
            "failed": [{"channel": c, "error": str(e)} for c, e in failed],
        }

    def rate(self) -> float:
        """Events per second over the last 10 s, all channels together. Safe from any thread."""
        return sum(self._sample(list(self._members.values())).values())

    def _sample(self, members: list[WatchedChannel]) -> dict[int, float]:
        """Each member's rate by channel (0 while joining)."""
        chats = {m.chat: m.chat.recorded for m in members if m.chat is not None}
        rates = self._rates.sample(chats)
        return {m.channel: rates[m.chat] if m.chat is not None else 0.0 for m in members}

    def status(self) -> dict[str, str]:
        """What a view shows above the table: state, channels, rate, recording."""
        states = [m.state for m in list(self._members.values())]
        states += ["failed"] * len(self._unknown)
        joined = sum(s not in ("joining", "failed") for s in states)
        parts = [f"{joined:,} joined"]
        parts += [f"{states.count(s):,} {s}" for s in ("joining", "failed") if s in states]
        shown = {
            "state": "closed" if self._closed else "watching",
            "channels": ", ".join(parts),
            "events": f"{self.log.total:,}",
            "rate": f"{self.rate():,.1f}/s",
        }
        if self.top is not None:
            shown["rule"] = f"top {self.top} by viewersCurrent, every {self.refresh:g} s"
        if self.recorder is not None:
            shown["recording"] = recording_line(self.recorder)
        return shown

    def _summary(self) -> str:
        facts = self.status()
        return f"{facts['state']} {facts['channels']}, {facts['events']} events, {facts['rate']}"

    # Starting and stopping.

    async def start(self) -> Self:
        """Join the channels (and the top rule's), start recording and the background tasks;
        returns once every join succeeded or failed."""
        if self._started:
            raise RuntimeError("start() was already called on this watch.")
        self._started = True
        running = asyncio.get_running_loop()
        self._tasks = [running.create_task(tidy(self.log)), running.create_task(self._sampler())]
        if self.recorder is not None:
            self.recorder.follow(self.log)
            self._tasks.append(running.create_task(self.recorder.run()))
            if self.base_url is not None:
                keeping = capturesprites.keep_with(self.recorder.path, self.base_url)
                self._tasks.append(running.create_task(keeping))
        try:
            await self.add(self._initial)
            if self.top is not None:
                await self._retop()
            self._rule = running.create_task(self._refresher())
        except BaseException:
            await self.aclose()
            raise
        return self

    async def aclose(self) -> None:
        """Leave every chat, stop the background tasks, then close the recorder (which writes
        what is left). Idempotent."""
        if self._closed:
            return
        self._closed = True
        # The top rule first (it may be joining), then the chats, then the other tasks: the
        # recorder's writes the rest when cancelled.
        await _cancel(self._rule)
        await asyncio.gather(*(self._leave(m) for m in list(self._members.values())))
        await _cancel(*self._tasks)
        if self.recorder is not None:
            self.recorder.close()

    # Joining and leaving.

    async def add(self, *channels: Channels) -> None:
        """Join ``channels`` (ids, tokens or a channels frame; those outside the shard are
        skipped, those already watched stay, those that failed are tried again); returns once
        each joined or failed."""
        self._check_open()
        found = await self._resolve(channels)
        for member in found:
            member.explicit = True
        await self._warn_offline([m.channel for m in found])
        await self._take(found)

    async def remove(self, *channels: Channels) -> None:
        """Leave ``channels`` (the top rule joins one again if it is in the top at a later
        refresh)."""
        self._check_open()
        ids = [m.channel for m in await self._resolve(channels, tokens=False)]
        await asyncio.gather(*(self._leave(self._members[i]) for i in ids if i in self._members))

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("This watch is closed.")

    async def _resolve(
        self, channels: Sequence[Channels], tokens: bool = True
    ) -> list[WatchedChannel]:
        """New members for ``channels`` in this shard, ids resolved, duplicates dropped, and
        the tokens of channels named by id looked up (with ``tokens``)."""
        named: dict[int, str | None] = {}
        for ref, token in refs(*channels):
            channel_id = ref if isinstance(ref, int) else await self._id(ref, tokens)
            if channel_id is not None and self._in_shard(channel_id):
                named[channel_id] = named.get(channel_id) or token
        unknown = [c for c, t in named.items() if t is None and c not in self._members]
        if tokens and unknown:
            named.update(await self._tokens(unknown))
        return [WatchedChannel(channel, token) for channel, token in named.items()]

    async def _id(self, token: str, joining: bool) -> int | None:
        """The id of the channel ``token`` names; None when none does, which is kept as a
        failure while ``joining`` (forgotten when removing), as an unknown id's join is."""
        try:
            channel_id = await Channel.id(self._channel(token))
        except NotFound as missing:
            if joining:
                self._unknown[token] = missing
                log.warning("explorer watch: no channel is called %r: %s", token, missing)
            else:
                self._unknown.pop(token, None)
            return None
        self._unknown.pop(token, None)
        return channel_id

    def _in_shard(self, channel: int) -> bool:
        return self.shard is None or channel % self.shard[1] == self.shard[0] - 1

    async def _tokens(self, channels: list[int]) -> dict[int, str]:
        """The tokens of ``channels`` (those that exist), a listing request per hundred."""
        found: dict[int, str] = {}
        for start in range(0, len(channels), _TOKEN_BATCH):
            batch = channels[start : start + _TOKEN_BATCH]
            frame = await self._listing(
                where={"id": batch}, fields=("id", "token"), max_rows=len(batch), progress=False
            )
            found.update((int(i), str(t)) for i, t in frame["token"].items())
        return found

    async def _warn_offline(self, channels: list[int]) -> None:
        """Warn about the channels named that are offline, a listing request per hundred:
        their chats stay quiet until they go live, and a ranking by ``viewersTotal`` (all-time
        views) names many of those."""
        offline: list[str] = []
        for start in range(0, len(channels), _TOKEN_BATCH):
            batch = channels[start : start + _TOKEN_BATCH]
            frame = await self._listing(
                where={"id": batch, "online": False},
                fields=("id", "token"),
                max_rows=len(batch),
                progress=False,
            )
            offline += [str(token) for token in frame["token"]]
        if offline:
            shown = ", ".join(offline[:5]) + (", ..." if len(offline) > 5 else "")
            log.warning(
                "explorer watch: %d of the %d channels named are offline (%s): their chats stay "
                "quiet until they go live; to watch what is live, rank with where={'online': "
                "True} and order='viewersCurrent:desc', or use watch(top=N)",
                len(offline),
                len(channels),
                shown,
            )

    async def _take(self, members: list[WatchedChannel]) -> None:
        """Join ``members`` that are not in the watch, or failed there (tried again); a
        channel joined or joining already only takes the new member's flags."""
        fresh: list[WatchedChannel] = []
        for member in members:
            existing = self._members.get(member.channel)
            if existing is not None and existing.state != "failed":
                existing.explicit |= member.explicit
                existing.top |= member.top
                existing.token = existing.token or member.token
                continue
            if existing is not None:
                member.explicit |= existing.explicit
                member.top |= existing.top
                await self._leave(existing)
            fresh.append(member)
        await self._join_all(fresh)

    async def _join_all(self, members: list[WatchedChannel]) -> None:
        running = asyncio.get_running_loop()
        for member in members:
            self._members[member.channel] = member
            member.join = running.create_task(self._join(member))
        # A join cancelled by remove() or aclose() meanwhile is not this call's failure.
        await asyncio.gather(
            *(m.join for m in members if m.join is not None), return_exceptions=True
        )

    async def _join(self, member: WatchedChannel) -> None:
        """Join one channel (at most JOIN_CONCURRENCY at once); a failure stays in ``member``."""
        try:
            async with self._joins:
                handle = self._channel(member.channel)
                chat = ChatClient(
                    lambda: Channel.chat_details(handle),
                    user_id=self._user_id,
                    log=self.log,
                    tidy=False,
                    **self._chat_options,
                )
                member.chat = chat
                await chat.start()
        except ExplorerError as exc:
            member.error = exc
            log.warning("explorer watch: channel %d failed to join: %s", member.channel, exc)
        except Exception as exc:
            member.error = exc
            log.exception("explorer watch: channel %d failed to join", member.channel)
        finally:
            member.join = None

    async def _leave(self, member: WatchedChannel) -> None:
        """Stop ``member``'s join if it is under way, leave its chat, forget it (keeping its
        totals)."""
        if member.token:
            self._names[member.channel] = member.token
        if member.join is not None:
            member.join.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await member.join
        if member.chat is not None:
            await member.chat.aclose()
            past = self._past.setdefault(member.channel, Totals())
            past.add(member.chat)
            past.error = member.failure
        if self._members.get(member.channel) is member:
            del self._members[member.channel]

    # Background tasks.

    async def _retop(self) -> None:
        """List the top channels again; join those that entered, leave those that left."""
        assert self.top is not None
        frame = await self._listing(
            where={"online": True},
            order="viewersCurrent:desc",
            max_rows=self.top,
            fields=TOP_FIELDS,
            progress=False,
        )
        wanted = {int(i): str(t) for i, t in frame["token"].items() if self._in_shard(int(i))}
        gone = [m for m in self._members.values() if m.top and m.channel not in wanted]
        for member in gone:
            member.top = False
        await asyncio.gather(*(self._leave(m) for m in gone if not m.explicit))
        await self._take([WatchedChannel(c, token, top=True) for c, token in wanted.items()])
        self.refreshes += 1

    async def _refresher(self) -> None:
        """Mark the channels' broadcasts (``collect/broadcasts.py``) now, then every ``refresh``
        seconds re-evaluate the top rule (if any) and mark them again; a failed listing is
        logged and tried again at the next refresh."""
        while True:
            try:
                await self._sessions.refresh(self.channels, self._listing, self._channel)
            except Exception as exc:
                log.warning("explorer watch: looking up the broadcasts failed: %s", exc)
            await self._sleep(self.refresh)
            if self.top is None:
                continue
            try:
                await self._retop()
                self.refresh_error = None
            except Exception as exc:
                self.refresh_error = exc
                log.warning("explorer watch: listing the top channels failed: %s", exc)

    async def _sampler(self) -> None:
        """Sample the counters every second, so rates span 10 s even when nobody reads."""
        while True:
            await asyncio.sleep(SAMPLE_INTERVAL)
            self._sample(list(self._members.values()))


async def _cancel(*tasks: asyncio.Task[Any] | None) -> None:
    """Cancel ``tasks`` and wait until they end."""
    running = [task for task in tasks if task is not None]
    for task in running:
        task.cancel()
    await asyncio.gather(*running, return_exceptions=True)


class Watch(FeedTwin[AsyncWatch]):
    """Many channels' live chats from blocking code (see :class:`AsyncWatch`): made by
    ``explorer.connect().watch(...)``, already joined, running on the toolkit's loop so events
    keep flowing while a cell blocks. ``watch.widget()`` (or ``watch`` as a cell's last line)
    shows a :class:`~explorer.views.watch.WatchView`. Use ``with`` or :meth:`close`.
    """

    channels: Mirror[list[int]] = Mirror("The channels joined now, by id.")
    recorder: Mirror[Recorder | None] = Mirror("The recorder writing the capture (``to=``).")
    refreshes: Mirror[int] = Mirror("Times the top rule was evaluated.")

    def chat(self, channel: int) -> Chat | None:
        """The chat of ``channel`` for blocking code, a :class:`~explorer.chat.Chat` (None
        while it is not part of the watch or joining); closing it leaves that channel."""
        client = self._aio.chat(channel)
        return None if client is None else Chat(client)

    def outages(self) -> pd.DataFrame:
        """Every time a chat of the watch was away, and what may be missing there."""
        return self._aio.outages()

    def messages(self) -> pd.DataFrame:
        """ChatMessage rows so far, with the channel's ``token`` beside its id
        (:meth:`AsyncWatch.messages`)."""
        return self._aio.messages()

    def losses(self) -> dict[str, Any]:
        """What a recording's manifest says was lost (outages, gaps, removed, failed)."""
        return self._aio.losses()

    def sessions(self) -> pd.DataFrame:
        """What the looks at the channels' broadcasts found (:meth:`AsyncWatch.sessions`)."""
        return self._aio.sessions()

    def events(self) -> pd.DataFrame:
        """Every event so far with its session and offset (:meth:`AsyncWatch.events`)."""
        return self._aio.events()

    add = Blocking(AsyncWatch.add)
    remove = Blocking(AsyncWatch.remove)


def start(watch: AsyncWatch) -> Watch:
    """Start ``watch`` on the toolkit's loop and wrap it for blocking code."""
    return Watch(loop.run(watch.start()))
