"""The emulator's control namespace (``/_emulator/...``), apart from the platform's own API.

Tests and notebooks use it to read the mail the platform "sent" (confirmation codes), to
check health, to read the world clock (``GET /_emulator/clock``, answered to anyone: it is
in every response's headers anyway), and for chat fault drills: ``GET /_emulator/chat/nodes``
lists the nodes, ``POST /_emulator/chat/nodes/{n}/stop`` stops node ``n`` (its clients are
disconnected with 1001 and must reconnect to another endpoint) and ``.../start`` brings it
back on its address.

It answers loopback clients only (``403`` to anyone else, the address resolved as in
:mod:`~explorer.emulator.addresses`) unless ``Config.open_control`` is set (``explorer serve
--open-control``): the mail box holds confirmation codes and the drills stop chat nodes.
"""

from __future__ import annotations

from typing import Any

from explorer.emulator import addresses
from explorer.emulator.chat.hub import ChatHub
from explorer.emulator.context import Context
from explorer.emulator.policy import Handler, Route
from explorer.emulator.responses import ApiError, not_found
from explorer.wire.endpoint import Endpoint


async def health(ctx: Context) -> dict[str, Any]:
    """GET /_emulator/health: liveness plus the seed and size of the world."""
    return {
        "ok": True,
        "seed": int(ctx.store.meta("seed") or 0),
        "channels": ctx.store.scalar("SELECT COUNT(*) FROM channels"),
        "chatEndpoints": ctx.services.chat.endpoints() if ctx.services.chat else [],
    }


async def clock(ctx: Context) -> dict[str, Any]:
    """GET /_emulator/clock: the world's instant, its speed and the share of chat kept."""
    return ctx.services.world.describe()


async def mail(ctx: Context) -> list[dict[str, Any]]:
    """GET /_emulator/mail: every message the platform has sent, oldest first."""
    return ctx.services.mailbox


def _chat(ctx: Context) -> ChatHub:
    if ctx.services.chat is None:
        raise ApiError(503, "Chat is not running.")
    return ctx.services.chat


def _node(ctx: Context, chat: ChatHub) -> int:
    index = ctx.path_int("node")
    if index >= len(chat.node_status()):
        raise not_found("Chat node")
    return index


async def chat_nodes(ctx: Context) -> list[dict[str, Any]]:
    """GET /_emulator/chat/nodes: every chat node, running or stopped."""
    return _chat(ctx).node_status()


async def stop_chat_node(ctx: Context) -> dict[str, Any]:
    """POST /_emulator/chat/nodes/{n}/stop: stop one node (idempotent)."""
    chat = _chat(ctx)
    index = _node(ctx, chat)
    await chat.stop_node(index)
    return chat.node_status()[index]


async def start_chat_node(ctx: Context) -> dict[str, Any]:
    """POST /_emulator/chat/nodes/{n}/start: start a stopped node on its address (idempotent)."""
    chat = _chat(ctx)
    index = _node(ctx, chat)
    await chat.start_node(index)
    return chat.node_status()[index]


def local_only(handler: Handler) -> Handler:
    """``handler``, answering 403 to a client that is not on loopback (unless
    ``Config.open_control``)."""

    async def guarded(ctx: Context) -> Any:
        config = ctx.services.config
        if not config.open_control and not addresses.is_loopback(
            addresses.of_request(ctx.request, config)
        ):
            raise ApiError(403, "The control namespace answers loopback clients only.")
        return await handler(ctx)

    guarded.__doc__ = handler.__doc__
    return guarded


routes = [
    # The control namespace is the emulator's own, not part of the platform's contract, so its
    # rows are declared here rather than in explorer.wire.
    Route(Endpoint("GET", "/health", "global"), local_only(health), summary="Emulator health"),
    Route(Endpoint("GET", "/clock", "global"), clock, summary="The world clock"),
    Route(
        Endpoint("GET", "/mail", "global"), local_only(mail), summary="Mail sent by the emulator"
    ),
    Route(Endpoint("GET", "/chat/nodes", "global"), local_only(chat_nodes), summary="Chat nodes"),
    Route(
        Endpoint("POST", "/chat/nodes/{node}/stop", "global"),
        local_only(stop_chat_node),
        summary="Stop a chat node",
    ),
    Route(
        Endpoint("POST", "/chat/nodes/{node}/start", "global"),
        local_only(start_chat_node),
        summary="Start a chat node",
    ),
]
