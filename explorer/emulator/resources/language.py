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
from explorer.emulator.db import languages
from explorer.emulator.db.engine import Store
from explorer.emulator.policy import Route
from explorer.wire import routes as wire
from explorer.wire.models import LANGUAGE_CHANNELS

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

_FIELDS = LANGUAGE_CHANNELS.names


def seed(store: Store, world_seed: int) -> None:
    """Store the language catalogue (kept current on every start)."""
    languages.set_languages(store, LANGUAGE_NAMES.items())


def _languages(ctx: Context, which: languages.Which) -> list[dict[str, Any]]:
    rows = languages.language_counts(ctx.store, which)
    return [dict(zip(_FIELDS, row, strict=True)) for row in rows]


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
