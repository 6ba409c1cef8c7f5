"""Chat presence: ``chat_presence``, one row per (channel, user, process) holding that user's
signed-in connections to that channel's chat.

Rows of processes that died are found with :func:`gone` (also used for their polls,
:mod:`.chat_polls`): the processes whose rows stay are given as a list of origins.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from explorer.emulator.db.engine import JSON_ITEMS, Store, Transaction

SCHEMA = """
CREATE TABLE IF NOT EXISTS chat_presence (
    id INTEGER PRIMARY KEY, channelId INTEGER NOT NULL, userId INTEGER NOT NULL,
    origin TEXT NOT NULL, connections INTEGER NOT NULL, joinedAt REAL NOT NULL,
    UNIQUE (channelId, userId, origin)
);
CREATE INDEX IF NOT EXISTS chat_presence_origin ON chat_presence (origin);
CREATE INDEX IF NOT EXISTS chat_presence_user ON chat_presence (userId);
"""


def gone(column: str, keep: Sequence[str]) -> str:
    """SQL matching a ``column`` (an origin or owner) not among the processes ``keep`` (at
    least one), whose names bind its placeholders."""
    return f"{column} NOT IN ({', '.join('?' * len(keep))})"


def _connections(tx: Transaction, channel_id: int, user_id: int) -> int:
    """A user's connections to a channel's chat over every process."""
    found: int = tx.scalar(
        "SELECT CAST(COALESCE(SUM(connections), 0) AS BIGINT) FROM chat_presence "
        "WHERE channelId = ? AND userId = ?",
        (channel_id, user_id),
    )
    return found


def join(db: Store, channel_id: int, user_id: int, origin: str, now: float) -> bool:
    """Count one connection of ``user_id`` in through ``origin``; whether it is the user's
    first connection to the channel on any process."""
    with db.transaction() as tx:
        tx.execute(
            "INSERT INTO chat_presence (channelId, userId, origin, connections, joinedAt) "
            "VALUES (?, ?, ?, 1, ?) ON CONFLICT (channelId, userId, origin) "
            "DO UPDATE SET connections = chat_presence.connections + 1",
            (channel_id, user_id, origin, now),
        )
        return _connections(tx, channel_id, user_id) == 1


def leave(db: Store, channel_id: int, user_id: int, origin: str) -> bool:
    """Count one connection of ``user_id`` out of ``origin``; whether it was the user's last
    one to the channel on any process (False too when another process released the row)."""
    where = (channel_id, user_id, origin)
    with db.transaction() as tx:
        held = tx.one(
            "UPDATE chat_presence SET connections = connections - 1 "
            "WHERE channelId = ? AND userId = ? AND origin = ? RETURNING connections",
            where,
        )
        if held is None:
            return False
        if held[0] <= 0:
            tx.execute(
                "DELETE FROM chat_presence WHERE channelId = ? AND userId = ? AND origin = ?",
                where,
            )
        return _connections(tx, channel_id, user_id) == 0


def is_present(db: Store, channel_id: int, user_id: int) -> bool:
    """Whether ``user_id`` is signed in to ``channel_id``'s chat on any process."""
    return (
        db.one(
            "SELECT 1 FROM chat_presence WHERE channelId = ? AND userId = ?",
            (channel_id, user_id),
        )
        is not None
    )


def present(db: Store, channel_id: int) -> list[int]:
    """Ids of the signed-in users in ``channel_id``'s chat, on any node, in join order."""
    return [
        row[0]
        for row in db.all(
            "SELECT userId FROM chat_presence WHERE channelId = ? GROUP BY userId ORDER BY MIN(id)",
            (channel_id,),
        )
    ]


def present_with_roles(db: Store, channel_id: int, roles: Iterable[str]) -> list[int]:
    """Ids of the signed-in users in ``channel_id``'s chat whose channel roles or global
    groups include one of ``roles``."""
    wanted = sorted(roles)
    marks = ", ".join("?" for _ in wanted)
    held = db.fragment(JSON_ITEMS).format("COALESCE(r.roles, '[]')")
    groups = db.fragment(JSON_ITEMS).format("u.groups")
    rows = db.all(
        "SELECT DISTINCT p.userId FROM chat_presence p JOIN users u ON u.id = p.userId "
        "LEFT JOIN channel_roles r ON r.channelId = p.channelId AND r.userId = p.userId "
        "WHERE p.channelId = ? AND ("
        f"EXISTS (SELECT 1 FROM {held} WHERE value IN ({marks})) "
        f"OR EXISTS (SELECT 1 FROM {groups} WHERE value IN ({marks})))",
        (channel_id, *wanted, *wanted),
    )
    return [row[0] for row in rows]


def user_connections(db: Store, user_id: int) -> int:
    """The signed-in chat connections ``user_id`` holds, over every channel and process."""
    held = db.scalar(
        "SELECT CAST(COALESCE(SUM(connections), 0) AS BIGINT) FROM chat_presence WHERE userId = ?",
        (user_id,),
    )
    return int(held or 0)


def release(db: Store, keep: Sequence[str], before: float) -> list[tuple[int, int]]:
    """Drop the rows made before ``before`` by processes not in ``keep``; ``(channel, user)``
    of the users left with no connection by it, in order."""
    stale = f"{gone('origin', keep)} AND joinedAt < ?"
    if db.one(f"SELECT 1 FROM chat_presence WHERE {stale} LIMIT 1", (*keep, before)) is None:
        return []
    with db.transaction() as tx:
        dropped = tx.all(
            f"DELETE FROM chat_presence WHERE {stale} RETURNING channelId, userId",
            (*keep, before),
        )
        return sorted(
            (channel_id, user_id)
            for channel_id, user_id in set(dropped)
            if not _connections(tx, channel_id, user_id)
        )


def origin_connections(db: Store, origin: str) -> int:
    """The connections the rows of ``origin`` count."""
    held = db.scalar(
        "SELECT CAST(COALESCE(SUM(connections), 0) AS BIGINT) FROM chat_presence WHERE origin = ?",
        (origin,),
    )
    return int(held)


def replace_origin(
    db: Store, origin: str, held: Iterable[tuple[tuple[int, int], int]], now: float
) -> None:
    """Rewrite the rows of ``origin`` as ``((channel, user), connections)`` say."""
    with db.transaction() as tx:
        tx.execute("DELETE FROM chat_presence WHERE origin = ?", (origin,))
        tx.executemany(
            "INSERT INTO chat_presence (channelId, userId, origin, connections, joinedAt) "
            "VALUES (?, ?, ?, ?, ?)",
            [(c, u, origin, n, now) for (c, u), n in held],
        )
