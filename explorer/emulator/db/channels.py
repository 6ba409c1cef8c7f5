"""Lookups of channels (the ``channels`` table, declared with the core records in
:mod:`.engine`) shared by handlers of several families."""

from __future__ import annotations

from typing import Any

from explorer.emulator.db.engine import Store, Transaction


def fields(db: Store | Transaction, channel_id: int, *names: str) -> tuple[Any, ...] | None:
    """The columns ``names`` of channel ``channel_id``, in that order; None when there is none."""
    return db.one(f"SELECT {', '.join(names)} FROM channels WHERE id = ?", (channel_id,))


def owner(db: Store, channel_id: int | None) -> int | None:
    """The id of the user owning ``channel_id``, or None."""
    value: int | None = db.scalar("SELECT userId FROM channels WHERE id = ?", (channel_id,))
    return value


def unsuspended_owner(db: Store, channel_id: int) -> int | None:
    """The id of the user owning ``channel_id`` when it exists and is not suspended, else
    None."""
    value: int | None = db.scalar(
        "SELECT userId FROM channels WHERE id = ? AND suspended = 0", (channel_id,)
    )
    return value


def id_of_owner(db: Store | Transaction, user_id: int) -> int | None:
    """The id of the channel ``user_id`` owns, or None."""
    value: int | None = db.scalar("SELECT id FROM channels WHERE userId = ?", (user_id,))
    return value
