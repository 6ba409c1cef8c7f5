"""The emulator's control namespace (``/_emulator/...``), apart from the platform's own API.

Tests and notebooks use it to read the mail the platform "sent" (confirmation codes), to
check health, to read the world clock (``GET /_emulator/clock``, answered to anyone: it is
in every response's headers anyway), and for chat fault drills: ``GET /_emulator/chat/nodes``
lists the nodes, ``POST /_emulator/chat/nodes/{n}/stop`` stops node ``n`` (its clients are
disconnected with 1001 and must reconnect to another endpoint) and ``.../start`` brings it
back on its address.

Scripted scenarios (``explorer.scenario``) act through it too, one call per happening:
``POST /_emulator/raids`` (``{"from", "to", "viewers"?}``) ends the raider's stream, makes it
host the target and moves its audience (or ``viewers``) there; ``POST
/_emulator/chat/{channel}/call`` (``{"user", "method", "arguments"}``; no user: the owner) runs
a chat method as that user, as if sent on a connection (a poll, a timeout, a purge); ``POST
/_emulator/chat/slow`` (``{"user"}``, null for anonymous) drops that user's chat connections as
too slow (1008), as the watchdog drops a reader that falls behind. With the simulator on, the
world's sessions set the audiences again at its next tick: a raid's numbers hold on a platform
without it (``--no-simulate``, the test fixture's default) until the world models raids.

It answers loopback clients only (``403`` to anyone else, the address resolved as in
:mod:`~explorer.emulator.addresses`) unless ``Config.open_control`` is set (``explorer serve
--open-control``): the mail box holds confirmation codes and the drills stop chat nodes.
"""

from __future__ import annotations

from typing import Any

from explorer.emulator import addresses
from explorer.emulator.chat.hub import ChatHub
from explorer.emulator.context import Context
from explorer.emulator.db import channels, users
from explorer.emulator.live import happenings
from explorer.emulator.policy import Handler, Route
from explorer.emulator.responses import ApiError, bad_request, not_found
from explorer.wire.codes import Refusal
from explorer.wire.endpoint import Endpoint


async def health(ctx: Context) -> dict[str, Any]:
    """GET /_emulator/health: liveness plus the seed and size of the world."""
    return {
        "ok": True,
        "seed": int(ctx.store.meta("seed") or 0),
        "channels": channels.count(ctx.store),
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


def _named(ref: Any) -> int | str | None:
    """``ref`` when it is an id (an int) or a name or token (a non-empty str), else None."""
    if isinstance(ref, int) and not isinstance(ref, bool):
        return ref
    return ref if isinstance(ref, str) and ref else None


def _channel(ctx: Context, ref: Any, path: str) -> tuple[int, int, int]:
    """``(id, online, viewersCurrent)`` of the channel ``ref`` (id or token) names, else 400."""
    named = _named(ref)
    if named is None:
        raise bad_request(f"{path} must name a channel (its id or token).", path)
    state = channels.live_state(ctx.store, named)
    if state is None:
        raise bad_request(f"No channel is {ref!r}.", path)
    return state


def _user(ctx: Context, ref: Any, path: str) -> int:
    """The id of the user ``ref`` (id or username) names, else 400."""
    named = _named(ref)
    if named is None:
        raise bad_request(f"{path} must name a user (their id or username).", path)
    user = users.user_id(ctx.store, named)
    if user is None:
        raise bad_request(f"No user is {ref!r}.", path)
    return user


async def raid(ctx: Context) -> dict[str, Any]:
    """POST /_emulator/raids: the raider's stream ends, it hosts the target, and its audience
    (or ``viewers``) joins the target's, in one transaction (the live events follow)."""
    body = await ctx.json_object()
    raider, online, audience = _channel(ctx, body.get("from"), "from")
    target = _channel(ctx, body.get("to"), "to")[0]
    if raider == target:
        raise bad_request("A channel cannot raid itself.", "to")
    if not online:
        raise bad_request("The raider is not live: only a live stream can raid.", "from")
    viewers = body.get("viewers", audience)
    if not isinstance(viewers, int) or isinstance(viewers, bool) or not 0 <= viewers < 2**31:
        raise bad_request("viewers must be a non-negative integer.", "viewers")
    now = ctx.iso_now()
    with ctx.store.transaction() as tx:
        before = channels.raid(tx, raider, target, viewers, now)
        if before is not None and before != target:
            happenings.hosted(tx, raider, before, hosting=False)
        if before != target:
            happenings.hosted(tx, raider, target, hosting=True)
    return {"from": raider, "to": target, "viewers": viewers}


async def chat_call(ctx: Context) -> dict[str, Any]:
    """POST /_emulator/chat/{channel}/call: run a chat method as a user; its reply data, or a
    400 carrying the chat error's code and message."""
    body = await ctx.json_object()
    channel = _channel(ctx, ctx.request.path_params["channel"], "channel")[0]
    if body.get("user") is None:  # the channel's owner
        user = channels.owner(ctx.store, channel)
    else:
        user = _user(ctx, body.get("user"), "user")
    assert user is not None  # _channel found the channel
    method, arguments = body.get("method"), body.get("arguments", [])
    if not isinstance(method, str) or not isinstance(arguments, list):
        raise bad_request("Send a method name and a list of arguments.", "method")
    try:
        reply = _chat(ctx).call(channel, user, method, arguments)
    except Refusal as refused:
        raise ApiError(
            400,
            f"{method} was refused: {refused.message} (code {int(refused.code)})",
            details=[{"path": "method", "type": "chat", "message": refused.message}],
        ) from None
    return {"reply": reply}


async def drop_slow(ctx: Context) -> dict[str, Any]:
    """POST /_emulator/chat/slow: drop a user's chat connections (anonymous ones for a null
    user) as too slow; how many."""
    body = await ctx.json_object()
    user = None if body.get("user") is None else _user(ctx, body.get("user"), "user")
    return {"dropped": _chat(ctx).drop_as_slow(user)}


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
    Route(Endpoint("POST", "/raids", "global"), local_only(raid), summary="Stage a raid"),
    Route(
        Endpoint("POST", "/chat/slow", "global"),
        local_only(drop_slow),
        summary="Drop a user's chat connections as too slow",
    ),
    Route(
        Endpoint("POST", "/chat/{channel}/call", "global"),
        local_only(chat_call),
        summary="Run a chat method as a user",
    ),
]
