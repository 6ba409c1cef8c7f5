"""Language channels: which languages the channels speak, derived from the channels table.

All three endpoints answer the same shape, one ``LanguageChannels`` entry per language:
``{id, name, channels, online, viewersCurrent}`` where ``channels`` counts the visible
(unsuspended) channels set to that language, ``online`` those live now, and
``viewersCurrent`` their live viewers. They differ in which languages they list:

- ``/language/channels``: every language some channel uses, most channels first;
- ``/language/channels/active``: languages with a live channel, most live viewers first;
- ``/language/channels/available``: every language a channel may choose (the stored
  catalogue), by id, with zero counts where unused.

A channel whose language is not in the catalogue still counts; its ``name`` is its id.
"""

from __future__ import annotations

from typing import Any

from explorer.emulator.context import Context
from explorer.emulator.db.engine import Store
from explorer.emulator.policy import Route
from explorer.wire import routes as wire
from explorer.wire.models import LANGUAGE_CHANNELS

SCHEMA = """
CREATE TABLE IF NOT EXISTS languages (id TEXT PRIMARY KEY, name TEXT NOT NULL);
"""

#: Languages a channel may choose: ISO 639-1 code and English name.
LANGUAGE_NAMES: dict[str, str] = {
    "ar": "Arabic",
    "cs": "Czech",
    "da": "Danish",
    "de": "German",
    "en": "English",
    "es": "Spanish",
    "fi": "Finnish",
    "fr": "French",
    "hi": "Hindi",
    "it": "Italian",
    "ja": "Japanese",
    "ko": "Korean",
    "nl": "Dutch",
    "no": "Norwegian",
    "pl": "Polish",
    "pt": "Portuguese",
    "ru": "Russian",
    "sv": "Swedish",
    "tr": "Turkish",
    "uk": "Ukrainian",
    "zh": "Chinese",
}

# Counts per language over visible channels; the outer query decides which languages appear.
_COUNTS = """
SELECT languageId AS id, COUNT(*) AS channels, SUM(online) AS online,
       SUM(CASE WHEN online = 1 THEN viewersCurrent ELSE 0 END) AS viewers
FROM channels WHERE suspended = 0 AND languageId IS NOT NULL GROUP BY languageId
"""
_IN_USE = f"""
SELECT c.id, COALESCE(l.name, c.id), c.channels, c.online, c.viewers
FROM ({_COUNTS}) c LEFT JOIN languages l ON l.id = c.id
"""
_QUERIES = {
    "used": f"{_IN_USE} ORDER BY c.channels DESC, c.id",
    "active": f"{_IN_USE} WHERE c.online > 0 ORDER BY c.viewers DESC, c.id",
    "available": f"""
        SELECT l.id, l.name, COALESCE(c.channels, 0), COALESCE(c.online, 0),
               COALESCE(c.viewers, 0)
        FROM languages l LEFT JOIN ({_COUNTS}) c ON c.id = l.id ORDER BY l.id
    """,
}
_FIELDS = LANGUAGE_CHANNELS.names


def seed(store: Store, world_seed: int) -> None:
    """Store the language catalogue (kept current on every start)."""
    with store.transaction() as conn:
        conn.executemany(
            "INSERT OR REPLACE INTO languages (id, name) VALUES (?, ?)", LANGUAGE_NAMES.items()
        )


def _languages(ctx: Context, which: str) -> list[dict[str, Any]]:
    return [dict(zip(_FIELDS, row, strict=True)) for row in ctx.store.all(_QUERIES[which])]


async def used_languages(ctx: Context) -> list[dict[str, Any]]:
    """GET /language/channels: every language in use, most channels first."""
    return _languages(ctx, "used")


async def active_languages(ctx: Context) -> list[dict[str, Any]]:
    """GET /language/channels/active: languages with live channels, most viewers first."""
    return _languages(ctx, "active")


async def available_languages(ctx: Context) -> list[dict[str, Any]]:
    """GET /language/channels/available: every language a channel may choose."""
    return _languages(ctx, "available")


routes = [
    Route(
        wire.LANGUAGES_USED,
        used_languages,
        summary="Languages channels use, with channel counts",
    ),
    Route(
        wire.LANGUAGES_ACTIVE,
        active_languages,
        summary="Languages with live channels, most live viewers first",
    ),
    Route(
        wire.LANGUAGES_AVAILABLE,
        available_languages,
        summary="Languages a channel may choose, with channel counts",
    ),
]
