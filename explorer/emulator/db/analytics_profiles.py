"""What channel analytics simulate from (``analytics_profiles``): each channel's audience,
followers, partnership and creation, snapshotted from its row the first time its analytics
are read, so later drift of the live counters does not rewrite its history."""

from __future__ import annotations

from explorer.emulator.db.engine import Store

SCHEMA = """
CREATE TABLE IF NOT EXISTS analytics_profiles (
    channelId INTEGER PRIMARY KEY, viewers INTEGER NOT NULL, followers INTEGER NOT NULL,
    partnered INTEGER NOT NULL, createdAt REAL NOT NULL, takenAt TEXT NOT NULL
);
"""


def profile(db: Store, channel_id: int) -> tuple[int, int, int, float] | None:
    """Channel ``channel_id``'s viewers, followers, partnered flag and creation (epoch
    seconds); None until its profile is taken."""
    row = db.one(
        "SELECT viewers, followers, partnered, createdAt FROM analytics_profiles "
        "WHERE channelId = ?",
        (channel_id,),
    )
    return None if row is None else (row[0], row[1], row[2], row[3])


def take(
    db: Store,
    channel_id: int,
    viewers: int,
    followers: int,
    partnered: int,
    created: float,
    taken_at: str,
) -> None:
    """Keep channel ``channel_id``'s profile, unless one is kept already (the first stays)."""
    with db.transaction() as tx:
        tx.execute(
            "INSERT INTO analytics_profiles (channelId, viewers, followers, partnered, "
            "createdAt, takenAt) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            (channel_id, viewers, followers, partnered, created, taken_at),
        )
