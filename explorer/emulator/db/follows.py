"""The repository of follows (``channel_follows``): who follows which channel since when, the
channels' ``numFollowers`` kept with them, and which channels' past follows are stored
(``follows_seeded``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from explorer.emulator.db.engine import Store, Transaction
from explorer.emulator.db.users import USER_COLUMNS

SCHEMA = """
CREATE TABLE IF NOT EXISTS channel_follows (
    id INTEGER PRIMARY KEY, channelId INTEGER NOT NULL REFERENCES channels (id),
    userId INTEGER NOT NULL REFERENCES users (id),
    createdAt TEXT NOT NULL, UNIQUE (channelId, userId)
);
CREATE INDEX IF NOT EXISTS channel_follows_recent ON channel_follows (channelId, createdAt);
CREATE INDEX IF NOT EXISTS channel_follows_user ON channel_follows (userId, createdAt);
CREATE TABLE IF NOT EXISTS follows_seeded (channelId INTEGER PRIMARY KEY);
"""

#: For ``paging.channel_page``: the channels a user (the argument) follows, and their order,
#: most recently followed first (the user again as the order's argument).
FOLLOWED_BY = "c.id IN (SELECT channelId FROM channel_follows WHERE userId = ?)"
RECENTLY_FOLLOWED = (
    "(SELECT f.createdAt FROM channel_follows f WHERE f.channelId = c.id AND f.userId = ?) DESC"
)


def followed_at(db: Store, channel_id: int, user_id: int) -> str | None:
    """When ``user_id`` followed ``channel_id``, or None when they do not follow it."""
    value: str | None = db.scalar(
        "SELECT createdAt FROM channel_follows WHERE channelId = ? AND userId = ?",
        (channel_id, user_id),
    )
    return value


def state(db: Store | Transaction, channel_id: int, user_id: int) -> tuple[str | None, int]:
    """When ``user_id`` followed ``channel_id`` (None: they do not follow it) and the channel's
    ``numFollowers``, in one statement (the channel exists)."""
    row = db.one(
        "SELECT (SELECT createdAt FROM channel_follows WHERE channelId = ? AND userId = ?), "
        "numFollowers FROM channels WHERE id = ?",
        (channel_id, user_id, channel_id),
    )
    assert row is not None, f"channel {channel_id} exists"
    return row[0], int(row[1])


def is_seeded(db: Store, channel_id: int) -> bool:
    """Whether the past follows of ``channel_id`` are stored."""
    return db.one("SELECT 1 FROM follows_seeded WHERE channelId = ?", (channel_id,)) is not None


def seed(db: Store, channel_id: int, rows: Iterable[tuple[int, int, str]]) -> None:
    """Store the past ``(channelId, userId, createdAt)`` follows of ``channel_id`` (those stored
    already stay) and mark it seeded, in one transaction."""
    with db.transaction() as tx:
        tx.executemany(
            "INSERT INTO channel_follows (channelId, userId, createdAt) VALUES (?, ?, ?) "
            "ON CONFLICT DO NOTHING",
            rows,
        )
        tx.execute("INSERT INTO follows_seeded (channelId) VALUES (?)", (channel_id,))


def followers(
    db: Store, channel_id: int, listed: str, limit: int, offset: int
) -> tuple[list[tuple[Any, ...]], int]:
    """A page of the followers of ``channel_id`` meeting ``listed`` (a condition on users
    ``u``), most recent first, as the User record's columns then ``followedAt``; and their
    total."""
    shown = (
        f"FROM channel_follows f JOIN users u ON u.id = f.userId WHERE f.channelId = ? AND {listed}"
    )
    rows = db.all(
        f"SELECT {USER_COLUMNS}, f.createdAt {shown} "
        "ORDER BY f.createdAt DESC, f.id DESC LIMIT ? OFFSET ?",
        (channel_id, limit, offset),
    )
    total: int = db.scalar(f"SELECT COUNT(*) {shown}", (channel_id,))
    return rows, total


def owners_followed(db: Store, user_id: int) -> set[int]:
    """The owners of the channels ``user_id`` follows."""
    return {
        row[0]
        for row in db.all(
            "SELECT c.userId FROM channel_follows f JOIN channels c ON c.id = f.channelId "
            "WHERE f.userId = ?",
            (user_id,),
        )
    }


def follow(tx: Transaction, channel_id: int, user_id: int, now: str) -> bool:
    """``user_id`` follows ``channel_id`` since ``now``, counted in its ``numFollowers``;
    whether they did not already."""
    added = tx.execute(
        "INSERT INTO channel_follows (channelId, userId, createdAt) VALUES (?, ?, ?) "
        "ON CONFLICT DO NOTHING",
        (channel_id, user_id, now),
    ).rowcount
    if added:
        tx.execute(
            "UPDATE channels SET numFollowers = numFollowers + 1 WHERE id = ?", (channel_id,)
        )
    return bool(added)


def unfollow(tx: Transaction, channel_id: int, user_id: int) -> bool:
    """``user_id`` stops following ``channel_id``, uncounted; whether they did follow it."""
    removed = tx.execute(
        "DELETE FROM channel_follows WHERE channelId = ? AND userId = ?",
        (channel_id, user_id),
    ).rowcount
    if removed:
        tx.execute(
            "UPDATE channels SET numFollowers = CASE WHEN numFollowers > 0 "
            "THEN numFollowers - 1 ELSE 0 END WHERE id = ?",
            (channel_id,),
        )
    return bool(removed)


def add_many(tx: Transaction, channel_id: int, followers: Iterable[tuple[int, str]]) -> int:
    """The ``(userId, createdAt)`` of ``followers`` follow ``channel_id`` (one who already does
    stays as they are), counted in its ``numFollowers``, in one batch; how many were new."""
    added = tx.executemany(
        "INSERT INTO channel_follows (channelId, userId, createdAt) VALUES (?, ?, ?) "
        "ON CONFLICT DO NOTHING",
        [(channel_id, user_id, at) for user_id, at in followers],
    ).rowcount
    if added:
        tx.execute(
            "UPDATE channels SET numFollowers = numFollowers + ? WHERE id = ?", (added, channel_id)
        )
    return added
