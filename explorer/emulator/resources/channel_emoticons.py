"""Channel emoticons: the pack a partnered channel adds to chat, edited by its owner.

A pack maps emoticon codes to their place on the pack's sprite sheet (``x``, ``y``, ``width``,
``height`` in pixels), the same coordinates chat's ``emoticon`` message components carry.
``PATCH`` has JSON merge-patch meaning: each code maps to new coordinates, or to ``null`` to
remove it; codes not sent are kept. Only partnered channels have a pack to edit (accepting a
partnership application unlocks it); anyone may read a pack. Chat parses the pack's codes typed
after a colon (``:code``) as ``external`` emoticons; a change reaches chat at once
(``ChatHub.settings_changed``).
"""

from __future__ import annotations

import re
from typing import Any

from explorer.emulator.access import channel_ref, require_owner
from explorer.emulator.context import Context
from explorer.emulator.db import channels, emoticons
from explorer.emulator.policy import Route
from explorer.emulator.responses import ApiError, bad_request
from explorer.wire import channel_routes as channel_wire

CODE = re.compile(r"[A-Za-z][A-Za-z0-9_]{1,31}")
MAX_EMOTICONS = 50
SHEET_SIZE = 4096
LARGEST = 112
_COORDS = ("x", "y", "width", "height")


def _pack(ctx: Context, channel_id: int, token: str) -> dict[str, Any]:
    rows = emoticons.pack(ctx.store, channel_id)
    return {
        "channelId": channel_id,
        "name": token,
        "emoticons": {row[0]: dict(zip(_COORDS, row[1:5], strict=True)) for row in rows},
        "updatedAt": max((row[5] for row in rows), default=None),
    }


async def get_emoticons(ctx: Context) -> dict[str, Any]:
    """GET /channels/{id}/emoticons: the channel's emoticon pack."""
    channel = channel_ref(ctx)
    return _pack(ctx, channel.id, channel.token)


def _coords(code: str, value: Any) -> tuple[int, ...] | None:
    """The coordinates sent for ``code`` (None to remove it), or 400 naming what is wrong."""
    if value is None:
        return None
    if not isinstance(value, dict) or set(value) != set(_COORDS):
        raise bad_request(f"{code} must be an object with exactly {', '.join(_COORDS)}.", code)
    numbers = [value[name] for name in _COORDS]
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in numbers):
        raise bad_request(f"The coordinates of {code} must be integers.", code)
    x, y, width, height = numbers
    if not (1 <= width <= LARGEST and 1 <= height <= LARGEST):
        raise bad_request(f"{code} must be 1-{LARGEST} pixels wide and high.", code)
    if not (0 <= x <= SHEET_SIZE - width and 0 <= y <= SHEET_SIZE - height):
        raise bad_request(f"{code} must lie on the {SHEET_SIZE}px sprite sheet.", code)
    return x, y, width, height


async def patch_emoticons(ctx: Context) -> dict[str, Any]:
    """PATCH /channels/{id}/emoticons: add, move or remove emoticons of the pack (owner)."""
    channel = channel_ref(ctx)
    require_owner(ctx, channel)
    if not channels.is_partnered(ctx.store, channel.id):
        raise ApiError(403, "Only partnered channels have an emoticon pack.")
    sent = (await ctx.json_object()).get("emoticons")
    if not isinstance(sent, dict) or not sent:
        raise bad_request(
            "emoticons must map at least one code to coordinates or null.", "emoticons"
        )
    for code in sent:
        if not CODE.fullmatch(code):
            raise bad_request(
                f"{code!r} is not a valid code (a letter, then 1-31 letters, digits or _).", code
            )
    changes = {code: _coords(code, value) for code, value in sent.items()}
    now = ctx.iso_now()
    with ctx.store.transaction() as tx:
        count = emoticons.change_pack(tx, channel.id, changes, now)
        if count > MAX_EMOTICONS:
            raise bad_request(
                f"A pack holds at most {MAX_EMOTICONS} emoticons ({count} requested).",
                "emoticons",
                "too_many",
            )
    if ctx.services.chat is not None:
        ctx.services.chat.settings_changed(channel.id)
    return _pack(ctx, channel.id, channel.token)


_INT = {"type": "integer"}
_PACK = {"$ref": "#/components/schemas/EmoticonPack"}
_COORDS_SCHEMA = {
    "type": "object",
    "required": list(_COORDS),
    "properties": {name: _INT for name in _COORDS},
}

SCHEMAS: dict[str, Any] = {
    "EmoticonPack": {
        "type": "object",
        "required": ["channelId", "name", "emoticons", "updatedAt"],
        "properties": {
            "channelId": _INT,
            "name": {"type": "string"},
            "emoticons": {"type": "object", "additionalProperties": _COORDS_SCHEMA},
            "updatedAt": {"type": "string", "format": "date-time", "nullable": True},
        },
    },
    "EmoticonPatch": {
        "type": "object",
        "required": ["emoticons"],
        "properties": {
            "emoticons": {
                "type": "object",
                "minProperties": 1,
                "additionalProperties": {**_COORDS_SCHEMA, "nullable": True},
            }
        },
    },
}

routes = [
    Route(
        channel_wire.CHANNEL_EMOTICONS,
        get_emoticons,
        summary="The channel's emoticon pack",
        errors=(404,),
    ),
    Route(
        channel_wire.CHANNEL_SET_EMOTICONS,
        patch_emoticons,
        summary="Add, move (code -> coordinates) or remove (code -> null) emoticons (owner)",
        body={"$ref": "#/components/schemas/EmoticonPatch"},
        errors=(400, 401, 403, 404, 413, 461),
    ),
]
