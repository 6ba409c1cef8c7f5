"""EventLog: flattening against golden frames, chunking, the ring, history, threads, views."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pandas as pd
import pytest
from pandas.testing import assert_frame_equal

from explorer.events import log as log_module
from explorer.events.log import EventLog
from explorer.events.rows import COLUMNS, DTYPES

FIXTURES = Path(__file__).parent / "fixtures" / "chat"
T = 1_700_000_000.5
AT = pd.Timestamp("2023-11-14 22:13:20.5", tz="UTC")
EVENTS = pd.CategoricalDtype(
    [
        "WelcomeEvent",
        "ChatMessage",
        "UserJoin",
        "UserLeave",
        "PollStart",
        "PollEnd",
        "DeleteMessage",
        "PurgeMessage",
        "ClearMessages",
        "UserUpdate",
        "UserTimeout",
    ]
)
UTC_MS = "datetime64[ms, UTC]"
EXPECTED_DTYPES: dict[str, Any] = {
    "received_at": UTC_MS,
    "event": EVENTS,
    "channel": "Int64",
    "message_id": "str",
    "user_name": "str",
    "user_id": "Int64",
    "user_roles": "str",
    "text": "str",
    "components": "str",
    "whisper": "boolean",
    "me": "boolean",
    "target": "str",
    "poll_q": "str",
    "poll_answers": object,
    "poll_voters": "Int64",
    "poll_responses": object,
    "poll_ends_at": UTC_MS,
    "poll_duration_ms": "Int64",
    "moderator": "str",
    "target_user_id": "Int64",
    "duration_ms": "Int64",
    "from_history": "boolean",
}


def packet(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = orjson.loads((FIXTURES / name).read_bytes())
    return loaded


def objects(values: list[Any]) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    for i, value in enumerate(values):
        out[i] = value
    return out


def golden(*rows: dict[str, Any], start: int = 0, events: Any = EVENTS) -> pd.DataFrame:
    """A frame written by hand: unnamed columns are missing, received_at is AT."""
    defaults = {"received_at": AT, "from_history": False}
    columns = {}
    for name, dtype in EXPECTED_DTYPES.items():
        values = [row.get(name, defaults.get(name)) for row in rows]
        if name == "event":
            columns[name] = pd.Categorical(values, dtype=events)
        elif dtype is object:
            columns[name] = objects(values)
        else:
            columns[name] = pd.array(values, dtype=dtype)
    return pd.DataFrame(columns, index=pd.RangeIndex(start, start + len(rows), name="row"))


def chat(i: int, **data: Any) -> dict[str, Any]:
    """A ChatMessage whose fields all derive from i, so a torn row would show."""
    body = {
        "channel": 7,
        "id": f"m{i}",
        "user_name": f"u{i}",
        "user_id": i,
        "user_roles": ["User"],
        "message": {"message": [{"type": "text", "data": f"t{i}", "text": f"t{i}"}], "meta": {}},
    }
    return {"type": "event", "event": "ChatMessage", "data": {**body, **data}}


def chat_row(i: int, **fields: Any) -> dict[str, Any]:
    row = {
        "received_at": pd.Timestamp(i, unit="s", tz="UTC"),
        "event": "ChatMessage",
        "channel": 7,
        "message_id": f"m{i}",
        "user_name": f"u{i}",
        "user_id": i,
        "user_roles": "User",
        "text": f"t{i}",
        "components": "text",
        "whisper": False,
        "me": False,
    }
    return {**row, **fields}


FLATTENED: dict[str, dict[str, Any]] = {
    "welcome_event.json": {"event": "WelcomeEvent"},
    "chat_message.json": {
        "event": "ChatMessage",
        "channel": 4242,
        "message_id": "6c1e8a70-5b2f-11e6-9a3d-1b2c3d4e5f60",
        "user_name": "ana",
        "user_id": 1001,
        "user_roles": "Mod,User",
        "text": "Hi @bob look :) example.org/clip",
        "components": "text,tag,text,emoticon,text,link",
        "whisper": False,
        "me": False,
    },
    "chat_message_whisper.json": {
        "event": "ChatMessage",
        "channel": 4242,
        "message_id": "7d2f9b81-5b2f-11e6-9a3d-1b2c3d4e5f61",
        "user_name": "bob",
        "user_id": 1002,
        "user_roles": "User",
        "text": "psst",
        "components": "text",
        "whisper": True,
        "me": False,
        "target": "ana",
    },
    "chat_message_me.json": {
        "event": "ChatMessage",
        "channel": 4242,
        "message_id": "8e3fac92-5b2f-11e6-9a3d-1b2c3d4e5f62",
        "user_name": "cyd",
        "user_id": 1003,
        "user_roles": "Pro,User",
        "text": "waves",
        "components": "text",
        "whisper": False,
        "me": True,
    },
    "poll_start.json": {
        "event": "PollStart",
        "channel": 4242,
        "user_name": "ana",
        "user_id": 1001,
        "user_roles": "Owner,User",
        "poll_q": "Best map?",
        "poll_answers": ["Dust", "Mirage, of course"],
        "poll_voters": 3,
        "poll_responses": {"Dust": 1, "Mirage, of course": 2},
        "poll_ends_at": pd.Timestamp("2023-11-14 22:13:50", tz="UTC"),
        "poll_duration_ms": 29500,
    },
    "poll_end.json": {
        "event": "PollEnd",
        "channel": 4242,
        "user_name": "ana",
        "user_id": 1001,
        "user_roles": "Owner,User",
        "poll_q": "Best map?",
        "poll_answers": ["Dust", "Mirage, of course"],
        "poll_voters": 5,
        "poll_responses": {"Dust": 2, "Mirage, of course": 3},
        "poll_ends_at": pd.Timestamp("2023-11-14 22:13:50", tz="UTC"),
        "poll_duration_ms": 0,
    },
    "user_timeout.json": {
        "event": "UserTimeout",
        "user_name": "bob",
        "user_id": 1002,
        "user_roles": "User",
        "target_user_id": 1002,
        "duration_ms": 30000,
    },
    "delete_message.json": {
        "event": "DeleteMessage",
        "channel": 4242,
        "message_id": "6c1e8a70-5b2f-11e6-9a3d-1b2c3d4e5f60",
        "moderator": "ana",
    },
    "purge_message.json": {
        "event": "PurgeMessage",
        "channel": 4242,
        "target_user_id": 1002,
        "moderator": "ana",
    },
    "clear_messages.json": {"event": "ClearMessages", "channel": 4242, "moderator": "ana"},
    "user_update.json": {
        "event": "UserUpdate",
        "user_name": "bob",
        "user_id": 1002,
        "user_roles": "Mod,User",
        "target_user_id": 1002,
    },
    "user_join.json": {
        "event": "UserJoin",
        "channel": 4242,
        "user_name": "cyd",
        "user_id": 1003,
        "user_roles": "Pro,User",
    },
    "user_leave.json": {"event": "UserLeave", "channel": 4242, "user_name": "cyd", "user_id": 1003},
}


def test_declared_columns_and_dtypes() -> None:
    """COLUMNS and DTYPES declare the documented columns, order and dtypes."""
    assert list(COLUMNS) == list(EXPECTED_DTYPES)
    assert DTYPES == EXPECTED_DTYPES


def test_every_spec_event_has_a_golden_row() -> None:
    """The flattening goldens cover every event of the spec's Events table."""
    assert {row["event"] for row in FLATTENED.values()} == set(EVENTS.categories)


@pytest.mark.parametrize("name", sorted(FLATTENED))
def test_event_flattens_to_golden_row(name: str) -> None:
    """Each spec event becomes the hand-written row for its fixture."""
    log = EventLog()
    log.append(packet(name), T)
    assert_frame_equal(log.frame, golden(FLATTENED[name]))


@pytest.mark.parametrize("name", sorted(FLATTENED))
def test_sealed_row_equals_open_row(name: str) -> None:
    """A row reads the same after its chunk is sealed as while it sat in the open tail."""
    log = EventLog(chunk_rows=1)
    log.append(packet(name), T)
    assert_frame_equal(log.frame, golden(FLATTENED[name]))


def test_empty_log_has_declared_dtypes() -> None:
    """An empty log gives zero rows with every column and dtype declared."""
    assert_frame_equal(EventLog().frame, golden())


def test_unknown_event_grows_categories() -> None:
    """An event outside the spec gets its own category and keeps only common columns."""
    log = EventLog(chunk_rows=2)
    log.append(chat(0), 0)
    log.append(chat(1), 1)  # sealed with the spec's categories only
    log.append({"type": "event", "event": "SkillAttribution", "data": {"channel": 7}}, T)
    grown = pd.CategoricalDtype([*EVENTS.categories, "SkillAttribution"])
    expected = golden(
        chat_row(0), chat_row(1), {"event": "SkillAttribution", "channel": 7}, events=grown
    )
    assert_frame_equal(log.frame, expected)


def test_extra_components_and_fields() -> None:
    """Image components and originatingChannel are read; missing meta flags are False."""
    log = EventLog()
    log.append(
        {
            "type": "event",
            "event": "ChatMessage",
            "data": {
                "originatingChannel": 9,
                "id": "x",
                "user_name": "ana",
                "user_id": 1,
                "user_roles": [],
                "message": {
                    "message": [
                        {"type": "image", "text": "pic", "url": "https://example.org/a.png"},
                        {"type": "text", "data": " only data"},
                    ],
                    "meta": {"censored": True},
                },
            },
        },
        T,
    )
    expected = golden(
        {
            "event": "ChatMessage",
            "channel": 9,
            "message_id": "x",
            "user_name": "ana",
            "user_id": 1,
            "user_roles": "",
            "text": "pic only data",
            "components": "image,text",
            "whisper": False,
            "me": False,
        }
    )
    assert_frame_equal(log.frame, expected)


@pytest.mark.parametrize("chunk_rows", [1, 10])
def test_wrong_types_are_blanked(chunk_rows: int) -> None:
    """Values of the wrong type become missing, sealed or not, instead of failing the event."""
    log = EventLog(chunk_rows=chunk_rows)
    log.append(chat(1, user_id="one", channel=7.0), 1)
    log.append(chat(2, user_roles=[1, 2]), 2)
    log.append({"type": "event", "event": "PollStart", "data": "not an object"}, T)
    log.append({"type": "event", "event": "UserJoin", "data": {"id": 2**63}}, T)
    expected = golden(
        chat_row(1, user_id=None),
        {
            "received_at": pd.Timestamp(2, unit="s", tz="UTC"),
            "event": "ChatMessage",
            "channel": 7,
        },
        {"event": "PollStart"},
        {"event": "UserJoin"},
    )
    assert_frame_equal(log.frame, expected)


def test_non_event_packet_is_rejected() -> None:
    """A packet without a string event name raises ValueError."""
    with pytest.raises(ValueError, match="event"):
        EventLog().append({"type": "reply", "id": 1, "data": None}, T)


def test_clock_stamps_events_without_time() -> None:
    """append and extend read the injected clock when no time is given, once per extend."""
    ticks = iter([10.0, 20.0, 30.0])
    log = EventLog(clock=lambda: next(ticks))
    log.append(chat(0))
    log.extend([chat(1), chat(2)])
    log.append(chat(3), received_at=3)
    stamps = [pd.Timestamp(s, unit="s", tz="UTC") for s in (10, 20, 20, 3)]
    assert list(log.frame["received_at"]) == stamps


def test_counts_and_total() -> None:
    """total counts every event ever added and counts splits them by event name."""
    log = EventLog(max_rows=2, chunk_rows=1)
    log.extend([chat(0), chat(1), packet("user_join.json"), chat(2)], T)
    assert log.total == 4
    assert log.counts == {"ChatMessage": 3, "UserJoin": 1}
    assert len(log.frame) == 2


@pytest.mark.parametrize("chunk_rows", [1, 2, 3, 7, 100])
def test_chunking_does_not_change_the_frame(chunk_rows: int) -> None:
    """Reads between appends, across any chunk boundary, equal the frame built in one go."""
    log = EventLog(chunk_rows=chunk_rows)
    for i in range(20):
        log.append(chat(i), i)
        if i % 3 == 0:
            assert_frame_equal(log.frame, golden(*(chat_row(j) for j in range(i + 1))))
    assert_frame_equal(log.frame, golden(*(chat_row(j) for j in range(20))))


def test_frame_is_safe_to_modify() -> None:
    """Changing a returned frame leaves the log and later frames untouched."""
    log = EventLog(chunk_rows=2)
    log.extend([chat(0), chat(1), chat(2)], T)
    first = log.frame
    first.loc[0, "user_name"] = "changed"
    first["extra"] = 1
    again = log.frame
    assert list(again.columns) == list(COLUMNS)
    assert again.loc[0, "user_name"] == "u0"


@pytest.mark.parametrize(("max_rows", "chunk_rows"), [(5, 2), (5, 5), (3, 8), (1, 1)])
def test_ring_keeps_the_most_recent_rows(max_rows: int, chunk_rows: int) -> None:
    """With max_rows the frame holds the last max_rows rows, numbered since the start."""
    log = EventLog(max_rows=max_rows, chunk_rows=chunk_rows)
    for i in range(13):
        log.append(chat(i), i)
        if i % 4 == 0:
            log.frame  # noqa: B018 - reads merge chunks; the ring must survive them
    kept = range(13 - max_rows, 13)
    assert_frame_equal(log.frame, golden(*(chat_row(j) for j in kept), start=kept[0]))


def test_ring_forgets_packets_and_ids() -> None:
    """Rows that left the ring no longer give packets or count as seen."""
    log = EventLog(max_rows=4, chunk_rows=2)
    log.extend([chat(i) for i in range(10)], T)
    assert log.packets([9]) == [chat(9)]
    with pytest.raises(KeyError):
        log.packets([0])
    assert not log.seen_message("m0")
    assert log.seen_message("m9")


def test_tail_is_the_frames_last_rows() -> None:
    """tail(n) equals the last n rows of the frame, across chunks."""
    log = EventLog(chunk_rows=3)
    log.extend([chat(i) for i in range(10)], T)
    assert_frame_equal(log.tail(5), log.frame.tail(5))
    assert_frame_equal(log.tail(50), log.frame)
    assert len(log.tail(0)) == 0


@pytest.mark.parametrize("chunk_rows", [2, 100])
def test_tail_of_one_event_or_several(chunk_rows: int) -> None:
    """tail(n, event) is the last n rows of that event (or events), across chunks and with
    some rows already built."""
    log = EventLog(chunk_rows=chunk_rows)
    for i in range(12):
        log.append(chat(i) if i % 4 else packet("user_join.json"), i)
        if i == 5:
            log.materialise()
    frame = log.frame.copy()
    log.append(packet("user_leave.json"), 12)
    joins = frame.loc[frame["event"] == "UserJoin"]
    assert_frame_equal(log.tail(2, "UserJoin"), joins.tail(2), check_index_type=False)
    both = log.tail(3, ("UserJoin", "UserLeave"))
    assert list(both.index) == [4, 8, 12]
    assert list(both["event"]) == ["UserJoin", "UserJoin", "UserLeave"]
    assert len(log.tail(5, "PollEnd")) == 0


def test_materialise_builds_sealed_rows_ahead_of_reads() -> None:
    """materialise() builds sealed chunks oldest first, as many as asked; .frame is the same."""
    log = EventLog(chunk_rows=3)
    log.extend([chat(i) for i in range(10)], T)
    assert log.materialise(max_chunks=2) == 6
    assert log.materialise() == 3
    assert log.materialise() == 0
    assert_frame_equal(log.frame, golden(*[chat_row(i, received_at=AT) for i in range(10)]))


def test_append_event_keeps_the_frame_it_came_in() -> None:
    """append_event() records a decoded event with its frame's bytes as the packet and finds
    the message by the id given."""
    frame = bytearray(orjson.dumps(chat(1)))
    log = EventLog(chunk_rows=1)
    log.append_event("ChatMessage", chat(1)["data"], frame, 1, "m1")
    assert_frame_equal(log.frame, golden(chat_row(1)))
    assert log.packets() == [chat(1)]
    assert log.kept_message_ids({"m1", "m2"}) == {"m1"}


def history_messages() -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = packet("history_reply.json")["data"]
    return messages


def test_history_fills_the_gap_without_duplicates() -> None:
    """add_history adds only messages whose ids are not in the log, marked from_history."""
    first, second = history_messages()
    log = EventLog(chunk_rows=2)
    log.append({"type": "event", "event": "ChatMessage", "data": first}, T)
    log.append(chat(1), T)
    log.append(chat(2), T)
    added = log.add_history([first, second, second], received_at=T + 1)
    assert added == 1
    frame = log.frame
    assert list(frame["message_id"]) == [first["id"], "m1", "m2", second["id"]]
    assert list(frame["from_history"]) == [False, False, False, True]
    assert frame["received_at"].iloc[-1] == AT + pd.Timedelta(seconds=1)


def test_history_dedupes_against_tail_and_sealed_rows() -> None:
    """Ids are found both in sealed chunks and in the open tail."""
    log = EventLog(chunk_rows=3)
    log.extend([chat(i) for i in range(5)], T)  # m0-m2 sealed, m3-m4 open
    history = [chat(i)["data"] for i in (0, 4, 5)]
    assert log.add_history(history, T) == 1
    assert list(log.frame["message_id"]) == ["m0", "m1", "m2", "m3", "m4", "m5"]


def test_seen_message_counts_only_chat_messages() -> None:
    """A DeleteMessage's id is not a seen message; live and history messages are."""
    log = EventLog(chunk_rows=2)
    log.append(packet("delete_message.json"), T)
    log.append(chat(1), T)
    log.add_history(history_messages(), T)
    assert not log.seen_message("6c1e8a70-5b2f-11e6-9a3d-1b2c3d4e5f60")
    assert log.seen_message("m1")
    assert log.seen_message(history_messages()[1]["id"])
    assert not log.seen_message("m2")


def test_history_packets_are_event_envelopes() -> None:
    """A history row's packet is the ChatMessage event that would have carried it."""
    log = EventLog()
    log.add_history(history_messages(), T)
    assert log.packets([0]) == [
        {"type": "event", "event": "ChatMessage", "data": history_messages()[0]}
    ]


@pytest.mark.parametrize("chunk_rows", [1, 4, 100])
def test_packets_returns_the_original_packets(chunk_rows: int) -> None:
    """packets() gives back every kept packet in row order, sealed or not."""
    sent = [packet(name) for name in sorted(FLATTENED)]
    log = EventLog(chunk_rows=chunk_rows)
    log.extend(sent, T)
    assert log.packets() == sent
    assert log.packets([3, 0]) == [sent[3], sent[0]]


def poll(event: str, voters: int, votes: tuple[int, int]) -> dict[str, Any]:
    data = packet("poll_start.json")["data"]
    data.update(voters=voters, responses={"Dust": votes[0], "Mirage, of course": votes[1]})
    return {"type": "event", "event": event, "data": data}


def test_polls_long_format() -> None:
    """polls() gives one row per answer per PollStart/PollEnd, ended only for PollEnd."""
    log = EventLog(chunk_rows=2)
    log.append(poll("PollStart", 0, (0, 0)), 0)
    log.append(chat(1), 1)
    log.append(poll("PollStart", 2, (1, 1)), 2)
    log.append(poll("PollStart", 3, (1, 2)), 3)
    log.append(poll("PollEnd", 5, (2, 3)), 4)
    times = [pd.Timestamp(s, unit="s", tz="UTC") for s in (0, 0, 2, 2, 3, 3, 4, 4)]
    expected = pd.DataFrame(
        {
            "time": pd.array(times, dtype=UTC_MS),
            "question": pd.array(["Best map?"] * 8, dtype="str"),
            "answer": pd.array(["Dust", "Mirage, of course"] * 4, dtype="str"),
            "votes": pd.array([0, 0, 1, 1, 1, 2, 2, 3], dtype="Int64"),
            "voters": pd.array([0, 0, 2, 2, 3, 3, 5, 5], dtype="Int64"),
            "ended": np.array([False] * 6 + [True] * 2),
        }
    )
    assert_frame_equal(log.polls(), expected)


def test_polls_of_the_last_events() -> None:
    """polls(last=n) reads only the last n poll events."""
    log = EventLog()
    log.append(poll("PollStart", 0, (0, 0)), T)
    log.append(chat(1), T)
    log.append(poll("PollEnd", 3, (1, 2)), T)
    last = log.polls(last=1)
    assert list(last["votes"]) == [1, 2] and last["ended"].all()
    assert_frame_equal(log.polls().iloc[2:].reset_index(drop=True), last)


def test_polls_of_empty_log() -> None:
    """polls() of a log without polls is empty with its declared dtypes."""
    polls = EventLog().polls()
    assert len(polls) == 0
    assert polls.dtypes.to_dict() == {
        "time": UTC_MS,
        "question": "str",
        "answer": "str",
        "votes": "Int64",
        "voters": "Int64",
        "ended": bool,
    }


def test_users_summary() -> None:
    """users() has one row per user id: latest name and roles, messages, first and last seen."""
    log = EventLog(chunk_rows=3)
    log.append(chat(1, user_id=5, user_name="ana"), 1)
    log.append(packet("user_join.json"), 2)  # cyd, 1003
    log.append(chat(3, user_id=5, user_name="ana", user_roles=["Mod", "User"]), 3)
    log.append(packet("welcome_event.json"), 4)
    log.append({"type": "event", "event": "UserUpdate", "data": {"user": 1003, "roles": []}}, 5)
    at = [pd.Timestamp(s, unit="s", tz="UTC") for s in (1, 2, 3, 5)]
    expected = pd.DataFrame(
        {
            "user_id": pd.array([5, 1003], dtype="Int64"),
            "user_name": pd.array(["ana", "cyd"], dtype="str"),
            "roles": pd.array(["Mod,User", ""], dtype="str"),
            "messages": pd.array([2, 0], dtype="Int64"),
            "first_seen": pd.array([at[0], at[1]], dtype=UTC_MS),
            "last_seen": pd.array([at[2], at[3]], dtype=UTC_MS),
        }
    )
    assert_frame_equal(log.users(), expected)


def test_users_of_empty_log() -> None:
    """users() of an empty log is empty with its declared dtypes."""
    users = EventLog().users()
    assert len(users) == 0
    assert users.dtypes.to_dict() == {
        "user_id": "Int64",
        "user_name": "str",
        "roles": "str",
        "messages": "Int64",
        "first_seen": UTC_MS,
        "last_seen": UTC_MS,
    }


def test_messages_view() -> None:
    """messages() keeps ChatMessage rows and the message columns, with their row numbers."""
    log = EventLog()
    log.append(packet("user_join.json"), T)
    log.append(chat(1), 1)
    columns = [
        "received_at",
        "channel",
        "message_id",
        "user_name",
        "user_id",
        "user_roles",
        "text",
        "components",
        "whisper",
        "me",
        "target",
        "from_history",
    ]
    expected = golden(chat_row(1), start=1)[columns]
    assert_frame_equal(log.messages(), expected)


def test_to_parquet_round_trip(tmp_path: Path) -> None:
    """Parquet keeps every column and dtype; poll responses are stored as JSON text."""
    log = EventLog(chunk_rows=4)
    log.extend([packet(name) for name in sorted(FLATTENED)], T)
    path = tmp_path / "events.parquet"
    log.to_parquet(path)
    back = pd.read_parquet(path)
    frame = log.frame
    responses = frame["poll_responses"].map(
        lambda r: None if r is None else orjson.dumps(r).decode()
    )
    expected = frame.assign(poll_responses=responses)
    assert list(back.columns) == list(COLUMNS)
    assert back["poll_answers"].map(lambda a: None if a is None else list(a)).tolist() == (
        expected["poll_answers"].tolist()
    )
    assert_frame_equal(back.drop(columns="poll_answers"), expected.drop(columns="poll_answers"))


@pytest.mark.parametrize("max_rows", [None, 700])
def test_reader_sees_consistent_snapshots(max_rows: int | None) -> None:
    """While one thread appends, another reads whole rows only, and never fewer than before."""
    n = 20_000
    log = EventLog(max_rows=max_rows, chunk_rows=64)
    failures: list[str] = []

    def write() -> None:
        for i in range(n):
            log.append(chat(i), i)

    writer = threading.Thread(target=write)
    writer.start()
    last_end = 0
    reads = 0
    while writer.is_alive() or reads == 0:
        frame = log.tail(50) if reads % 5 == 4 else log.frame
        reads += 1
        index = frame.index.to_numpy()
        end = int(index[-1]) + 1 if len(index) else 0
        if end < last_end:
            failures.append(f"rows went back from {last_end} to {end}")
        last_end = end
        if max_rows is not None and len(frame) > max_rows:
            failures.append(f"{len(frame)} rows kept, more than {max_rows}")
        if not (index == np.arange(end - len(frame), end)).all():
            failures.append("row numbers not contiguous")
        if not (frame["user_id"].to_numpy() == index).all():
            failures.append("user_id torn from its row")
        if list(frame["message_id"]) != [f"m{i}" for i in index]:
            failures.append("message_id torn from its row")
        if list(frame["text"]) != [f"t{i}" for i in index]:
            failures.append("text torn from its row")
        if not (frame["received_at"].astype("int64").to_numpy() == index * 10**3).all():
            failures.append("received_at torn from its row")
    writer.join()
    assert failures == []
    assert reads > 1
    assert len(log.frame) == (n if max_rows is None else max_rows)


def moderated_log() -> EventLog:
    """ana and bob chat; a moderator deletes bob's message, purges ana and clears the chat;
    bob is timed out; user 99 was never seen."""
    log = EventLog(chunk_rows=2)
    log.append(chat(1, user_id=5, user_name="ana"), 1)
    log.append(chat(2, user_id=1002, user_name="bob"), 2)
    mod = {"user_name": "mo"}
    log.append(
        {"type": "event", "event": "DeleteMessage", "data": {"id": "m2", "moderator": mod}}, 3
    )
    log.append(
        {"type": "event", "event": "PurgeMessage", "data": {"user_id": 5, "moderator": mod}}, 4
    )
    log.append(
        {"type": "event", "event": "PurgeMessage", "data": {"user_id": 99, "moderator": mod}}, 5
    )
    log.append(packet("user_timeout.json"), 6)
    return log


def test_moderation_names_the_users_acted_on() -> None:
    """moderation() names a purged or deleted user from the rows seen, else leaves it empty."""
    at = [pd.Timestamp(s, unit="s", tz="UTC") for s in (3, 4, 5, 6)]
    expected = pd.DataFrame(
        {
            "received_at": pd.array(at, dtype=UTC_MS),
            "event": pd.Categorical(
                ["DeleteMessage", "PurgeMessage", "PurgeMessage", "UserTimeout"], dtype=EVENTS
            ),
            "moderator": pd.array(["mo", "mo", "mo", None], dtype="str"),
            "message_id": pd.array(["m2", None, None, None], dtype="str"),
            "target_user_id": pd.array([1002, 5, 99, 1002], dtype="Int64"),
            "target_user": pd.array(["bob", "ana", None, "bob"], dtype="str"),
            "duration_ms": pd.array([None, None, None, 30000], dtype="Int64"),
        },
        index=pd.RangeIndex(2, 6, name="row"),
    )
    assert_frame_equal(moderated_log().moderation(), expected, check_index_type=False)


def test_moderation_of_empty_log() -> None:
    """moderation() of a log without moderation is empty with its declared dtypes."""
    assert EventLog().moderation().dtypes.to_dict() == {
        "received_at": UTC_MS,
        "event": EVENTS,
        "moderator": "str",
        "message_id": "str",
        "target_user_id": "Int64",
        "target_user": "str",
        "duration_ms": "Int64",
    }


def test_repr_summarises_events_and_time_span() -> None:
    """repr() counts events by name, most frequent first, and gives the kept rows' span."""
    assert repr(EventLog()) == "<EventLog: no events>"
    assert repr(moderated_log()) == (
        "<EventLog: 6 events (ChatMessage 2, PurgeMessage 2, DeleteMessage 1, UserTimeout 1), "
        "1970-01-01 00:00:01.000 to 1970-01-01 00:00:06.000 UTC>"
    )


def test_repr_of_a_ring_says_how_many_rows_are_kept() -> None:
    """repr() of a bounded log gives the events ever added and how many rows are kept."""
    log = EventLog(max_rows=2, chunk_rows=1)
    log.extend([chat(i) for i in range(5)], T)
    assert repr(log) == (
        "<EventLog: 5 events, the last 2 kept (ChatMessage 5), "
        "2023-11-14 22:13:20.500 to 2023-11-14 22:13:20.500 UTC>"
    )


def test_html_shows_the_summary_and_the_last_rows_only() -> None:
    """The notebook view is the summary plus the last five rows, never the whole table."""
    log = EventLog(chunk_rows=7)
    log.extend([chat(i) for i in range(30)], T)
    page = log._repr_html_()
    assert "&lt;EventLog: 30 events" in page
    assert page.count("<tr>") == 5 + 1  # five rows and the index-name header row
    assert ">t29<" in page and ">t24<" not in page


# Several channels in one log, and a bounded log read by a recorder.


def _join(name: str) -> dict[str, Any]:
    return {"type": "event", "event": "UserJoin", "data": {"username": name, "id": 7, "roles": []}}


def _message(id: str, channel: int) -> dict[str, Any]:
    data = {"id": id, "channel": channel, "user_name": "a", "user_id": 1, "message": {}}
    return {"type": "event", "event": "ChatMessage", "data": data}


@pytest.mark.parametrize("chunk_rows", [2, 4096])
def test_writer_channel_fills_rows_whose_packet_names_none(chunk_rows: int) -> None:
    """A join (no channel in its packet) takes the writer's channel, sealed or open."""
    log = EventLog(chunk_rows=chunk_rows)
    log.append(_join("x"), T, channel=5)
    log.append(_join("y"), T)
    log.append(_message("m", 9), T, channel=5)
    assert log.frame["channel"].tolist() == [5, pd.NA, 9]


def test_history_rows_take_the_writer_channel() -> None:
    """add_history records the channel it is given for every added message."""
    log = EventLog(chunk_rows=1)
    log.add_history([{"id": "h1", "user_name": "a"}], T, channel=12)
    assert log.frame["channel"].tolist() == [12]


def test_held_rows_survive_the_row_bound() -> None:
    """Rows from the held one on stay kept beyond max_rows until the hold moves on."""
    log = EventLog(max_rows=2, chunk_rows=2)
    log.hold(0)
    for i in range(8):
        log.append(_message(f"m{i}", 1), T)
    assert log.frame.index.tolist() == list(range(8))
    log.hold(6)
    log.append(_message("m8", 1), T)
    log.append(_message("m9", 1), T)
    assert log.frame.index[0] >= 6 and log.frame.index[-1] == 9


def test_held_rows_survive_the_row_bound_before_any_sealing() -> None:
    """The hold keeps open rows too, while nothing is sealed yet."""
    log = EventLog(max_rows=2, chunk_rows=100)
    log.hold(0)
    for i in range(5):
        log.append(_message(f"m{i}", 1), T)
    assert log.frame.index.tolist() == list(range(5))
    log.hold(None)
    assert log.frame.index.tolist() == [3, 4]


def test_packed_rows_build_with_their_packets() -> None:
    """packed(row).frame gives rows from that number on, sealed or open, and each one's
    JSON text."""
    log = EventLog(chunk_rows=3)
    packets = [_message(f"m{i}", 1) for i in range(5)]
    for packet in packets:
        log.append(packet, T)
    frame = log.packed(2).frame
    assert frame.index.tolist() == [2, 3, 4]
    assert [orjson.loads(text) for text in frame["packet"]] == packets[2:]
    assert frame["message_id"].tolist() == ["m2", "m3", "m4"]


def test_tidy_builds_no_rows_while_its_feeder_is_behind(monkeypatch: pytest.MonkeyPatch) -> None:
    """tidy builds no rows while ``behind`` says sent data waits unread, and does once not."""
    monkeypatch.setattr(log_module, "QUIET_INTERVAL", 0.001)
    log = EventLog(chunk_rows=3)
    log.extend([chat(i) for i in range(10)], T)
    answers = [True, True, False]

    async def main() -> None:
        caught_up = asyncio.Event()

        def behind() -> bool:
            if len(answers) == 1:
                caught_up.set()
            return answers.pop(0) if answers else True

        task = asyncio.create_task(log_module.tidy(log, behind))
        await caught_up.wait()
        task.cancel()

    asyncio.run(asyncio.wait_for(main(), 10))
    assert log.materialise() == 6  # of three sealed chunks, the one after catching up was built
