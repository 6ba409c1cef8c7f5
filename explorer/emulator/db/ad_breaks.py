"""The ad breaks channels ran (``ad_breaks``), by the request that asked for each."""

from __future__ import annotations

from explorer.emulator.db.engine import Store, Transaction

SCHEMA = """
CREATE TABLE IF NOT EXISTS ad_breaks (
    channelId INTEGER NOT NULL REFERENCES channels (id), requestId TEXT NOT NULL,
    userId INTEGER NOT NULL, startedAt REAL NOT NULL, PRIMARY KEY (channelId, requestId)
);
CREATE INDEX IF NOT EXISTS ad_breaks_recent ON ad_breaks (channelId, startedAt);
"""


def requested(db: Store, channel_id: int, request_id: str) -> bool:
    """Whether request ``request_id`` ran a break on channel ``channel_id`` already."""
    found = db.one(
        "SELECT 1 FROM ad_breaks WHERE channelId = ? AND requestId = ?", (channel_id, request_id)
    )
    return found is not None


def started_since(tx: Transaction, channel_id: int, since: float) -> list[float]:
    """When channel ``channel_id``'s breaks after ``since`` started, oldest first."""
    return [
        at
        for (at,) in tx.execute(
            "SELECT startedAt FROM ad_breaks WHERE channelId = ? AND startedAt > ? "
            "ORDER BY startedAt",
            (channel_id, since),
        )
    ]


def add(tx: Transaction, channel_id: int, request_id: str, user_id: int, at: float) -> None:
    """Record the break request ``request_id`` of user ``user_id`` started at ``at``."""
    tx.execute(
        "INSERT INTO ad_breaks (channelId, requestId, userId, startedAt) VALUES (?, ?, ?, ?)",
        (channel_id, request_id, user_id, at),
    )
