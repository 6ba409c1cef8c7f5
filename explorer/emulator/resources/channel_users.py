"""People of a channel: who holds a role in it, changing roles, and one user's relationship.

Roles set here live in ``channel_roles`` and are exactly what chat reads (``roles_of``), so a
change takes effect at once: ``GET /chats/{id}`` answers the new permissions and the channel's
room is told (it sends ``UserUpdate``). The owner (or staff) may grant and revoke every
assignable role; moderators may only ban, unban, mute and unmute, and never other moderators.
Bans and mutes are moderation records, so only moderators see who holds them in listings.
A bearer token needs ``chat:purge`` (the scope behind chat's ``change_ban`` permission) to ban
or mute, and ``channel:update:self`` to grant other roles.
"""

from __future__ import annotations

from typing import Any

from explorer.emulator.access import ChannelRef, channel_ref, listed_users, require_moderator
from explorer.emulator.chat.roles import ASSIGNABLE_ROLES, PERMISSION_SCOPES, roles_of
from explorer.emulator.context import Context
from explorer.emulator.db import channel_roles, follows, users
from explorer.emulator.paging import PAGE_PARAMS, page_of, paged
from explorer.emulator.policy import Param, Route
from explorer.emulator.responses import ApiError, JSONResponse, bad_request, not_found
from explorer.emulator.shapes import render_user
from explorer.wire import channel_routes as channel_wire
from explorer.wire.numbers import identifier

#: Roles a moderator may set, and that only moderators may see in listings.
MODERATION_ROLES = frozenset({"Banned", "Muted"})
#: Roles that put a caller above moderators in this channel.
_ABOVE_MODS = frozenset({"Owner", "Staff", "Founder"})
LISTED_ROLES = ("Owner", *sorted(ASSIGNABLE_ROLES))


def _channel_user(ctx: Context, channel_id: int, row: tuple[Any, ...]) -> dict[str, Any]:
    user = render_user(row)
    user["roles"] = roles_of(ctx.store, channel_id, user["id"])
    return user


def _moderates(ctx: Context, channel: ChannelRef) -> bool:
    if ctx.caller is None:
        return False
    try:
        require_moderator(ctx, channel)
    except ApiError:
        return False
    return True


async def list_users(ctx: Context) -> JSONResponse:
    """GET /channels/{id}/users: the owner and everyone holding a channel role, by name."""
    channel = channel_ref(ctx)
    role = ctx.params.get("role")
    if role is not None and role not in LISTED_ROLES:
        raise bad_request(f"role must be one of {', '.join(LISTED_ROLES)}.", "role")
    moderator = _moderates(ctx, channel)
    if role in MODERATION_ROLES and not moderator:
        raise ApiError(403, "Only the channel's moderators can list banned or muted users.")
    page = page_of(ctx)
    rows, total = channel_roles.role_holders(
        ctx.store,
        channel.id,
        channel.user_id,
        role,
        () if moderator else MODERATION_ROLES,
        listed_users(ctx),
        page.limit,
        page.offset,
    )
    return paged([_channel_user(ctx, channel.id, row) for row in rows], total)


def _role_list(body: dict[str, Any], name: str) -> set[str]:
    value = body.get(name, [])
    if not isinstance(value, list) or not all(isinstance(r, str) for r in value):
        raise bad_request(f"{name} must be a list of role names.", name)
    unknown = sorted(set(value) - ASSIGNABLE_ROLES)
    if unknown:
        allowed = ", ".join(sorted(ASSIGNABLE_ROLES))
        raise bad_request(f"{unknown[0]} cannot be set here (use {allowed}).", name)
    return set(value)


def _check_token_scopes(ctx: Context, touched: set[str]) -> None:
    """Bearer tokens need the scope for each kind of change; cookie sessions hold them all."""
    caller = ctx.caller
    assert caller is not None
    needed = {PERMISSION_SCOPES["change_ban"]} if touched & MODERATION_ROLES else set()
    if touched - MODERATION_ROLES:
        needed.add("channel:update:self")
    missing = sorted(needed - caller.scopes)
    if missing:
        raise ApiError(403, f"Missing scope {missing[0]}.")


async def update_roles(ctx: Context) -> dict[str, Any]:
    """PATCH /channels/{id}/users/{userId}: add and remove a user's roles in the channel."""
    channel = channel_ref(ctx)
    acting = set(require_moderator(ctx, channel))
    target = ctx.path_int("user")
    row = users.row(ctx.store, target)
    if row is None:
        raise not_found("User")
    body = await ctx.json_object()
    add, remove = _role_list(body, "add"), _role_list(body, "remove")
    if not add and not remove:
        raise bad_request("Send roles to add and/or remove.", "body", "required")
    if add & remove:
        raise bad_request(f"{sorted(add & remove)[0]} is both added and removed.", "add")
    _check_token_scopes(ctx, add | remove)
    if target == channel.user_id:
        raise ApiError(403, "The channel owner's roles cannot be changed.")
    if not acting & _ABOVE_MODS:
        if (add | remove) - MODERATION_ROLES:
            raise ApiError(403, "Moderators may only ban, unban, mute or unmute.")
        if {"Mod", "GlobalMod", "Staff", "Founder"} & set(roles_of(ctx.store, channel.id, target)):
            raise ApiError(403, "Moderators cannot change another moderator's roles.")
    channel_roles.change_roles(ctx.store, channel.id, target, add, remove)
    if ctx.services.chat is not None:
        await ctx.services.chat.user_updated(channel.id, target)
    return _channel_user(ctx, channel.id, row)


async def relationship(ctx: Context) -> dict[str, Any]:
    """GET /channels/{id}/relationship: a user's roles in the channel and whether they follow
    it (the caller's, unless ``user`` names another user)."""
    channel = channel_ref(ctx)
    raw = ctx.params.get("user")
    user_id = ctx.user_id() if raw is None else identifier(raw)
    if user_id is None:
        raise bad_request("user must be a user id.", "user")
    if not users.exists(ctx.store, user_id):
        raise not_found("User")
    since = follows.followed_at(ctx.store, channel.id, user_id)
    follow = None if since is None else {"user": user_id, "channel": channel.id, "createdAt": since}
    return {
        "channelId": channel.id,
        "userId": user_id,
        "status": {"roles": roles_of(ctx.store, channel.id, user_id), "follows": follow},
    }


_INT = {"type": "integer"}
_ROLE_PARAM = Param("role", {"type": "string", "enum": list(LISTED_ROLES)}, "only holders of")

SCHEMAS: dict[str, Any] = {
    "RoleChange": {
        "type": "object",
        "properties": {
            "add": {"type": "array", "items": {"type": "string", "enum": sorted(ASSIGNABLE_ROLES)}},
            "remove": {
                "type": "array",
                "items": {"type": "string", "enum": sorted(ASSIGNABLE_ROLES)},
            },
        },
    },
}

routes = [
    Route(
        channel_wire.CHANNEL_USERS,
        list_users,
        summary="The owner and the holders of channel roles (bans and mutes: moderators only)",
        params=(*PAGE_PARAMS, _ROLE_PARAM),
        errors=(400, 403, 404),
    ),
    Route(
        channel_wire.CHANNEL_SET_ROLES,
        update_roles,
        summary="Add/remove a user's roles (owner: Mod, Subscriber, Banned, Muted; "
        "moderators: Banned, Muted)",
        body={"$ref": "#/components/schemas/RoleChange"},
        errors=(400, 401, 403, 404, 413, 461),
    ),
    Route(
        channel_wire.CHANNEL_RELATIONSHIP,
        relationship,
        summary="A user's roles in the channel and follow (the caller unless user is given)",
        params=(Param("user", _INT, "the user to describe (default: the caller)"),),
        errors=(400, 401, 404),
    ),
]
