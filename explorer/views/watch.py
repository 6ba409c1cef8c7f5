"""A live view of many channels watched at once (``watch.widget()``): how many are joined,
events per second in total with a sparkline of the last minute, the per-channel table of the
most active channels, and the latest events rendered as :class:`~explorer.views.chat.LiveChat`
renders them (with their channel).

It knows the combined :class:`~explorer.events.log.EventLog`, a ``stats`` callable (one row per
channel, as ``Watch.stats()`` gives) and a ``status`` callable (a few named lines, such as
the recorder's progress), nothing of the watch itself. Like LiveChat it refreshes from a timer
on the given loop at most 10 times a second, reading only the log's last rows; the stats
table, which costs more, is read at most once a second.
"""

from __future__ import annotations

import asyncio
import html
import threading
import time
from collections.abc import Callable
from typing import Any

import ipywidgets as widgets
import pandas as pd
from traitlets import Dict, Float, Int, List

from explorer.events.log import EventLog
from explorer.views.chat import LIVE_INTERVAL, PurgedNames, RateMeter, TimedView, records, rows_html
from explorer.views.rendering import sparkline, table_html
from explorer.views.sprites import SHEETS, SpriteSheets

#: The stats table is read at most this often (seconds).
STATS_INTERVAL = 1.0
#: The per-channel table shows this many of the most active channels.
TABLE_ROWS = 10

_RECORD = ("time", "channel", "event", "user", "text")


def _cell(value: Any) -> str:
    """A stats value as table text: rates with one decimal, counts with separators."""
    if isinstance(value, float):
        return f"{value:,.1f}"
    if isinstance(value, int):
        return f"{value:,}"
    return "" if value is None or (pd.api.types.is_scalar(value) and pd.isna(value)) else str(value)


class WatchView(TimedView):
    """Many channels' chat at a glance (see the module docstring).

    ``stats()`` returns a frame indexed by channel (columns such as token, state, events,
    messages, rate, reconnects, gaps); ``status()`` a few named lines shown in the header.
    ``rows`` events are listed, ``table_rows`` channels. ``base_url`` (the platform's REST
    base) locates emoticon sprite sheets, from which ``sprites`` cuts builtin emoticons (as
    :class:`~explorer.views.chat.LiveChat` does); ``clock`` (monotonic seconds) times the
    rate.
    """

    channels = Int(0, help="Channels joined (rows of the stats table).")
    total = Int(0, help="Events received in all.")
    rate = Float(0.0, help="Events per second in all, over the last few seconds.")
    history: List[float] = List(help="Events per second, one point per second, last minute.")
    status = Dict(help="The status lines shown in the header.")
    table: List[dict[str, str]] = List(help="The most active channels' stats rows, as text.")
    records: List[dict[str, str]] = List(help="The latest events (as LiveChat's records).")
    redraws = Int(0, help="Times the view was redrawn.")

    def __init__(
        self,
        log: EventLog,
        stats: Callable[[], pd.DataFrame],
        status: Callable[[], dict[str, str]],
        *,
        rows: int = 20,
        loop: asyncio.AbstractEventLoop | None = None,
        table_rows: int = TABLE_ROWS,
        interval: float = LIVE_INTERVAL,
        base_url: str | None = None,
        clock: Callable[[], float] = time.monotonic,
        sprites: SpriteSheets = SHEETS,
    ) -> None:
        self._log = log
        self._stats = stats
        self._status = status
        self._rows = rows
        self._table_rows = table_rows
        self._base_url = base_url
        self._sprites = sprites
        self._clock = clock
        self._meter = RateMeter(clock)
        self._names = PurgedNames(log)
        self._stats_at: float | None = None
        self._seen: tuple[Any, ...] = ()
        self._lock = threading.Lock()
        self._header = widgets.HTML()
        self._channels = widgets.HTML()
        self._events = widgets.HTML()
        super().__init__([self._header, self._channels, self._events])
        self.refresh()
        self._tick_every(loop, interval)

    def _on_tick(self) -> None:
        self.refresh()

    def refresh(self, force: bool = False) -> bool:
        """Read the status, the stats (at most once a second) and the log's last rows into
        the traits and redraw, unless nothing changed; whether it redrew."""
        with self._lock:
            now = self._clock()
            total = self._log.total
            rate = self._meter.sample(total)
            status = {str(k): str(v) for k, v in self._status().items()}
            stale = self._stats_at is None or now - self._stats_at >= STATS_INTERVAL
            if stale:
                self._stats_at = now
            seen = (total, round(rate, 1), tuple(status.items()), self._sprites.loaded)
            if seen == self._seen and not stale and not force:
                return False
            self._seen = seen
            tail = self._log.tail(self._rows)
            with self.hold_trait_notifications():
                if stale or force:
                    frame = self._stats()
                    self.channels = len(frame)
                    self.table = self._table(frame)
                self.total = total
                self.rate = rate
                self.history = self._meter.history()
                self.status = status
                self.records = records(
                    self._log, tail, self._names(tail), self._base_url, self._sprites.emoticon
                )
            self._render()
            return True

    def _table(self, frame: pd.DataFrame) -> list[dict[str, str]]:
        """The most active channels' rows as text, busiest first."""
        if "rate" in frame.columns:
            frame = frame.sort_values("rate", ascending=False, kind="stable")
        top = frame.head(self._table_rows)
        name = top.index.name or "channel"
        return [
            {name: _cell(index), **{str(k): _cell(v) for k, v in row.items()}}
            for index, row in zip(top.index, top.to_dict("records"), strict=True)
        ]

    def _render(self) -> None:
        lines = " &middot; ".join(
            f"{html.escape(key)}: {html.escape(value)}" for key, value in self.status.items()
        )
        self._header.value = (
            f"<b>{self.channels:,} channels</b> &middot; {self.total:,} events, "
            f"{self.rate:,.1f}/s {sparkline(self.history)}<br><small>{lines}</small>"
        )
        self._channels.value = (
            table_html(
                list(self.table[0]),
                ([html.escape(v) for v in row.values()] for row in self.table),
            )
            if self.table
            else "<i>No channels joined yet.</i>"
        )
        self._events.value = rows_html(self.records, _RECORD)
        self.redraws += 1
