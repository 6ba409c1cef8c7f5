"""CatBot: the automatic chat filter a channel owner sets with ``channel:catbot:level`` and
``channel:bannedwords`` (channel preferences).

The historical developer docs (mixer/developer-docs, ``pages/02.reference/01.chat/04.events/
02.ChatMessage/doc.md``, "Censored Message") describe what a filtered message does: only the
channel's moderators and its owner receive it, with a ``( Removed by CatBot )`` text component
after the message and ``meta.censored: true``; everyone else never sees it. The platform's
public help of the time named the levels, each stricter than the one before (very low:
universally offensive terms; low: also bullying and hate speech; medium: also strong language;
high: any profanity or vulgarity). The historical filter was a trained classifier; ours is a
small word list per level (:data:`LEVEL_WORDS`, a level filters its words and those of every
lower level), so a test or a notebook can trigger each level on purpose. Level 0, the stored
default, filters nothing but the banned words, which apply at every level.

Moderators and the owner (the roles in :data:`EXEMPT`) are never filtered: they are the ones
who see what CatBot removed. A censored message is not stored in history (like a whisper), so
``history`` never shows it to anyone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from explorer.emulator.chat.messages import Component, text_component
from explorer.emulator.chat.rooms import Room
from explorer.emulator.db import chat_presence

#: The text component a censored message ends with (the docs' example).
REMOVED = "( Removed by CatBot )"
#: Roles CatBot lets through, and who receive a censored message: the channel's moderators.
EXEMPT: frozenset[str] = frozenset({"Owner", "Staff", "Founder", "GlobalMod", "Mod"})
#: Words each level adds to the ones below it (whole words, any case).
LEVEL_WORDS: dict[int, tuple[str, ...]] = {
    1: ("kys",),
    2: ("loser", "idiot", "moron", "trash"),
    3: ("fuck", "fucking", "shit", "bitch", "asshole"),
    4: ("damn", "crap", "hell", "sucks", "stupid"),
}


def _pattern(words: Iterable[str]) -> re.Pattern[str] | None:
    """One case-insensitive pattern matching any of ``words`` as a whole word (or phrase)."""
    unique = sorted({w.strip().lower() for w in words if w.strip()}, key=len, reverse=True)
    if not unique:
        return None
    alternatives = "|".join(re.escape(word) for word in unique)
    return re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Catbot:
    """A channel's filter: its level and banned words, compiled to one pattern."""

    level: int = 0
    banned: tuple[str, ...] = ()
    pattern: re.Pattern[str] | None = None

    @classmethod
    def of(cls, level: int, banned: Iterable[str]) -> Catbot:
        """The filter of a channel set to ``level`` that bans ``banned``."""
        words = [w for lower in range(1, level + 1) for w in LEVEL_WORDS.get(lower, ())]
        kept = tuple(banned)
        return cls(level, kept, _pattern([*words, *kept]))

    def blocks(self, text: str, roles: Iterable[str]) -> bool:
        """Whether a message typed as ``text`` by a member with ``roles`` is filtered."""
        if self.pattern is None or not EXEMPT.isdisjoint(roles):
            return False
        return self.pattern.search(text) is not None


def censored(components: list[Component]) -> list[Component]:
    """The components of a filtered message as moderators see it: the message, then
    :data:`REMOVED` (``meta.censored`` is set by the caller)."""
    return [*components, text_component(REMOVED)]


def moderators(room: Room) -> frozenset[int]:
    """The users present in the room who receive a censored message: its owner and everyone
    whose channel roles or global groups are in :data:`EXEMPT`."""
    found = chat_presence.present_with_roles(room.rooms.store, room.channel_id, EXEMPT)
    return frozenset({room.owner_id, *found})
