"""Who is in a channel's chat right now: the list, one user, a name search, the caller's friends.

Presence comes from the chat rooms (every node, through ``ChatHub.present_users``): a user is
listed while at least one of their authenticated connections (or, with simulation on, their
bot) is in the channel's chat; anonymous readers are not listed. Each entry is a ``ChatUser``
``{userId, userName, userRoles}`` with the roles that user holds in the channel now. Lists are
sorted by name (case-insensitive, then id), paged with ``page``/``limit`` like every list
under a channel, and report their total in ``X-Total-Count``.

* ``GET /chats/{channelId}/users``: everyone present;
* ``GET /chats/{channelId}/users/search?username=ab``: those whose name starts with ``ab``
  (any case; 1 to 32 characters);
* ``GET /chats/{channelId}/users/{userId}``: one present user, else 404;
* ``GET /chats/{channelId}/friends`` (signed in): present users whose channel the caller
  follows (``channel_follows``).
"""

from __future__ import annotations

from typing import Any

import orjson
from starlette.responses import Response

from explorer.emulator.access import ChannelRef, channel_ref
from explorer.emulator.chat.roles import roles_of
from explorer.emulator.context import Context
from explorer.emulator.paging import PAGE_PARAMS, page_of, paged
from explorer.emulator.policy import Param, Route
from explorer.emulator.responses import bad_request, not_found

SCHEMAS: dict[str, Any] = {
    "ChatUser": {
        "type": "object",
        "required": ["userId", "userName", "userRoles"],
        "properties": {
            "userId": {"type": "integer"},
            "userName": {"type": "string"},
            "userRoles": {"type": "array", "items": {"type": "string"}},
        },
        "description": "A signed-in user present in a channel's chat, with their roles there.",
    },
}
_CHAT_USERS = {"type": "array", "items": {"$ref": "#/components/schemas/ChatUser"}}
MAX_SEARCH = 32


def _present(ctx: Context, channel: ChannelRef) -> list[tuple[int, str]]:
    """``(id, username)`` of every signed-in user in the chat, sorted by name then id."""
    chat = ctx.services.chat
    ids = chat.present_users(channel.id) if chat is not None else []
    if not ids:
        return []
    rows = ctx.store.all(
        "SELECT id, username FROM users WHERE id IN (SELECT value FROM json_each(?))",
        (orjson.dumps(ids).decode(),),
    )
    return sorted(((row[0], row[1]) for row in rows), key=lambda row: (row[1].lower(), row[0]))


def _page(ctx: Context, channel: ChannelRef, users: list[tuple[int, str]]) -> Response:
    page = page_of(ctx)
    chosen = users[page.offset : page.offset + page.limit]
    return paged([_chat_user(ctx, channel, user) for user in chosen], len(users))


def _chat_user(ctx: Context, channel: ChannelRef, user: tuple[int, str]) -> dict[str, Any]:
    return {
        "userId": user[0],
        "userName": user[1],
        "userRoles": roles_of(ctx.store, channel.id, user[0]),
    }


async def chat_users(ctx: Context) -> Response:
    """GET /chats/{channelId}/users: everyone signed in who is in the chat."""
    channel = channel_ref(ctx)
    return _page(ctx, channel, _present(ctx, channel))


async def search_chat_users(ctx: Context) -> Response:
    """GET /chats/{channelId}/users/search: present users whose name starts with ``username``."""
    channel = channel_ref(ctx)
    prefix = ctx.params.get("username", "")
    if not 1 <= len(prefix) <= MAX_SEARCH:
        raise bad_request(f"username must have 1 to {MAX_SEARCH} characters.", "username")
    wanted = prefix.lower()
    return _page(
        ctx, channel, [u for u in _present(ctx, channel) if u[1].lower().startswith(wanted)]
    )


async def chat_user(ctx: Context) -> dict[str, Any]:
    """GET /chats/{channelId}/users/{userId}: one user, when present in the chat."""
    channel = channel_ref(ctx)
    user_id = ctx.path_int("user")
    chat = ctx.services.chat
    if chat is None or user_id not in chat.present_users(channel.id):
        raise not_found("User")
    username = ctx.store.scalar("SELECT username FROM users WHERE id = ?", (user_id,))
    if username is None:
        raise not_found("User")
    return _chat_user(ctx, channel, (user_id, username))


async def chat_friends(ctx: Context) -> Response:
    """GET /chats/{channelId}/friends: present users whose channel the caller follows."""
    channel = channel_ref(ctx)
    followed = {
        row[0]
        for row in ctx.store.all(
            "SELECT c.userId FROM channel_follows f JOIN channels c ON c.id = f.channelId "
            "WHERE f.userId = ?",
            (ctx.user_id(),),
        )
    }
    return _page(ctx, channel, [u for u in _present(ctx, channel) if u[0] in followed])


_ERRORS = (400, 404, 461)

routes = [
    Route(
        "GET",
        "/chats/{channel}/friends",
        chat_friends,
        "chats",
        auth="user",
        scopes=("chat:connect",),
        summary="Users in the chat whose channel the caller follows",
        params=PAGE_PARAMS,
        response=_CHAT_USERS,
        errors=(401, 403, *_ERRORS),
    ),
    Route(
        "GET",
        "/chats/{channel}/users",
        chat_users,
        "chats",
        auth="optional",
        summary="Signed-in users in the chat",
        params=PAGE_PARAMS,
        response=_CHAT_USERS,
        errors=_ERRORS,
    ),
    Route(
        "GET",
        "/chats/{channel}/users/search",
        search_chat_users,
        "chats",
        auth="optional",
        summary="Users in the chat whose name starts with a prefix",
        params=(
            Param("username", {"type": "string", "maxLength": MAX_SEARCH}, "name prefix", True),
            *PAGE_PARAMS,
        ),
        response=_CHAT_USERS,
        errors=_ERRORS,
    ),
    Route(
        "GET",
        "/chats/{channel}/users/{user}",
        chat_user,
        "chats",
        auth="optional",
        summary="One user in the chat",
        response={"$ref": "#/components/schemas/ChatUser"},
        errors=_ERRORS,
    ),
]
