"""Users left out of, or redacted in, a watch, its capture on disk and a capture's reads."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pytest

import explorer
from explorer.cli import record as record_cli
from explorer.events.exclusions import MARKER, Screen, Users
from explorer.recording.capture import open_capture
from tests.chatkit import World
from tests.test_chat_client import wait_until


def message(user_id: int, name: str, text: str, **more: Any) -> dict[str, Any]:
    """ChatMessage data as the platform sends it."""
    return {
        "channel": 1,
        "id": f"m-{user_id}",
        "user_id": user_id,
        "user_name": name,
        "user_roles": ["User"],
        "message": {"message": [{"type": "text", "data": text, "text": text}], "meta": {}},
        **more,
    }


def test_a_screen_leaves_out_by_id_or_name_in_any_case() -> None:
    """Events by or about an excluded user, named by id or by name in another case, are left
    out; others are kept as they are."""
    screen = Screen(exclude=["Bob", 7])
    assert screen("ChatMessage", message(7, "someone", "hi")) is None
    assert screen("ChatMessage", message(8, "BOB", "hi")) is None
    assert screen("UserJoin", {"id": 7, "username": "x", "roles": []}) is None
    assert screen("UserTimeout", {"user": {"user_id": 9, "user_name": "bob"}}) is None
    kept = message(9, "carol", "hi")
    assert screen("ChatMessage", kept) is kept


def test_a_screen_redacts_name_id_and_text_only_of_the_user() -> None:
    """A redacted sender's name, id and text become the marker (the original untouched); a
    whisper to them hides only their name, and another's mention keeps its text."""
    screen = Screen(redact=["carol"])
    sent = message(9, "Carol", "secret", target="dave")
    got = screen("ChatMessage", sent)
    assert (got["user_name"], got["user_id"], got["target"]) == (MARKER, None, "dave")
    assert got["message"]["message"] == [{"type": "text", "data": MARKER, "text": MARKER}]
    assert sent["user_name"] == "Carol"
    to_her = screen("ChatMessage", message(10, "dave", "hello carol", target="carol"))
    assert to_her["target"] == MARKER and to_her["message"]["message"][0]["text"] == "hello carol"
    assert screen("UserJoin", {"id": 9, "username": "x"}) == {"id": 9, "username": "x"}


def test_a_user_given_as_neither_id_nor_name_is_refused() -> None:
    """A user that is neither an id nor a name is a TypeError naming it."""
    with pytest.raises(TypeError, match=r"1\.5"):
        Screen(exclude=[1.5])  # type: ignore[list-item]


@pytest.fixture(scope="module")
def quiet() -> Iterator[World]:
    """A platform without simulated chat: only what a test says is said."""
    running = World.start(channels=300, chat_rate=1000.0, chat_burst=1000)
    yield running
    running.stop()


@pytest.fixture(scope="module")
def recorded(
    quiet: World, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Path, pd.DataFrame]]:
    """A capture of the streamer's channel where viewer said "viewer here", viewer2 (excluded)
    "keep me out" and moderator (redacted) "my secret", then streamer "last"; with the
    watch's frame at the end."""
    out = tmp_path_factory.mktemp("exclusions") / "capture"
    watcher = explorer.connect(quiet.base_url, progress=False)
    watch = watcher.watch(
        ["streamer"], to=out, exclude_users=["VIEWER2"], redact_users=[quiet.user_id("moderator")]
    )
    chats = {}
    try:
        for name in ("viewer", "viewer2", "moderator", "streamer"):
            api = explorer.connect(
                quiet.base_url, progress=False, username=name, password="explorer"
            )
            chats[name] = (api, api.chat("streamer"))
        chats["viewer"][1].send("viewer here")
        chats["viewer2"][1].send("keep me out")
        chats["moderator"][1].send("my secret")
        chats["streamer"][1].send("last")
        wait_until(lambda: "last" in watch.messages()["text"].tolist(), timeout=30)
        frame = watch.log.frame
    finally:
        watch.close()
        watcher.close()
        for api, chat in chats.values():
            chat.close()
            api.close()
    yield out, frame


def test_a_watch_never_logs_an_excluded_user_and_redacts_another(
    quiet: World, recorded: tuple[Path, pd.DataFrame]
) -> None:
    """The watch's log has no event of the excluded user, the redacted one's message with
    the marker for name and text and no id, and everyone else's as said."""
    frame = recorded[1]
    messages = frame[frame["event"] == "ChatMessage"].sort_values("text")
    assert messages["text"].tolist() == [MARKER, "last", "viewer here"]
    assert messages["user_name"].tolist() == [MARKER, "streamer", "viewer"]
    assert messages["user_id"].isna().tolist() == [True, False, False]
    excluded = quiet.user_id("viewer2")
    assert not (frame["user_id"] == excluded).any()
    assert not frame["user_name"].isin(["viewer2", "moderator"]).any()


def test_the_capture_on_disk_holds_neither(recorded: tuple[Path, pd.DataFrame]) -> None:
    """No file of the capture holds the excluded user's words or the redacted user's, in
    any column, the raw packet included."""
    capture = recorded[0]
    files = pd.concat(pd.read_parquet(p) for p in (capture / "events").rglob("*.parquet"))
    text = files.astype(str).to_string()
    assert "viewer here" in text
    assert "keep me out" not in text and "my secret" not in text and "viewer2" not in text


def test_open_capture_leaves_out_and_redacts_on_every_read(
    quiet: World, recorded: tuple[Path, pd.DataFrame]
) -> None:
    """A capture opened with exclude_users and redact_users applies them to events(), sql(),
    count() and packets() alike."""
    capture = recorded[0]
    viewer = quiet.user_id("viewer")
    opened = open_capture(capture, exclude_users=["streamer"], redact_users=[viewer])
    texts = opened.messages()["text"].tolist()
    assert texts == [MARKER, MARKER]
    names = opened.sql("SELECT user_name FROM events WHERE event = 'ChatMessage'")
    assert names["user_name"].tolist() == [MARKER, MARKER]
    assert opened.count() == open_capture(capture).count() - int(
        (open_capture(capture).events()["user_name"] == "streamer").sum()
    )
    packets = opened.packets().read_all()["packet"].to_pylist()
    assert not any("viewer here" in p or '"streamer"' in p for p in packets)
    assert any(MARKER in p for p in packets)


def test_record_leaves_out_the_users_of_exclude_users(quiet: World, tmp_path: Path) -> None:
    """``explorer record --exclude-users`` (names and ids, comma-separated) reaches the
    recording's watch: the user's message is not recorded, another's is."""
    parser = argparse.ArgumentParser()
    record_cli.add_parser(parser.add_subparsers().add_parser)
    out = tmp_path / "capture"
    args = parser.parse_args(
        ["record", "--channels", "streamer", "--out", str(out), "--exclude-users", "nobody,viewer2"]
    )
    assert args.exclude_users == ["nobody", "viewer2"]
    api = explorer.connect(quiet.base_url, progress=False)
    speakers = [
        explorer.connect(quiet.base_url, progress=False, username=name, password="explorer")
        for name in ("viewer2", "viewer")
    ]
    chats = [speaker.chat("streamer") for speaker in speakers]
    recording = record_cli.Recording.start(api, args)
    try:
        assert recording.watch is not None
        chats[0].send("recorded? no")
        chats[1].send("recorded")
        wait_until(lambda: "recorded" in recording.watch.messages()["text"].tolist(), timeout=30)
    finally:
        recording.close()
        for chat, speaker in zip(chats, speakers, strict=True):
            chat.close()
            speaker.close()
        api.close()
    texts = open_capture(out).messages()["text"].tolist()
    assert "recorded" in texts and "recorded? no" not in texts


def test_names_reach_sql_as_literals() -> None:
    """A name holding quotes and SQL is matched as that text only: the condition leaves out
    exactly its row."""
    table = duckdb.sql(
        "SELECT * FROM (VALUES (1, 'o''brien'), (2, 'x'') OR true --'), (3, 'ann')) "
        "AS t(user_id, user_name)"
    )
    condition = Users(["x') OR true --", "O'Brien"]).sql(ids=(), names=("user_name",))
    kept = table.filter(f"NOT {condition}").fetchall()
    assert kept == [(3, "ann")]
