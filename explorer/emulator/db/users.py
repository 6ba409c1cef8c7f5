"""Lookups of users (the ``users`` table, declared with the core records in :mod:`.engine`)
shared by handlers of several families."""

from __future__ import annotations

from typing import Any

from explorer.emulator.db.engine import Store, Transaction
from explorer.wire.records import USER

#: The public fields of a user, in the wire record's order (rows hold them so).
FIELDS: tuple[str, ...] = tuple(field.name for field in USER)
_COLUMNS = ", ".join(FIELDS)


def row(db: Store | Transaction, user_id: int) -> tuple[Any, ...] | None:
    """The :data:`FIELDS` row of ``user_id``, or None."""
    return db.one(f"SELECT {_COLUMNS} FROM users WHERE id = ?", (user_id,))


def username(db: Store, user_id: int) -> str | None:
    """The name of ``user_id``, or None."""
    value: str | None = db.scalar("SELECT username FROM users WHERE id = ?", (user_id,))
    return value


def by_name(db: Store, name: str) -> tuple[int, str] | None:
    """``(id, username)`` of the user called ``name`` (any case), or None."""
    found = db.one("SELECT id, username FROM users WHERE username = ? COLLATE NOCASE", (name,))
    return None if found is None else (found[0], found[1])


def chat_profile(db: Store, user_id: int) -> tuple[str, int, str | None] | None:
    """``(username, level, avatarUrl)`` of ``user_id``, what chat shows of a sender; None for
    an unknown user."""
    found = db.one("SELECT username, level, avatarUrl FROM users WHERE id = ?", (user_id,))
    return None if found is None else (found[0], found[1], found[2])


def groups(db: Store, user_id: int) -> str | None:
    """The JSON list of ``user_id``'s group names, or None for an unknown user."""
    found: str | None = db.scalar("SELECT groups FROM users WHERE id = ?", (user_id,))
    return found
