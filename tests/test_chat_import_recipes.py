"""The recipes that sample chat history (3, sampling history; 5, collecting over time) run their
analysis unchanged on imported real chat: the same toolkit calls and pandas steps as the
notebooks' cells, on captures imported from justlog/rustlog IRC and chat-downloader files."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import orjson
import pandas as pd
import pytest

import explorer
from explorer.recording.chatimport import ChatImportWarning

FIXTURES = Path(__file__).parent / "fixtures" / "imports"
IRC = FIXTURES / "irc-rustlog.txt"


@pytest.fixture
def capture(tmp_path: Path) -> explorer.Capture:
    """The IRC fixture and the chat-downloader fixture (named channel 5) in one capture."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ChatImportWarning)
        explorer.import_chat(IRC, to=tmp_path / "cap")
        return explorer.import_chat(
            FIXTURES / "chat-downloader.json", to=tmp_path / "cap", channel=5
        )


def privmsgs() -> list[str]:
    """The fixture's chat lines, read as text (what the analysis must count)."""
    return [line for line in IRC.read_text().splitlines() if " PRIVMSG #" in line]


def test_recipe_3_history_analysis_runs_on_an_import(capture: explorer.Capture) -> None:
    """Recipe 3's cells (history per sample and channel, message length, top chatters,
    emoticons from components and from the packets) run as written on imported chat."""
    channels = pd.Index(capture.channels, name="id")
    membership = pd.DataFrame({"token": channels.astype(str), "sample": "imported"}, index=channels)
    # "Join each channel and take its history"
    messages = capture.messages().merge(membership[["sample"]], left_on="channel", right_index=True)
    history = messages.query("from_history")
    assert len(history) == len(privmsgs()) + 12  # every chat line, and chat-downloader's items
    # "How much do channels talk?"
    per_channel = history.groupby(["sample", "channel"]).size()
    summary = pd.DataFrame(
        {
            "channels": membership.groupby("sample").size(),
            "with_history": per_channel.groupby("sample").size(),
            "messages": per_channel.groupby("sample").sum(),
        }
    ).fillna(0)
    rooms = {re.search(r"room-id=([0-9]+)", line).group(1) for line in privmsgs()}  # type: ignore[union-attr]
    assert summary.loc["imported", "with_history"] == len(rooms) + 1  # and chat-downloader's
    # "Message length"
    history = history.assign(
        length=history["text"].str.len(), words=history["text"].str.split().str.len()
    )
    lengths = history.groupby("sample").agg(
        median_words=("words", "median"), longest=("length", "max")
    )
    assert lengths.loc["imported", "longest"] == history["text"].str.len().max() > 0
    # "Top chatters"
    top = history.groupby("user_name").agg(messages=("text", "size")).sort_values("messages")
    assert top.loc["klinteman", "messages"] == 6  # six of chat-downloader's items are his
    # "Emoticon use": counted in components, named from the packets
    emotes = history["components"].fillna("").str.count("emoticon")
    assert emotes.sum() == 6  # 1 + 5 in TwitchDownloader's two lines
    emoticons = []
    packets = capture.events(columns=["packet"], events="ChatMessage")["packet"]
    for packet in map(orjson.loads, packets):  # a capture's packets, for watch.log.packets()
        for component in packet["data"]["message"]["message"]:
            if component["type"] == "emoticon":
                emoticons.append(component["text"])
    assert pd.Series(emoticons).value_counts()["LUL"] == 2


def test_recipe_5_analysis_and_sql_run_on_an_import(capture: explorer.Capture) -> None:
    """Recipe 5's per-channel rates, 5-second bins and its SQL over the events view run as
    written on imported chat."""
    messages = capture.messages()
    minutes = (messages["received_at"].max() - messages["received_at"].min()).total_seconds() / 60
    per_channel = messages.groupby("channel").size() / minutes
    assert (per_channel > 0).all() and per_channel.index.isin(capture.channels).all()
    bins = (
        messages.assign(bin=messages["received_at"].dt.floor("5s"))
        .groupby(["channel", "bin"])
        .size()
        .unstack(fill_value=0)
    )
    assert bins.to_numpy().sum() == len(messages)
    counted = capture.sql(
        "SELECT channel, count(*) AS messages FROM events "
        "WHERE event = 'ChatMessage' GROUP BY channel ORDER BY channel"
    )
    assert counted["messages"].tolist() == messages.groupby("channel").size().tolist()
