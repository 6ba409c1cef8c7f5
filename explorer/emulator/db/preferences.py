"""The repository of channel preferences (``channel_preferences``): the values an owner set,
stored as JSON per key (defaults are the handler's)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from explorer.emulator.db.engine import Store, dumps

SCHEMA = """
CREATE TABLE IF NOT EXISTS channel_preferences (
    channelId INTEGER NOT NULL REFERENCES channels (id), key TEXT NOT NULL,
    value TEXT NOT NULL, PRIMARY KEY (channelId, key)
);
"""


def stored(db: Store, channel_id: int) -> dict[str, Any]:
    """Every value stored for ``channel_id``, by key."""
    return {
        key: orjson.loads(raw)
        for key, raw in db.all(
            "SELECT key, value FROM channel_preferences WHERE channelId = ?", (channel_id,)
        )
    }


def stored_value(db: Store, channel_id: int, key: str) -> Any:
    """The value stored for ``key`` of ``channel_id``, or None when none is (a stored value is
    never null: storing null removes it)."""
    raw = db.scalar(
        "SELECT value FROM channel_preferences WHERE channelId = ? AND key = ?", (channel_id, key)
    )
    return None if raw is None else orjson.loads(raw)


def store_values(db: Store, channel_id: int, values: Mapping[str, Any]) -> None:
    """Store each key's value for ``channel_id`` in one transaction; None removes the stored
    value."""
    with db.transaction() as tx:
        for key, value in values.items():
            if value is None:
                tx.execute(
                    "DELETE FROM channel_preferences WHERE channelId = ? AND key = ?",
                    (channel_id, key),
                )
            else:
                tx.execute(
                    "INSERT INTO channel_preferences (channelId, key, value) VALUES (?, ?, ?) "
                    "ON CONFLICT (channelId, key) DO UPDATE SET value = excluded.value",
                    (channel_id, key, dumps(value)),
                )
