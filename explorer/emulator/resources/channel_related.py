"""Related channels: others streaming the same type (game) or in the same language, ranked.

A channel sharing both the type and the language ranks above one sharing only the type, which
ranks above one sharing only the language; within each tier live channels come first, then the
most watched now, then the most watched ever. A channel with neither a type nor a language has
no related channels.

Each tier is read on its own, in the order of an index led by the shared field
(``channels_related_type`` and ``channels_related_language`` in ``db/engine.py``; the
statements are in ``db/channels.py``): a page costs its tiers' counts and the rows it skips and
shows, never a sort of every channel sharing the language (a sort of tens of thousands of rows held
the event loop about 150 ms a request, and one anonymous client within its rate limits could
keep everyone else waiting).
"""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from explorer.emulator.access import channel_ref
from explorer.emulator.context import Context
from explorer.emulator.db import channels
from explorer.emulator.paging import PAGE_PARAMS, page_of
from explorer.emulator.policy import Route
from explorer.emulator.resources.channels import channel_bodies
from explorer.wire import channel_routes as channel_wire

#: ``Services.caches`` key of the tiers' sizes.
TIER_SIZES = "related-tier-sizes"
#: Types and languages whose counts are kept (any more, and the cache starts again).
_KEPT = 4096


class TierSizes:
    """Listed channels per language of each type, and per language, each counted once until a
    channel is added or removed or changes its type, language or suspension
    (``Store.grouping_version``): counting the channels of a large language holds the loop
    for milliseconds, and viewers changing moves none of them between tiers. A language's
    count serves every likeness that has it, so a pass over a language's busiest channels
    counts it once, not once per type."""

    def __init__(self) -> None:
        self.version = -1
        self.types: dict[int, dict[str | None, int]] = {}
        self.languages: dict[str, int] = {}

    def of(self, ctx: Context, likeness: tuple[int | None, str | None]) -> list[int]:
        """The sizes of the tiers of ``likeness``, the channel itself included."""
        version = ctx.store.grouping_version()
        if version != self.version or len(self.types) + len(self.languages) >= _KEPT:
            self.version, self.types, self.languages = version, {}, {}
        return channels.related_tier_sizes(*likeness, lambda t, lang: self._count(ctx, t, lang))

    def _count(self, ctx: Context, type_id: int | None, language: str | None) -> int:
        """Listed channels of ``type_id`` and ``language`` (None matches any), kept."""
        if type_id is not None:
            languages = self.types.get(type_id)
            if languages is None:
                languages = self.types[type_id] = channels.languages_of_type(ctx.store, type_id)
            return sum(languages.values()) if language is None else languages.get(language, 0)
        assert language is not None
        found = self.languages.get(language)
        if found is None:
            found = self.languages[language] = channels.language_count(ctx.store, language)
        return found


async def related(ctx: Context) -> Any:
    """GET /channels/{id}/related: channels like this one, best matches first."""
    channel = channel_ref(ctx)
    row = channels.fields(ctx.store, channel.id, "typeId", "languageId")
    assert row is not None
    likeness: tuple[int | None, str | None] = (row[0], row[1])
    sizes = ctx.services.caches.get(TIER_SIZES)
    if sizes is None:
        sizes = ctx.services.caches[TIER_SIZES] = TierSizes()
    counts = sizes.of(ctx, likeness)
    if counts and not channel.suspended:
        counts[0] -= 1  # the channel is in its own first tier, and never its own relative
    page = page_of(ctx)
    ids = channels.related_ids(ctx.store, *likeness, counts, channel.id, page.offset, page.limit)
    # The page's ids come from the tier's index alone; their objects are shared with the
    # channel listings (encoded once per catalog version).
    version = ctx.store.catalog_version()
    body = channel_bodies(ctx.services).page(ctx.store, ctx.services.types, version, ids)
    return Response(
        body, media_type="application/json", headers={"X-Total-Count": str(sum(counts))}
    )


routes = [
    Route(
        channel_wire.CHANNEL_RELATED,
        related,
        summary="Channels with the same type and/or language, best matches first",
        params=PAGE_PARAMS,
        errors=(400, 404),
    ),
]
