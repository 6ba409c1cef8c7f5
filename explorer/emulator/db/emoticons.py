"""The repository of channel emoticon packs (``channel_emoticons``): each code's place on its
channel's sprite sheet."""

from __future__ import annotations

from explorer.emulator.db.engine import Store

#: An emoticon of a pack: code, x, y, width, height, when it last changed.
Emoticon = tuple[str, int, int, int, int, str]


def pack(db: Store, channel_id: int) -> list[Emoticon]:
    """The emoticons of ``channel_id``'s pack, by code."""
    return db.all(
        "SELECT code, x, y, width, height, updatedAt FROM channel_emoticons "
        "WHERE channelId = ? ORDER BY code",
        (channel_id,),
    )
