"""Related channels: others streaming the same type (game) or in the same language, ranked.

A channel sharing both the type and the language ranks above one sharing only the type, which
ranks above one sharing only the language; within each tier live channels come first, then the
most watched now, then the most watched ever. A channel with neither a type nor a language has
no related channels.
"""

from __future__ import annotations

from explorer.emulator.access import channel_ref
from explorer.emulator.context import Context
from explorer.emulator.paging import PAGE_PARAMS, channel_page
from explorer.emulator.policy import Route
from explorer.emulator.responses import JSONResponse
from explorer.wire import channel_routes as channel_wire


async def related(ctx: Context) -> JSONResponse:
    """GET /channels/{id}/related: channels like this one, best matches first."""
    channel = channel_ref(ctx)
    likeness = ctx.store.one("SELECT typeId, languageId FROM channels WHERE id = ?", (channel.id,))
    assert likeness is not None
    return channel_page(
        ctx,
        "c.id != ? AND (c.typeId = ? OR c.languageId = ?)",
        (channel.id, *likeness),
        "COALESCE(c.typeId = ?, 0) * 2 + COALESCE(c.languageId = ?, 0) DESC, "
        "c.online DESC, c.viewersCurrent DESC, c.viewersTotal DESC",
        likeness,
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
