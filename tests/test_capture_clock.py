"""One clock per capture: a watch and a tracker recording a fast world into one capture date
its chat and its snapshots on the platform's world clock, so the two join by time."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pandas as pd
import pytest

import explorer
from explorer.core.worldclock import CLOCK_HEADER, SPEED_HEADER, PlatformClock
from explorer.emulator import Platform
from explorer.recording.capture import open_capture
from tests.clocks import ManualClock
from tests.databases import start

SPEED = 60.0


@pytest.fixture(scope="module")
def fast() -> Iterator[Platform]:
    """A small simulated world whose clock runs 60 times faster than real time."""
    with start(channels=300, speed=SPEED, simulate=True, rate_limits=False) as running:
        yield running


def wait_for(condition: Callable[[], bool], timeout: float = 90.0) -> None:
    """Poll ``condition`` until true, failing after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.05)


def test_chat_and_snapshots_of_a_fast_world_join_by_time(fast: Platform, tmp_path: Path) -> None:
    """Every chat event and snapshot of a capture recorded at speed 60 lies between the world
    times read before and after, and each message after its channel's first snapshot joins
    that channel's latest snapshot before it."""
    with explorer.Client(fast.base_url, progress=False) as api:
        channels = api.channels(
            where={"online": True}, order="viewersCurrent:desc", fields="id", max_rows=5
        ).index.tolist()
        before = api.clock()
        watch = api.watch(channels, to=tmp_path)
        tracker = api.track(channels, every="0.5s", to=tmp_path)
        try:
            wait_for(lambda: len(watch.log.messages()) >= 3)
            taken = tracker.taken
            wait_for(lambda: tracker.taken >= taken + 2)
        finally:
            watch.close()
            tracker.close()
        after = api.clock()
    capture = open_capture(tmp_path)
    messages = capture.messages()
    snapshots = capture.snapshots()
    assert len(messages) >= 3 and len(snapshots) >= 3
    for times in (capture.events()["received_at"], snapshots["time"]):
        assert times.between(before, after).all(), (before, after, times.min(), times.max())
    first = snapshots.groupby("channel")["time"].transform("min")
    seen = snapshots.assign(first=first)[["channel", "first"]].drop_duplicates()
    later = messages.merge(seen, on="channel")
    later = later[later["received_at"] >= later["first"]].sort_values("received_at")
    assert len(later), "no message came after a snapshot of its channel"
    joined = pd.merge_asof(
        later,
        snapshots[["time", "channel", "viewersCurrent"]].sort_values("time"),
        left_on="received_at",
        right_on="time",
        by="channel",
        direction="backward",
    )
    assert joined["viewersCurrent"].notna().all()
    assert (joined["time"] <= joined["received_at"]).all()


def test_the_world_clock_runs_on_at_the_platform_s_speed() -> None:
    """Between answers the world time runs on at the last answer's speed; before any answer
    with a clock it is unknown, and ``now`` is this machine's time."""
    wall = ManualClock()
    clock = PlatformClock(wall)
    assert clock.world() is None and clock.now() == wall()
    clock.observe({CLOCK_HEADER: "2020-07-22T00:00:00.000Z", SPEED_HEADER: "60"})
    wall.advance(2.0)
    world = pd.Timestamp("2020-07-22", tz="UTC").timestamp()
    assert clock.now() == clock.world() == world + 120.0
    assert clock.latest == world
    clock.observe({"Content-Type": "application/json"})
    assert clock.latest == world
