"""A live chart of tracked channels (``tracker.widget()``): the top channels' field (viewers,
by default) over time, drawn like :class:`~explorer.views.chat.PollChart` (SVG at the notebook's
resolution, concise UTC time ticks, integer counts from 0, an empty state before the first
snapshot).

It knows only a ``frame`` callable giving the snapshots in long form (``time``
``datetime64[ms, UTC]``, ``channel``, ``token``, then the fields, as ``Tracker.frame``
gives them). Given a loop it looks for new snapshots every 0.5 s and redraws, off the loop
thread, only when there are some.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from traitlets import Int, List, Unicode

from explorer.views.chat import CHART_INTERVAL, ChartView, count_axis, time_axis, utc
from explorer.views.rendering import chart_text


class TrackChart(ChartView):
    """The ``top`` channels' ``field`` over time, one line per channel labelled by its token;
    the top channels are those with the largest latest value. Without ``loop``, call
    :meth:`refresh`; in a script, :meth:`save` writes the chart to a file."""

    field = Unicode("viewersCurrent", help="The snapshot field drawn.")
    top = Int(10, help="How many channels are drawn.")
    snapshots = Int(0, help="Snapshot rows read.")
    channels: List[int] = List(help="The channels drawn, largest latest value first.")
    last = Unicode("", help="The newest snapshot's time (ISO 8601, UTC).")

    def __init__(
        self,
        frame: Callable[[], pd.DataFrame],
        *,
        top: int = 10,
        field: str = "viewersCurrent",
        loop: asyncio.AbstractEventLoop | None = None,
        interval: float = CHART_INTERVAL,
    ) -> None:
        self._frame = frame
        self._rows = pd.DataFrame()
        super().__init__("No snapshots yet: the chart appears with the first one.")
        self.top, self.field = top, field
        self._start(loop, interval)

    def _read(self) -> bool:
        """Read the snapshots of the top channels into the traits; whether they changed."""
        frame = self._frame()
        last = frame["time"].max() if len(frame) else None
        if len(frame) == self.snapshots and (str(last) if last is not None else "") == self.last:
            return False
        rows = frame.loc[frame[self.field].notna()] if len(frame) else frame
        latest = rows.sort_values("time", kind="stable").groupby("channel").tail(1)
        ranked = latest.sort_values(self.field, ascending=False, kind="stable")
        channels = [int(c) for c in ranked["channel"].head(self.top)]
        with self.hold_trait_notifications():
            self.snapshots = len(frame)
            self.last = str(last) if last is not None else ""
            self.channels = channels
        self._rows = rows.loc[rows["channel"].isin(channels)] if len(rows) else rows
        return True

    def figure(self) -> Figure:
        """The chart as a matplotlib figure."""
        figure = Figure(figsize=(8, 3.5), layout="constrained")
        axes = figure.add_subplot()
        axes.set_title(f"{self.field} of the top {len(self.channels)} channels")
        rows = self._rows
        if not len(rows):
            axes.set_axis_off()
            return figure
        times = utc(rows["time"])
        for channel in self.channels:
            mine = rows.loc[rows["channel"] == channel].sort_values("time", kind="stable")
            token = mine["token"].iloc[-1] if "token" in mine and len(mine) else None
            label = str(token) if isinstance(token, str) and token else str(channel)
            values = mine[self.field].astype(float).to_numpy()
            axes.plot(utc(mine["time"]), values, marker=".", markersize=3, label=chart_text(label))
        time_axis(axes, times.min(), times.max())
        count_axis(axes, np.nanmax(rows[self.field].astype(float).to_numpy()), self.field)
        axes.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small")
        return figure

    def _drawable(self) -> bool:
        return bool(len(self._rows))
