"""api.watch against live platforms: 200 simulated channels in one log, adding and leaving,
the top rule on an injected sleep, shards, failed joins, rates on an injected clock, reconnects,
closing, and the async twin."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pandas as pd
import pytest

import explorer
from explorer.chat import Chat
from explorer.collect.watch import AsyncWatch, Watch
from explorer.core import loop
from explorer.recording.capture import open_capture
from tests import databases
from tests.chatkit import World
from tests.clocks import ManualClock
from tests.test_chat_client import wait_until
from tests.test_chat_client_reconnect import control

#: Channels the big watch joins from one process.
MANY = 200
#: A channel id no platform has.
NO_SUCH_CHANNEL = 987_654_321
STATS_COLUMNS = [
    *("token", "state", "events", "messages", "rate", "reconnects", "gaps", "removed"),
    *("outages", "error"),
]


class Ticks:
    """An injected sleep for the top rule: each call waits until the test calls :meth:`tick`."""

    def __init__(self) -> None:
        self.asked: list[float] = []
        self._queue: asyncio.Queue[None] = asyncio.Queue()

    async def sleep(self, seconds: float) -> None:
        """Wait for the next tick (the watch's loop)."""
        self.asked.append(seconds)
        await self._queue.get()

    def tick(self) -> None:
        """Let one sleep end (any thread)."""
        loop.get_loop().call_soon_threadsafe(self._queue.put_nowait, None)


@pytest.fixture(scope="module")
def busy() -> Iterator[World]:
    """A platform with simulated chat and rate limits on, with its default connection caps
    (30,000 channels: over 200 live at the world's instant)."""
    running = World.start(
        channels=30_000,
        rate_limits=True,
        simulate=True,
        sim_rate=200.0,
        sim_channel_rate=15.0,
    )
    yield running
    running.stop()


@pytest.fixture(scope="module")
def quiet() -> Iterator[World]:
    """A platform without simulated chat: only what a test says is said."""
    running = World.start(chat_rate=1000.0, chat_burst=1000)
    yield running
    running.stop()


@pytest.fixture
def watches() -> Iterator[Callable[..., Watch]]:
    """A factory of sync watches (``watches(base_url, channels, **options)``), closed after."""
    opened: list[tuple[explorer.Client, Watch]] = []

    def make(base_url: str, channels: Any = None, **options: Any) -> Watch:
        api = explorer.connect(base_url, progress=False)
        watch = api.watch(channels, **options)
        opened.append((api, watch))
        return watch

    yield make
    for api, watch in opened:
        watch.close()
        api.close()


@pytest.fixture(scope="module")
def streamer(quiet: World) -> Iterator[Chat]:
    """The demo streamer, joined to their own channel on the quiet platform, to say things."""
    api = explorer.connect(quiet.base_url, progress=False, username="streamer", password="explorer")
    chat = api.chat("streamer")
    yield chat
    chat.close()
    api.close()


def online(world: World, count: int) -> list[int]:
    """The ``count`` online channels with the most current viewers, busiest first."""
    page = httpx.get(
        f"{world.base_url}/channels",
        params={"where": "online:eq:1", "order": "viewersCurrent:desc", "limit": count},
        timeout=10,
    ).json()
    return [int(channel["id"]) for channel in page]


def connections(world: World) -> int:
    """Open chat connections over every node of ``world``."""
    url = f"{world.platform.root_url}/_emulator/chat/nodes"
    return sum(int(node["connections"]) for node in httpx.get(url, timeout=10).json())


def test_watches_200_channels_in_one_log(busy: World, watches: Callable[..., Watch]) -> None:
    """200 channels join from one process (rate limits on) within seconds, every row of the
    combined log names its channel, and the views and stats cover them all."""
    api = explorer.connect(busy.base_url, progress=False)
    frame = api.channels(where={"online": True}, order="viewersCurrent:desc", max_rows=MANY)
    api.close()
    started = time.monotonic()
    watch = watches(busy.base_url, frame)
    joined = time.monotonic() - started
    assert watch.channels == sorted(frame.index) and joined < 30, joined
    wait_until(lambda: watch.log.messages()["channel"].nunique() >= 20, timeout=30)
    log = watch.log.frame
    assert log["channel"].notna().all()
    assert set(log["channel"]) <= set(frame.index)
    welcomes = log.loc[log["event"] == "WelcomeEvent", "channel"]
    assert sorted(welcomes) == sorted(frame.index)
    messages = watch.messages()
    assert messages["channel"].notna().all() and len(watch.users()) > 0
    stats = watch.stats()
    assert list(stats.columns) == STATS_COLUMNS and str(stats.index.dtype) == "Int64"
    assert sorted(stats.index) == sorted(frame.index)
    assert (stats["state"] == "connected").all() and stats["error"].isna().all()
    assert list(stats["token"].sort_index()) == list(frame["token"].sort_index())
    assert stats["rate"].is_monotonic_decreasing
    per_channel = messages.groupby("channel").size()
    assert (stats["messages"].reindex(per_channel.index) >= per_channel).all()
    assert f"{MANY:,} joined" in repr(watch)


def test_joins_refused_as_too_fast_are_tried_again(
    make_platform: Callable[..., Any], watches: Callable[..., Watch]
) -> None:
    """When the platform throttles the joins of one address (auth answers 4004), each is tried
    again after a backoff until every channel is joined."""
    world = World(make_platform(rate_limits=True, chat_rate=2.0, chat_burst=2))
    channels = online(world, 30)
    watch = watches(world.base_url, channels, reconnect_delay=0.05)
    assert watch.channels == sorted(channels)
    assert watch.stats()["error"].isna().all()


def test_add_and_remove_change_the_channels(
    quiet: World, watches: Callable[..., Watch], streamer: Chat
) -> None:
    """add joins channels by token or id (skipping those already watched), remove leaves
    them (stats keeps their totals, as left); what the streamer says lands in the log under
    the streamer's channel."""
    others = [c for c in online(quiet, 3) if c != quiet.channel][:2]
    watch = watches(quiet.base_url, others[0])
    watch.add("streamer", others[0], others[1])
    assert watch.channels == sorted([quiet.channel, *others])
    streamer.send("watched")
    wait_until(lambda: "watched" in set(watch.messages()["text"]))
    said = watch.messages().set_index("text").loc["watched"]
    assert said["channel"] == quiet.channel
    left = watch.chat(quiet.channel)
    watch.remove("streamer", others[1])
    assert watch.channels == [others[0]]
    assert left is not None and left.state == "closed"
    stats = watch.stats()
    assert list(stats.sort_index().index) == sorted([quiet.channel, *others])
    assert stats.loc[quiet.channel, "state"] == "left" and stats.loc[quiet.channel, "messages"] >= 1


def test_top_rule_follows_the_ranking(
    make_platform: Callable[..., Any], tmp_path: Path, watches: Callable[..., Watch]
) -> None:
    """The top rule is evaluated again at each refresh (an injected sleep): it joins a channel
    that came online at the top and leaves one that went offline, and keeps explicit ones."""
    db = tmp_path / "platform.db"
    world = World(make_platform(db=db, rate_limits=False))
    top = online(world, 4)
    ticks = Ticks()
    watch = watches(world.base_url, top[1], top=3, refresh="10s", sleep=ticks.sleep)
    assert watch.channels == sorted(top[:3]) and watch.refreshes == 1
    offline = int(
        httpx.get(
            f"{world.base_url}/channels",
            params={"where": "online:eq:0", "order": "id:asc", "limit": 1},
            timeout=10,
        ).json()[0]["id"]
    )
    with databases.opened(db) as store, store.transaction() as tx:
        tx.execute("UPDATE channels SET online = 0 WHERE id IN (?, ?)", (top[0], top[1]))
        tx.execute(
            "UPDATE channels SET online = 1, viewersCurrent = 10000000 WHERE id = ?", (offline,)
        )
    # On PostgreSQL the platform hears of a write made outside it by a notification, and
    # serves its cached listings until then: the refresh must come after.
    wait_until(lambda: online(world, 1) == [offline])
    ticks.tick()
    wait_until(lambda: watch.refreshes == 2)
    assert watch.channels == sorted([offline, top[1], top[2], top[3]])
    assert watch.chat(top[0]) is None and ticks.asked[0] == 10.0


def test_shard_keeps_its_share(quiet: World, watches: Callable[..., Watch]) -> None:
    """shard=(K, N) keeps only the channels whose id % N is K - 1, named or from the top rule."""
    named = online(quiet, 12)
    watch = watches(quiet.base_url, named, shard=(2, 3))
    assert watch.channels == sorted(c for c in named if c % 3 == 1)
    ranked = watches(quiet.base_url, top=12, shard=(1, 2))
    assert ranked.channels == sorted(c for c in named if c % 2 == 0)


def test_a_channel_that_cannot_be_joined_is_reported(
    quiet: World, watches: Callable[..., Watch]
) -> None:
    """A channel whose join fails is in stats as failed with its error, the rest are joined;
    adding it again tries again."""
    watch = watches(quiet.base_url, [quiet.channel, NO_SUCH_CHANNEL])
    assert watch.channels == [quiet.channel]
    stats = watch.stats()
    failed = stats.loc[NO_SUCH_CHANNEL]
    assert failed["state"] == "failed" and "not found" in failed["error"]
    assert stats.loc[quiet.channel, "state"] == "connected"
    assert "1 failed" in repr(watch)
    first = watch.async_twin.chat(NO_SUCH_CHANNEL)
    watch.add(NO_SUCH_CHANNEL)
    assert watch.async_twin.chat(NO_SUCH_CHANNEL) is not first
    assert watch.stats().loc[NO_SUCH_CHANNEL, "state"] == "failed"


def test_an_unknown_channel_name_is_reported_like_an_unknown_id(
    quiet: World, watches: Callable[..., Watch]
) -> None:
    """A token that names no channel is a failed stats row with its error (no channel id),
    not a failed watch; the named channels are joined, and removing the name forgets it."""
    watch = watches(quiet.base_url, ["streamer", "no-such-streamer"])
    assert watch.channels == [quiet.channel]
    stats = watch.stats()
    failed = stats.loc[stats["token"] == "no-such-streamer"].iloc[0]
    assert failed["state"] == "failed" and "not found" in failed["error"].lower()
    assert pd.isna(failed.name) and failed["events"] == 0
    assert "1 failed" in repr(watch)
    watch.remove("no-such-streamer")
    assert "failed" not in repr(watch)


def test_rate_counts_events_over_the_window(
    quiet: World, watches: Callable[..., Watch], streamer: Chat
) -> None:
    """rate() and the stats' rate are events per second over the last 10 s on the injected
    clock, per channel and in total; a channel left and joined again starts from 0."""
    clock = ManualClock()
    watch = watches(quiet.base_url, "streamer", clock=clock)
    assert watch.rate() == 0.0
    for i in range(5):
        streamer.send(f"rate {i}")
    wait_until(lambda: len(watch.messages()) == 5)
    clock.advance(5.0)
    assert watch.rate() == 1.0
    row = watch.stats().loc[quiet.channel]
    assert (row["rate"], row["events"], row["messages"]) == (1.0, 6, 5)
    clock.advance(30.0)
    assert watch.rate() == 0.0
    watch.remove("streamer")
    watch.add("streamer")
    # A channel joined again counts from its new join (its WelcomeEvent), never below 0.
    assert 0.0 < watch.stats().loc[quiet.channel, "rate"] <= 1 / 30


def test_signed_in_watch_joins_as_the_user(quiet: World) -> None:
    """anonymous=False joins every channel as the signed-in user."""
    api = explorer.connect(quiet.base_url, progress=False, username="viewer", password="explorer")
    with api.watch(online(quiet, 2), anonymous=False) as watch:
        assert (watch.stats()["state"] == "authenticated").all() and len(watch.channels) == 2
    api.close()


def test_each_channel_reconnects_without_a_gap(
    quiet: World, watches: Callable[..., Watch], streamer: Chat
) -> None:
    """When a chat node stops, its channels reconnect to the other one and recover what was
    said meanwhile from history, each message once; stats count the reconnects."""
    others = [c for c in online(quiet, 3) if c != quiet.channel][:2]
    watch = watches(quiet.base_url, ["streamer", *others], reconnect_delay=0.5)
    reader = watch.chat(quiet.channel)
    assert isinstance(reader, Chat) and reader.endpoint is not None
    node = quiet.platform.chat_endpoints.index(reader.endpoint)
    try:
        control(quiet, node, "stop")
        for i in range(3):
            streamer.send(f"meanwhile {i}")
        wait_until(lambda: watch.stats().loc[quiet.channel, "reconnects"] == 1, timeout=10)
        wait_until(lambda: (watch.stats()["state"] == "connected").all(), timeout=10)
    finally:
        control(quiet, node, "start")
    streamer.send("after")
    wait_until(lambda: "after" in set(watch.messages()["text"]))
    messages = watch.messages()
    texts = list(messages["text"])
    assert [t for t in texts if t.startswith("meanwhile")] == [f"meanwhile {i}" for i in range(3)]
    stats = watch.stats()
    assert stats["gaps"].sum() == 0
    assert stats.loc[quiet.channel, "messages"] == (messages["channel"] == quiet.channel).sum()


def test_recording_writes_every_channel(
    quiet: World, watches: Callable[..., Watch], streamer: Chat, tmp_path: Path
) -> None:
    """to= records the combined log: close writes every row with its channel to the capture,
    while the log in memory keeps only a bounded tail."""
    others = [c for c in online(quiet, 3) if c != quiet.channel][:2]
    watch = watches(quiet.base_url, ["streamer", *others], to=tmp_path / "capture", max_rows=5)
    assert watch.recorder is not None and "capture" in watch.async_twin.status()["recording"]
    for i in range(20):
        streamer.send(f"recorded {i}")
    wait_until(lambda: watch.log.counts.get("ChatMessage") == 20)
    watch.close()
    capture = open_capture(tmp_path / "capture")
    frame = capture.events()
    assert len(frame) == watch.log.total and frame["channel"].notna().all()
    assert sorted(capture.channels) == sorted([quiet.channel, *others])
    assert list(capture.messages()["text"]) == [f"recorded {i}" for i in range(20)]
    assert len(watch.log.frame) == 5


def test_widget_shows_the_watch(
    quiet: World, watches: Callable[..., Watch], streamer: Chat
) -> None:
    """widget() is a WatchView of the combined log, the stats and the status: channels
    joined, the busiest channels, the latest events; displaying the watch shows one view."""
    others = [c for c in online(quiet, 3) if c != quiet.channel][:1]
    watch = watches(quiet.base_url, ["streamer", *others])
    streamer.send("on screen")
    wait_until(lambda: "on screen" in set(watch.messages()["text"]))
    view = watch.widget()
    view.refresh()
    assert (view.channels, view.total) == (2, watch.log.total)
    assert {row["channel"] for row in view.table} == {str(c) for c in [quiet.channel, *others]}
    assert view.records[-1]["text"] == "on screen" and "2 joined" in view.status["channels"]
    view.close()
    bundle = watch._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert watch._repr_mimebundle_() == bundle


def test_the_view_shown_keeps_its_last_state_after_close(
    quiet: World, watches: Callable[..., Watch]
) -> None:
    """Closing a watch leaves the view it showed open (still in the notebook), refreshed one
    last time to show the watch closed."""
    watch = watches(quiet.base_url, "streamer")
    watch._repr_mimebundle_()
    view = watch._widget
    assert view is not None and view.status["state"] == "watching"
    watch.close()
    wait_until(lambda: "state: closed" in view._header.value)  # drawn after the traits
    assert view.comm is not None and view.status["state"] == "closed"


def test_close_leaves_every_chat(
    make_platform: Callable[..., Any], watches: Callable[..., Watch]
) -> None:
    """close() leaves every chat: the platform counts the connections out again."""
    world = World(make_platform(rate_limits=False))
    watch = watches(world.base_url, online(world, 5))
    assert connections(world) == 5
    chats = [watch.chat(c) for c in watch.channels]
    watch.close()
    assert all(chat is not None and chat.state == "closed" for chat in chats)
    wait_until(lambda: connections(world) == 0)
    assert watch.async_twin.closed and "closed" in repr(watch)


def test_async_watch_joins_with_await(quiet: World) -> None:
    """From AsyncClient, api.watch gives an AsyncWatch that joins when awaited (or entered)
    and leaves on aclose."""

    async def scenario() -> tuple[list[int], pd.DataFrame]:
        async with explorer.AsyncClient(quiet.base_url, progress=False) as api:
            watch = api.watch(online(quiet, 2))
            assert isinstance(watch, AsyncWatch) and watch.channels == []
            async with watch:
                joined = watch.channels
                stats = watch.stats()
            assert watch.closed
            return joined, stats

    joined, stats = asyncio.run(scenario())
    assert joined == sorted(online(quiet, 2)) and len(stats) == 2


def test_messages_name_each_channel(
    quiet: World, watches: Callable[..., Watch], streamer: Chat
) -> None:
    """watch.messages() has the channel's token beside its id, also once the watch left it."""
    watch = watches(quiet.base_url, quiet.channel)
    streamer.send("named")
    wait_until(lambda: "named" in set(watch.messages()["text"]))
    watch.remove(quiet.channel)
    said = watch.messages().set_index("text").loc["named"]
    assert said["channel"] == quiet.channel and said["token"] == "streamer"


def test_offline_channels_named_are_warned(
    quiet: World, watches: Callable[..., Watch], caplog: pytest.LogCaptureFixture
) -> None:
    """Naming offline channels (as a ranking by viewersTotal does) warns which are offline and
    how to watch what is live; a live channel alone draws no warning."""
    page = httpx.get(
        f"{quiet.base_url}/channels",
        params={"where": "online:eq:0", "fields": "id,token", "limit": 2},
        timeout=10,
    ).json()
    with caplog.at_level(logging.WARNING, logger="explorer.collect.watch"):
        watches(quiet.base_url, "streamer")
        assert "offline" not in caplog.text
        watches(quiet.base_url, ["streamer", *(int(c["id"]) for c in page)])
    assert "2 of the 3 channels named are offline" in caplog.text
    assert all(c["token"] in caplog.text for c in page)
    assert "viewersCurrent:desc" in caplog.text
