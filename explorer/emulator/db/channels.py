"""Lookups of channels (the ``channels`` table, whose schema is the engine's core records)
shared by handlers of several families."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from explorer.emulator.db.engine import Store, Transaction


def owner(db: Store, channel_id: int) -> int | None:
    """The user id owning channel ``channel_id``, or None when there is no such channel."""
    found: int | None = db.scalar("SELECT userId FROM channels WHERE id = ?", (channel_id,))
    return found


def unsuspended_owner(db: Store, channel_id: int) -> int | None:
    """The owner of channel ``channel_id`` when it exists and is not suspended, else None."""
    found: int | None = db.scalar(
        "SELECT userId FROM channels WHERE id = ? AND suspended = 0", (channel_id,)
    )
    return found


def of_user(tx: Transaction, user_id: int) -> int | None:
    """The id of the channel user ``user_id`` owns, or None."""
    row = tx.one("SELECT id FROM channels WHERE userId = ?", (user_id,))
    return None if row is None else int(row[0])


def columns(tx: Transaction, channel_id: int, names: Sequence[str]) -> tuple[Any, ...] | None:
    """The columns ``names`` of channel ``channel_id``'s row, or None."""
    return tx.one(f"SELECT {', '.join(names)} FROM channels WHERE id = ?", (channel_id,))
