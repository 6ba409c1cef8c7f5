"""Chat connection details: which nodes to dial, what the caller may do, and an authkey.

An authkey is bound to one channel and one user and is reused (not reissued) while it is
valid, so official clients that re-send the same key on every reconnect keep working until it
expires (reference.md fact 6).
"""

from __future__ import annotations

from typing import Any

from explorer.emulator import credentials
from explorer.emulator.context import Context
from explorer.emulator.policy import Route
from explorer.emulator.responses import not_found
from explorer.emulator.roles import permissions_of, roles_of


def issue_authkey(ctx: Context, channel_id: int, user_id: int) -> str:
    """A valid authkey for (channel, user): the live one if there is one, else a new one."""
    now = ctx.now
    row = ctx.store.one(
        "SELECT key FROM chat_authkeys WHERE channelId = ? AND userId = ? AND expiresAt > ? "
        "ORDER BY expiresAt DESC LIMIT 1",
        (channel_id, user_id, now + 5),
    )
    if row is not None:
        return str(row[0])
    key = credentials.new_token(16)
    with ctx.store.transaction() as conn:
        conn.execute("DELETE FROM chat_authkeys WHERE expiresAt < ?", (now,))
        conn.execute(
            "INSERT INTO chat_authkeys (key, channelId, userId, expiresAt) VALUES (?, ?, ?, ?)",
            (key, channel_id, user_id, now + ctx.services.config.authkey_ttl),
        )
    return key


async def chat_details(ctx: Context) -> dict[str, Any]:
    """GET /chats/{channelId}: endpoints, permissions, and an authkey for signed-in callers."""
    channel_id = ctx.path_int("channel")
    if (
        ctx.store.one("SELECT 1 FROM channels WHERE id = ? AND suspended = 0", (channel_id,))
        is None
    ):
        raise not_found("Channel")
    chat = ctx.services.chat
    body: dict[str, Any] = {"endpoints": chat.endpoints() if chat else [], "permissions": []}
    caller = ctx.caller
    if caller is None:
        return body
    scopes = None if caller.kind == "session" else caller.scopes
    body["permissions"] = permissions_of(roles_of(ctx.store, channel_id, caller.user_id), scopes)
    if scopes is None or "chat:connect" in scopes:
        body["authkey"] = issue_authkey(ctx, channel_id, caller.user_id)
    return body


_DETAILS = {"$ref": "#/components/schemas/ChatDetails"}

routes = [
    Route(
        "GET",
        "/chats/{channel}",
        chat_details,
        "chats",
        auth="optional",
        summary="Chat connection details",
        response=_DETAILS,
        errors=(400, 404, 461),
    ),
]
