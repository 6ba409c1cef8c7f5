"""Chat connection details: which nodes to dial, what the caller may do, and an authkey.

``GET /chats/{channelId}`` (also served at ``/api/v2/chats/{channelId}``, reference.md fact 7)
lists every live chat node (with a Redis broker, every node registered by any process of the
platform: see :mod:`~explorer.emulator.brokers.redis`), the caller's permissions in that channel,
and, for a signed-in caller, an authkey for the chat ``auth`` method (see
:mod:`explorer.emulator.chat.authkeys`: bound to channel, user and the credential's scopes, reused
while valid, and dying with that credential). ``GET /chats/endpoints``
lists the live nodes alone; ``GET /chats/{channelId}/anonymous`` the details for reading a chat
anonymously, never with an authkey. Who is in a chat is served by :mod:`.chatters`.
"""

from __future__ import annotations

from typing import Any

from explorer.emulator.chat import authkeys
from explorer.emulator.chat.roles import listed_roles_of, permissions_of
from explorer.emulator.context import Context
from explorer.emulator.db import channels
from explorer.emulator.policy import Route
from explorer.emulator.responses import not_found
from explorer.wire import channel_routes as channel_wire
from explorer.wire import routes as wire

SCHEMAS: dict[str, Any] = {
    "ChatEndpoints": {
        "type": "object",
        "required": ["endpoints"],
        "properties": {"endpoints": {"type": "array", "items": {"type": "string"}}},
        "description": "The websocket addresses of every live chat node.",
    },
}


def live_endpoints(ctx: Context) -> list[str]:
    """The addresses of the running chat nodes."""
    chat = ctx.services.chat
    return chat.endpoints() if chat is not None else []


async def chat_endpoints(ctx: Context) -> dict[str, Any]:
    """GET /chats/endpoints: the live chat nodes."""
    return {"endpoints": live_endpoints(ctx)}


def _listed(ctx: Context) -> int:
    """The path's channel id, when it names an unsuspended channel (else 404)."""
    channel_id = ctx.path_int("channel")
    if not channels.is_listed(ctx.store, channel_id):
        raise not_found("Channel")
    return channel_id


async def anonymous_details(ctx: Context) -> dict[str, Any]:
    """GET /chats/{channelId}/anonymous: the details for reading the chat anonymously (the
    historical endpoint overlays called): endpoints and no permissions or authkey, whoever
    asks."""
    _listed(ctx)
    return {"endpoints": live_endpoints(ctx), "permissions": []}


async def chat_details(ctx: Context) -> dict[str, Any]:
    """GET /chats/{channelId}: endpoints, permissions, and an authkey for signed-in callers."""
    caller = ctx.caller
    if caller is None:
        return await anonymous_details(ctx)
    channel_id = ctx.path_int("channel")
    roles = listed_roles_of(ctx.store, channel_id, caller.user_id)
    if roles is None:
        raise not_found("Channel")
    scopes = None if caller.kind == "session" else caller.scopes
    body: dict[str, Any] = {
        "endpoints": live_endpoints(ctx),
        "permissions": permissions_of(roles, scopes),
    }
    if scopes is None or "chat:connect" in scopes:
        body["authkey"] = authkeys.issue(
            ctx.store,
            channel_id,
            caller.user_id,
            scopes,
            ctx.now,
            ctx.services.config.authkey_ttl,
            caller.credential,
        )
    return body


routes = [
    Route(wire.CHAT_ENDPOINTS, chat_endpoints, summary="Live chat node addresses"),
    Route(
        channel_wire.CHANNEL_CHAT_DETAILS,
        chat_details,
        summary="Chat connection details",
        errors=(400, 404, 461),
    ),
    Route(
        channel_wire.CHANNEL_ANONYMOUS_CHAT_DETAILS,
        anonymous_details,
        summary="Chat connection details for reading anonymously (no authkey)",
        errors=(400, 404),
    ),
]
