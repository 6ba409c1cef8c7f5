"""Who is in a room: connections counted per user over every node and process.

Presence lives in ``chat_presence`` (:mod:`explorer.emulator.db.chat_presence`), one row per
user and process holding that user's connections (anonymous connections are not counted). The
transaction that takes a user's connections from 0 to 1 (or back to 0) sends ``UserJoin``
(``UserLeave``), so a user on two nodes joins once. When a process dies the living release its
rows (:func:`release`, a broker watcher): ``UserLeave`` where it held a user's last connection;
the transaction that deletes those rows does it, so exactly one process does.
"""

from __future__ import annotations

from explorer.emulator.chat.members import Member
from explorer.emulator.chat.roles import permissions_of, roles_of
from explorer.emulator.chat.rooms import Room, Rooms
from explorer.emulator.db import chat_presence, users


def join(room: Room, member: Member, key: str) -> None:
    """Count ``member``'s connection in; the user's first connection on any node sends
    ``UserJoin`` to the others (``key`` is the joining connection, which is skipped)."""
    user_id = member.user_id
    if user_id is None:
        return
    rooms = room.rooms
    first = chat_presence.join(
        rooms.store, room.channel_id, user_id, rooms.broker.origin, rooms.clock()
    )
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
    ``UserLeave`` (unless another process released it, and sent it)."""
    user_id = member.user_id
    if user_id is None:
        return
    rooms = room.rooms
    place = (room.channel_id, user_id)
    rooms.local[place] -= 1
    if rooms.local[place] <= 0:
        del rooms.local[place]
    if chat_presence.leave(rooms.store, room.channel_id, user_id, rooms.broker.origin):
        announce_leave(room, user_id, member.username)


def announce_leave(room: Room, user_id: int, username: str) -> None:
    """Send ``UserLeave`` for a user whose last connection went."""
    data = {"originatingChannel": room.channel_id, "username": username, "id": user_id}
    room.publish("UserLeave", data)


def is_present(room: Room, user_id: int) -> bool:
    """Whether ``user_id`` is signed in to the room's chat on any node."""
    return chat_presence.is_present(room.rooms.store, room.channel_id, user_id)


def user_updated(room: Room, user_id: int) -> None:
    """Send ``UserUpdate`` for ``user_id``; every node re-reads that user's roles first."""
    store = room.rooms.store
    name = users.username(store, user_id)
    if name is None:
        return
    roles = roles_of(store, room.channel_id, user_id)
    data = {
        "user": user_id,
        "roles": roles,
        "permissions": permissions_of(roles),
        "username": name,
    }
    room.publish("UserUpdate", data, refresh_user=user_id)


def release(rooms: Rooms, alive: frozenset[str], before: float) -> None:
    """Drop the presence rows processes not in ``alive`` made before ``before`` (a broker's
    watcher), with ``UserLeave`` where they held a user's last connection; then restore this
    process's own rows if another released them while this one was silent."""
    store = rooms.store
    for channel_id, user_id in chat_presence.release(store, rooms.keeping(alive), before):
        room = rooms.get(channel_id)
        name = users.username(store, user_id)
        if room is not None and name is not None:
            announce_leave(room, user_id, name)
    _restore(rooms)


def _restore(rooms: Rooms) -> None:
    """Rewrite this process's presence rows from ``rooms.local`` when they differ."""
    origin = rooms.broker.origin
    if chat_presence.origin_connections(rooms.store, origin) == rooms.local.total():
        return
    chat_presence.replace_origin(rooms.store, origin, rooms.local.items(), rooms.clock())
