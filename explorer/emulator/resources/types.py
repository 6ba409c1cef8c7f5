"""Types (games and categories), with their live ``online`` and ``viewersCurrent`` totals."""

from __future__ import annotations

from typing import Any

from explorer.emulator.context import Context
from explorer.emulator.policy import Param, Route
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


routes = [
    Route(
        wire.TYPES,
        list_types,
        summary="Every type (game/category)",
        params=(Param("online", {"type": "string", "enum": ["0", "1", "true", "false"]}),),
        errors=(400,),
    ),
    Route(wire.TYPE, get_type, summary="One type", errors=(400, 404)),
]
