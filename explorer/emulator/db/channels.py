"""Channels (the ``channels`` table, declared with the core records in :mod:`.engine`): the
lookups many families share, and a new account's channel."""

from __future__ import annotations

from typing import Any

from explorer.emulator.db.engine import Store, Transaction

#: The facts access checks need: id, userId, token, online, suspended.
Ref = tuple[int, int, str, int, int]
_REF = "id, userId, token, online, suspended"


def ref(db: Store, channel_id: int) -> Ref | None:
    """The :data:`Ref` of channel ``channel_id``, or None."""
    return _ref(db.one(f"SELECT {_REF} FROM channels WHERE id = ?", (channel_id,)))


def ref_by_token(db: Store, token: str) -> Ref | None:
    """The :data:`Ref` of the channel named ``token`` (any case), or None."""
    return _ref(db.one(f"SELECT {_REF} FROM channels WHERE token = ? COLLATE NOCASE", (token,)))


def _ref(row: tuple[Any, ...] | None) -> Ref | None:
    return None if row is None else (row[0], row[1], row[2], row[3], row[4])


def id_of_owner(db: Store | Transaction, user_id: int) -> int | None:
    """The id of the channel ``user_id`` owns, or None."""
    value: int | None = db.scalar("SELECT id FROM channels WHERE userId = ?", (user_id,))
    return value


def of_owner(db: Store, user_id: int, columns: str, joined: str) -> tuple[Any, ...] | None:
    """The ``columns`` row, read from ``joined`` (the channels as ``c`` with what is joined to
    them), of the channel ``user_id`` owns, or None."""
    return db.one(f"SELECT {columns} FROM {joined} WHERE c.userId = ?", (user_id,))


#: The id of the first channel of a database without one.
FIRST_ID = 100_000


def add_for(tx: Transaction, user_id: int, token: str, name: str, now: str, key: str) -> int:
    """Add a channel for the new account ``user_id``, with the next free id; that id. Its
    stream key is the id, a dash and ``key``."""
    channel_id = (tx.scalar("SELECT MAX(id) FROM channels") or FIRST_ID - 1) + 1
    tx.execute(
        "INSERT INTO channels (id, userId, token, name, createdAt, updatedAt, streamKey) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (channel_id, user_id, token, name, now, now, f"{channel_id}-{key}"),
    )
    return channel_id
