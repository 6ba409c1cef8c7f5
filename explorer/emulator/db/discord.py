"""The repository of the simulated Discord integration: each channel's bot settings
(``channel_discord``) and the invites handed out (``discord_invites``)."""

from __future__ import annotations

from typing import Any

import orjson

from explorer.emulator.db.engine import Store, dumps

SCHEMA = """
CREATE TABLE IF NOT EXISTS channel_discord (
    channelId INTEGER PRIMARY KEY REFERENCES channels (id), settings TEXT NOT NULL,
    updatedAt TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS discord_invites (
    code TEXT PRIMARY KEY, channelId INTEGER NOT NULL REFERENCES channels (id),
    userId INTEGER NOT NULL REFERENCES users (id), createdAt TEXT NOT NULL,
    expiresAt REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS discord_invites_member ON discord_invites (channelId, userId);
"""

#: An invite: its code, when it was made (ISO time) and when it expires (epoch seconds).
Invite = tuple[str, str, float]


def settings(db: Store, channel_id: int) -> tuple[dict[str, Any], str] | None:
    """The bot settings stored for ``channel_id`` and when they were, or None."""
    row = db.one(
        "SELECT settings, updatedAt FROM channel_discord WHERE channelId = ?", (channel_id,)
    )
    return None if row is None else (orjson.loads(row[0]), row[1])


def set_settings(db: Store, channel_id: int, values: dict[str, Any], now: str) -> None:
    """Replace the bot settings of ``channel_id``, stamped ``now``."""
    with db.transaction() as tx:
        tx.execute(
            "INSERT INTO channel_discord (channelId, settings, updatedAt) VALUES (?, ?, ?) "
            "ON CONFLICT (channelId) DO UPDATE SET settings = excluded.settings, "
            "updatedAt = excluded.updatedAt",
            (channel_id, dumps(values), now),
        )


def invite(db: Store, channel_id: int, user_id: int, now: float) -> Invite | None:
    """The latest-expiring invite of ``user_id`` to ``channel_id`` still valid at ``now``."""
    row: Invite | None = db.one(
        "SELECT code, createdAt, expiresAt FROM discord_invites "
        "WHERE channelId = ? AND userId = ? AND expiresAt > ? ORDER BY expiresAt DESC LIMIT 1",
        (channel_id, user_id, now),
    )
    return row


def replace_invite(
    db: Store, code: str, channel_id: int, user_id: int, created: str, expires: float
) -> None:
    """Give ``user_id`` the invite ``code`` to ``channel_id``, ending their previous ones."""
    with db.transaction() as tx:
        tx.execute(
            "DELETE FROM discord_invites WHERE channelId = ? AND userId = ?",
            (channel_id, user_id),
        )
        tx.execute(
            "INSERT INTO discord_invites (code, channelId, userId, createdAt, expiresAt) "
            "VALUES (?, ?, ?, ?, ?)",
            (code, channel_id, user_id, created, expires),
        )
