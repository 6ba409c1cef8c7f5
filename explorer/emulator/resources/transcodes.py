"""Unlocking transcodes: ``POST /channels/{id}/transcodes/unlock``.

A channel without ``hasTranscodes`` is watched only at its source quality; its owner can pay
sparks to unlock the ladder of lower qualities (which then appear in the channel's manifests).
The charge and the unlock are one transaction: both happen or neither does. Refusals: 403 for
anyone but the owner (the sparks are the owner's, so staff cannot do it for them), 409 when the
channel already has transcodes (nothing is charged twice), and 402 Payment Required when the
owner holds fewer sparks than ``UNLOCK_COST``.
"""

from __future__ import annotations

from typing import Any

from explorer.emulator.access import channel_ref, require_owner
from explorer.emulator.context import Context
from explorer.emulator.db import channels, users
from explorer.emulator.policy import Route
from explorer.emulator.responses import ApiError
from explorer.wire import channel_routes as channel_wire

#: Sparks it costs to unlock transcodes.
UNLOCK_COST = 10_000


async def unlock_transcodes(ctx: Context) -> dict[str, Any]:
    """POST /channels/{id}/transcodes/unlock: charge the owner's sparks, set ``hasTranscodes``."""
    channel = channel_ref(ctx)
    require_owner(ctx, channel, staff_too=False)
    user_id = ctx.user_id()
    with ctx.store.transaction() as tx:
        if channels.field(tx, channel.id, "hasTranscodes"):
            raise ApiError(409, "Transcodes are already unlocked on this channel.")
        sparks = users.sparks(tx, user_id)
        assert sparks is not None  # the caller is signed in
        if sparks < UNLOCK_COST:
            raise ApiError(
                402, f"Unlocking transcodes costs {UNLOCK_COST} sparks; you have {sparks}."
            )
        now = ctx.iso_now()
        users.spend_sparks(tx, user_id, UNLOCK_COST, now)
        channels.update(tx, channel.id, {"hasTranscodes": 1}, now)
    return {
        "channelId": channel.id,
        "hasTranscodes": True,
        "sparksSpent": UNLOCK_COST,
        "sparks": sparks - UNLOCK_COST,
    }


routes = [
    Route(
        channel_wire.CHANNEL_UNLOCK_TRANSCODES,
        unlock_transcodes,
        summary=f"Unlock transcodes for {UNLOCK_COST} of the owner's sparks (owner only)",
        errors=(401, 402, 403, 404, 409, 461),
    ),
]
