"""The users' rows read and written by the resource groups (the table is a core record: its
DDL is in :mod:`.engine`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from explorer.emulator.db.engine import Store, Transaction
from explorer.wire.records import USER


def is_undeleted(db: Store | Transaction, user_id: int) -> bool:
    """Whether user ``user_id`` exists and is not deleted."""
    found = db.one("SELECT 1 FROM users WHERE id = ? AND deletedAt IS NULL", (user_id,))
    return found is not None


def ids_by_name(db: Store | Transaction, usernames: Sequence[str]) -> dict[str, int]:
    """The ids of the users among ``usernames`` (exact names), by username."""
    marks = ", ".join("?" * len(usernames))
    rows = db.all(f"SELECT username, id FROM users WHERE username IN ({marks})", usernames)
    return {name: user_id for name, user_id in rows}


def sparks(db: Store | Transaction, user_id: int) -> int | None:
    """The sparks user ``user_id`` holds; None when there is no such user."""
    held: int | None = db.scalar("SELECT sparks FROM users WHERE id = ?", (user_id,))
    return held


def spend_sparks(tx: Transaction, user_id: int, amount: int, updated_at: str) -> None:
    """Take ``amount`` sparks from user ``user_id`` (the caller checked they hold them)."""
    tx.execute(
        "UPDATE users SET sparks = sparks - ?, updatedAt = ? WHERE id = ?",
        (amount, updated_at, user_id),
    )


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
