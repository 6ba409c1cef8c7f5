"""Live views of a chat for Jupyter: :class:`LiveChat` (what is happening now) and
:class:`PollChart` (a poll's responses over time), both reading an
:class:`~explorer.events.log.EventLog`.

Imported only when a view is asked for (``chat.widget()``, ``display(chat)``,
``chat.poll_chart()``), so scripts never load ipywidgets or matplotlib. The views know the
event log and a status callable, nothing of the chat client.

State lives in traits and the view only renders them (anywidget's habit): :meth:`refresh`
reads the log into traits (``state``, ``total``, ``rate``, ``records``, ...), and the HTML or
image children are redrawn from those traits alone. Tests call :meth:`refresh` and read the
traits; no kernel is needed.

Redrawing is throttled: given an event loop, a view refreshes itself from a timer on that loop
(every 0.1 s for LiveChat, so at most 10 redraws a second however fast events come, and only
when something changed), reading the last rows with :meth:`EventLog.tail
<explorer.events.log.EventLog.tail>`, never the whole table (rendering 100,000 rows as HTML takes
seconds). The timer runs on the toolkit's loop thread, the one that receives chat, so views
keep updating while a notebook cell blocks in ``time.sleep``.

Updating widgets from that thread is safe with ipykernel: a trait change sends a comm message
through the kernel's IOPub socket wrapper, which hands every send to the IOPub thread (thread
safe since ipykernel 4.3, ipython/ipykernel#149; ipykernel 7.0.0 briefly broke output from
threads, ipython/ipykernel#1450, fixed in 7.0.1 by #1451). Each message carries a parent
header: a thread without a context of its own gets the latest cell's (#1451), which is what a
view's updates should say; a callback scheduled on the loop from a cell would instead inherit
that cell's context, so the timer runs in an empty one. JupyterLab applies widget updates
whatever their parent; headless runners (nbclient, Voila) keep only those of the running
cell, and ``tests/test_widgets.py`` checks with nbclient that updates made while a cell sleeps
arrive. The other direction is not served while a cell runs: changes made in the browser (the
event filter, the pause button) reach the kernel on its shell channel, between cells.
"""

from __future__ import annotations

import asyncio
import contextvars
import html
import io
import math
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from itertools import pairwise
from typing import Any

import ipywidgets as widgets
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.dates import AutoDateLocator, ConciseDateFormatter
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator
from traitlets import Bool, Bytes, Dict, Float, Int, List, Unicode

from explorer.events.frames import POLL_EVENTS, poll_progress
from explorer.events.log import EventLog
from explorer.views.rendering import (
    Inline,
    badges_html,
    chart_text,
    event_html,
    sparkline,
    summary,
    table_html,
)
from explorer.views.sprites import SHEETS, SpriteSheets
from explorer.wire.events import EVENTS

#: LiveChat refreshes at most this often (seconds): 10 redraws a second.
LIVE_INTERVAL = 0.1
#: PollChart redraws at most this often (seconds): drawing a chart takes tens of ms.
CHART_INTERVAL = 0.5
#: A purged user's name is looked for among this many last rows.
NAME_LOOKBACK = 1000
#: The event rate is measured over this many seconds.
RATE_WINDOW = 5.0
#: The rate sparkline covers this many seconds, one point per second.
HISTORY = 60
_ALL = "all events"

Status = Callable[[], tuple[str, str | None]]


class Timer:
    """Calls ``tick`` on ``loop`` every ``interval`` seconds until stopped (a view's refresh).

    Each call runs in an empty context: a callback scheduled from a cell would otherwise carry
    that cell's context forever, and with it ipykernel's parent message, so every update
    would claim to come from the cell that made the view (see the module docstring).
    """

    def __init__(
        self, loop: asyncio.AbstractEventLoop, interval: float, tick: Callable[[], None]
    ) -> None:
        self.loop = loop
        self._interval = interval
        self._tick = tick
        self._stopped = False
        loop.call_soon_threadsafe(self._run, context=contextvars.Context())

    def _run(self) -> None:
        if self._stopped:
            return
        try:
            self._tick()
        finally:
            self.loop.call_later(self._interval, self._run, context=contextvars.Context())

    def stop(self) -> None:
        """No more ticks (takes effect at the next one)."""
        self._stopped = True


class TimedView(widgets.VBox):
    """A view refreshed by a :class:`Timer` (:meth:`_on_tick`) until it is closed."""

    _timer: Timer | None = None

    def _tick_every(self, loop: asyncio.AbstractEventLoop | None, interval: float) -> None:
        """Given ``loop``, call :meth:`_on_tick` on it every ``interval`` seconds."""
        self._timer = Timer(loop, interval, self._on_tick) if loop is not None else None

    def _on_tick(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """Stop refreshing and close the view (which removes it from the notebook)."""
        if self._timer is not None:
            self._timer.stop()
        super().close()

    def freeze(self) -> None:
        """Refresh one last time, then stop refreshing and keep showing that state: what the
        view of a closed chat, watch or tracker does (closing it would make it vanish)."""
        timer = self._timer
        if timer is not None:
            timer.stop()
            timer.loop.call_soon_threadsafe(self._on_tick, context=contextvars.Context())


class RateMeter:
    """Events per second from a growing total sampled at each refresh: the rate over the last
    :data:`RATE_WINDOW` seconds, and one point per second over the last :data:`HISTORY`
    seconds for a sparkline. ``clock`` gives seconds (monotonic)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._samples: deque[tuple[float, int]] = deque()

    def sample(self, total: int) -> float:
        """Record ``total`` now; the rate over the last few seconds."""
        now = self._clock()
        samples = self._samples
        samples.append((now, total))
        while len(samples) > 1 and samples[1][0] < now - HISTORY - 1:
            samples.popleft()
        first_at, first_total = next(s for s in samples if s[0] >= now - RATE_WINDOW)
        return (total - first_total) / (now - first_at) if now > first_at else 0.0

    def history(self) -> list[float]:
        """Events per second in each whole second sampled (oldest first, at most HISTORY)."""
        ends: dict[int, int] = {}
        for at, total in self._samples:
            ends[math.floor(at)] = total
        rates = [(ends[b] - ends[a]) / (b - a) for a, b in pairwise(sorted(ends))]
        return rates[-HISTORY:]


def rows_html(records: list[dict[str, str]], columns: tuple[str, ...]) -> str:
    """A table of view records, newest first: ``columns`` of each record, where ``user`` and
    ``text`` are shown from the records' ready-made HTML and the rest escaped."""

    def cell(record: dict[str, str], key: str) -> str:
        if key == "user":
            return record["roles"] + html.escape(record["user"])
        if key == "text":
            return record["html"]
        return html.escape(record[key])

    return table_html(columns, ([cell(r, k) for k in columns] for r in reversed(records)))


class LiveChat(TimedView):
    """A live view of a chat: connection state and endpoint, event counts, the event rate
    with a sparkline of the last minute, and the last ``rows`` events as a table (role badges,
    messages with their emoticons, links and tags), with an event-type filter and
    pause/resume.

    ``status`` returns ``(state, endpoint)``; ``loop`` is the event loop that receives the
    chat (the view then refreshes itself at most 10 times a second; without it, call
    :meth:`refresh`). ``base_url`` is the platform's REST base, where the builtin emoticon
    sprite sheets are found (the kernel fetches each once and the emoticons travel inline, so
    a browser that cannot reach the platform shows them; without it, emoticons show as text;
    ``sprites`` cuts them, :data:`~explorer.views.sprites.SHEETS` by default, and a sheet that
    arrives redraws the view); ``clock`` (monotonic seconds) times the rate.
    """

    state = Unicode("connecting", help="The connection's state.")
    endpoint = Unicode("", help="The chat node connected to.")
    total = Int(0, help="Events received.")
    counts = Dict(help="Events received per event name.")
    rate = Float(0.0, help="Events per second over the last few seconds.")
    history: List[float] = List(help="Events per second, one point per second, last minute.")
    rows = Int(20, help="How many events the table shows.")
    event_filter = Unicode("", help="Show only this event (empty: every event).")
    paused = Bool(False, help="Stop redrawing (events keep being recorded).")
    records: List[dict[str, str]] = List(
        help="The table's rows: time, event, user, text, and roles and html (badges and the "
        "rendered text)."
    )
    redraws = Int(0, help="Times the view was redrawn.")

    def __init__(
        self,
        log: EventLog,
        status: Status,
        rows: int = 20,
        loop: asyncio.AbstractEventLoop | None = None,
        interval: float = LIVE_INTERVAL,
        *,
        base_url: str | None = None,
        clock: Callable[[], float] = time.monotonic,
        sprites: SpriteSheets = SHEETS,
    ) -> None:
        self._log = log
        self._status = status
        self._base_url = base_url
        self._sprites = sprites
        self._meter = RateMeter(clock)
        self._seen: tuple[Any, ...] = ()
        self._names = PurgedNames(log)
        self._lock = threading.Lock()
        self._header = widgets.HTML()
        self._table = widgets.HTML()
        self._filter = widgets.Dropdown(options=[_ALL, *EVENTS], value=_ALL, description="Show")
        self._pause = widgets.ToggleButton(value=False, description="Pause", icon="pause")
        controls = widgets.HBox([self._filter, self._pause])
        super().__init__([self._header, controls, self._table])
        self.rows = rows
        self._filter.observe(self._filter_changed, "value")
        self._pause.observe(self._pause_changed, "value")
        self.observe(self._controls_changed, ["event_filter", "paused", "rows"])
        self.refresh()
        self._tick_every(loop, interval)

    # Controls -> traits -> a fresh view.

    def _filter_changed(self, change: dict[str, Any]) -> None:
        self.event_filter = "" if change["new"] == _ALL else change["new"]

    def _pause_changed(self, change: dict[str, Any]) -> None:
        self.paused = change["new"]

    def _controls_changed(self, change: dict[str, Any]) -> None:
        self._filter.value = self.event_filter or _ALL
        self._pause.value = self.paused
        self._pause.description = "Resume" if self.paused else "Pause"
        self._pause.icon = "play" if self.paused else "pause"
        if not self.paused:
            self.refresh(force=True)

    # Log -> traits.

    def _on_tick(self) -> None:
        if not self.paused:
            self.refresh()

    def refresh(self, force: bool = False) -> bool:
        """Read the status and the log's last rows into the traits and redraw, unless
        nothing changed since the last refresh; whether it redrew."""
        with self._lock:
            state, endpoint = self._status()
            total = self._log.total
            rate = self._meter.sample(total)
            seen = (
                *(state, endpoint, total, round(rate, 1), self.event_filter, self.rows),
                self._sprites.loaded,
            )
            if seen == self._seen and not force:
                return False
            self._seen = seen
            tail = self._log.tail(self.rows, self.event_filter or None)
            with self.hold_trait_notifications():
                self.state = state
                self.endpoint = endpoint or ""
                self.total = total
                self.counts = self._log.counts
                self.rate = rate
                self.history = self._meter.history()
                self.records = records(
                    self._log, tail, self._names(tail), self._base_url, self._sprites.emoticon
                )
            self._render()
            return True

    # Traits -> view.

    def _render(self) -> None:
        counts = ", ".join(f"{name} {count:,}" for name, count in sorted(self.counts.items()))
        self._header.value = (
            f"<b>{html.escape(self.state)}</b> {html.escape(self.endpoint)} &middot; "
            f"{self.total:,} events, {self.rate:,.1f}/s {sparkline(self.history)}"
            f"<br><small>{html.escape(counts)}</small>"
        )
        self._table.value = rows_html(self.records, _RECORD)
        self.redraws += 1


_RECORD = ("time", "event", "user", "text")


class PurgedNames:
    """Names of purged users by id: PurgeMessage gives only an id, so each new one is looked
    up once among the log's last :data:`NAME_LOOKBACK` rows (purges are rare)."""

    def __init__(self, log: EventLog) -> None:
        self._log = log
        self._names: dict[int, str | None] = {}  # None: not among recent rows

    def __call__(self, tail: pd.DataFrame) -> dict[int, str | None]:
        """The names known for the users purged in ``tail`` (and earlier)."""
        purged = tail.loc[tail["event"] == "PurgeMessage", "target_user_id"].dropna()
        wanted = {int(i) for i in purged} - self._names.keys()
        if wanted:
            recent = self._log.tail(NAME_LOOKBACK)
            named = recent.loc[recent["user_id"].isin(wanted) & recent["user_name"].notna()]
            found = dict(zip(named["user_id"].astype(int), named["user_name"], strict=True))
            self._names.update({user: found.get(user) for user in wanted})
        return self._names


def records(
    log: EventLog,
    tail: pd.DataFrame,
    names: Mapping[int, str | None],
    base_url: str | None,
    inline: Inline,
) -> list[dict[str, str]]:
    """Table rows for the last events: time, event, channel, user and a one-line text, plus
    ``roles`` (badges) and ``html`` (the text as the platform means it to look, builtin
    emoticons' images from ``inline``)."""
    try:
        packets: list[dict[str, Any] | None] = list(log.packets(tail.index))
    except KeyError:  # trimmed by max_rows since the tail was read: plain text then
        packets = [None] * len(tail)
    return [
        {
            "time": row.received_at.strftime("%H:%M:%S.%f")[:-3],
            "event": str(row.event),
            "channel": "" if pd.isna(row.channel) else str(row.channel),
            "user": "" if pd.isna(row.user_name) else str(row.user_name),
            "roles": badges_html(None if pd.isna(row.user_roles) else str(row.user_roles)),
            "text": summary(row, names),
            "html": event_html(row, packet, names, base_url, inline),
        }
        for row, packet in zip(tail.itertuples(index=False), packets, strict=True)
    ]


def chart_svg(figure: Figure) -> bytes:
    """A figure as SVG: sharp at any screen resolution, shown at its own size."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None})
    return buffer.getvalue()


def time_axis(axes: Axes, start: np.datetime64, end: np.datetime64) -> None:
    """Make x a UTC time axis from ``start`` to ``end`` with a few concise ticks (a minute
    at least, so a poll's first seconds do not read as a span of years)."""
    end = max(end, start + np.timedelta64(60, "s"))
    locator = AutoDateLocator(minticks=3, maxticks=6)
    axes.xaxis.set_major_locator(locator)
    axes.xaxis.set_major_formatter(ConciseDateFormatter(locator))
    axes.set_xlim(start, end)  # type: ignore[arg-type]
    axes.set_xlabel("time (UTC)")


def count_axis(axes: Axes, top: float, label: str) -> None:
    """Make y a count from 0 up to ``top`` (1 at least) with a few integer ticks."""
    axes.yaxis.set_major_locator(MaxNLocator(nbins=5, integer=True))
    axes.set_ylim(0, max(float(top), 1.0) * 1.08)
    axes.set_ylabel(label)


def utc(times: pd.Series) -> np.ndarray:
    """Times of a ``datetime64[ms, UTC]`` column as naive UTC datetime64 (what matplotlib's
    date axis reads as UTC)."""
    return times.dt.tz_convert(None).to_numpy()


class ChartView(TimedView):
    """A matplotlib chart shown as an SVG image, or a line of text until there is something to
    draw. Subclasses read their data in :meth:`_read` and draw it in :meth:`figure`; this
    class redraws when the data changed, off the loop thread when a timer drives it, and
    saves to files."""

    svg = Bytes(help="The chart as an SVG image (empty: nothing to draw yet).")

    def __init__(self, empty: str) -> None:
        self._image = widgets.Image(format="svg+xml")
        self._empty = widgets.HTML(f"<i>{html.escape(empty)}</i>")
        self._drawing = threading.Lock()
        super().__init__([self._empty])
        self.observe(self._show, "svg")

    def _start(self, loop: asyncio.AbstractEventLoop | None, interval: float) -> None:
        """Draw now and, given ``loop``, look for changes every ``interval`` seconds."""
        self.refresh()
        self._tick_every(loop, interval)

    def _show(self, change: dict[str, Any]) -> None:
        self._image.value = change["new"]
        self.children = [self._image] if change["new"] else [self._empty]

    def _read(self) -> bool:
        """Read the data into the traits; whether it changed (subclasses)."""
        raise NotImplementedError

    def _drawable(self) -> bool:
        """Whether there is anything to draw (subclasses)."""
        raise NotImplementedError

    def figure(self) -> Figure:
        """The chart as a matplotlib figure (subclasses)."""
        raise NotImplementedError

    def refresh(self) -> bool:
        """Read the data into the traits and redraw if it changed; whether it redrew."""
        if not self._read():
            return False
        self._draw()
        return True

    def _on_tick(self) -> None:
        # Reading is quick and stays on the loop; drawing takes tens of ms and does not.
        if not self._drawing.locked() and self._read():
            assert self._timer is not None
            self._timer.loop.run_in_executor(None, self._draw)

    def _draw(self) -> None:
        with self._drawing:
            self.svg = chart_svg(self.figure()) if self._drawable() else b""

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the chart to ``path``; the format follows the suffix (.png, .svg, .pdf)."""
        self._read()
        self.figure().savefig(path)


class PollChart(ChartView):
    """A poll's responses over time, drawn with matplotlib: one line per answer, votes against
    the time each PollStart/PollEnd event arrived (:func:`~explorer.events.frames.poll_progress`),
    over the poll's span (until it ends, or while it runs until the time its latest event
    said remained: its ``duration``, since ``endsAt`` is on the platform's wall clock and
    events on its world clock, :mod:`explorer.core.worldclock`), with integer vote ticks from 0.
    Shown as SVG; before any poll, a line saying so.

    Shows the poll asked as ``question``, else the latest poll in the log, reading the last
    ``last`` poll events with :meth:`~explorer.events.log.EventLog.tail`. Given ``loop`` it
    redraws itself at most every ``interval`` seconds while the poll changes, drawing off the
    loop thread; without it, call :meth:`refresh`. In a script, :meth:`save` writes the chart
    to a file.
    """

    question = Unicode("", help="The poll shown.")
    answers: List[str] = List(help="Its answers, in order.")
    responses = Dict(help="Votes per answer, as last reported.")
    voters = Int(0, help="Voters, as last reported.")
    ended = Bool(False, help="Whether the poll has ended.")
    points = Int(0, help="Poll events read (each gives one point per answer).")

    def __init__(
        self,
        log: EventLog,
        question: str | None = None,
        loop: asyncio.AbstractEventLoop | None = None,
        interval: float = CHART_INTERVAL,
        last: int = 2000,
    ) -> None:
        self._log = log
        self._wanted = question
        self._last = last
        self._poll = poll_progress(log.tail(0, POLL_EVENTS))
        self._ends_at: pd.Timestamp | None = None
        self._newest = -1  # the row number of the newest poll event read
        super().__init__("No poll yet: the chart appears with the first poll event.")
        self._start(loop, interval)

    def _read(self) -> bool:
        """Read the poll shown into the traits; whether it changed."""
        events = self._log.tail(self._last, POLL_EVENTS)
        question = self._wanted
        if question is None and len(events):
            question = str(events["poll_q"].iloc[-1])
        events = events.loc[events["poll_q"] == question] if question is not None else events[:0]
        newest = int(events.index[-1]) if len(events) else -1
        if newest == self._newest and (question or "") == self.question:
            return False
        self._newest = newest
        last = events.iloc[-1] if len(events) else None
        responses = last["poll_responses"] if last is not None else None
        with self.hold_trait_notifications():
            self.question = question or ""
            self.answers = list(last["poll_answers"] or []) if last is not None else []
            self.responses = dict(responses) if isinstance(responses, dict) else {}
            self.voters = (
                0 if last is None or pd.isna(last["poll_voters"]) else int(last["poll_voters"])
            )
            self.ended = last is not None and last["event"] == "PollEnd"
            self.points = len(events)
        left = last["poll_duration_ms"] if last is not None else None
        self._ends_at = (
            None
            if last is None or left is None or pd.isna(left)
            else last["received_at"] + pd.Timedelta(milliseconds=int(left))
        )
        self._poll = poll_progress(events)
        return True

    def figure(self) -> Figure:
        """The chart as a matplotlib figure."""
        figure = Figure(figsize=(7, 3.5), layout="constrained")
        axes = figure.add_subplot()
        axes.set_title(chart_text(self.question) if self.question else "no poll yet")
        poll = self._poll
        if not len(poll):
            axes.set_axis_off()
            return figure
        times = utc(poll["time"])
        start, end = times.min(), times.max()
        if not self.ended and self._ends_at is not None:
            end = max(end, utc(pd.Series([self._ends_at])).max())
        for answer, rows in poll.groupby("answer", sort=False):
            votes = rows["votes"].astype(float).fillna(0.0).to_numpy()
            at = utc(rows["time"])
            # The last count holds until the chart's end (the poll's end when known).
            axes.step(
                np.append(at, end),
                np.append(votes, votes[-1]),
                where="post",
                label=chart_text(answer),
            )
        time_axis(axes, start, end)
        count_axis(axes, poll["votes"].astype(float).max(), "votes")
        axes.legend(loc="upper left")
        return figure

    def _drawable(self) -> bool:
        return bool(len(self._poll))
