"""The broadcasts under way (``live_streams``): when each live channel's current broadcast
started and its access key, read by its manifests (``resources/manifests.py``)."""

from __future__ import annotations

from explorer.emulator.db.engine import Store

SCHEMA = """
CREATE TABLE IF NOT EXISTS live_streams (
    channelId INTEGER PRIMARY KEY, startedAt REAL NOT NULL, accessKey TEXT NOT NULL
);
"""


def started(db: Store, channel_id: int) -> tuple[float, str] | None:
    """When channel ``channel_id``'s broadcast started and its access key; None when none is
    kept."""
    row = db.one("SELECT startedAt, accessKey FROM live_streams WHERE channelId = ?", (channel_id,))
    return None if row is None else (row[0], row[1])


def start(db: Store, channel_id: int, started_at: float, access_key: str) -> None:
    """Keep (or replace) channel ``channel_id``'s broadcast."""
    with db.transaction() as tx:
        tx.execute(
            "INSERT INTO live_streams (channelId, startedAt, accessKey) VALUES (?, ?, ?) "
            "ON CONFLICT (channelId) DO UPDATE SET startedAt = excluded.startedAt, "
            "accessKey = excluded.accessKey",
            (channel_id, started_at, access_key),
        )


def forget(db: Store, channel_id: int) -> None:
    """Forget channel ``channel_id``'s broadcast, if one is kept (a read first: an offline
    channel's manifests, asked for again and again, take no write lock)."""
    if db.one("SELECT 1 FROM live_streams WHERE channelId = ?", (channel_id,)):
        with db.transaction() as tx:
            tx.execute("DELETE FROM live_streams WHERE channelId = ?", (channel_id,))
