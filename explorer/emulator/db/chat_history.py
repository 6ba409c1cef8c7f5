"""Chat history: the ``chat_messages`` table, one row per stored message.

Each row keeps the message's position in history (``seq``, increasing over every channel),
its data as sent (JSON text, served as is) and whether moderation hid it (``deleted``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import orjson

from explorer.emulator.db.engine import Store, Transaction

SCHEMA = """
CREATE TABLE IF NOT EXISTS chat_messages (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, channelId INTEGER NOT NULL,
    userId INTEGER NOT NULL, createdAt REAL NOT NULL, data TEXT NOT NULL,
    deleted INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS chat_messages_channel ON chat_messages (channelId, deleted, seq);
"""

_COLUMNS = ("id", "channelId", "userId", "createdAt", "data")
_INSERT = f"INSERT INTO chat_messages ({', '.join(_COLUMNS)}) VALUES (?, ?, ?, ?, ?)"


def _json(data: dict[str, Any]) -> str:
    return orjson.dumps(data).decode()


def append(
    tx: Transaction, message_id: str, channel_id: int, user_id: int, at: float, data: dict[str, Any]
) -> tuple[int, int]:
    """Store one message; ``(seq, prev)``: its position and that of the channel's message
    before it (0 for none)."""
    prev = tx.scalar("SELECT MAX(seq) FROM chat_messages WHERE channelId = ?", (channel_id,))
    seq: int = tx.scalar(
        f"{_INSERT} RETURNING seq", (message_id, channel_id, user_id, at, _json(data))
    )
    return seq, prev or 0


def append_many(db: Store, rows: Iterable[tuple[str, int, int, float, dict[str, Any]]]) -> int:
    """Store messages ``(id, channel, user, createdAt, data)`` at once; returns how many."""
    encoded = [(*row[:4], _json(row[4])) for row in rows]
    db.load("chat_messages", _COLUMNS, {}, encoded)
    return len(encoded)


def prune(tx: Transaction, channel_id: int, keep: int) -> None:
    """Keep only the newest ``keep`` stored messages of a channel."""
    tx.execute(
        "DELETE FROM chat_messages WHERE channelId = ? AND seq <= ("
        "SELECT seq FROM chat_messages WHERE channelId = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)",
        (channel_id, channel_id, keep),
    )


def author_of(db: Store, channel_id: int, message_id: str) -> int | None:
    """The user id of a channel's shown message ``message_id``, or None when there is none."""
    author: int | None = db.scalar(
        "SELECT userId FROM chat_messages WHERE id = ? AND channelId = ? AND deleted = 0",
        (message_id, channel_id),
    )
    return author


def hide(
    db: Store, channel_id: int, *, message_id: str | None = None, user_id: int | None = None
) -> None:
    """Hide a channel's messages from history: one message, one user's, or (neither given)
    all of them."""
    where = "channelId = ? AND deleted = 0"
    params: list[int | str] = [channel_id]
    if message_id is not None:
        where, params = f"{where} AND id = ?", [*params, message_id]
    if user_id is not None:
        where, params = f"{where} AND userId = ?", [*params, user_id]
    with db.transaction() as tx:
        tx.execute(f"UPDATE chat_messages SET deleted = 1 WHERE {where}", params)


def recent_chatters(
    db: Store, channel_id: int, since: float, other_than: int
) -> list[tuple[int, str]]:
    """``(id, username)`` of everyone but ``other_than`` with a message stored in the channel
    since ``since``, by id."""
    return [
        (user_id, username)
        for user_id, username in db.all(
            "SELECT DISTINCT m.userId, u.username FROM chat_messages m "
            "JOIN users u ON u.id = m.userId WHERE m.channelId = ? AND m.createdAt >= ? "
            "AND m.userId != ? ORDER BY m.userId",
            (channel_id, since, other_than),
        )
    ]


def newest_shown(db: Store, channel_id: int, limit: int) -> list[tuple[int, str]]:
    """``(seq, data JSON)`` of a channel's ``limit`` newest shown messages, newest first."""
    return db.all(
        "SELECT seq, data FROM chat_messages WHERE channelId = ? AND deleted = 0 "
        "ORDER BY seq DESC LIMIT ?",
        (channel_id, limit),
    )


def latest(db: Store) -> int:
    """The position of the newest stored message of any channel (0 when there is none)."""
    return int(db.scalar("SELECT MAX(seq) FROM chat_messages") or 0)


def latest_by_channel(db: Store, after: int) -> dict[int, int]:
    """The newest position of each channel with messages stored after ``after``."""
    return dict(
        db.all(
            "SELECT channelId, MAX(seq) FROM chat_messages WHERE seq > ? GROUP BY channelId",
            (after,),
        )
    )


def shown_between(db: Store, channel_id: int, after: int, through: int) -> list[tuple[int, str]]:
    """``(seq, data JSON)`` of ``channel_id``'s shown messages at ``after < seq <= through``,
    in history order."""
    return db.all(
        "SELECT seq, data FROM chat_messages WHERE channelId = ? AND seq > ? "
        "AND seq <= ? AND deleted = 0 ORDER BY seq",
        (channel_id, after, through),
    )
