"""Replaying captures: events fed back into an event log in time order, paced by an injected
clock, so the log's views and widgets work without a platform."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import httpx
import pandas as pd
import pytest

import explorer
from explorer.events.log import EventLog
from explorer.recording.recorder import Recorder
from explorer.recording.replays import replay
from tests.chatkit import World
from tests.clocks import ManualClock
from tests.test_capture import record
from tests.test_chat_client import wait_until
from tests.test_recorder import T0, chat_message, poll_start


class Pacer:
    """A manual clock and the sleep that moves it, recording each wait."""

    def __init__(self) -> None:
        self.clock = ManualClock()
        self.waits: list[float] = []

    async def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.clock.advance(seconds)


@pytest.fixture
def recorded(tmp_path: Path) -> EventLog:
    """Messages one second apart in channels 7 and 8, a history row and a poll, recorded."""
    log = EventLog()
    packets = [(chat_message(i, channel=7 + i % 2), T0 + i) for i in range(20)]
    packets += [(poll_start({"yes": 1, "no": 2}), T0 + 20)]
    record(tmp_path, log, "one", packets)
    recorder = Recorder(tmp_path, name="two")
    recorder.follow(log)
    log.add_history([chat_message(99)["data"]], T0 + 21, channel=7)
    recorder.close()
    return log


def test_paced_replay_keeps_time_and_rows(recorded: EventLog, tmp_path: Path) -> None:
    """At speed 10 the replay waits a tenth of each gap (by the injected clock, no real
    sleeping) and the log it fills equals the recorded one, history rows included."""
    pacer = Pacer()
    replaying = replay(tmp_path, speed=10, clock=pacer.clock, sleep=pacer.sleep)
    assert replaying.wait(10) and replaying.done
    assert sum(pacer.waits) == pytest.approx(2.1)
    assert pacer.waits == pytest.approx([0.1] * 21, abs=1e-6)
    assert replaying.progress == (22, 22)
    pd.testing.assert_frame_equal(replaying.log.frame, recorded.frame)
    assert replaying.messages()["from_history"].tolist()[-1] is True
    assert "22 of 22 events, done" in repr(replaying)


def test_unpaced_replay_feeds_at_once(recorded: EventLog, tmp_path: Path) -> None:
    """speed=None or infinity feeds every event without waiting."""
    pacer = Pacer()
    for speed in (None, float("inf")):
        replaying = replay(tmp_path, speed=speed, clock=pacer.clock, sleep=pacer.sleep)
        assert replaying.wait(10)
        assert len(replaying.messages()) == 21
    assert pacer.waits == []


def test_replay_of_some_channels_and_times(recorded: EventLog, tmp_path: Path) -> None:
    """channels=, start= and end= pick the events replayed, from an open capture too."""
    capture = explorer.recording.capture.open_capture(tmp_path)
    replaying = replay(capture, None, channels=[8], start=T0 + 4, end=T0 + 10)
    replaying.wait(10)
    assert replaying.messages()["message_id"].tolist() == ["m5", "m7", "m9"]
    assert replaying.progress == (3, 3)


def test_widget_and_poll_chart_follow_a_replay(recorded: EventLog, tmp_path: Path) -> None:
    """A replay's LiveChat counts and shows the replayed events; its PollChart shows the poll."""
    replaying = replay(tmp_path, speed=None)
    replaying.wait(10)
    view = replaying.widget(rows=3)
    view.refresh(force=True)
    assert view.total == 22 and view.state == "replayed"
    assert [r["text"] for r in view.records][-1] == "message 99"
    chart = replaying.poll_chart()
    chart.refresh()
    assert chart.question == "Tea?" and chart.responses == {"yes": 1, "no": 2}
    view.close()
    chart.close()


def test_close_stops_a_replay_early(recorded: EventLog, tmp_path: Path) -> None:
    """close() cancels a replay that is waiting; the log keeps what was fed."""
    gate = asyncio.Event()
    fed: list[int] = []

    async def never(seconds: float) -> None:
        fed.append(seconds)
        await gate.wait()

    replaying = replay(tmp_path, speed=1.0, sleep=never)
    wait_until(lambda: fed)
    replaying.close()
    assert replaying.done and replaying.progress == (1, 22)


def test_bad_speed_is_refused(tmp_path: Path) -> None:
    """A speed that is not positive raises ValueError."""
    with pytest.raises(ValueError, match="speed"):
        replay(tmp_path, speed=0)


@pytest.fixture(scope="module")
def live() -> Iterator[World]:
    """A platform with simulated chat, chatting fast (its clock at ten times real time: the
    busiest chat of a small world at its starting instant says a few messages a minute)."""
    running = World.start(simulate=True, speed=10.0, sim_rate=60.0, sim_channel_rate=15.0)
    yield running
    running.stop()


def test_a_recorded_live_chat_replays_to_the_same_messages(live: World, tmp_path: Path) -> None:
    """A live chat (with backlog from history) recorded while it runs and replayed gives the
    same messages() as the live log."""
    page = httpx.get(
        f"{live.base_url}/channels",
        params={"where": "online:eq:1", "order": "viewersCurrent:desc", "limit": 1},
        timeout=10,
    ).json()
    log = EventLog()
    recorder = Recorder(tmp_path, name="live")
    recorder.follow(log)
    with (
        explorer.connect(live.base_url, progress=False) as api,
        api.chat(page[0]["id"], log=log, backlog=5),
    ):
        wait_until(lambda: len(log.messages()) >= 15, timeout=30)
        recorder.flush()
        wait_until(lambda: len(log.messages()) >= 30, timeout=30)
    recorder.close()
    replaying = replay(tmp_path, speed=None)
    assert replaying.wait(30)
    live_messages = log.messages()
    assert live_messages["from_history"].sum() == 5
    pd.testing.assert_frame_equal(replaying.messages(), live_messages)
    pd.testing.assert_frame_equal(replaying.log.frame, log.frame)
