"""What chat reads of a channel's REST-edited settings: its emoticon pack and CatBot's level and
banned words, loaded once per room and dropped when REST changes them.

A message is parsed and filtered against these on every ``msg``, so they are read from the
database once and kept on the :class:`~explorer.emulator.chat.rooms.Room` (a dict lookup per
word afterwards). REST tells chat when they change (``ChatHub.settings_changed``): the
process's own rooms forget them at once, and a :data:`SETTINGS_CHANGED` delivery through the
broker reaches every other process with a node in that room. A node that starts serving a
room again (its first member joins) forgets them too, since it heard nothing meanwhile.

A pack's emoticon is typed as its code after a colon (``:coolpartneremote``), as the
developer docs' Emotes guide says (mixer/developer-docs, ``pages/01.guides/02.chat/04.Emotes/
doc.md``), and becomes an ``emoticon`` component with ``source: "external"``. Its ``pack`` is
where the pack is kept on this platform (the channel's ``/emoticons`` address): the platform
stores each emoticon's coordinates, not a sheet image, so there is no image address to give.
"""

from __future__ import annotations

from dataclasses import dataclass

from explorer.emulator.chat.catbot import Catbot
from explorer.emulator.chat.messages import Component
from explorer.emulator.chat.rooms import Room
from explorer.emulator.db import emoticons
from explorer.emulator.db.engine import Store
from explorer.emulator.resources.channel_preferences import preference

#: The broker event telling every process that a channel's chat settings changed.
SETTINGS_CHANGED = "explorer:chat-settings-changed"


@dataclass(frozen=True, slots=True)
class ChannelSettings:
    """A channel's pack emoticons by what a member types (``:code``), and its filter."""

    emoticons: dict[str, Component]
    catbot: Catbot


def pack_address(channel_id: int) -> str:
    """The ``pack`` of a channel's emoticon components: its pack's REST address."""
    return f"/api/v1/channels/{channel_id}/emoticons"


def load(store: Store, channel_id: int) -> ChannelSettings:
    """A channel's settings as stored now."""
    pack = pack_address(channel_id)
    typed = {
        f":{code}": {
            "type": "emoticon",
            "source": "external",
            "pack": pack,
            "coords": {"x": x, "y": y, "width": width, "height": height},
            "text": f":{code}",
        }
        for code, x, y, width, height, _ in emoticons.pack(store, channel_id)
    }
    level = preference(store, channel_id, "channel:catbot:level")
    banned = preference(store, channel_id, "channel:bannedwords")
    return ChannelSettings(typed, Catbot.of(level, banned))


def of(room: Room) -> ChannelSettings:
    """The room's channel settings, read once and kept until :func:`forget`."""
    kept = room.settings
    if not isinstance(kept, ChannelSettings):
        kept = room.settings = load(room.rooms.store, room.channel_id)
    return kept


def forget(room: Room) -> None:
    """Drop the room's kept settings: the next message reads them again."""
    room.settings = None
