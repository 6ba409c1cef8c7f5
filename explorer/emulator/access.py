"""Ownership and role checks shared by the resource groups.

Scopes are checked by policy from the route table; these answer the questions that need the
data: does the caller own this channel, moderate it, belong to staff? Each raises the
platform's error (404 for what the caller may not even see, 403 for what they may see but not
change) so handlers stay one line per rule.
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson

from explorer.emulator.chat.roles import roles_of
from explorer.emulator.context import Context
from explorer.emulator.db import channels, users
from explorer.emulator.responses import ApiError, not_found
from explorer.wire.numbers import identifier


@dataclass(frozen=True, slots=True)
class ChannelRef:
    """The few facts about a channel that access checks and sub-resources need."""

    id: int
    user_id: int
    token: str
    online: bool
    suspended: bool


def channel_ref(ctx: Context, key: str = "channel") -> ChannelRef:
    """The channel named by path parameter ``key`` (numeric id or token), else 404.

    A suspended channel is visible only to its owner and staff.
    """
    raw = ctx.request.path_params[key]
    number = identifier(raw)
    if number is not None:
        row = channels.ref(ctx.store, number)
    else:
        row = channels.ref_by_token(ctx.store, raw)
    if row is None:
        raise not_found("Channel")
    ref = ChannelRef(row[0], row[1], row[2], bool(row[3]), bool(row[4]))
    if ref.suspended and not (is_owner(ctx, ref) or is_staff(ctx)):
        raise not_found("Channel")
    return ref


def is_owner(ctx: Context, channel: ChannelRef) -> bool:
    """True when the caller owns ``channel``."""
    return ctx.caller is not None and ctx.caller.user_id == channel.user_id


def is_staff(ctx: Context) -> bool:
    """True when the caller belongs to the Staff group."""
    if ctx.caller is None:
        return False
    groups = users.groups(ctx.store, ctx.caller.user_id)
    return groups is not None and "Staff" in orjson.loads(groups)


def listed_users(ctx: Context) -> str:
    """The SQL condition on users ``u`` that every listing of users applies
    (:func:`~explorer.emulator.db.users.listed`): suspended accounts are shown to staff only,
    as suspended channels are (:func:`channel_ref`)."""
    return users.listed(is_staff(ctx))


def require_owner(ctx: Context, channel: ChannelRef, *, staff_too: bool = True) -> None:
    """403 unless the caller owns ``channel`` (or is staff, when ``staff_too``)."""
    ctx.user_id()
    if not (is_owner(ctx, channel) or (staff_too and is_staff(ctx))):
        raise ApiError(403, "Only the channel owner can do this.")


def require_moderator(ctx: Context, channel: ChannelRef) -> list[str]:
    """403 unless the caller is owner, Mod (or staff) of ``channel``; returns their roles."""
    roles = roles_of(ctx.store, channel.id, ctx.user_id())
    if not {"Owner", "Mod", "GlobalMod", "Staff", "Founder"} & set(roles):
        raise ApiError(403, "Only the channel owner or a moderator can do this.")
    return roles


def require_staff(ctx: Context) -> None:
    """403 unless the caller is staff."""
    ctx.user_id()
    if not is_staff(ctx):
        raise ApiError(403, "Only staff can do this.")
