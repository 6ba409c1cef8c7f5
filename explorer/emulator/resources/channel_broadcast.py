"""A channel's current broadcast: ``GET /channels/{id}/broadcast``, as the historical platform
had it (Firebot and the official node client read it to tell whether a stream is live).

The platform keeps no separate broadcast records: a live channel's broadcast has an id derived
from the channel (stable while it stays live) and starts at the channel's last update.
"""

from __future__ import annotations

import uuid
from typing import Any

from explorer.emulator.access import channel_ref
from explorer.emulator.context import Context
from explorer.emulator.policy import Route
from explorer.emulator.responses import ApiError
from explorer.wire import channel_routes as channel_wire

_NAMESPACE = uuid.UUID("6f1c2b52-8a63-4f3e-9d0a-2f0b8c1e7a10")


async def get_broadcast(ctx: Context) -> dict[str, Any]:
    """GET /channels/{id}/broadcast: the live broadcast, else 404."""
    channel = channel_ref(ctx)
    if not channel.online:
        raise ApiError(404, "This channel is not broadcasting.")
    started = ctx.store.scalar("SELECT updatedAt FROM channels WHERE id = ?", (channel.id,))
    return {
        "id": str(uuid.uuid5(_NAMESPACE, f"{channel.id}:{started}")),
        "channelId": channel.id,
        "online": True,
        "isTestStream": False,
        "startedAt": started,
    }


SCHEMAS = {
    "Broadcast": {
        "type": "object",
        "required": ["id", "channelId", "online", "isTestStream", "startedAt"],
        "properties": {
            "id": {"type": "string", "format": "uuid"},
            "channelId": {"type": "integer"},
            "online": {"type": "boolean"},
            "isTestStream": {"type": "boolean"},
            "startedAt": {"type": "string", "format": "date-time"},
        },
    }
}

routes = [
    Route(
        channel_wire.CHANNEL_BROADCAST,
        get_broadcast,
        summary="The channel's current broadcast (404 when offline)",
        errors=(404,),
    ),
]
