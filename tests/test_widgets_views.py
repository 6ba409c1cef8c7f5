"""WatchView and TrackChart read without a kernel: a combined log of several channels and a
stats callable, a snapshots callable, both written here."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pandas as pd
from matplotlib.dates import num2date

from explorer.core import loop
from explorer.emulator.chat.emoticons import sheet
from explorer.events.log import EventLog
from explorer.views.sprites import SpriteSheets
from explorer.views.track import TrackChart
from explorer.views.watch import WatchView
from tests.clocks import ManualClock
from tests.test_chat_client import wait_until
from tests.test_rendering import SMILE
from tests.test_widgets import PNG, SVG

BASE = "http://127.0.0.1:9/api/v1"
SHEET = "http://127.0.0.1:9/_latest/emoticons/default.png"
START = 1_700_000_000


def message(channel: int, i: int, words: list[dict[str, Any]]) -> dict[str, Any]:
    """A ChatMessage packet in ``channel`` made of components ``words``."""
    data = {
        "channel": channel,
        "id": f"c{channel}-m{i}",
        "user_name": f"user{i}",
        "user_id": i,
        "user_roles": ["Mod", "User"],
        "message": {"message": words, "meta": {}},
    }
    return {"type": "event", "event": "ChatMessage", "data": data}


def text(value: str) -> dict[str, Any]:
    """A text component."""
    return {"type": "text", "data": value, "text": value}


class Stats:
    """Per-channel stats from the log, as a watch would give them (rates set by the test)."""

    def __init__(self, log: EventLog) -> None:
        self.log = log
        self.rates: dict[int, float] = {}
        self.calls = 0

    def __call__(self) -> pd.DataFrame:
        self.calls += 1
        frame = self.log.frame
        channels = sorted(self.rates)
        counts = frame["channel"].value_counts()
        return pd.DataFrame(
            {
                "token": [f"chan{c}" for c in channels],
                "state": ["connected"] * len(channels),
                "events": [int(counts.get(c, 0)) for c in channels],
                "rate": [self.rates[c] for c in channels],
            },
            index=pd.Index(channels, dtype="Int64", name="channel"),
        )


def watched() -> tuple[EventLog, Stats, ManualClock]:
    """A combined log fed by three channels (messages without a channel field, filled from
    the channel they came from), their stats and a clock."""
    log = EventLog()
    stats = Stats(log)
    for channel, count in ((1, 2), (2, 5), (3, 1)):
        stats.rates[channel] = float(count)
        for i in range(count):
            words = [text(f"hello from {channel} "), SMILE]
            packet = message(channel, i, words)
            del packet["data"]["channel"]
            log.append(packet, START + i, channel=channel)
    return log, stats, ManualClock()


def status() -> dict[str, str]:
    """Fixed status lines."""
    return {"recorder": "1,024 rows written", "state": "<running>"}


def test_watch_view_shows_channels_rate_table_and_latest_events() -> None:
    """The header counts the channels joined and the events, the table lists the busiest
    channels first (top rows only), and the events show their channel, badges and
    emoticons."""
    log, stats, clock = watched()
    asked: list[str] = []

    def fetch(url: str) -> bytes:
        asked.append(url)
        return sheet()  # the platform's own sheet, drawn without a server

    sprites = SpriteSheets(fetch)
    assert sprites.load(SHEET)
    view = WatchView(
        log, stats, status, rows=4, table_rows=2, base_url=BASE, clock=clock, sprites=sprites
    )
    assert (view.channels, view.total) == (3, 8)
    assert [row["channel"] for row in view.table] == ["2", "1"]
    assert view.table[0]["token"] == "chan2" and view.table[0]["rate"] == "5.0"
    assert len(view.records) == 4 and {r["channel"] for r in view.records} == {"2", "3"}
    header, table, events = (child.value for child in view.children)
    assert "3 channels" in header and "8 events" in header and "<svg" in header
    assert "&lt;running&gt;" in header and "1,024 rows written" in header
    assert table.index("chan2") < table.index("chan1") and "chan3" not in table
    assert '<img class="explorer-emoticon" src="data:image/png;base64,' in events
    assert ">Mod</span>" in events and asked == [SHEET]


def test_watch_view_rate_and_stats_follow_the_clock() -> None:
    """New events raise the total and the rate; the stats callable is read at most once a
    second, however often the view refreshes."""
    log, stats, clock = watched()
    view = WatchView(log, stats, status, clock=clock)
    calls = stats.calls
    for second in range(3):
        log.extend([message(4, 100 + second * 10 + i, [text("x")]) for i in range(10)], START)
        view.refresh()
        view.refresh()
        clock.advance(1.0)
    view.refresh()
    assert view.total == 38 and view.history == [10.0, 10.0, 0.0]
    assert stats.calls - calls == 3


def test_watch_view_refreshes_itself_on_a_loop() -> None:
    """Given the toolkit's loop, the view follows the log without being asked."""
    log, stats, _ = watched()
    view = WatchView(log, stats, status, loop=loop.get_loop())
    log.append(message(1, 99, [text("later")]), START + 60, channel=1)
    wait_until(lambda: view.total == 9 and view.records[-1]["text"] == "later")
    view.close()


def snapshots(rows: list[tuple[int, int, int]]) -> pd.DataFrame:
    """Track rows ``(seconds after START, channel, viewers)`` in the tracker's long form."""
    seconds, channels, viewers = zip(*rows, strict=True) if rows else ((), (), ())
    return pd.DataFrame(
        {
            "time": pd.to_datetime([START + s for s in seconds], unit="s", utc=True).astype(
                "datetime64[ms, UTC]"
            ),
            "channel": pd.array(channels, dtype="Int64"),
            "token": [f"chan{c}" for c in channels],
            "viewersCurrent": pd.array(viewers, dtype="Int64"),
        }
    )


class Snapshots:
    """A growing snapshots frame, as a tracker's ``frame`` gives it."""

    def __init__(self) -> None:
        self.rows: list[tuple[int, int, int]] = []

    def __call__(self) -> pd.DataFrame:
        return snapshots(self.rows)


def test_track_chart_draws_the_top_channels_over_time() -> None:
    """The chart keeps the channels with the most viewers at their latest snapshot, spans
    the snapshots' time and counts from 0 with integer ticks."""
    frame = Snapshots()
    frame.rows = [(0, 1, 10), (0, 2, 50), (0, 3, 30), (30, 1, 80), (30, 2, 40), (30, 3, 5)]
    chart = TrackChart(frame, top=2)
    assert chart.channels == [1, 2] and chart.snapshots == 6
    assert chart.svg.startswith(SVG) and chart.children[0].value == chart.svg
    figure = chart.figure()
    figure.savefig(io.BytesIO(), format="svg")
    axes = figure.axes[0]
    assert [line.get_label() for line in axes.get_lines()] == ["chan1", "chan2"]
    left, right = (num2date(x).timestamp() for x in axes.get_xlim())
    assert (left, right) == (START, START + 60)  # a minute at least
    assert axes.get_ylim()[0] == 0 and all(float(t).is_integer() for t in axes.get_yticks())


def test_track_chart_waits_for_snapshots_and_follows_them() -> None:
    """Before any snapshot the chart shows a line of text; with a loop, new snapshots are
    drawn by themselves."""
    frame = Snapshots()
    chart = TrackChart(frame, loop=loop.get_loop(), interval=0.05)
    assert chart.svg == b"" and "No snapshots yet" in chart.children[0].value
    frame.rows = [(0, 7, 3), (5, 7, 4)]
    wait_until(lambda: chart.snapshots == 2 and chart.svg)
    assert chart.channels == [7]
    chart.close()


def test_track_chart_saves_a_png(tmp_path: Path) -> None:
    """In a script, a track chart is saved as a PNG file."""
    frame = Snapshots()
    frame.rows = [(0, 1, 10), (30, 1, 20)]
    path = tmp_path / "track.png"
    TrackChart(frame).save(path)
    assert path.read_bytes().startswith(PNG)
