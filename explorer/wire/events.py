"""Chat event names and the event log's columns, declared once.

The platform sends the events (platform.md's Events table); the toolkit flattens each into a
row of these columns (``explorer.events.rows``), types them as pandas columns by their kind
(``explorer.core.columns``) and writes them to Parquet by their Arrow type
(``explorer.recording.recorder``), so a new column is one row here plus its value in
``explorer.events.rows.flatten``. Missing values are NaN in text columns, ``<NA>`` in the others::

    received_at       when the toolkit received the event (epoch seconds), on the
                      platform's world clock (``explorer.core.worldclock``)
    event             event name (categories: EVENTS first, then any other name seen)
    channel           ``data.channel`` or ``data.originatingChannel``
    message_id        ChatMessage id, DeleteMessage id
    user_name         who the event is by or about: the sender (ChatMessage), joiner/leaver
    user_id           (UserJoin/UserLeave), poll author, updated user (UserUpdate), timed-out
    user_roles        user (UserTimeout); roles comma-joined
    text              ChatMessage components' text, concatenated
    components        component types, comma-joined ("text,emoticon")
    whisper, me       ChatMessage ``meta`` flags (False when absent)
    target            whisper recipient
    poll_q            PollStart/PollEnd question
    poll_answers      the answers list (answers may contain commas)
    poll_voters       voters so far
    poll_responses    the ``responses`` dict, answer -> votes
    poll_ends_at      ``endsAt`` (epoch ms)
    poll_duration_ms  ``duration`` (ms remaining)
    moderator         user_name of DeleteMessage/PurgeMessage ``moderator`` or ClearMessages
                      ``clearer``
    target_user_id    whom a moderation or update acts on: PurgeMessage user_id, UserTimeout
                      user, UserUpdate user
    duration_ms       UserTimeout duration
    from_history      row came from a ``history`` reply

Pure data: no pandas or Arrow here (the Arrow type is its name, ``str()`` of the type).
"""

from __future__ import annotations

from dataclasses import dataclass

from explorer.wire.kinds import Kind

#: Event names from the spec's Events table.
EVENTS: tuple[str, ...] = (
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
)

#: Arrow type names of the columns (what ``str()`` of each pyarrow type gives).
TIMESTAMP = "timestamp[ms, tz=UTC]"
INT64 = "int64"
STRING = "string"
BOOL = "bool"


@dataclass(frozen=True, slots=True)
class Column:
    """One event-log column: its name, its kind in a frame and its type in a Parquet file."""

    name: str
    kind: Kind
    arrow: str


#: The event log's columns, in order.
COLUMNS: tuple[Column, ...] = (
    Column("received_at", "seconds", TIMESTAMP),
    Column("event", "category", STRING),
    Column("channel", "int", INT64),
    Column("message_id", "str", STRING),
    Column("user_name", "str", STRING),
    Column("user_id", "int", INT64),
    Column("user_roles", "str", STRING),
    Column("text", "str", STRING),
    Column("components", "str", STRING),
    Column("whisper", "bool", BOOL),
    Column("me", "bool", BOOL),
    Column("target", "str", STRING),
    Column("poll_q", "str", STRING),
    Column("poll_answers", "object", "list<item: string>"),
    Column("poll_voters", "int", INT64),
    Column("poll_responses", "object", "map<string, int64>"),
    Column("poll_ends_at", "time", TIMESTAMP),
    Column("poll_duration_ms", "int", INT64),
    Column("moderator", "str", STRING),
    Column("target_user_id", "int", INT64),
    Column("duration_ms", "int", INT64),
    Column("from_history", "bool", BOOL),
)
