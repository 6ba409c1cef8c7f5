"""Chat polls: ``chat_polls`` (at most one running per channel, each run by the process named
its ``owner``) and ``chat_poll_votes``, one row per voter."""

from __future__ import annotations

from collections.abc import Sequence

from explorer.emulator.db.chat_presence import gone
from explorer.emulator.db.engine import Store, Transaction

SCHEMA = """
CREATE TABLE IF NOT EXISTS chat_polls (
    id INTEGER PRIMARY KEY AUTOINCREMENT, channelId INTEGER NOT NULL, owner TEXT NOT NULL,
    data TEXT NOT NULL, startedAt REAL NOT NULL, endsAt REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS chat_polls_channel ON chat_polls (channelId, endsAt);
CREATE TABLE IF NOT EXISTS chat_poll_votes (
    pollId INTEGER NOT NULL REFERENCES chat_polls (id) ON DELETE CASCADE,
    userId INTEGER NOT NULL, choice INTEGER NOT NULL,
    PRIMARY KEY (pollId, userId)
) WITHOUT ROWID;
"""


def votes(db: Store, poll_id: int) -> list[tuple[int, int]]:
    """``(choice, voters)`` of each answer of the poll that has votes."""
    return db.all(
        "SELECT choice, COUNT(*) FROM chat_poll_votes WHERE pollId = ? GROUP BY choice",
        (poll_id,),
    )


def is_running(tx: Transaction, channel_id: int, now: float) -> bool:
    """Whether a poll of ``channel_id`` is running at ``now``."""
    found = tx.one("SELECT 1 FROM chat_polls WHERE channelId = ? AND endsAt > ?", (channel_id, now))
    return found is not None


def add(tx: Transaction, channel_id: int, owner: str, data: str, now: float, ends: float) -> int:
    """Store a poll (``data``: its JSON) run by process ``owner``; its id."""
    poll_id: int = tx.scalar(
        "INSERT INTO chat_polls (channelId, owner, data, startedAt, endsAt) "
        "VALUES (?, ?, ?, ?, ?) RETURNING id",
        (channel_id, owner, data, now, ends),
    )
    return poll_id


def remove(db: Store, poll_id: int) -> None:
    """Delete a poll and its votes."""
    with db.transaction() as tx:
        tx.execute("DELETE FROM chat_polls WHERE id = ?", (poll_id,))


def running(tx: Transaction, channel_id: int, now: float) -> tuple[int, str] | None:
    """``(id, data JSON)`` of ``channel_id``'s newest poll running at ``now``, or None."""
    row = tx.one(
        "SELECT id, data FROM chat_polls WHERE channelId = ? AND endsAt > ? "
        "ORDER BY id DESC LIMIT 1",
        (channel_id, now),
    )
    return None if row is None else (row[0], row[1])


def vote(tx: Transaction, poll_id: int, user_id: int, choice: int) -> None:
    """Record ``user_id``'s vote, replacing an earlier one."""
    tx.execute(
        "INSERT INTO chat_poll_votes (pollId, userId, choice) VALUES (?, ?, ?) "
        "ON CONFLICT (pollId, userId) DO UPDATE SET choice = excluded.choice",
        (poll_id, user_id, choice),
    )


def adopt(
    db: Store, keep: Sequence[str], before: float, stale: float, owner: str
) -> list[tuple[int, int, str, float]]:
    """Make ``owner`` run the polls processes not in ``keep`` started before ``before``,
    dropping those that ended before ``stale``; ``(id, channel, data JSON, endsAt)`` of each
    poll adopted."""
    orphaned = gone("owner", keep)
    held = db.one(
        f"SELECT 1 FROM chat_polls WHERE {orphaned} AND startedAt < ? LIMIT 1", (*keep, before)
    )
    if held is None:
        return []
    with db.transaction() as tx:
        tx.execute(f"DELETE FROM chat_polls WHERE {orphaned} AND endsAt < ?", (*keep, stale))
        return tx.all(
            f"UPDATE chat_polls SET owner = ? WHERE {orphaned} AND startedAt < ? "
            "RETURNING id, channelId, data, endsAt",
            (owner, *keep, before),
        )
