"""Stream sessions: the platform's broadcast is the live session, and every event of a watch
and of its capture carries its session and its offset into it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

import explorer
from explorer.errors import NotFound
from explorer.events.log import EventLog
from explorer.events.marks import marks_frame, stamp
from explorer.recording.capture import open_capture
from tests.chatkit import World
from tests.test_chat_client import wait_until

#: The longest session the platform's schedule makes (16 hours).
LONGEST = pd.Timedelta(hours=16)


@pytest.fixture(scope="module")
def quiet() -> Iterator[World]:
    """A platform without simulated chat: only what a test says is said."""
    running = World.start(channels=300, chat_rate=1000.0, chat_burst=1000)
    yield running
    running.stop()


def _message(log: EventLog, channel: int, at: float) -> None:
    log.append(
        {
            "type": "event",
            "event": "ChatMessage",
            "data": {
                "channel": channel,
                "id": f"m{at}",
                "user_name": "a",
                "user_id": 1,
                "message": {"message": [{"type": "text", "data": "hi", "text": "hi"}]},
            },
        },
        received_at=at,
    )


def test_stamp_takes_each_channels_latest_mark() -> None:
    """An event is in its channel's latest mark at or before it: none before the first look,
    the session with its offset after a live mark, none after an offline one or elsewhere."""
    log = EventLog()
    for at, channel in [(50.0, 5), (100.0, 5), (150.0, 5), (200.0, 6), (300.0, 5)]:
        _message(log, channel, at)
    marks = marks_frame(
        [
            {"channel": 5, "session": "s1", "since": 90.0},
            {"channel": 5, "session": None, "since": 250.0},
        ]
    )
    frame = stamp(log.frame, marks)
    assert frame["session"].tolist()[1:3] == ["s1", "s1"]
    assert frame["session"].isna().tolist() == [True, False, False, True, True]
    assert frame["session_offset"].tolist()[1:3] == [pd.Timedelta("10s"), pd.Timedelta("60s")]
    assert str(frame["session"].dtype) == "str"
    assert frame["session_offset"].dtype == "timedelta64[ms]"


def test_broadcast_is_the_live_session(quiet: World) -> None:
    """A live channel's broadcast started less than a session's longest length before the
    platform's clock (the scheduled session), and an offline one answers 404."""
    with explorer.connect(quiet.base_url, progress=False) as api:
        broadcast = api.channel("streamer").broadcast()
        now = api.clock()
        started = broadcast["startedAt"].iloc[0]
        assert now - LONGEST < started <= now
        offline = api.channels(where={"online": False}, max_rows=1, fields=("id",))
        with pytest.raises(NotFound):
            api.channel(int(offline.index[0])).broadcast()


def test_watch_and_capture_events_carry_session_and_offset(quiet: World, tmp_path: Path) -> None:
    """A watched message carries the channel's broadcast id and its offset into it (the world
    time the broadcast had run), and its capture gives the same columns."""
    out = tmp_path / "capture"
    api = explorer.connect(quiet.base_url, progress=False)
    owner = explorer.connect(
        quiet.base_url, progress=False, username="streamer", password="explorer"
    )
    chat = owner.chat("streamer")
    try:
        watch = api.watch(["streamer"], to=out)
        wait_until(lambda: len(watch.sessions()) == 1, timeout=30)
        chat.send("in the session")
        wait_until(lambda: "in the session" in watch.messages()["text"].tolist(), timeout=30)
        broadcast = api.channel("streamer").broadcast()
        ran = api.clock() - broadcast["startedAt"].iloc[0]
        frame = watch.events()
        row = frame[frame["text"] == "in the session"].iloc[0]
        assert row["session"] == broadcast.index[0]
        assert abs(row["session_offset"] - ran) < pd.Timedelta("60s")
        watch.close()
        saved = open_capture(out).events(sessions=True, events="ChatMessage")
        kept = saved[saved["text"] == "in the session"].iloc[0]
        assert (kept["session"], kept["session_offset"]) == (
            row["session"],
            row["session_offset"],
        )
    finally:
        chat.close()
        owner.close()
        api.close()
