"""The repository of partnership: each channel's application (``partnership_apps``) and the
codes a partner redeems (``partnership_codes``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from explorer.emulator.db.engine import Store, Transaction

SCHEMA = """
CREATE TABLE IF NOT EXISTS partnership_apps (
    channelId INTEGER PRIMARY KEY REFERENCES channels (id), status TEXT NOT NULL,
    message TEXT NOT NULL, followers INTEGER NOT NULL, viewersTotal INTEGER NOT NULL,
    createdAt TEXT NOT NULL, updatedAt TEXT NOT NULL, decidedAt TEXT, decidedBy INTEGER,
    reason TEXT
);
CREATE TABLE IF NOT EXISTS partnership_codes (
    id INTEGER PRIMARY KEY, channelId INTEGER NOT NULL REFERENCES channels (id),
    code TEXT NOT NULL UNIQUE, redeemedById INTEGER, redeemedAt TEXT,
    createdAt TEXT NOT NULL, updatedAt TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS partnership_codes_channel ON partnership_codes (channelId, id);
"""

#: A partnership code: id, code, who redeemed it and when (None while not), created, updated.
Code = tuple[int, str, int | None, str | None, str, str]


def application(db: Store, channel_id: int, fields: Sequence[str]) -> tuple[Any, ...] | None:
    """The ``fields`` of ``channel_id``'s application, or None when it never applied."""
    return db.one(
        f"SELECT {', '.join(fields)} FROM partnership_apps WHERE channelId = ?", (channel_id,)
    )


def status(tx: Transaction, channel_id: int) -> str | None:
    """The status of ``channel_id``'s application, or None."""
    value: str | None = tx.scalar(
        "SELECT status FROM partnership_apps WHERE channelId = ?", (channel_id,)
    )
    return value


def apply(
    tx: Transaction, channel_id: int, message: str, followers: int, viewers: int, now: str
) -> None:
    """A pending application of ``channel_id`` (replacing a denied one) with its standing."""
    tx.execute(
        "INSERT INTO partnership_apps (channelId, status, message, followers, viewersTotal, "
        "createdAt, updatedAt) VALUES (?, 'pending', ?, ?, ?, ?, ?) "
        "ON CONFLICT (channelId) DO UPDATE SET status = excluded.status, "
        "message = excluded.message, followers = excluded.followers, "
        "viewersTotal = excluded.viewersTotal, createdAt = excluded.createdAt, "
        "updatedAt = excluded.updatedAt, decidedAt = NULL, decidedBy = NULL, reason = NULL",
        (channel_id, message, followers, viewers, now, now),
    )


def decide(
    tx: Transaction, channel_id: int, status: str, by: int, reason: str | None, now: str
) -> None:
    """Record the decision on ``channel_id``'s application."""
    tx.execute(
        "UPDATE partnership_apps SET status = ?, decidedAt = ?, decidedBy = ?, reason = ?, "
        "updatedAt = ? WHERE channelId = ?",
        (status, now, by, reason, now, channel_id),
    )


def add_codes(tx: Transaction, channel_id: int, codes: Sequence[str], now: str) -> None:
    """Issue ``codes`` to ``channel_id``."""
    tx.executemany(
        "INSERT INTO partnership_codes (channelId, code, createdAt, updatedAt) VALUES (?, ?, ?, ?)",
        [(channel_id, code, now, now) for code in codes],
    )


def codes(db: Store, channel_id: int) -> list[Code]:
    """The codes of ``channel_id``, in the order issued."""
    return db.all(
        "SELECT id, code, redeemedById, redeemedAt, createdAt, updatedAt FROM partnership_codes "
        "WHERE channelId = ? ORDER BY id",
        (channel_id,),
    )
