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

The historical V2 list (mixer/developer-docs, reference/chat/ChatChattersList and
guides/core/ContinuationTokens), mounted under ``/api/v2`` (:data:`V2_ROUTES`):

* ``GET /api/v2/chats/{channelId}/users?limit=&username=&continuationToken=``: a JSON array of
  ``{userId, username, userRoles}`` (``username``, as V2 spells it), ``limit`` 1-100 (default
  50), ``username`` a name prefix; while more follow, a ``Link: <...continuationToken=T>;
  rel="next"`` header names the next page. The token is opaque (the last name and id given),
  so users joining or leaving between pages neither repeat nor shift the others;
* ``GET /api/v2/chats/{channelId}/users/{userId}``: one present user in that shape, else 404.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any
from urllib.parse import urlencode

import orjson
from starlette.responses import Response

from explorer.emulator.access import ChannelRef, channel_ref
from explorer.emulator.chat.roles import roles_of
from explorer.emulator.context import Context
from explorer.emulator.db import follows, users
from explorer.emulator.paging import PAGE_PARAMS, page_of, paged
from explorer.emulator.policy import Param, Route
from explorer.emulator.responses import JSONResponse, bad_request, not_found
from explorer.wire import channel_routes as channel_wire
from explorer.wire.endpoint import Endpoint
from explorer.wire.numbers import integer

MAX_SEARCH = 32


def _present(ctx: Context, channel: ChannelRef) -> list[tuple[int, str]]:
    """``(id, username)`` of every signed-in user in the chat, sorted by name then id."""
    chat = ctx.services.chat
    ids = chat.present_users(channel.id) if chat is not None else []
    if not ids:
        return []
    rows = users.usernames(ctx.store, ids)
    return sorted(rows, key=lambda row: (row[1].lower(), row[0]))


def _page(ctx: Context, channel: ChannelRef, users: list[tuple[int, str]]) -> Response:
    page = page_of(ctx)
    chosen = users[page.offset : page.offset + page.limit]
    return paged([_chat_user(ctx, channel, user) for user in chosen], len(users))


def _chat_user(
    ctx: Context, channel: ChannelRef, user: tuple[int, str], name: str = "userName"
) -> dict[str, Any]:
    """A ChatUser; ``name`` is the name's key (V2 spells it ``username``)."""
    return {
        "userId": user[0],
        name: user[1],
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
    username = users.username(ctx.store, user_id)
    if username is None:
        raise not_found("User")
    return _chat_user(ctx, channel, (user_id, username))


async def chat_friends(ctx: Context) -> Response:
    """GET /chats/{channelId}/friends: present users whose channel the caller follows."""
    channel = channel_ref(ctx)
    followed = follows.owners_followed(ctx.store, ctx.user_id())
    return _page(ctx, channel, [u for u in _present(ctx, channel) if u[0] in followed])


def _token(user: tuple[int, str]) -> str:
    return base64.urlsafe_b64encode(orjson.dumps([user[1].lower(), user[0]])).decode()


def _after(token: str) -> tuple[str, int]:
    """The (name, id) a continuation token resumes after (400 when it is no token of ours)."""
    try:
        name, ident = orjson.loads(base64.urlsafe_b64decode(token.encode()))
    except (binascii.Error, ValueError, TypeError):
        raise bad_request("continuationToken is not valid.", "continuationToken") from None
    if not isinstance(name, str) or type(ident) is not int:
        raise bad_request("continuationToken is not valid.", "continuationToken")
    return name, ident


async def chat_users_v2(ctx: Context) -> Response:
    """GET /api/v2/chats/{channelId}/users: a page of present users, continued by token."""
    channel = channel_ref(ctx)
    limit = integer(ctx.params.get("limit", "50"), 1, 100)
    if limit is None:
        raise bad_request("limit must be an integer from 1 to 100.", "limit")
    users = _present(ctx, channel)
    prefix = ctx.params.get("username", "").lower()
    if len(prefix) > MAX_SEARCH:
        raise bad_request(f"username must have at most {MAX_SEARCH} characters.", "username")
    if prefix:
        users = [u for u in users if u[1].lower().startswith(prefix)]
    token = ctx.params.get("continuationToken")
    if token:
        after = _after(token)
        users = [u for u in users if (u[1].lower(), u[0]) > after]
    chosen = users[:limit]
    headers = {}
    if len(users) > limit:
        query = {"limit": limit, **({"username": prefix} if prefix else {})}
        query["continuationToken"] = _token(chosen[-1])
        headers["Link"] = f'<{ctx.request.url.path}?{urlencode(query)}>; rel="next"'
    return JSONResponse([_chat_user(ctx, channel, u, "username") for u in chosen], headers=headers)


async def chat_user_v2(ctx: Context) -> dict[str, Any]:
    """GET /api/v2/chats/{channelId}/users/{userId}: one present user, V2 shape."""
    channel = channel_ref(ctx)
    found = await chat_user(ctx)
    return _chat_user(ctx, channel, (found["userId"], found["userName"]), "username")


_ERRORS = (400, 404, 461)

routes = [
    Route(
        channel_wire.CHANNEL_CHAT_FRIENDS,
        chat_friends,
        summary="Users in the chat whose channel the caller follows",
        params=PAGE_PARAMS,
        errors=(401, 403, *_ERRORS),
    ),
    Route(
        channel_wire.CHANNEL_CHATTERS,
        chat_users,
        summary="Signed-in users in the chat",
        params=PAGE_PARAMS,
        errors=_ERRORS,
    ),
    Route(
        channel_wire.CHANNEL_FIND_CHATTERS,
        search_chat_users,
        summary="Users in the chat whose name starts with a prefix",
        params=(
            Param("username", {"type": "string", "maxLength": MAX_SEARCH}, "name prefix", True),
            *PAGE_PARAMS,
        ),
        errors=_ERRORS,
    ),
    Route(channel_wire.CHANNEL_CHATTER, chat_user, summary="One user in the chat", errors=_ERRORS),
]

_V2_USER = {
    "type": "object",
    "required": ["userId", "username", "userRoles"],
    "properties": {
        "userId": {"type": "integer"},
        "username": {"type": "string"},
        "userRoles": {"type": "array", "items": {"type": "string"}},
    },
}
#: The V2 chatters list, mounted under ``/api/v2`` beside the chat details alias. Its rows are
#: declared here: the V2 alias is the platform's answer to one client, outside the ``/api/v1``
#: contract of ``explorer.wire`` that the toolkit calls.
V2_ROUTES = [
    Route(
        Endpoint("GET", "/chats/{channel}/users", "chats", signin="optional"),
        chat_users_v2,
        summary="Signed-in users in the chat, continued by token (V2)",
        params=(
            Param("limit", {"type": "integer", "minimum": 1, "maximum": 100}, "default 50"),
            Param("username", {"type": "string", "maxLength": MAX_SEARCH}, "name prefix"),
            Param("continuationToken", {"type": "string"}, "from the previous Link header"),
        ),
        response={"type": "array", "items": _V2_USER},
        errors=_ERRORS,
    ),
    Route(
        Endpoint("GET", "/chats/{channel}/users/{user}", "chats", signin="optional"),
        chat_user_v2,
        summary="One user in the chat (V2)",
        response=_V2_USER,
        errors=_ERRORS,
    ),
]
