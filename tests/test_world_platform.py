"""The world through a running platform: sessions applied on a manual world clock agree across
REST (online, viewersCurrent, recordings, followers), chat thinning is announced, the clock
resumes after a restart, and the demo channel has a history from the first call."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pandas as pd

import explorer
from explorer.emulator import Platform, sessions
from explorer.emulator.world import FIRST_CHANNEL_ID, WORLD_NOW
from tests.clocks import ManualClock
from tests.conftest import SMALL_WORLD

NOW = WORLD_NOW.timestamp()
SignIn = Callable[..., httpx.Client]


def live_ids(platform: Platform) -> set[int]:
    """Ids of the channels the platform lists as online."""
    rows = httpx.get(
        f"{platform.base_url}/channels",
        params={"where": "online:eq:1", "fields": "id", "limit": 100},
        timeout=10,
    ).json()
    return {row["id"] for row in rows}


def scheduled(moment: float) -> set[int]:
    """Ids of the channels the seed-0 small world's schedule has live at ``moment``."""
    schedule = sessions.world_schedule(0, SMALL_WORLD)
    return {FIRST_CHANNEL_ID + int(block.channel[at]) for block, at in schedule.live_at(moment)}


def test_rest_follows_the_sessions_on_a_manual_clock(
    make_platform: Callable[..., Platform],
) -> None:
    """Six world hours later (speed 3,600 on a manual clock) the online channels are the
    schedule's; a channel whose session ended meanwhile is offline with no viewers and lists
    that session as its newest recording."""
    wall = ManualClock()
    platform = make_platform(rate_limits=False, simulate=True, speed=3600, clock=wall)
    assert live_ids(platform) == scheduled(NOW)
    wall.advance(6)
    target = NOW + 6 * 3600
    deadline = time.monotonic() + 20
    while live_ids(platform) != scheduled(target) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert live_ids(platform) == scheduled(target)
    schedule = sessions.world_schedule(0, SMALL_WORLD)
    ended = [
        item
        for item in schedule.starting(NOW - 86_400, target)
        if NOW < item.end <= target and FIRST_CHANNEL_ID + item.channel not in scheduled(target)
    ]
    channel = FIRST_CHANNEL_ID + ended[0].channel
    row = httpx.get(f"{platform.base_url}/channels/{channel}", timeout=10).json()
    assert row["online"] is False and row["viewersCurrent"] == 0
    if row["hasVod"]:
        latest = httpx.get(f"{platform.base_url}/channels/{channel}/recordings").json()[0]
        assert latest["id"] == max(i.id for i in ended if i.channel == ended[0].channel)


def test_high_speed_thins_chat_and_says_so(make_platform: Callable[..., Platform]) -> None:
    """At speed 10,000 the platform keeps a fraction of chat and says which in a header and
    at /_emulator/clock; at speed 1 nothing is thinned and the header is absent."""
    fast = make_platform(rate_limits=False, simulate=True, speed=10_000)
    response = httpx.get(f"{fast.base_url}/channels", params={"limit": 1}, timeout=10)
    kept = float(response.headers["X-Explorer-Chat-Kept"])
    assert 0 < kept < 1 and response.headers["X-Explorer-Speed"] == "10000"
    clock = httpx.get(f"{fast.root_url}/_emulator/clock", timeout=10).json()
    assert clock["speed"] == 10_000 and 0 < clock["chatKept"] < 1
    real = make_platform(rate_limits=False, simulate=True)
    response = httpx.get(f"{real.base_url}/channels", params={"limit": 1}, timeout=10)
    assert "X-Explorer-Chat-Kept" not in response.headers


def test_a_restarted_world_resumes_its_clock(
    make_platform: Callable[..., Platform], tmp_path: Path
) -> None:
    """A persistent world stopped after 1,000 world seconds starts again at that instant."""
    wall = ManualClock()
    db = tmp_path / "world.db"
    first = make_platform(db=db, speed=100, clock=wall)
    wall.advance(10)
    assert (
        httpx.get(f"{first.base_url}/types")
        .headers["X-Explorer-Clock"]
        .startswith("2020-07-22T00:16:40")
    )
    first.stop()
    again = make_platform(db=db, clock=ManualClock())
    stamp = httpx.get(f"{again.base_url}/types").headers["X-Explorer-Clock"]
    assert stamp == "2020-07-22T00:16:40.000Z"


def test_the_readme_example_shows_the_demo_channels_history(platform: Platform) -> None:
    """streamer is live at the world's instant and has followers, recordings and viewer
    analytics for 2020-07-01 from the first call; api.clock() reads the world clock."""
    with explorer.connect(platform.base_url, progress=False) as api:
        assert api.clock() >= pd.Timestamp("2020-07-22", tz="UTC")
        streamer = api.channel("streamer")
        assert len(streamer.followers()) > 0 and len(streamer.recordings()) > 0
    with explorer.connect(platform.base_url, username="streamer", password="explorer") as owner:
        hours = owner.channel("streamer").analytics("viewers", "2020-07-01", "2020-07-02")
        assert len(hours) == 24 and (hours["anon"] + hours["authed"]).max() > 0
    row = httpx.get(f"{platform.base_url}/channels/streamer", timeout=10).json()
    assert row["online"] is True and row["viewersCurrent"] > 0


def test_analytics_sessions_are_the_recordings(platform: Platform, signed_in: SignIn) -> None:
    """streamer's streamSessions over two weeks of its history end exactly where its
    recordings of that span end, with the same durations."""
    owner = signed_in(platform.base_url, "streamer")
    span = {"from": "2020-07-01T00:00:00Z", "to": "2020-07-15T00:00:00Z"}
    events = owner.get(
        f"/channels/{FIRST_CHANNEL_ID}/analytics/tsdb/streamSessions", params=span
    ).json()
    ended = sorted((e["time"], e["duration"]) for e in events if not e["online"])
    listed = owner.get(f"/channels/{FIRST_CHANNEL_ID}/recordings", params={"limit": 100}).json()
    recorded = sorted(
        (r["updatedAt"], int(r["duration"]))
        for r in listed
        if span["from"][:10] <= r["updatedAt"][:10] < span["to"][:10]
    )
    assert ended and ended == recorded
