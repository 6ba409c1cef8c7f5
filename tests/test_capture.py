"""Reading captures back: event-log frames and views from Parquet files, lazily, through
DuckDB; several recorders read as one."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pandas as pd
import pytest

from explorer.errors import CaptureError, CaptureNotFound, ExplorerError
from explorer.events import frames as chatviews
from explorer.events.log import EventLog
from explorer.recording.capture import open_capture
from explorer.recording.recorder import Recorder
from tests.test_recorder import T0, chat_message, poll_start

DAY = 86_400.0


def moderation_packets() -> list[dict[str, object]]:
    """A join, a timeout and a deletion of message m1, in channel 7."""
    return [
        {"type": "event", "event": "UserJoin", "data": {"username": "ana", "id": 1}},
        {
            "type": "event",
            "event": "UserTimeout",
            "data": {"user": {"user_name": "ana", "user_id": 1}, "duration": 60000, "channel": 7},
        },
        {
            "type": "event",
            "event": "DeleteMessage",
            "data": {"id": "m1", "moderator": {"user_name": "mod"}, "channel": 7},
        },
    ]


def record(
    path: str | Path, log: EventLog, name: str, packets: list[tuple[dict[str, object], float]]
) -> None:
    """Record ``packets`` (with receive times) through ``log`` into ``path``, flushing every
    ten rows, then close the recorder."""
    recorder = Recorder(path, name=name)
    recorder.follow(log)
    for i, (packet, at) in enumerate(packets):
        log.append(packet, at, channel=7)
        if i % 10 == 9:
            recorder.flush()
    recorder.close()


@pytest.fixture
def recorded(tmp_path: Path) -> EventLog:
    """A log of chat, a poll and moderation over two days, recorded into ``tmp_path``."""
    log = EventLog()
    packets = [(chat_message(i, channel=7 + i % 3), T0 + i) for i in range(25)]
    packets += [(poll_start({"yes": 1, "no": 2}), T0 + 30)]
    packets += [(p, T0 + 40 + i) for i, p in enumerate(moderation_packets())]
    packets += [(chat_message(100 + i, channel=8), T0 + DAY + i) for i in range(5)]
    record(tmp_path, log, "one", packets)
    return log


def test_frame_and_views_equal_the_event_logs(recorded: EventLog, tmp_path: Path) -> None:
    """frame() has EventLog.frame's columns, dtypes and values; the views match the log's."""
    capture = open_capture(tmp_path)
    pd.testing.assert_frame_equal(capture.events(), recorded.frame.reset_index(drop=True))
    for view in ("messages", "polls", "users", "moderation"):
        got, expected = getattr(capture, view)(), getattr(recorded, view)()
        pd.testing.assert_frame_equal(got.reset_index(drop=True), expected.reset_index(drop=True))
    assert capture.moderation()["target_user"].tolist() == ["ana", "ana"]


def test_filters_select_channels_times_and_events(recorded: EventLog, tmp_path: Path) -> None:
    """channels=, start= (epoch seconds or a timestamp), end= (exclusive) and events= pick the
    same rows as filtering the log's frame."""
    capture = open_capture(tmp_path)
    frame = recorded.frame
    start = pd.Timestamp(T0 + 5, unit="s", tz="UTC")
    wanted = frame.loc[
        frame["channel"].isin([8, 9])
        & (frame["received_at"] >= start)
        & (frame["received_at"] < start + pd.Timedelta("10s"))
    ]
    got = capture.events(channels=[8, 9], start=T0 + 5, end=str(start + pd.Timedelta("10s")))
    pd.testing.assert_frame_equal(got, wanted.reset_index(drop=True))
    assert capture.events(channels=[]).empty
    polls = capture.events(events=chatviews.POLL_EVENTS, columns=["event", "poll_q"])
    assert polls["poll_q"].tolist() == ["Tea?"] and list(polls.columns) == ["event", "poll_q"]
    assert capture.count(channels=[8]) == len(frame.loc[frame["channel"] == 8])


def test_time_filters_skip_other_dates_unread(recorded: EventLog, tmp_path: Path) -> None:
    """A time filter prunes whole date folders: a broken file in another date's folder is
    never opened, though reading everything trips on it."""
    broken = tmp_path / "events" / "date=2099-01-01" / "broken.parquet"
    broken.parent.mkdir()
    broken.write_bytes(b"not parquet")
    capture = open_capture(tmp_path)
    second_day = capture.events(start=T0 + DAY, end=T0 + 2 * DAY)
    assert second_day["message_id"].tolist() == [f"m{100 + i}" for i in range(5)]
    with pytest.raises(CaptureError, match=r"broken\.parquet") as failed:
        capture.events()
    assert isinstance(failed.value.__cause__, duckdb.Error)


def test_channel_filter_is_pushed_into_the_scan(recorded: EventLog, tmp_path: Path) -> None:
    """DuckDB's plan applies the channel and time filters inside the Parquet scan."""
    plan = open_capture(tmp_path).sql(
        "EXPLAIN SELECT text FROM events WHERE channel = 8 AND received_at >= '2023-11-15'"
    )
    text = "\n".join(plan.iloc[:, 1])
    scan = text[text.index("READ_PARQUET") :]
    assert "channel = 8" in scan and "received_at >=" in scan


def test_two_recorders_read_as_one(tmp_path: Path) -> None:
    """Two recorders writing into one directory (one shard each) read as one capture, each row
    once, partial files ignored."""
    first, second = EventLog(), EventLog()
    record(tmp_path, first, "shard-1", [(chat_message(i, 1), T0 + i) for i in range(0, 40, 2)])
    record(tmp_path, second, "shard-2", [(chat_message(i, 2), T0 + i) for i in range(1, 40, 2)])
    leftover = tmp_path / "events" / "date=2023-11-14" / ".shard-1-000009.parquet.partial"
    leftover.write_bytes(b"half a file")
    capture = open_capture(tmp_path)
    frame = capture.events()
    assert frame["message_id"].tolist() == [f"m{i}" for i in range(40)]
    assert capture.channels == [1, 2]
    assert capture.sql("SELECT count(DISTINCT message_id) AS n FROM events")["n"][0] == 40
    assert len(capture.recorders()) == 2
    assert "40 events" in repr(capture) and "2 recorders" in repr(capture)


def test_snapshots_and_sql_over_both_views(tmp_path: Path) -> None:
    """snapshots() reads the track rows with toolkit dtypes, filtered; sql() joins events with
    snapshots."""
    log = EventLog()
    recorder = Recorder(tmp_path, name="both")
    recorder.follow(log)
    times = pd.to_datetime([T0, T0, T0 + 30], unit="s", utc=True).as_unit("ms")
    recorder.add_snapshots(
        pd.DataFrame(
            {
                "time": times,
                "channel": pd.array([7, 8, 7], dtype="Int64"),
                "token": ["seven", "eight", "seven"],
                "viewersCurrent": pd.array([10, 20, 12], dtype="Int64"),
            }
        )
    )
    for i in range(6):
        log.append(chat_message(i, channel=7 + i % 2), T0 + i)
    recorder.close()
    capture = open_capture(tmp_path)
    snapshots = capture.snapshots(channels=[7])
    assert snapshots["viewersCurrent"].tolist() == [10, 12]
    assert str(snapshots["time"].dtype) == "datetime64[ms, UTC]"
    assert str(snapshots["channel"].dtype) == "Int64" and str(snapshots["token"].dtype) == "str"
    assert list(snapshots.columns) == ["time", "channel", "token", "viewersCurrent"]
    assert len(capture.snapshots(start=T0 + 1)) == 1
    joined = capture.sql(
        "SELECT s.token, count(*) AS messages FROM events e JOIN snapshots s "
        "ON e.channel = s.channel AND s.time = TIMESTAMPTZ '2023-11-14 22:13:20+00' "
        "GROUP BY 1 ORDER BY 1"
    )
    assert joined.to_dict("list") == {"token": ["eight", "seven"], "messages": [3, 3]}
    first, last = capture.span
    assert first == times[0] and last == times[2]


def test_an_empty_capture_has_empty_views(tmp_path: Path) -> None:
    """A capture without files yet (an empty folder) gives empty frames with the usual dtypes
    and empty SQL views."""
    capture = open_capture(tmp_path)
    assert capture.events().dtypes.equals(EventLog().frame.dtypes)
    assert capture.messages().empty and capture.polls().empty
    assert list(capture.snapshots().columns) == ["time", "channel", "token"]
    assert capture.sql("SELECT count(*) AS n FROM events")["n"][0] == 0
    assert capture.channels == [] and capture.span == (None, None)
    assert "0 events" in repr(capture) and "<code>" in capture._repr_html_()


def test_a_capture_being_written_shows_new_files(tmp_path: Path) -> None:
    """An open capture sees the files flushed after it was opened."""
    log = EventLog()
    recorder = Recorder(tmp_path, name="live")
    recorder.follow(log)
    capture = open_capture(tmp_path)
    assert capture.count() == 0
    log.append(chat_message(0), T0)
    recorder.flush()
    assert capture.count() == 1
    log.append(chat_message(1), T0 + 1)
    recorder.close()
    assert capture.messages()["message_id"].tolist() == ["m0", "m1"]


def test_open_capture_refuses_what_is_not_a_capture(tmp_path: Path) -> None:
    """A missing path raises CaptureNotFound (a FileNotFoundError), a file CaptureError (a
    ValueError): both ExplorerErrors."""
    with pytest.raises(CaptureNotFound, match="does not exist") as missing:
        open_capture(tmp_path / "missing")
    assert isinstance(missing.value, FileNotFoundError | ExplorerError)
    (tmp_path / "file").write_text("x")
    with pytest.raises(CaptureError, match="is a file") as file:
        open_capture(tmp_path / "file")
    assert isinstance(file.value, ValueError)


def test_open_capture_on_a_capture_s_part_names_its_parent(
    recorded: EventLog, tmp_path: Path
) -> None:
    """Opening the events/ folder inside a capture says what a capture is and to open the
    parent, instead of returning an empty capture."""
    with pytest.raises(CaptureError, match=r"not a capture.*open its parent") as wrong:
        open_capture(tmp_path / "events")
    assert repr(str(tmp_path)) in str(wrong.value)


def test_open_capture_on_a_folder_of_captures_lists_them(
    recorded: EventLog, tmp_path: Path
) -> None:
    """A folder that holds captures, or nothing a recorder writes, is refused with what a
    capture holds (and the captures inside, when there are some)."""
    with pytest.raises(CaptureError, match=rf"holds captures: .*{tmp_path.name}"):
        open_capture(tmp_path.parent)
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "todo.txt").write_text("x")
    with pytest.raises(CaptureError, match=r"events/, snapshots/, recorders/, and it holds none"):
        open_capture(tmp_path / "notes")
