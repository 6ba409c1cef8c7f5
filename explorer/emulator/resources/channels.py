"""Channels: the ranking list, one channel by id or token, and its details (also at
``/detailed``, the older spelling the official Java client, beam-client-java 6.0.0, sends).

``GET /channels`` turns the shared list-query grammar (``explorer.wire.query``) into a listing whose
pages cost the same at any depth (``explorer.emulator.listing``). The order always ends with
``id`` so successive pages are successive slices of one stable ordering; suspended channels
never appear in listings.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Scope

from explorer.emulator.access import ChannelRef, channel_ref
from explorer.emulator.context import Context, Services
from explorer.emulator.db import channels
from explorer.emulator.db.engine import Store
from explorer.emulator.listing import Pager, listing_of
from explorer.emulator.pagecache import page_cache, page_key
from explorer.emulator.policy import Param, Route
from explorer.emulator.shapes import (
    CHANNEL_CHECKS,
    CHANNEL_FIELDS,
    CHANNEL_FILTERS,
    TypeCatalog,
    render_channel,
)
from explorer.wire import channel_routes as channel_wire
from explorer.wire import routes as wire
from explorer.wire.query import MAX_PAGE, parse_fields, parse_list_query

#: What ``fields`` may project: the declared fields (:data:`~explorer.emulator.shapes.CHANNEL`)
#: and the embedded records.
PROJECTABLE: tuple[str, ...] = (*CHANNEL_FIELDS, "type", "user")


def _project(item: dict[str, Any], fields: tuple[str, ...] | None) -> dict[str, Any]:
    return item if fields is None else {f: item[f] for f in fields}


class ChannelBodies:
    """Channel objects encoded once per catalog version, by id.

    Distinct listings (new filters, orders, pages) miss the page cache but share their rows:
    a page is its ids, read from a ranking index alone, joined from here; only channels not
    yet encoded at this version are read from the table. At most ``size`` are kept (about
    1.2 KB each: the default world's 50,000 fit), the longest kept going first: filters drawn
    across a field's whole range touch every channel, and forgetting all of them at once when
    full made most pages read and render their rows again.
    """

    def __init__(self, size: int = 65_536) -> None:
        self.size = size
        self.version = -1
        #: An ordered dict drops its first entries in constant time; a plain dict's next
        #: first entry is found by stepping over the slots of every entry dropped before it.
        self.bodies: OrderedDict[int, bytes] = OrderedDict()

    def page(self, store: Store, types: TypeCatalog, version: int, ids: list[int]) -> bytes:
        """The encoded JSON array of the channels ``ids``, in that order."""
        if version != self.version:
            self.version, self.bodies = version, OrderedDict()
        bodies = self.bodies
        for _ in range(min(len(bodies) + len(ids) - self.size, len(bodies))):
            bodies.popitem(last=False)
        # The page's own bodies: on PostgreSQL other requests run while the missing rows are
        # read (in a thread), and may make room by dropping some of those kept here.
        page = {i: bodies[i] for i in ids if i in bodies}
        missing = [i for i in ids if i not in page]
        if missing:
            catalog = types.all()
            for row in channels.with_owner(store, missing):
                # A copy of orjson's answer: its bytes keep the whole 16 KiB buffer they were
                # written into (measured with orjson 3.13), thirteen times a channel's size.
                body = bytes(memoryview(orjson.dumps(render_channel(row, catalog))))
                bodies[row[0]] = page[row[0]] = body
        return b"[" + b",".join([page[i] for i in ids]) + b"]"


def channel_bodies(services: Services) -> ChannelBodies:
    """The encoded channels of ``services``, made on first use."""
    bodies: ChannelBodies | None = services.caches.get("channel-bodies")
    if bodies is None:
        bodies = services.caches["channel-bodies"] = ChannelBodies()
    return bodies


async def channel_list(ctx: Context, params: Mapping[str, str]) -> tuple[bytes, str | None]:
    """The encoded page of channels the list query ``params`` asks for, and its total (None
    with ``noCount``): what ``GET /channels`` answers, and any listing that narrows it. It
    waits (the loop serving others) while a ranking it needs is read (:meth:`Pager.ready`)."""
    query = parse_list_query(params, CHANNEL_FILTERS, PROJECTABLE, CHANNEL_CHECKS)
    pager = ctx.services.caches.get("channel-pager")
    if pager is None:
        pager = ctx.services.caches["channel-pager"] = Pager(ctx.store)
    listing = listing_of(query)
    await pager.ready(listing, ctx.store.catalog_version(), query.count)
    version = ctx.store.catalog_version()
    offset = query.page * query.limit
    if query.fields is None:
        ids = pager.ids(listing, version, offset, query.limit)
        body = channel_bodies(ctx.services).page(ctx.store, ctx.services.types, version, ids)
    else:
        types = ctx.services.types.all()
        rows = pager.page(listing, version, offset, query.limit)
        body = orjson.dumps([_project(render_channel(r, types), query.fields) for r in rows])
    return body, str(pager.total(listing, version)) if query.count else None


def page_filler(services: Services) -> Callable[[Scope], Awaitable[tuple[bytes, str | None]]]:
    """:func:`channel_list` for an anonymous request's scope: how the page cache's layer
    (:class:`~explorer.emulator.pagecache.CachedPages`) answers a page not cached yet."""

    async def fill(scope: Scope) -> tuple[bytes, str | None]:
        ctx = Context(Request(scope), services, None)
        return await channel_list(ctx, ctx.params)

    return fill


def listed(body: bytes, total: str | None) -> Response:
    """A page of :func:`channel_list` as a response (the total in ``X-Total-Count``)."""
    headers = {"X-Total-Count": total} if total is not None else None
    return Response(body, media_type="application/json", headers=headers)


async def list_channels(ctx: Context) -> Response:
    """GET /channels: one page of the filtered, ordered channel list."""
    key = page_key(ctx.request.scope)
    version = ctx.store.catalog_version()
    cache = page_cache(ctx.services)
    hit = cache.get(key, version)
    if hit is None:
        hit = await channel_list(ctx, ctx.params)
        cache.put(key, version, *hit)
    return listed(*hit)


def channel_or_404(ctx: Context, key: str = "channel") -> tuple[Any, ...]:
    """The row of the channel named by path parameter ``key`` (id or token), else 404.

    Who may see it is :func:`~explorer.emulator.access.channel_ref`'s rule (a suspended
    channel only for its owner and staff), so every group hides channels alike.
    """
    row = channels.find(ctx.store, channel_ref(ctx, key).id)
    assert row is not None  # channel_ref found it in this same request
    return row


def _owns(ctx: Context, row: tuple[Any, ...]) -> bool:
    return ctx.caller is not None and ctx.caller.user_id == row[CHANNEL_FIELDS.index("userId")]


async def get_channel(ctx: Context) -> dict[str, Any]:
    """GET /channels/{idOrToken}: one channel (the owner also sees ``streamKey``)."""
    return channel_view(ctx)


def channel_view(ctx: Context, found: ChannelRef | None = None) -> dict[str, Any]:
    """The channel of the request's path as ``GET /channels/{idOrToken}`` answers it (given
    ``found``, its reference the request already checked); read from the store as it stands
    (an edit reads it in its transaction)."""
    row = channel_or_404(ctx) if found is None else channels.find(ctx.store, found.id)
    assert row is not None  # found in this same request
    fields = ctx.params.get("fields")
    projection = parse_fields(fields, PROJECTABLE) if fields is not None else None
    owner = (
        _owns(ctx, row)
        and ctx.caller is not None
        and ("channel:streamKey:self" in ctx.caller.scopes)
    )
    item = render_channel(row, ctx.services.types.all(), owner_view=owner)
    if projection is not None and owner:
        projection = (*projection, "streamKey")
    return _project(item, projection)


async def channel_details(ctx: Context) -> dict[str, Any]:
    """GET /channels/{idOrToken}/details: the channel plus its media resources."""
    row = channel_or_404(ctx)
    item = render_channel(row, ctx.services.types.all(), owner_view=_owns(ctx, row))
    for name in ("thumbnail", "cover", "badge"):
        resource_id = item[f"{name}Id"]
        item[name] = (
            None
            if resource_id is None
            else {
                "id": resource_id,
                "url": f"/api/v1/resources/{resource_id}",
            }
        )
    return item


#: The query parameters of ``GET /channels`` (and of the listings that narrow it).
LIST_PARAMS = (
    Param("page", {"type": "integer", "minimum": 0, "maximum": MAX_PAGE}, "0-based page number"),
    Param("limit", {"type": "integer", "minimum": 1, "maximum": 100}, "page size (default 50)"),
    Param("fields", {"type": "string", "pattern": "[^,]"}, "comma-separated projection"),
    Param("order", {"type": "string"}, "comma-separated field:asc|desc"),
    Param("where", {"type": "string"}, "comma-separated field:op:value (AND)"),
    Param("q", {"type": "string"}, "free-text search"),
    Param("scope", {"type": "string", "enum": ["names", "titles", "types", "all"]}),
    Param("noCount", {"type": "string", "enum": ["0", "1", "true", "false"]}),
)
_CHANNEL = {"$ref": "#/components/schemas/Channel"}

routes = [
    Route(
        wire.CHANNELS,
        list_channels,
        summary="List channels (a search with q is charged to channel-search)",
        params=LIST_PARAMS,
        errors=(400,),
    ),
    Route(
        channel_wire.CHANNEL,
        get_channel,
        summary="One channel by id or token",
        params=(LIST_PARAMS[2],),
        errors=(400, 404),
    ),
    Route(
        channel_wire.CHANNEL_DETAILS,
        channel_details,
        summary="A channel with its media resources",
        errors=(404,),
    ),
    Route(
        channel_wire.CHANNEL_DETAILED,
        channel_details,
        summary="A channel with its media resources (the older spelling of /details)",
        errors=(404,),
    ),
]
