"""The users' rows read and written by the resource groups (the table is a core record: its
DDL is in :mod:`.engine`)."""

from __future__ import annotations

from collections.abc import Sequence

from explorer.emulator.db.engine import Store, Transaction


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
