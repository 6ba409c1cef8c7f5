"""Who is in a room: connections counted per user over every node and process.

Presence lives in ``chat_presence``, one row per user and process holding that user's
connections (anonymous connections are not counted). The transaction that takes a user's
connections from 0 to 1 (or back to 0) sends ``UserJoin`` (``UserLeave``), so a user on two
nodes joins once. When a process dies the living release its rows (:func:`release`, a broker
watcher): ``UserLeave`` where it held a user's last connection; the transaction that deletes
those rows does it, so exactly one process does.
"""

from __future__ import annotations

from explorer.emulator.chat.members import Member
from explorer.emulator.chat.roles import permissions_of, roles_of
from explorer.emulator.chat.rooms import GONE, Room, Rooms
from explorer.emulator.db.engine import Store, Transaction

SCHEMA = """
CREATE TABLE IF NOT EXISTS chat_presence (
    channelId INTEGER NOT NULL, userId INTEGER NOT NULL, origin TEXT NOT NULL,
    connections INTEGER NOT NULL, joinedAt REAL NOT NULL,
    PRIMARY KEY (channelId, userId, origin)
);
CREATE INDEX IF NOT EXISTS chat_presence_origin ON chat_presence (origin);
CREATE INDEX IF NOT EXISTS chat_presence_user ON chat_presence (userId);
"""


def _connections(conn: Transaction, channel_id: int, user_id: int) -> int:
    """A user's connections to a channel's chat over every process."""
    found: int = conn.execute(
        "SELECT COALESCE(SUM(connections), 0) FROM chat_presence "
        "WHERE channelId = ? AND userId = ?",
        (channel_id, user_id),
    ).fetchone()[0]
    return found


def join(room: Room, member: Member, key: str) -> None:
    """Count ``member``'s connection in; the user's first connection on any node sends
    ``UserJoin`` to the others (``key`` is the joining connection, which is skipped)."""
    user_id = member.user_id
    if user_id is None:
        return
    rooms = room.rooms
    with rooms.store.transaction() as conn:
        conn.execute(
            "INSERT INTO chat_presence (channelId, userId, origin, connections, joinedAt) "
            "VALUES (?, ?, ?, 1, ?) ON CONFLICT (channelId, userId, origin) "
            "DO UPDATE SET connections = connections + 1",
            (room.channel_id, user_id, rooms.broker.origin, rooms.clock()),
        )
        first = _connections(conn, room.channel_id, user_id) == 1
    rooms.local[(room.channel_id, user_id)] += 1
    if first:
        data = {
            "originatingChannel": room.channel_id,
            "username": member.username,
            "roles": member.roles,
            "id": user_id,
        }
        room.publish("UserJoin", data, skip=key)


def leave(room: Room, member: Member) -> None:
    """Count ``member``'s connection out; the user's last connection on any node sends
    ``UserLeave``."""
    user_id = member.user_id
    if user_id is None:
        return
    rooms = room.rooms
    place = (room.channel_id, user_id)
    rooms.local[place] -= 1
    if rooms.local[place] <= 0:
        del rooms.local[place]
    where = (room.channel_id, user_id, rooms.broker.origin)
    with rooms.store.transaction() as conn:
        held = conn.execute(
            "UPDATE chat_presence SET connections = connections - 1 "
            "WHERE channelId = ? AND userId = ? AND origin = ? RETURNING connections",
            where,
        ).fetchone()
        if held is None:
            return  # released by another process, which sent UserLeave
        if held[0] <= 0:
            conn.execute(
                "DELETE FROM chat_presence WHERE channelId = ? AND userId = ? AND origin = ?",
                where,
            )
        last = _connections(conn, room.channel_id, user_id) == 0
    if last:
        announce_leave(room, user_id, member.username)


def announce_leave(room: Room, user_id: int, username: str) -> None:
    """Send ``UserLeave`` for a user whose last connection went."""
    data = {"originatingChannel": room.channel_id, "username": username, "id": user_id}
    room.publish("UserLeave", data)


def is_present(room: Room, user_id: int) -> bool:
    """Whether ``user_id`` is signed in to the room's chat on any node."""
    return (
        room.rooms.store.one(
            "SELECT 1 FROM chat_presence WHERE channelId = ? AND userId = ?",
            (room.channel_id, user_id),
        )
        is not None
    )


def present(store: Store, channel_id: int) -> list[int]:
    """Ids of the signed-in users in ``channel_id``'s chat, on any node, in join order."""
    return [
        row[0]
        for row in store.all(
            "SELECT userId FROM chat_presence WHERE channelId = ? GROUP BY userId "
            "ORDER BY MIN(rowid)",
            (channel_id,),
        )
    ]


def user_updated(room: Room, user_id: int) -> None:
    """Send ``UserUpdate`` for ``user_id``; every node re-reads that user's roles first."""
    store = room.rooms.store
    found = store.one("SELECT username FROM users WHERE id = ?", (user_id,))
    if found is None:
        return
    roles = roles_of(store, room.channel_id, user_id)
    data = {
        "user": user_id,
        "roles": roles,
        "permissions": permissions_of(roles),
        "username": found[0],
    }
    room.publish("UserUpdate", data, refresh_user=user_id)


def release(rooms: Rooms, alive: frozenset[str], before: float) -> None:
    """Drop the presence rows processes not in ``alive`` made before ``before`` (a broker's
    watcher), with ``UserLeave`` where they held a user's last connection; then restore this
    process's own rows if another released them while this one was silent."""
    store = rooms.store
    keep = rooms.keeping(alive)
    held = store.one(
        f"SELECT 1 FROM chat_presence WHERE origin {GONE} AND joinedAt < ? LIMIT 1",
        (keep, before),
    )
    if held is not None:
        with store.transaction() as conn:
            dropped = conn.execute(
                f"DELETE FROM chat_presence WHERE origin {GONE} AND joinedAt < ? "
                "RETURNING channelId, userId",
                (keep, before),
            ).fetchall()
            left = sorted(
                (channel_id, user_id)
                for channel_id, user_id in set(dropped)
                if not _connections(conn, channel_id, user_id)
            )
        for channel_id, user_id in left:
            room = rooms.get(channel_id)
            name = store.scalar("SELECT username FROM users WHERE id = ?", (user_id,))
            if room is not None and name is not None:
                announce_leave(room, user_id, name)
    _restore(rooms)


def _restore(rooms: Rooms) -> None:
    """Rewrite this process's presence rows from ``rooms.local`` when they differ."""
    origin = rooms.broker.origin
    held = rooms.store.scalar(
        "SELECT COALESCE(SUM(connections), 0) FROM chat_presence WHERE origin = ?", (origin,)
    )
    if held == rooms.local.total():
        return
    now = rooms.clock()
    with rooms.store.transaction() as conn:
        conn.execute("DELETE FROM chat_presence WHERE origin = ?", (origin,))
        conn.executemany(
            "INSERT INTO chat_presence (channelId, userId, origin, connections, joinedAt) "
            "VALUES (?, ?, ?, ?, ?)",
            [(c, u, origin, n, now) for (c, u), n in rooms.local.items()],
        )
