"""Users left out of a log or a capture (``exclude_users=``), or kept but redacted
(``redact_users=``): for someone who asks not to be logged.

Users are named by id (an integer, or text of ASCII digits) or by name (matched without
regard to case). An event is *of* a user when its row (``eventrows.flatten``) names them:
``user_id`` or ``user_name`` (whom it is by or about), ``target_user_id`` (whom a moderation
or an update acts on), ``moderator`` or ``target`` (a whisper's recipient).

- Excluded: the event is not logged (``api.watch``, ``explorer record``: it never reaches the
  log, so no capture holds it) or not read (``open_capture``: every read leaves it out).
- Redacted: the event is kept, so counts and rates stay whole, but every object in its data
  that names the user has the name replaced by :data:`MARKER` and the id removed, and a
  message they sent has its text replaced by :data:`MARKER`: in the packet (what a capture
  keeps and a replay plays) as in the row.

Only what names the user is changed: a message of someone else that mentions them by name
keeps its text. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import orjson

from explorer.events.rows import COLUMNS, flatten

#: What a redacted name or text reads.
MARKER = "[redacted]"
#: Keys of an event's objects that hold their user's name, and those that hold their id; a
#: whisper's ``target`` names another user.
_NAME_KEYS = ("user_name", "username")
_ID_KEYS = ("user_id", "user")
_TARGET = "target"
#: Events whose own ``id`` is the user's (not a message's).
_USER_ID_EVENTS = frozenset({"UserJoin", "UserLeave"})
_ROW = {name: i for i, name in enumerate(COLUMNS)}
#: The columns of an event row that name a user by id, and by name.
ID_COLUMNS = ("user_id", "target_user_id")
NAME_COLUMNS = ("user_name", "moderator", "target")

#: How users are given: ids, names, or a mix (one name or id alone is one user).
UsersLike = Iterable[int | str] | int | str | None


class Users:
    """A set of users named by id or name (see the module docstring)."""

    def __init__(self, users: UsersLike = None) -> None:
        named = [users] if isinstance(users, int | str) else list(users or ())
        for user in named:
            if isinstance(user, bool) or not isinstance(user, int | str):
                raise TypeError(f"A user is an id or a name, not {user!r}.")
        self.ids: frozenset[int] = frozenset(
            int(u) for u in named if isinstance(u, int) or (u.isascii() and u.isdigit())
        )
        self.names: frozenset[str] = frozenset(u.lower() for u in named if isinstance(u, str))

    def __bool__(self) -> bool:
        return bool(self.ids or self.names)

    def __repr__(self) -> str:
        return f"Users(ids={sorted(self.ids)}, names={sorted(self.names)})"

    def has(self, user_id: Any = None, name: Any = None) -> bool:
        """Whether ``user_id`` or ``name`` is one of these users."""
        return (type(user_id) is int and user_id in self.ids) or (
            isinstance(name, str) and name.lower() in self.names
        )

    def any_of(self, ids: Iterable[Any], names: Iterable[str]) -> bool:
        """Whether one of ``ids`` (an event row's, missing ones None) or of ``names``
        (lower case) is one of these users."""
        for user_id in ids:
            if type(user_id) is int and user_id in self.ids:
                return True
        return not self.names.isdisjoint(names)

    def sql(self, ids: Iterable[str] = ID_COLUMNS, names: Iterable[str] = NAME_COLUMNS) -> str:
        """An SQL condition, never NULL, true for the events view's rows whose ``ids``
        columns or ``names`` columns name one of these users."""
        listed_ids = ", ".join(map(str, sorted(self.ids)))
        listed = ", ".join(_text(name) for name in sorted(self.names))
        terms = [f"{c} IN ({listed_ids})" for c in ids if listed_ids]
        terms += [f"lower({c}) IN ({listed})" for c in names if listed]
        return f"coalesce({' OR '.join(terms) or 'false'}, false)"


class Screen:
    """What a log keeps of each event: called with the event's name and data, it gives the
    data, a redacted copy of it, or None to leave the event out (see the module docstring)."""

    def __init__(self, exclude: UsersLike = None, redact: UsersLike = None) -> None:
        self.exclude = Users(exclude)
        self.redact = Users(redact)

    def __bool__(self) -> bool:
        return bool(self.exclude or self.redact)

    def __call__(self, event: str, data: Any) -> Any | None:
        if event == "ChatMessage" and type(data) is dict:
            # Most events: the values its row would take, read directly (a third of the cost).
            get = data.get
            ids: tuple[Any, ...] = (get("user_id"),)
            names: tuple[Any, ...] = (get("user_name"), get("target"))
        else:
            row = flatten({"event": event, "data": data}, 0.0)
            ids = tuple(row[_ROW[c]] for c in ID_COLUMNS)
            names = tuple(row[_ROW[c]] for c in NAME_COLUMNS)
        lowered = [name.lower() for name in names if isinstance(name, str)]
        if self.exclude.any_of(ids, lowered):
            return None
        if self.redact.any_of(ids, lowered):
            return redacted(event, data, self.redact)
        return data

    def view(self, source: str, redact_packet: str) -> str:
        """The query of the ``source`` events with these users' rows left out and redacted,
        what every read of a capture goes through; ``redact_packet`` names the SQL function
        that redacts a packet (:meth:`packet`). A redacted row whose text is not a message's
        (a live event's payload) has all of it replaced."""
        query = f"SELECT * FROM ({source})"
        if self.redact:
            users = self.redact
            sender = users.sql(("user_id",), ("user_name",))
            marker = _text(MARKER)
            replaced = [
                f"CASE WHEN {sender} THEN NULL ELSE user_id END AS user_id",
                f"CASE WHEN {sender} THEN {marker} ELSE user_name END AS user_name",
                f"CASE WHEN {sender} AND text IS NOT NULL THEN {marker} ELSE text END AS text",
                f"CASE WHEN {users.sql(('target_user_id',), ())} THEN NULL "
                "ELSE target_user_id END AS target_user_id",
                f"CASE WHEN {users.sql((), ('moderator',))} THEN {marker} "
                "ELSE moderator END AS moderator",
                f"CASE WHEN {users.sql((), ('target',))} THEN {marker} ELSE target END AS target",
                f"CASE WHEN {users.sql()} THEN {redact_packet}(packet) ELSE packet END AS packet",
            ]
            query = f"SELECT * REPLACE ({', '.join(replaced)}) FROM ({source})"
        if self.exclude:
            query += f" WHERE NOT {self.exclude.sql()}"
        return query

    def packet(self, raw: str | bytes | None) -> str | None:
        """A packet's JSON text as :meth:`__call__` leaves it (None: left out, or none)."""
        if raw is None:
            return None
        packet = orjson.loads(raw)
        event, data = packet.get("event"), packet.get("data")
        if not isinstance(event, str):
            return raw.decode() if isinstance(raw, bytes) else raw
        kept = self(event, data)
        if kept is None:
            return None
        if kept is data:
            return raw.decode() if isinstance(raw, bytes) else raw
        return orjson.dumps({**packet, "data": kept}).decode()


def redacted(event: str, data: Any, users: Users) -> Any:
    """A copy of ``data`` with ``users`` redacted (see the module docstring)."""
    ids = (*_ID_KEYS, "id") if event in _USER_ID_EVENTS else _ID_KEYS
    copy = _redacted(data, users, ids)
    if (
        event == "ChatMessage"
        and isinstance(data, dict)
        and users.has(data.get("user_id"), data.get("user_name"))
    ):
        message = dict(copy.get("message") or {})
        message["message"] = [{"type": "text", "data": MARKER, "text": MARKER}]
        copy["message"] = message
    return copy


def _redacted(value: Any, users: Users, ids: tuple[str, ...]) -> Any:
    if isinstance(value, list):
        return [_redacted(item, users, _ID_KEYS) for item in value]
    if not isinstance(value, dict):
        return value
    named = any(users.has(user_id=value.get(k)) for k in ids) or any(
        users.has(name=value.get(k)) for k in _NAME_KEYS
    )
    copy = {k: _redacted(v, users, _ID_KEYS) for k, v in value.items()}
    if users.has(name=copy.get(_TARGET)):
        copy[_TARGET] = MARKER
    if named:
        for key in ids:
            if type(copy.get(key)) is int:
                copy[key] = None
        for key in _NAME_KEYS:
            if isinstance(copy.get(key), str):
                copy[key] = MARKER
    return copy


def _text(value: str) -> str:
    """``value`` as an SQL string literal."""
    return "'" + value.replace("'", "''") + "'"
