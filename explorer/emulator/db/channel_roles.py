"""Channel roles: the ``channel_roles`` table (in the engine's core schema), the roles a
channel gave a user beyond those of ownership and global groups."""

from __future__ import annotations

from explorer.emulator.db.engine import Store


def roles(db: Store, channel_id: int, user_id: int) -> str | None:
    """The JSON list of roles ``channel_id`` gave ``user_id``, or None."""
    found: str | None = db.scalar(
        "SELECT roles FROM channel_roles WHERE channelId = ? AND userId = ?", (channel_id, user_id)
    )
    return found
