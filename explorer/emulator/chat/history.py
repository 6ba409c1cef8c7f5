"""Chat history: the ``chat_messages`` table (schema, writes, reads) and the ``history`` method.

Every accepted message is committed here before anyone sees it (:func:`post`), with its
position in history (``seq``) and the channel's message before it (``prev``), which brokers
use to deliver stored messages in order (:class:`StoredBacklog`). Moderation hides messages
(``deleted``) rather than removing them; each channel keeps its newest
``Config.history_keep``. ``history`` returns the channel's latest messages at the time of the
call (oldest first, at most :data:`HISTORY_LIMIT`), skipping deleted, purged and cleared ones;
whispers are never stored.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import orjson

from explorer.emulator.brokers.broker import Delivery
from explorer.emulator.chat.members import Member
from explorer.emulator.chat.messages import message_delivery, with_emoticons
from explorer.emulator.chat.methods import RoomMethod, arity, count
from explorer.emulator.chat.rooms import Room
from explorer.emulator.db.engine import Store, Transaction
from explorer.wire import chatmethods as chat_methods

SCHEMA = """
CREATE TABLE IF NOT EXISTS chat_messages (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, channelId INTEGER NOT NULL,
    userId INTEGER NOT NULL, createdAt REAL NOT NULL, data TEXT NOT NULL,
    deleted INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS chat_messages_channel ON chat_messages (channelId, deleted, seq);
"""

#: Most messages one ``history`` call returns (platform.md, "Limits").
HISTORY_LIMIT = 100
#: Stored messages of a room between two prunes to ``Config.history_keep``.
_PRUNE_EVERY = 200
_INSERT = (
    "INSERT INTO chat_messages (id, channelId, userId, createdAt, data) VALUES (?, ?, ?, ?, ?)"
)


def post(room: Room, data: dict[str, Any]) -> None:
    """Store a chat message, then send ``ChatMessage`` to everyone in the room."""
    rooms = room.rooms
    with rooms.store.transaction() as conn:
        prev = conn.execute(
            "SELECT MAX(seq) FROM chat_messages WHERE channelId = ?", (room.channel_id,)
        ).fetchone()[0]
        row = (data["id"], room.channel_id, data["user_id"], rooms.clock(), _json(data))
        seq = conn.execute(_INSERT, row).lastrowid
        room.writes += 1
        if room.writes % _PRUNE_EVERY == 0:
            _prune(conn, room.channel_id, rooms.config.history_keep)
    room.deliver(message_delivery(data, seq=seq or 0, prev=prev or 0))


def store_seeded(store: Store, rows: Iterable[tuple[str, int, int, float, dict[str, Any]]]) -> int:
    """Store seeded messages ``(id, channel, user, createdAt, data)`` at once, unpublished;
    returns how many."""
    encoded = [(*row[:4], _json(row[4])) for row in rows]
    with store.transaction() as conn:
        conn.executemany(_INSERT, encoded)
    return len(encoded)


def _json(data: dict[str, Any]) -> str:
    return orjson.dumps(data).decode()


def _prune(conn: Transaction, channel_id: int, keep: int) -> None:
    """Keep only the newest ``keep`` stored messages of a channel."""
    conn.execute(
        "DELETE FROM chat_messages WHERE channelId = ? AND seq <= ("
        "SELECT seq FROM chat_messages WHERE channelId = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)",
        (channel_id, channel_id, keep),
    )


def author_of(store: Store, channel_id: int, message_id: str) -> int | None:
    """The user id of a channel's shown message ``message_id``, or None when there is none."""
    author: int | None = store.scalar(
        "SELECT userId FROM chat_messages WHERE id = ? AND channelId = ? AND deleted = 0",
        (message_id, channel_id),
    )
    return author


def hide(
    store: Store, channel_id: int, *, message_id: str | None = None, user_id: int | None = None
) -> None:
    """Hide a channel's messages from history: one message, one user's, or (neither given)
    all of them."""
    where = "channelId = ? AND deleted = 0"
    params: list[int | str] = [channel_id]
    if message_id is not None:
        where, params = f"{where} AND id = ?", [*params, message_id]
    if user_id is not None:
        where, params = f"{where} AND userId = ?", [*params, user_id]
    with store.transaction() as conn:
        conn.execute(f"UPDATE chat_messages SET deleted = 1 WHERE {where}", params)


def recent_chatters(
    store: Store, channel_id: int, since: float, other_than: int
) -> list[tuple[int, str]]:
    """``(id, username)`` of everyone but ``other_than`` with a message stored in the channel
    since ``since``, by id."""
    return [
        (user_id, username)
        for user_id, username in store.all(
            "SELECT DISTINCT m.userId, u.username FROM chat_messages m "
            "JOIN users u ON u.id = m.userId WHERE m.channelId = ? AND m.createdAt >= ? "
            "AND m.userId != ? ORDER BY m.userId",
            (channel_id, since, other_than),
        )
    ]


def history(room: Room, member: Member, args: list[Any]) -> Any:
    """``history [count]``: up to 100 of the latest stored messages, oldest first
    (joined members, anonymous too)."""
    arity(args, chat_methods.HISTORY)
    wanted = min(count(args[0], "count"), HISTORY_LIMIT)
    rows = room.rooms.store.all(
        "SELECT seq, data FROM chat_messages WHERE channelId = ? AND deleted = 0 "
        "ORDER BY seq DESC LIMIT ?",
        (room.channel_id, wanted),
    )
    if rows:
        room.rooms.broker.catch_up(room.channel_id, rows[0][0])
    rows.reverse()
    if member.emotes:
        return [with_emoticons(orjson.loads(data)) for _, data in rows]
    return [orjson.Fragment(data) for _, data in rows]


class StoredBacklog:
    """The stored messages as brokers read what they missed (see
    :class:`~explorer.emulator.brokers.broker.Backlog`)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def latest(self) -> int:
        """The position of the newest stored message of any channel (0 when there is none)."""
        return int(self.store.scalar("SELECT MAX(seq) FROM chat_messages") or 0)

    def latest_by_channel(self, after: int) -> dict[int, int]:
        """The newest position of each channel with messages stored after ``after``."""
        return dict(
            self.store.all(
                "SELECT channelId, MAX(seq) FROM chat_messages WHERE seq > ? GROUP BY channelId",
                (after,),
            )
        )

    def since(self, channel_id: int, after: int, through: int) -> list[Delivery]:
        """Deliveries of ``channel_id``'s messages stored at ``after < seq <= through`` and
        not deleted, in history order."""
        return [
            message_delivery(orjson.loads(data), seq=seq)
            for seq, data in self.store.all(
                "SELECT seq, data FROM chat_messages WHERE channelId = ? AND seq > ? "
                "AND seq <= ? AND deleted = 0 ORDER BY seq",
                (channel_id, after, through),
            )
        ]


methods = [RoomMethod(chat_methods.HISTORY, history)]
