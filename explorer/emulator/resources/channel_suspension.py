"""Suspension: staff take a channel off the platform and bring it back.

A suspended channel drops out of every listing (``GET /channels`` filters ``suspended = 0``)
and answers 404 to everyone but staff (its owner, suspended with it, cannot sign in).
Suspending also ends its broadcast (it goes offline with no viewers) and ends every host of
it, since nobody may watch it. Both actions are idempotent and answer the channel as staff
see it. Suspending suspends the owner's account too: every credential of the owner (sessions,
tokens, JWTs, codes, chat keys) ends at once, and every key for the channel's chat.
"""

from __future__ import annotations

from typing import Any

from explorer.emulator import endings
from explorer.emulator.access import channel_ref, require_staff
from explorer.emulator.chat import authkeys
from explorer.emulator.context import Context
from explorer.emulator.db import channels
from explorer.emulator.policy import Route
from explorer.emulator.shapes import find_channel, render_channel
from explorer.wire import channel_routes as channel_wire


def _render(ctx: Context, channel_id: int) -> dict[str, Any]:
    row = find_channel(ctx.store, channel_id)
    assert row is not None
    return render_channel(row, ctx.services.types.all())


async def suspend(ctx: Context) -> dict[str, Any]:
    """POST /channels/{id}/suspend: suspend the channel (staff)."""
    require_staff(ctx)
    channel = channel_ref(ctx)
    channels.suspend(ctx.store, channel.id, ctx.iso_now())
    # The owner's account is suspended with the channel: every credential of theirs ends
    # (sessions, tokens, JWTs, codes, chat keys; login refuses them until the suspension is
    # lifted), and so does every key for this channel's chat.
    endings.end_user(ctx.services, channel.user_id)
    authkeys.end(ctx.services, "channel", channel.id)
    return _render(ctx, channel.id)


async def unsuspend(ctx: Context) -> dict[str, Any]:
    """DELETE /channels/{id}/suspend: lift the suspension (staff)."""
    require_staff(ctx)
    channel = channel_ref(ctx)
    channels.unsuspend(ctx.store, channel.id, ctx.iso_now())
    return _render(ctx, channel.id)


_CHANNEL = {"$ref": "#/components/schemas/Channel"}

routes = [
    Route(
        channel_wire.CHANNEL_SUSPEND,
        suspend,
        summary="Suspend a channel (staff): it leaves listings and goes offline",
        errors=(401, 403, 404, 461),
    ),
    Route(
        channel_wire.CHANNEL_UNSUSPEND,
        unsuspend,
        summary="Lift a channel's suspension (staff)",
        errors=(401, 403, 404, 461),
    ),
]
