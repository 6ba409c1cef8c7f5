"""``GET /users/search?query=ab``: users whose name starts with ``ab`` (any case), each with
their channel, as the historical API answered it (published clients look a user up by name
there: e.g. Mixer.Base's UsersService.SearchUsers).

Sorted by name, paged with ``page``/``limit`` like every list, total in ``X-Total-Count``.
``query`` must have 1 to 32 characters; ``%`` and ``_`` match themselves.
"""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from explorer.emulator.access import listed_users
from explorer.emulator.context import Context
from explorer.emulator.db import channels, users
from explorer.emulator.paging import PAGE_PARAMS, page_of, paged
from explorer.emulator.policy import Param, Route
from explorer.emulator.responses import bad_request
from explorer.emulator.shapes import find_channel, render_channel, render_user
from explorer.wire import routes as wire

#: Longest name prefix searched for (usernames are at most 32 characters).
MAX_QUERY = 32


async def search_users(ctx: Context) -> Response:
    """GET /users/search: users whose name starts with ``query``, with their channels."""
    query = ctx.params.get("query", "")
    if not 1 <= len(query) <= MAX_QUERY:
        raise bad_request(f"query must have 1 to {MAX_QUERY} characters.", "query")
    page = page_of(ctx)
    rows, total = users.named_like(ctx.store, query, listed_users(ctx), page.limit, page.offset)
    types = ctx.services.types.all()
    found: list[dict[str, Any]] = []
    for row in rows:
        user = render_user(row)
        own = channels.id_of_owner(ctx.store, user["id"])
        channel = find_channel(ctx.store, own) if own is not None else None
        user["channel"] = render_channel(channel, types) if channel is not None else None
        found.append(user)
    return paged(found, total)


routes = [
    Route(
        wire.SEARCH_USERS,
        search_users,
        summary="Users whose name starts with a prefix, with their channels",
        params=(
            Param("query", {"type": "string", "maxLength": MAX_QUERY}, "name prefix", True),
            *PAGE_PARAMS,
        ),
        errors=(400,),
    ),
]
