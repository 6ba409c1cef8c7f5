"""The users' rows read and written by the resource groups (the table is a core record: its
DDL is in :mod:`.engine`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from explorer.emulator.db.engine import Store, Transaction
from explorer.wire.records import USER

#: The public fields of a user, in the wire record's order (rows hold them so).
FIELDS: tuple[str, ...] = tuple(field.name for field in USER)
_COLUMNS = ", ".join(FIELDS)
#: The same columns of users ``u`` (for statements joining users to another table).
USER_COLUMNS = ", ".join(f"u.{name}" for name in FIELDS)


def exists(db: Store, user_id: int) -> bool:
    """Whether a user of id ``user_id`` exists."""
    return db.one("SELECT 1 FROM users WHERE id = ?", (user_id,)) is not None


def row(db: Store, user_id: int) -> tuple[Any, ...] | None:
    """The :data:`FIELDS` row of ``user_id``, or None."""
    return db.one(f"SELECT {_COLUMNS} FROM users WHERE id = ?", (user_id,))


def is_listed(db: Store, user_id: int, listed: str) -> bool:
    """Whether ``user_id`` exists and meets ``listed``, a condition on users ``u`` (which
    accounts the caller may see)."""
    return db.one(f"SELECT 1 FROM users u WHERE u.id = ? AND {listed}", (user_id,)) is not None


def username(db: Store, user_id: int) -> str | None:
    """The name of ``user_id``, or None."""
    value: str | None = db.scalar("SELECT username FROM users WHERE id = ?", (user_id,))
    return value


def usernames(db: Store, user_ids: Sequence[int]) -> list[tuple[int, str]]:
    """``(id, username)`` of each of ``user_ids`` that exists, in no order."""
    return db.all(
        "SELECT id, username FROM users WHERE id IN (SELECT value FROM json_each(?))",
        (orjson.dumps(list(user_ids)).decode(),),
    )


def user_id(db: Store, ref: int | str) -> int | None:
    """The id of the user of id ``ref`` (an int) or of name ``ref`` (a str, any case), or
    None."""
    if isinstance(ref, int):
        row = db.one("SELECT id FROM users WHERE id = ?", (ref,))
    else:
        row = db.one("SELECT id FROM users WHERE username = ? COLLATE NOCASE", (ref,))
    return None if row is None else int(row[0])


def highest_id(db: Store) -> int:
    """The highest user id (there are users whenever there are channels)."""
    value: int = db.scalar("SELECT MAX(id) FROM users")
    return value


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
