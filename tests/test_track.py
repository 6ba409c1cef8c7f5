"""api.track against live platforms: snapshots of queries and channel lists, pacing within the
rate limits, late snapshots, dtypes, max_rows, bad input, Parquet through the recorder."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import explorer
import explorer.recording.capture
from explorer.collect.track import CHUNK, Tracker
from explorer.emulator import Platform
from explorer.views.track import TrackChart
from tests.clocks import ManualClock
from tests.test_rest_pacing import TINY_READ, Recording

TOP = {"where": {"online": True}, "order": "viewersCurrent:desc", "max_rows": 5}
DTYPES = {
    "time": "datetime64[ms, UTC]",
    "channel": "Int64",
    "token": "str",
    "viewersCurrent": "Int64",
    "online": "boolean",
    "numFollowers": "Int64",
    "viewersTotal": "Int64",
}


class SteppingClock(ManualClock):
    """A manual clock that moves ``step`` seconds on every reading: each snapshot seems to
    take at least that long."""

    def __init__(self, step: float) -> None:
        super().__init__()
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


class Sleeps:
    """A sleep that moves a manual clock instead of waiting, remembering each delay."""

    def __init__(self, clock: ManualClock) -> None:
        self.clock = clock
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)
        self.clock.advance(delay)
        await asyncio.sleep(0)


def first_snapshot(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of the first snapshot in a tracker's frame (more may have followed)."""
    return frame[frame["time"] == frame["time"].iloc[0]]


@pytest.fixture
def api(platform: Platform) -> Iterator[explorer.Client]:
    """A blocking client of the shared platform."""
    with explorer.Client(platform.base_url, progress=False) as client:
        yield client


@pytest.fixture
def track(api: explorer.Client) -> Iterator[Callable[..., Tracker]]:
    """``track(target, **options)``: ``api.track`` on a manual clock that its sleep moves
    (unless the options give others), closed after the test."""
    made: list[Tracker] = []

    def make(target: Any, **options: Any) -> Tracker:
        clock = ManualClock()
        made.append(api.track(target, **{"clock": clock, "sleep": Sleeps(clock), **options}))
        return made[-1]

    yield make
    for tracker in made:
        tracker.close()


@pytest.mark.parametrize(
    ("target", "snapshots"),
    [(TOP, 8), (list(range(100_000, 100_000 + CHUNK + 50)), 4)],
    ids=["query", "two calls per snapshot"],
)
def test_a_tight_every_within_tiny_buckets_draws_no_429_and_counts_late_snapshots(
    make_platform: Callable[..., Platform], target: object, snapshots: int
) -> None:
    """Rate limits on, 5 reads per 2 s, snapshots due every 0.5 s that seem to take 1 s: the
    pacer holds them (no 429), none overlap, and every next one is counted late."""
    platform = make_platform(rate_limits=True, buckets=TINY_READ)
    transport, clock = Recording(), SteppingClock(step=1.0)
    sleeps = Sleeps(clock)
    with explorer.Client(platform.base_url, progress=False, transport=transport) as client:
        tracker = client.track(target, every=0.5, clock=clock, sleep=sleeps)
        try:
            assert tracker.wait(snapshots, timeout=60)
        finally:
            tracker.close()
    assert 429 not in transport.statuses
    assert len(transport.statuses) > 5
    assert tracker.late >= tracker.taken - 1 >= snapshots - 1
    assert sleeps.delays == []
    assert tracker.failures == 0


def test_snapshots_on_time_sleep_until_the_next_tick_dated_in_world_time(
    make_platform: Callable[..., Platform],
) -> None:
    """With a manual clock a snapshot takes no time: none is late, each waits out `every`,
    and rows are dated by the platform's world clock: at speed 60, `every` apart times 60."""
    clock = ManualClock()
    platform = make_platform(rate_limits=False, clock=clock, speed=60)
    sleeps = Sleeps(clock)
    with explorer.Client(platform.base_url, progress=False) as api:
        tracker = api.track(TOP, every="30s", clock=clock, sleep=sleeps)
        try:
            assert tracker.wait(4, timeout=30)
        finally:
            tracker.close()
    assert tracker.late == 0
    assert sleeps.delays[:3] == [30.0, 30.0, 30.0]
    times = tracker.frame["time"].drop_duplicates()
    assert list(times.diff().dropna().dt.total_seconds())[:3] == [1800.0, 1800.0, 1800.0]
    assert times.iloc[0] >= pd.Timestamp("2020-07-22", tz="UTC")


def test_a_query_tracks_the_top_channels_as_a_long_frame(
    api: explorer.Client, track: Callable[..., Tracker]
) -> None:
    """A query's snapshot holds its listing's rows: online channels by viewers, typed."""
    tracker = track(TOP, every=1)
    assert tracker.wait(2, timeout=30)
    frame = tracker.frame
    assert dict(frame.dtypes.astype(str)) == DTYPES
    first = first_snapshot(frame)
    assert len(first) == 5
    assert set(first["channel"]) <= set(api.channels(where={"online": True}, fields="id").index)
    assert first["viewersCurrent"].is_monotonic_decreasing


def test_a_channel_list_of_ids_and_tokens_is_fetched_in_chunks(
    api: explorer.Client, track: Callable[..., Tracker]
) -> None:
    """More ids than one call takes, plus a token and a frame: every channel once a snapshot,
    with the platform's values."""
    everyone = api.channels(order="id:asc", fields="id,token,viewersTotal")
    ids = list(everyone.index[: CHUNK + 20])
    token = str(everyone["token"].iloc[-1])
    tracker = track([*ids, token], every="1m", fields=["viewersTotal"])
    assert tracker.wait(1, timeout=30)
    frame = first_snapshot(tracker.frame)
    assert list(frame.columns) == ["time", "channel", "token", "viewersTotal"]
    assert sorted(frame["channel"]) == sorted([*ids, int(everyone.index[-1])])
    by_id = frame.set_index("channel")
    assert by_id.loc[ids[0], "viewersTotal"] == everyone.loc[ids[0], "viewersTotal"]
    assert by_id.loc[int(everyone.index[-1]), "token"] == token


def test_a_channels_frame_tracks_its_index(
    api: explorer.Client, track: Callable[..., Tracker]
) -> None:
    """A channels DataFrame means the channels of its index."""
    picked = api.channels(order="viewersTotal:desc", max_rows=3, fields="id,token")
    tracker = track(picked, every=5)
    assert tracker.wait(1, timeout=30)
    assert sorted(first_snapshot(tracker.frame)["channel"]) == sorted(picked.index)


def test_max_rows_keeps_the_newest_rows(track: Callable[..., Tracker]) -> None:
    """max_rows bounds the frame, dropping the oldest rows (even part of a snapshot)."""
    tracker = track(TOP, every=1, max_rows=12)
    assert tracker.wait(5, timeout=30)
    tracker.close()
    frame = tracker.frame
    assert len(frame) == 12
    assert frame["time"].is_monotonic_increasing
    assert frame["time"].iloc[-1] == tracker.last
    assert dict(frame.dtypes.astype(str)) == DTYPES


def test_bad_input_raises_a_clear_value_error(api: explorer.Client) -> None:
    """An unknown field, an empty channel list, a query key api.channels lacks, a bad
    duration: ValueError at once, naming the problem."""
    with pytest.raises(ValueError, match="Unknown channel field 'bogus'"):
        api.track([1], fields=["viewersCurrent", "bogus"])
    with pytest.raises(ValueError, match="No channels to track"):
        api.track([])
    with pytest.raises(ValueError, match="No channels to track"):
        api.track(pd.DataFrame(index=pd.Index([], name="id")))
    with pytest.raises(ValueError, match="not 'fields'"):
        api.track({"fields": "id"})
    with pytest.raises(ValueError, match="duration"):
        api.track([1], every="soon")


def test_a_query_the_platform_refuses_stops_the_tracker(api: explorer.Client) -> None:
    """A where on an unknown field is a 400: the tracker stops and keeps the error."""
    tracker = api.track({"where": {"bogus": 1}}, every=1)
    assert not tracker.wait(1, timeout=30)
    assert not tracker.running
    assert "bogus" in str(tracker.error)
    tracker.close()


def test_the_async_tracker_runs_on_the_callers_loop(platform: Platform) -> None:
    """From AsyncClient, track gives an AsyncTracker whose task runs on the running loop."""

    async def run() -> pd.DataFrame:
        async with explorer.AsyncClient(platform.base_url, progress=False) as client:
            clock = ManualClock()
            async with client.track(TOP, every=2, clock=clock, sleep=Sleeps(clock)) as tracker:
                assert await tracker.wait(3, timeout=30)
                return tracker.frame

    frame = asyncio.run(run())
    assert dict(frame.dtypes.astype(str)) == DTYPES
    assert frame["time"].nunique() >= 3


def test_snapshots_are_recorded_as_parquet(api: explorer.Client, tmp_path: Path) -> None:
    """to= writes every snapshot through the recorder; close() writes the rest."""
    clock = ManualClock()
    tracker = api.track(TOP, every=1, to=tmp_path / "capture", clock=clock, sleep=Sleeps(clock))
    assert tracker.recorder is not None
    assert tracker.wait(3, timeout=30)
    tracker.close()
    written = explorer.recording.capture.open_capture(tmp_path / "capture").snapshots()
    kept = tracker.frame
    assert len(written) == len(kept) == tracker.recorder.stats.snapshots
    pd.testing.assert_frame_equal(
        written.sort_values(["time", "channel"], ignore_index=True),
        kept.sort_values(["time", "channel"], ignore_index=True),
    )


def test_the_widget_is_a_track_chart_of_the_frame(track: Callable[..., Tracker]) -> None:
    """widget(top=3) charts the tracker's frame: a TrackChart, closed without error."""
    tracker = track(TOP, every=1)
    assert tracker.wait(2, timeout=30)
    chart = tracker.widget(top=3)
    assert isinstance(chart, TrackChart)
    chart.close()


def test_a_platform_gone_mid_run_counts_failures_and_keeps_trying(
    make_platform: Callable[..., Platform],
) -> None:
    """Stopping the platform after a snapshot: later snapshots fail, are counted with their
    error, and the tracker keeps running."""
    platform = make_platform(rate_limits=False)
    clock = ManualClock()
    with explorer.Client(platform.base_url, progress=False) as client:
        tracker = client.track(TOP, every=1, clock=clock, sleep=Sleeps(clock))
        try:
            assert tracker.wait(1, timeout=30)
            platform.stop()
            assert tracker.wait(10**9, timeout=60, failures=1)
            taken = tracker.taken
            assert tracker.wait(10**9, timeout=60, failures=tracker.failures + 2)
            assert tracker.running
            assert "Connection refused" in str(tracker.error)
            assert tracker.taken == taken
        finally:
            tracker.close()
