"""A channel's current broadcast: ``GET /channels/{id}/broadcast``, as the historical platform
had it (Firebot and the official node client read it to tell whether a stream is live).

The platform keeps no separate broadcast records: a live channel's broadcast is its stream
session in the world's schedule (``sessions.py``), its id derived from the session's (the same
while the channel stays live, a new one each time it goes live) and ``startedAt`` the session's
start, so a client can tell which session an event belongs to and how far into it. A channel
the schedule does not run (registered through the API, set live by hand) has a broadcast that
starts at its last update.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from explorer.emulator import streams
from explorer.emulator.access import channel_ref
from explorer.emulator.context import Context
from explorer.emulator.policy import Route
from explorer.emulator.responses import ApiError
from explorer.emulator.world import iso
from explorer.wire import channel_routes as channel_wire

_NAMESPACE = uuid.UUID("6f1c2b52-8a63-4f3e-9d0a-2f0b8c1e7a10")


async def get_broadcast(ctx: Context) -> dict[str, Any]:
    """GET /channels/{id}/broadcast: the live broadcast, else 404."""
    channel = channel_ref(ctx)
    if not channel.online:
        raise ApiError(404, "This channel is not broadcasting.")
    key, started = _session(ctx, channel.id)
    return {
        "id": str(uuid.uuid5(_NAMESPACE, f"{channel.id}:{key}")),
        "channelId": channel.id,
        "online": True,
        "isTestStream": False,
        "startedAt": started,
    }


def _session(ctx: Context, channel: int) -> tuple[object, str]:
    """What names the live channel's broadcast, and when it started: its scheduled session's
    id and start, else its last update (both times)."""
    index = streams.index_of(ctx.store, channel)
    if index is not None:
        now = streams.applied(ctx.store)
        for item in streams.schedule_of(ctx.store).of_channel(index, now, now + 1e-3):
            return item.id, iso(datetime.fromtimestamp(item.start, UTC))
    started = ctx.store.scalar("SELECT updatedAt FROM channels WHERE id = ?", (channel,))
    return started, str(started)


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
