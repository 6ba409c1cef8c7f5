"""Staff announcements (``announcements``), each delivered as notifications."""

from __future__ import annotations

from explorer.emulator.db.engine import Transaction

SCHEMA = """
CREATE TABLE IF NOT EXISTS announcements (
    id INTEGER PRIMARY KEY, authorId INTEGER NOT NULL, message TEXT NOT NULL,
    level TEXT NOT NULL, createdAt TEXT NOT NULL, recipients INTEGER NOT NULL
);
"""


def add(tx: Transaction, author_id: int, message: str, level: str, now: str) -> int:
    """Store an announcement not delivered yet; its id."""
    announcement_id: int = tx.scalar(
        "INSERT INTO announcements (authorId, message, level, createdAt, recipients) "
        "VALUES (?, ?, ?, ?, 0) RETURNING id",
        (author_id, message, level, now),
    )
    return announcement_id


def delivered(tx: Transaction, announcement_id: int, recipients: int) -> None:
    """Record how many users announcement ``announcement_id`` reached."""
    tx.execute(
        "UPDATE announcements SET recipients = ? WHERE id = ?", (recipients, announcement_id)
    )
