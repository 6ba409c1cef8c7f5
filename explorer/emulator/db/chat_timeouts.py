"""Chat timeouts: the ``chat_timeouts`` table, until when a user may not speak in a channel."""

from __future__ import annotations

from explorer.emulator.db.engine import Store

SCHEMA = """
CREATE TABLE IF NOT EXISTS chat_timeouts (
    channelId INTEGER NOT NULL, userId INTEGER NOT NULL, until REAL NOT NULL,
    PRIMARY KEY (channelId, userId)
) WITHOUT ROWID;
"""


def until(db: Store, channel_id: int, user_id: int) -> float | None:
    """When ``user_id``'s timeout in ``channel_id`` ends (maybe past), or None."""
    found: float | None = db.scalar(
        "SELECT until FROM chat_timeouts WHERE channelId = ? AND userId = ?",
        (channel_id, user_id),
    )
    return found


def set_until(db: Store, channel_id: int, user_id: int, now: float, ends: float | None) -> None:
    """Time ``user_id`` out in ``channel_id`` until ``ends`` (None: lift it), dropping the
    channel's timeouts over by ``now``."""
    with db.transaction() as tx:
        tx.execute(
            "DELETE FROM chat_timeouts WHERE channelId = ? AND (userId = ? OR until <= ?)",
            (channel_id, user_id, now),
        )
        if ends is not None:
            tx.execute(
                "INSERT INTO chat_timeouts (channelId, userId, until) VALUES (?, ?, ?)",
                (channel_id, user_id, ends),
            )
