"""Lookups of users (the ``users`` table, whose schema is the engine's core records) shared by
handlers of several families."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from explorer.emulator.db.engine import Store, Transaction


def username(db: Store, user_id: int) -> str | None:
    """The name of user ``user_id``, or None when there is no such user."""
    name: str | None = db.scalar("SELECT username FROM users WHERE id = ?", (user_id,))
    return name


def by_name(db: Store, name: str) -> tuple[int, str] | None:
    """``(id, username)`` of the user called ``name`` (any case), or None."""
    row = db.one("SELECT id, username FROM users WHERE username = ? COLLATE NOCASE", (name,))
    return None if row is None else (row[0], row[1])


def chat_profile(db: Store, user_id: int) -> tuple[str, int, str | None] | None:
    """``(username, level, avatarUrl)`` of user ``user_id``, or None."""
    row = db.one("SELECT username, level, avatarUrl FROM users WHERE id = ?", (user_id,))
    return None if row is None else (row[0], row[1], row[2])


def groups(db: Store, user_id: int) -> str | None:
    """The JSON list of user ``user_id``'s global groups, or None."""
    found: str | None = db.scalar("SELECT groups FROM users WHERE id = ?", (user_id,))
    return found


def columns(tx: Transaction, user_id: int, names: Sequence[str]) -> tuple[Any, ...] | None:
    """The columns ``names`` of user ``user_id``'s row, or None."""
    return tx.one(f"SELECT {', '.join(names)} FROM users WHERE id = ?", (user_id,))
