"""Views of an event frame (``EventLog.frame``): messages, poll progress, users, moderation,
and the fields live update events changed.

Pure functions of the frame (columns in ``events/rows.py``), so they work on any slice of one
or a concatenation of several chats' frames. Each result has declared dtypes, those of
``core/columns.py`` like every other frame, also when empty.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import orjson
import pandas as pd

from explorer.core import columns

#: The events that carry poll data.
POLL_EVENTS = ("PollStart", "PollEnd")
#: The events of moderators acting on messages and users.
MODERATION_EVENTS = ("DeleteMessage", "PurgeMessage", "ClearMessages", "UserTimeout")

#: The columns of :func:`messages`.
MESSAGE_COLUMNS = [
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


def messages(frame: pd.DataFrame) -> pd.DataFrame:
    """ChatMessage rows with the message columns only."""
    return frame.loc[frame["event"] == "ChatMessage", MESSAGE_COLUMNS]


def poll_progress(rows: pd.DataFrame) -> pd.DataFrame:
    """Poll progress in long form from PollStart/PollEnd rows of a frame: one row per answer
    per event, in order. Columns: time, question, answer, votes, voters (``Int64``), ended
    (True for PollEnd rows)."""
    records = []
    for at, event, question, answers, voters, responses in zip(
        rows["received_at"],
        rows["event"],
        rows["poll_q"],
        rows["poll_answers"],
        rows["poll_voters"],
        rows["poll_responses"],
        strict=True,
    ):
        counts = responses if isinstance(responses, dict) else {}
        question = None if pd.isna(question) else question
        voters = None if pd.isna(voters) else int(voters)
        for answer in answers if isinstance(answers, list) else list(counts):
            votes = columns.as_int(counts.get(answer))
            records.append((at, question, answer, votes, voters, event == "PollEnd"))
    times, questions, texts, counted, voted, ended = (
        list(values) for values in (zip(*records, strict=True) if records else [()] * 6)
    )
    return pd.DataFrame(
        {
            "time": pd.array(times, dtype=columns.TIME),
            "question": columns.column(questions, "str"),
            "answer": columns.column(texts, "str"),
            "votes": columns.column(counted, "int"),
            "voters": columns.column(voted, "int"),
            "ended": np.array(ended, bool),
        }
    )


def users(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per user id seen: latest name and roles, message count, first and last seen."""
    seen = frame.loc[frame["user_id"].notna()]
    by_user = seen.groupby("user_id", sort=True)
    latest = by_user[["user_name", "user_roles"]].last()
    table = pd.DataFrame(
        {
            "user_id": latest.index.array,
            "user_name": latest["user_name"].array,
            "roles": latest["user_roles"].array,
            "messages": (seen["event"] == "ChatMessage")
            .groupby(seen["user_id"], sort=True)
            .sum()
            .array,
            "first_seen": by_user["received_at"].min().array,
            "last_seen": by_user["received_at"].max().array,
        }
    )
    return table.astype(
        {
            "user_id": columns.INT,
            "user_name": columns.STR,
            "roles": columns.STR,
            "messages": columns.INT,
            "first_seen": columns.TIME,
            "last_seen": columns.TIME,
        }
    )


def moderation(frame: pd.DataFrame) -> pd.DataFrame:
    """Moderation rows (:data:`MODERATION_EVENTS`) with whom each acted on, by name where the
    frame has seen it.

    Columns: received_at, event, moderator, message_id, target_user_id, target_user,
    duration_ms. A PurgeMessage or UserTimeout names its user by id (``target_user_id``); a
    DeleteMessage names a message, whose author is the target when the message is in the
    frame. ``target_user`` is that user's latest name among the frame's rows.
    """
    acted = frame.loc[frame["event"].isin(MODERATION_EVENTS)]
    named = frame.loc[frame["user_id"].notna() & frame["user_name"].notna()]
    names = named.groupby("user_id")["user_name"].last()
    chat = frame.loc[(frame["event"] == "ChatMessage") & frame["message_id"].notna()]
    authors = chat.drop_duplicates("message_id", keep="last").set_index("message_id")["user_id"]
    target_ids = acted["target_user_id"].fillna(acted["message_id"].map(authors))
    return pd.DataFrame(
        {
            "received_at": acted["received_at"],
            "event": acted["event"],
            "moderator": acted["moderator"],
            "message_id": acted["message_id"],
            "target_user_id": target_ids.astype(columns.INT),
            "target_user": target_ids.map(names).astype(columns.STR),
            "duration_ms": acted["duration_ms"],
        }
    )


#: The live events whose payload is a patch of a model's changed fields.
UPDATE_EVENTS = ("channel:update", "user:update")


def changes(frame: pd.DataFrame, fields: str | Sequence[str] | None = None) -> pd.DataFrame:
    """The fields live update events changed (``channel:update``, ``user:update``), one row
    per field per event: received_at, event, channel, user_id, field, value (as sent: a
    number, text, a flag). ``fields`` keeps only those fields (e.g. ``"viewersCurrent"``)."""
    updates = frame.loc[frame["event"].isin(UPDATE_EVENTS)]
    wanted = {fields} if isinstance(fields, str) else None if fields is None else set(fields)
    rows: list[tuple[Any, ...]] = []
    for number, text in zip(updates.index, updates["text"], strict=True):
        patch = orjson.loads(text) if isinstance(text, str) else None
        if not isinstance(patch, dict):
            continue
        rows += [(number, k, v) for k, v in patch.items() if wanted is None or k in wanted]
    at = updates.loc[[row[0] for row in rows]]
    return pd.DataFrame(
        {
            "received_at": at["received_at"].array,
            "event": pd.array(at["event"].astype(str), dtype=columns.STR),
            "channel": at["channel"].array,
            "user_id": at["user_id"].array,
            "field": pd.array([row[1] for row in rows], dtype=columns.STR),
            "value": pd.Series([row[2] for row in rows], dtype=object).array,
        },
        index=pd.Index(at.index, name=frame.index.name),
    )
