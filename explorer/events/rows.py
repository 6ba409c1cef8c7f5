"""Chat event packets as flat rows, and rows as a typed DataFrame: the event log's columns.

The columns, their kinds and meaning are declared in ``explorer.wire.events`` (:data:`COLUMNS`
is their names, :data:`DTYPES` their dtypes, built by ``core/columns.py``).

Live events (``api.live``, Constellation) are logged as packets whose event is the live
event's kind and name (``channel:update``, ``user:followed``, ...) and whose data is the
``live`` event's own ``{channel: "channel:12:update", payload}``. Their rows: ``channel`` (the
id of a ``channel:``, ``interactive:`` or ``progression:`` event), ``user_id`` (of a
``user:`` event, or who followed or subscribed to a channel, with ``user_name``) and ``text``
(the payload as compact JSON: the changed fields of an update).

A row is a plain tuple in that order, the cheapest shape to make and to transpose. Pure: no
I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import islice
from typing import Any

import orjson
import pandas as pd

from explorer.core import columns
from explorer.wire import events as wire_events

#: Column names of an event frame, in order.
COLUMNS: tuple[str, ...] = tuple(column.name for column in wire_events.COLUMNS)
#: Declared dtypes; ``event`` gains a category for each event name outside ``EVENTS``.
DTYPES: dict[str, Any] = {
    column.name: columns.dtype(column.kind, wire_events.EVENTS) for column in wire_events.COLUMNS
}

_POS = {name: i for i, name in enumerate(COLUMNS)}
_BLANK: tuple[Any, ...] = (None,) * len(COLUMNS)
#: Rows transposed at once: fewer than the allocations that set off a garbage collection (700).
_TRANSPOSE_ROWS = 512

Row = tuple[Any, ...]
_NO_MESSAGE: dict[str, Any] = {}


def _roles(value: Any) -> str | None:
    return ",".join(value) if value is not None else None


def _name(user: Any) -> Any:
    return user.get("user_name") if isinstance(user, dict) else None


def _row(received_at: float, event: str, **fields: Any) -> Row:
    row = list(_BLANK)
    row[0] = received_at
    row[1] = event
    for name, value in fields.items():
        row[_POS[name]] = value
    return tuple(row)


def _component_text(part: Mapping[str, Any]) -> Any:
    return part["text"] if "text" in part else part.get("data", "")


def message_text(data: Mapping[str, Any]) -> str:
    """The text of chat message data: its components' text joined, as the ``text`` column."""
    parts: Sequence[Any] = (data.get("message") or _NO_MESSAGE).get("message") or ()
    return "".join([str(_component_text(p)) for p in parts])


def _chat_message(received_at: float, data: dict[str, Any], history: bool) -> Row:
    # The common row: a literal tuple in COLUMNS order is ten times cheaper than _row(), and
    # most messages have one component, which needs no join.
    get = data.get
    message = get("message") or _NO_MESSAGE
    parts: Sequence[Any] = message.get("message") or ()
    meta = message.get("meta")
    roles = get("user_roles")
    channel = get("channel")
    if len(parts) == 1:
        part = parts[0]
        text = _component_text(part)
        types = part.get("type", "")
    else:
        text = "".join([_component_text(p) for p in parts])
        types = ",".join([p.get("type", "") for p in parts])
    return (
        received_at,
        "ChatMessage",
        get("originatingChannel") if channel is None else channel,
        get("id"),
        get("user_name"),
        get("user_id"),
        ",".join(roles) if roles is not None else None,
        text,
        types,
        meta.get("whisper") is True if meta else False,
        meta.get("me") is True if meta else False,
        get("target"),
        None,  # poll_q
        None,  # poll_answers
        None,  # poll_voters
        None,  # poll_responses
        None,  # poll_ends_at
        None,  # poll_duration_ms
        None,  # moderator
        None,  # target_user_id
        None,  # duration_ms
        history,
    )


def _poll(data: dict[str, Any]) -> dict[str, Any]:
    author = data.get("author") or {}
    return {
        "user_name": author.get("user_name"),
        "user_id": author.get("user_id"),
        "user_roles": _roles(author.get("user_roles")),
        "poll_q": data.get("q"),
        "poll_answers": data.get("answers"),
        "poll_voters": data.get("voters"),
        "poll_responses": data.get("responses"),
        "poll_ends_at": data.get("endsAt"),
        "poll_duration_ms": data.get("duration"),
    }


def _user_timeout(data: dict[str, Any]) -> dict[str, Any]:
    user = data.get("user") or {}
    return {
        "user_name": user.get("user_name"),
        "user_id": user.get("user_id"),
        "user_roles": _roles(user.get("user_roles")),
        "target_user_id": user.get("user_id"),
        "duration_ms": data.get("duration"),
    }


# Events not listed here (WelcomeEvent, unknown names) fill only the common columns.
_FLATTEN: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "UserJoin": lambda d: {
        "user_name": d.get("username"),
        "user_id": d.get("id"),
        "user_roles": _roles(d.get("roles")),
    },
    "UserLeave": lambda d: {"user_name": d.get("username"), "user_id": d.get("id")},
    "PollStart": _poll,
    "PollEnd": _poll,
    "DeleteMessage": lambda d: {"message_id": d.get("id"), "moderator": _name(d.get("moderator"))},
    "PurgeMessage": lambda d: {
        "target_user_id": d.get("user_id"),
        "moderator": _name(d.get("moderator")),
    },
    "ClearMessages": lambda d: {"moderator": _name(d.get("clearer"))},
    "UserUpdate": lambda d: {
        "user_name": d.get("username"),
        "user_id": d.get("user"),
        "user_roles": _roles(d.get("roles")),
        "target_user_id": d.get("user"),
    },
    "UserTimeout": _user_timeout,
}


#: Live event kinds whose id is a channel's (the others: a user's, a team's, ...).
_CHANNEL_KINDS = frozenset({"channel", "interactive", "progression"})


def _live(received_at: float, event: str, data: dict[str, Any], history: bool) -> Row:
    """The row of a live event (``kind:name``; see the module docstring)."""
    topic = data.get("channel")
    ident = topic.split(":")[1] if isinstance(topic, str) and topic.count(":") == 2 else ""
    number = int(ident) if ident.isascii() and ident.isdigit() else None
    kind = event.partition(":")[0]
    payload = data.get("payload")
    fields: dict[str, Any] = {"text": orjson.dumps(payload).decode()}
    actor = payload.get("user") if isinstance(payload, dict) else None
    if isinstance(actor, dict):
        fields["user_name"], fields["user_id"] = actor.get("username"), actor.get("id")
    if kind in _CHANNEL_KINDS:
        fields["channel"] = number
    elif kind == "user":
        fields["user_id"] = number
    return _row(received_at, event, from_history=history, **fields)


def flatten(
    packet: Mapping[str, Any],
    received_at: float,
    from_history: bool = False,
    channel: int | None = None,
) -> Row:
    """One row for an event packet: its :data:`COLUMNS` values; ``channel`` fills the channel
    column of packets that name none (WelcomeEvent, UserJoin, ... in a many-channel log).

    Fields of the wrong shape leave their columns empty instead of failing the event. When the
    rows are built, numbers of the wrong type are blanked and other values in a text column
    are written as text.
    """
    row = _flatten(packet, received_at, from_history)
    if channel is not None and row[2] is None:
        return (*row[:2], channel, *row[3:])
    return row


def _flatten(packet: Mapping[str, Any], received_at: float, from_history: bool) -> Row:
    event = packet.get("event")
    if not isinstance(event, str):
        raise ValueError(f"Not an event packet: event is {event!r}.")
    data = packet.get("data")
    if event == "ChatMessage" and type(data) is dict:
        try:
            return _chat_message(received_at, data, from_history)
        except (AttributeError, TypeError):
            pass  # a malformed message keeps the common columns only
    if type(data) is not dict:
        return _row(received_at, event, from_history=from_history)
    if ":" in event:
        return _live(received_at, event, data, from_history)
    flatten_data = _FLATTEN.get(event)
    try:
        fields = flatten_data(data) if flatten_data else {}
    except (AttributeError, TypeError):
        fields = {}
    channel = data.get("channel", data.get("originatingChannel"))
    return _row(received_at, event, channel=channel, from_history=from_history, **fields)


def rows_frame(rows: Iterable[Row], events: pd.CategoricalDtype) -> pd.DataFrame:
    """The DataFrame of ``rows`` (a RangeIndex), column by column with the declared dtypes;
    ``events`` are the ``event`` column's categories, every row's event among them.

    Rows are transposed a few hundred at a time: thousands of row tuples kept for one
    transpose would set off a garbage collection every few hundred rows.
    """
    values: list[list[Any]] = [[] for _ in COLUMNS]
    pending = iter(rows)
    while batch := list(islice(pending, _TRANSPOSE_ROWS)):
        for column, batch_values in zip(values, zip(*batch, strict=True), strict=True):
            column.extend(batch_values)
    data = {
        column.name: columns.column(values[i], column.kind, events.categories)
        for i, column in enumerate(wire_events.COLUMNS)
    }
    return pd.DataFrame(data, copy=False)
