"""The repository of channel emoticon packs (``channel_emoticons``): each code's place on its
channel's sprite sheet."""

from __future__ import annotations

from collections.abc import Mapping

from explorer.emulator.db.engine import Store, Transaction

SCHEMA = """
CREATE TABLE IF NOT EXISTS channel_emoticons (
    channelId INTEGER NOT NULL REFERENCES channels (id), code TEXT NOT NULL,
    x INTEGER NOT NULL, y INTEGER NOT NULL, width INTEGER NOT NULL, height INTEGER NOT NULL,
    updatedAt TEXT NOT NULL, PRIMARY KEY (channelId, code)
);
"""

#: An emoticon of a pack: code, x, y, width, height, when it last changed.
Emoticon = tuple[str, int, int, int, int, str]


def pack(db: Store, channel_id: int) -> list[Emoticon]:
    """The emoticons of ``channel_id``'s pack, by code."""
    return db.all(
        "SELECT code, x, y, width, height, updatedAt FROM channel_emoticons "
        "WHERE channelId = ? ORDER BY code",
        (channel_id,),
    )


def change_pack(
    tx: Transaction,
    channel_id: int,
    changes: Mapping[str, tuple[int, ...] | None],
    now: str,
) -> int:
    """Set each code's ``(x, y, width, height)`` (None removes the code), stamped ``now``;
    how many emoticons the pack then holds."""
    for code, coords in changes.items():
        if coords is None:
            tx.execute(
                "DELETE FROM channel_emoticons WHERE channelId = ? AND code = ?",
                (channel_id, code),
            )
        else:
            tx.execute(
                "INSERT INTO channel_emoticons "
                "(channelId, code, x, y, width, height, updatedAt) "
                "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (channelId, code) DO UPDATE SET "
                "x = excluded.x, y = excluded.y, width = excluded.width, "
                "height = excluded.height, updatedAt = excluded.updatedAt",
                (channel_id, code, *coords, now),
            )
    count: int = tx.scalar(
        "SELECT COUNT(*) FROM channel_emoticons WHERE channelId = ?", (channel_id,)
    )
    return count
