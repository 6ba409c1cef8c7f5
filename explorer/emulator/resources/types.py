"""Types (games and categories), with their live ``online`` and ``viewersCurrent`` totals, and
the channels of one type (``GET /types/{id}/channels``, what the official Java client lists:
``GET /channels`` narrowed to ``typeId``, with the same parameters and answer).
"""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from explorer.emulator.context import Context
from explorer.emulator.policy import Param, Route
from explorer.emulator.resources.channels import LIST_PARAMS, channel_list, listed
from explorer.emulator.responses import not_found
from explorer.wire import routes as wire
from explorer.wire.query import QueryError


async def list_types(ctx: Context) -> list[dict[str, Any]]:
    """GET /types: every type, optionally only those with live channels (``online=1``)."""
    types = list(ctx.services.types.all().values())
    online = ctx.params.get("online")
    if online is not None:
        if online not in ("0", "1", "true", "false"):
            raise QueryError("online", "online must be 1, 0, true or false.")
        if online in ("1", "true"):
            types = [t for t in types if t["online"] > 0]
    return types


async def get_type(ctx: Context) -> dict[str, Any]:
    """GET /types/{id}: one type."""
    found = ctx.services.types.all().get(ctx.path_int("type"))
    if found is None:
        raise not_found("Type")
    return found


async def type_channels(ctx: Context) -> Response:
    """GET /types/{id}/channels: the channels of one type, listed as ``GET /channels`` lists
    them (its filters AND ``typeId`` = the type)."""
    type_id = (await get_type(ctx))["id"]
    params = dict(ctx.params)
    where = params.get("where", "")
    params["where"] = f"{where},typeId:eq:{type_id}" if where else f"typeId:eq:{type_id}"
    return listed(*await channel_list(ctx, params))


routes = [
    Route(
        wire.TYPES,
        list_types,
        summary="Every type (game/category)",
        params=(Param("online", {"type": "string", "enum": ["0", "1", "true", "false"]}),),
        errors=(400,),
    ),
    Route(wire.TYPE, get_type, summary="One type", errors=(400, 404)),
    Route(
        wire.TYPE_CHANNELS,
        type_channels,
        summary="The channels of one type, listed as GET /channels lists them",
        params=tuple(p for p in LIST_PARAMS if p.name not in ("q", "scope")),
        errors=(400, 404),
    ),
]
