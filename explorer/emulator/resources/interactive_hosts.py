"""Interactive hosts, and the interactive session of a channel.

A channel runs an interactive game when its ``interactive`` flag is set and its
``interactiveGameId`` names a game; it runs that game's newest published version.
``GET /interactive/{channel}`` tells anyone which game and version that is and which host
viewers join (``address``); ``/robot`` gives the channel owner the address and key their game
client (the "robot") connects with. A channel is served by host number ``channel id mod host
count`` (hosts in id order). The hosts are simulated (``.invalid``); nothing listens there.

This module sorts after ``interactive_games`` on purpose: ``/interactive/{channel}`` must not
catch ``/interactive/games``.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

from explorer.emulator.access import ChannelRef, channel_ref, require_owner
from explorer.emulator.context import Context
from explorer.emulator.db import channels, interactive
from explorer.emulator.db.engine import Store
from explorer.emulator.policy import Route
from explorer.emulator.resources.interactive_versions import render_version
from explorer.emulator.responses import not_found
from explorer.wire import channel_routes as channel_wire
from explorer.wire import routes as wire

HOSTS: tuple[str, ...] = tuple(f"wss://interactive{n}.explorer.invalid" for n in (1, 2, 3))


def seed(store: Store, world_seed: int) -> None:
    """Store the seeded hosts (those already stored are left as they are)."""
    interactive.add_hosts(store, HOSTS)


def _host(ctx: Context, channel_id: int) -> str:
    """The host serving ``channel_id``."""
    hosts = interactive.hosts(ctx.store)
    if not hosts:
        raise not_found("Interactive host")
    return hosts[channel_id % len(hosts)]


def _session(ctx: Context, channel: ChannelRef) -> tuple[bool, int | None, tuple[Any, ...] | None]:
    """The channel's interactive flag, game id and running version (None when none runs)."""
    row = channels.fields(ctx.store, channel.id, "interactive", "interactiveGameId")
    flag, game_id = row or (0, None)
    running = (
        interactive.latest_published(ctx.store, game_id) if flag and game_id is not None else None
    )
    return bool(flag), game_id, running


async def list_hosts(ctx: Context) -> list[dict[str, str]]:
    """GET /interactive/hosts: every interactive host."""
    return [{"address": address} for address in interactive.hosts(ctx.store)]


async def channel_session(ctx: Context) -> dict[str, Any]:
    """GET /interactive/{channel}: which game the channel runs and where viewers join it."""
    channel = channel_ref(ctx)
    flag, game_id, running = _session(ctx, channel)
    return {
        "channelId": channel.id,
        "interactive": flag,
        "gameId": game_id,
        "version": render_version(running) if running else None,
        "address": f"{_host(ctx, channel.id)}/participant" if running else None,
    }


async def channel_robot(ctx: Context) -> dict[str, Any]:
    """GET /interactive/{channel}/robot: the game client's address and key (owner only)."""
    channel = channel_ref(ctx)
    require_owner(ctx, channel, staff_too=False)
    _, game_id, running = _session(ctx, channel)
    if running is None:
        raise not_found("Interactive session")
    version_id = running[0]
    key = hmac.new(
        ctx.services.secret, f"robot:{channel.id}:{version_id}".encode(), hashlib.sha256
    ).hexdigest()
    return {
        "channelId": channel.id,
        "gameId": game_id,
        "versionId": version_id,
        "address": f"{_host(ctx, channel.id)}/gameClient",
        "key": key,
    }


routes = [
    Route(wire.INTERACTIVE_HOSTS, list_hosts, summary="Every interactive host"),
    Route(
        channel_wire.CHANNEL_INTERACTIVE,
        channel_session,
        summary="The interactive game a channel runs, and where to join it",
        errors=(404, 461),
    ),
    Route(
        channel_wire.CHANNEL_INTERACTIVE_ROBOT,
        channel_robot,
        summary="Address and key for the channel's game client (owner only)",
        errors=(401, 403, 404, 461),
    ),
]
