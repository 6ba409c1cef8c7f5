"""Hosting: a channel shows another channel's stream (its hostee) to its own viewers.

The hostee lives in ``channels.hosteeId``, so a host shows in ``GET /channels`` at once, and
the hosted channel's ``hosters`` are simply the channels pointing at it. The hosted channel's
preferences decide whether it may be hosted at all (``hosting:allow``) and whether a channel
that is itself live may host it (``hosting:allowlive``). Setting the same hostee again and
ending a host that is not running are harmless no-ops.
"""

from __future__ import annotations

from typing import Any

from explorer.emulator.access import ChannelRef, channel_ref, require_owner
from explorer.emulator.context import Context, lenient_id
from explorer.emulator.db import channels
from explorer.emulator.live import happenings
from explorer.emulator.paging import PAGE_PARAMS, channel_page
from explorer.emulator.policy import Route
from explorer.emulator.resources.channel_preferences import preference
from explorer.emulator.responses import ApiError, JSONResponse, bad_request
from explorer.emulator.shapes import find_channel, render_channel
from explorer.wire import channel_routes as channel_wire


def _hosting(ctx: Context, channel_id: int) -> dict[str, Any]:
    hostee_id = channels.hostee_of(ctx.store, channel_id)
    row = find_channel(ctx.store, hostee_id) if hostee_id is not None else None
    hostee = render_channel(row, ctx.services.types.all()) if row is not None else None
    return {"channelId": channel_id, "hosteeId": hostee_id, "hostee": hostee}


async def get_hostee(ctx: Context) -> dict[str, Any]:
    """GET /channels/{id}/hostee: the channel being hosted, if any."""
    return _hosting(ctx, channel_ref(ctx).id)


def _check_hostee(ctx: Context, host: ChannelRef, hostee_id: Any) -> int:
    """``hostee_id`` once it names a channel ``host`` may host (else 400 or 403)."""
    if not isinstance(hostee_id, int) or isinstance(hostee_id, bool) or not 0 < hostee_id < 2**63:
        raise bad_request("id must be the id of the channel to host.", "id")
    if hostee_id == host.id:
        raise bad_request("A channel cannot host itself.", "id", "self")
    suspended = channels.is_suspended(ctx.store, hostee_id)
    if suspended is None or suspended:
        raise bad_request(f"There is no channel {hostee_id} to host.", "id", "not_found")
    if not preference(ctx.store, hostee_id, "hosting:allow"):
        raise ApiError(403, "That channel does not allow being hosted.")
    if host.online and not preference(ctx.store, hostee_id, "hosting:allowlive"):
        raise ApiError(403, "That channel does not allow being hosted by a live channel.")
    return hostee_id


async def set_hostee(ctx: Context) -> dict[str, Any]:
    """PUT /channels/{id}/hostee: start hosting the channel given as ``{"id": channelId}``."""
    host = channel_ref(ctx)
    require_owner(ctx, host)
    hostee_id = _check_hostee(ctx, host, lenient_id((await ctx.json_object()).get("id")))
    with ctx.store.transaction() as tx:
        before, changed = channels.host(tx, host.id, hostee_id, ctx.iso_now())
        if changed:
            if before is not None:
                happenings.hosted(tx, host.id, before, hosting=False)
            happenings.hosted(tx, host.id, hostee_id, hosting=True)
    return _hosting(ctx, host.id)


async def end_hosting(ctx: Context) -> None:
    """DELETE /channels/{id}/hostee: stop hosting."""
    host = channel_ref(ctx)
    require_owner(ctx, host)
    with ctx.store.transaction() as tx:
        before = channels.end_host(tx, host.id, ctx.iso_now())
        if before is not None:
            happenings.hosted(tx, host.id, before, hosting=False)


async def list_hosters(ctx: Context) -> JSONResponse:
    """GET /channels/{id}/hosters: the channels hosting this one, most watched first."""
    channel = channel_ref(ctx)
    return channel_page(ctx, channels.HOSTING, (channel.id,), channels.MOST_WATCHED)


SCHEMAS: dict[str, Any] = {
    "HosteeRequest": {
        "type": "object",
        "required": ["id"],
        "properties": {"id": {"type": "integer", "description": "the channel to host"}},
    },
}

routes = [
    Route(
        channel_wire.CHANNEL_HOSTING,
        get_hostee,
        summary="The channel this channel hosts (hostee null when not hosting)",
        errors=(404,),
    ),
    Route(
        channel_wire.CHANNEL_SET_HOSTING,
        set_hostee,
        summary="Host another channel (owner)",
        body={"$ref": "#/components/schemas/HosteeRequest"},
        errors=(400, 401, 403, 404, 413, 461),
    ),
    Route(
        channel_wire.CHANNEL_CLEAR_HOSTING,
        end_hosting,
        summary="Stop hosting (owner)",
        status=204,
        errors=(401, 403, 404, 461),
    ),
    Route(
        channel_wire.CHANNEL_HOSTERS,
        list_hosters,
        summary="The channels hosting this channel, most watched first",
        params=PAGE_PARAMS,
        errors=(400, 404),
    ),
]
