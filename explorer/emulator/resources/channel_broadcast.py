"""A channel's current broadcast: ``GET /channels/{id}/broadcast``, as the historical platform
had it (Firebot and the official node client read it to tell whether a stream is live).

The platform keeps no separate broadcast records: a live channel's broadcast is the live
stream its manifests describe (``manifests.live_stream``): it starts when the channel's stream
session in the world's schedule began (``sessions.py``), so a client can tell which session
an event belongs to and how far into it, and its id is derived from the channel and that
start (the same while the channel stays live, a new one each time it goes live). Offline
channels answer 404.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from explorer.emulator.context import Context
from explorer.emulator.policy import Route
from explorer.emulator.resources.manifests import live_stream
from explorer.emulator.world import iso
from explorer.wire import channel_routes as channel_wire

_NAMESPACE = uuid.UUID("6f1c2b52-8a63-4f3e-9d0a-2f0b8c1e7a10")


async def get_broadcast(ctx: Context) -> dict[str, Any]:
    """GET /channels/{id}/broadcast: the live broadcast, else 404."""
    stream = live_stream(ctx)
    return {
        "id": str(uuid.uuid5(_NAMESPACE, f"{stream.channel_id}:{stream.started_at}")),
        "channelId": stream.channel_id,
        "online": True,
        "isTestStream": False,
        "startedAt": iso(datetime.fromtimestamp(stream.started_at, UTC)),
    }


routes = [
    Route(
        channel_wire.CHANNEL_BROADCAST,
        get_broadcast,
        summary="The channel's current broadcast (404 when offline)",
        errors=(404,),
    ),
]
