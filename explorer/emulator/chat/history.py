"""Chat history: posting and reading stored messages, and the ``history`` method (the table is
:mod:`explorer.emulator.db.chat_history`'s).

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
from explorer.emulator.db import chat_history
from explorer.emulator.db.engine import Store
from explorer.wire import chatmethods as chat_methods

#: Most messages one ``history`` call returns (platform.md, "Limits").
HISTORY_LIMIT = 100
#: Stored messages of a room between two prunes to ``Config.history_keep``.
_PRUNE_EVERY = 200


def post(room: Room, data: dict[str, Any]) -> None:
    """Store a chat message, then send ``ChatMessage`` to everyone in the room."""
    rooms = room.rooms
    with rooms.store.transaction() as tx:
        seq, prev = chat_history.append(
            tx, data["id"], room.channel_id, data["user_id"], rooms.clock(), data
        )
        room.writes += 1
        if room.writes % _PRUNE_EVERY == 0:
            chat_history.prune(tx, room.channel_id, rooms.config.history_keep)
    room.deliver(message_delivery(data, seq=seq, prev=prev))


def store_seeded(store: Store, rows: Iterable[tuple[str, int, int, float, dict[str, Any]]]) -> int:
    """Store seeded messages ``(id, channel, user, createdAt, data)`` at once, unpublished;
    returns how many."""
    return chat_history.append_many(store, rows)


def history(room: Room, member: Member, args: list[Any]) -> Any:
    """``history [count]``: up to 100 of the latest stored messages, oldest first
    (joined members, anonymous too)."""
    arity(args, chat_methods.HISTORY)
    wanted = min(count(args[0], "count"), HISTORY_LIMIT)
    rows = chat_history.newest_shown(room.rooms.store, room.channel_id, wanted)
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
        return chat_history.latest(self.store)

    def latest_by_channel(self, after: int) -> dict[int, int]:
        """The newest position of each channel with messages stored after ``after``."""
        return chat_history.latest_by_channel(self.store, after)

    def since(self, channel_id: int, after: int, through: int) -> list[Delivery]:
        """Deliveries of ``channel_id``'s messages stored at ``after < seq <= through`` and
        not deleted, in history order."""
        return [
            message_delivery(orjson.loads(data), seq=seq)
            for seq, data in chat_history.shown_between(self.store, channel_id, after, through)
        ]


methods = [RoomMethod(chat_methods.HISTORY, history)]
