"""Partnership: a channel applies, staff accept or deny, and partners get redeemable codes.

One application per channel. Applying records the channel's followers and all-time viewers at
that moment (what staff judge) and is refused while an application is pending or the channel is
already partnered; a denied channel may apply again, which replaces the old application.
Accepting sets ``partnered`` on the channel and issues its partnership codes in the same
transaction; only a pending application can be decided.
"""

from __future__ import annotations

from typing import Any

from explorer.emulator import credentials
from explorer.emulator.access import channel_ref, require_owner, require_staff
from explorer.emulator.context import Context
from explorer.emulator.db import channels, partnership
from explorer.emulator.policy import Route
from explorer.emulator.responses import ApiError, JSONResponse, bad_request, not_found
from explorer.wire import channel_routes as channel_wire
from explorer.wire.models import PARTNERSHIP_APPLICATION

APP_FIELDS = PARTNERSHIP_APPLICATION.names
CODES_PER_PARTNER = 5


def _application(ctx: Context, channel_id: int) -> dict[str, Any]:
    row = partnership.application(ctx.store, channel_id, APP_FIELDS)
    if row is None:
        raise not_found("Partnership application")
    return dict(zip(APP_FIELDS, row, strict=True))


def _text(body: dict[str, Any], name: str, shortest: int, longest: int) -> str:
    value = body.get(name)
    if not isinstance(value, str) or not shortest <= len(value.strip()) <= longest:
        raise bad_request(f"{name} must be a string of {shortest}-{longest} characters.", name)
    return value.strip()


async def get_application(ctx: Context) -> dict[str, Any]:
    """GET /channels/{id}/partnership/app: the channel's application (owner or staff)."""
    channel = channel_ref(ctx)
    require_owner(ctx, channel)
    return _application(ctx, channel.id)


async def apply(ctx: Context) -> JSONResponse:
    """POST /channels/{id}/partnership/app: apply for partnership with a message (owner)."""
    channel = channel_ref(ctx)
    require_owner(ctx, channel, staff_too=False)
    message = _text(await ctx.json_object(), "message", 20, 2000)
    standing = channels.standing(ctx.store, channel.id)
    assert standing is not None
    partnered, followers, viewers = standing
    if partnered:
        raise ApiError(409, "This channel is already partnered.")
    now = ctx.iso_now()
    with ctx.store.transaction() as tx:
        if partnership.status(tx, channel.id) == "pending":
            raise ApiError(409, "An application is already pending.")
        partnership.apply(tx, channel.id, message, followers, viewers, now)
    return JSONResponse(_application(ctx, channel.id), status_code=201)


async def _decide(ctx: Context, status: str, reason: str | None) -> dict[str, Any]:
    channel = channel_ref(ctx)
    if _application(ctx, channel.id)["status"] != "pending":
        raise ApiError(409, "Only a pending application can be decided.")
    now = ctx.iso_now()
    with ctx.store.transaction() as tx:
        partnership.decide(tx, channel.id, status, ctx.user_id(), reason, now)
        if status == "accepted":
            channels.partner(tx, channel.id, now)
            codes = [credentials.new_token(8).upper() for _ in range(CODES_PER_PARTNER)]
            partnership.add_codes(tx, channel.id, codes, now)
    return _application(ctx, channel.id)


async def deny(ctx: Context) -> dict[str, Any]:
    """POST /channels/{id}/partnership/app/deny: deny the pending application with a reason
    (staff)."""
    require_staff(ctx)
    reason = _text(await ctx.json_object(), "reason", 1, 500)
    return await _decide(ctx, "denied", reason)


async def accept(ctx: Context) -> dict[str, Any]:
    """POST /channels/{id}/partnership/app/accept: accept the pending application (staff)."""
    require_staff(ctx)
    return await _decide(ctx, "accepted", None)


async def list_codes(ctx: Context) -> list[dict[str, Any]]:
    """GET /channels/{id}/partnership/codes: the partner's redeemable codes (owner or staff)."""
    channel = channel_ref(ctx)
    require_owner(ctx, channel)
    rows = partnership.codes(ctx.store, channel.id)
    return [
        {
            "id": code_id,
            "ownerId": channel.user_id,
            "state": "unredeemed" if redeemed_by is None else "redeemed",
            "code": code,
            "redeemedById": redeemed_by,
            "redeemedAt": redeemed_at,
            "createdAt": created,
            "updatedAt": updated,
        }
        for code_id, code, redeemed_by, redeemed_at, created, updated in rows
    ]


_STR = {"type": "string"}


routes = [
    Route(
        channel_wire.CHANNEL_PARTNERSHIP,
        get_application,
        summary="The channel's partnership application (owner or staff)",
        errors=(401, 403, 404, 461),
    ),
    Route(
        channel_wire.CHANNEL_APPLY_FOR_PARTNERSHIP,
        apply,
        summary="Apply for partnership (owner)",
        body={
            "type": "object",
            "required": ["message"],
            "properties": {"message": {**_STR, "minLength": 20, "maxLength": 2000}},
        },
        status=201,
        errors=(400, 401, 403, 404, 409, 413, 461),
    ),
    Route(
        channel_wire.CHANNEL_PARTNERSHIP_DENY,
        deny,
        summary="Deny the pending application, giving a reason (staff)",
        body={
            "type": "object",
            "required": ["reason"],
            "properties": {"reason": {**_STR, "minLength": 1, "maxLength": 500}},
        },
        errors=(400, 401, 403, 404, 409, 413, 461),
    ),
    Route(
        channel_wire.CHANNEL_PARTNERSHIP_ACCEPT,
        accept,
        summary="Accept the pending application: the channel becomes partnered (staff)",
        errors=(401, 403, 404, 409, 461),
    ),
    Route(
        channel_wire.CHANNEL_PARTNERSHIP_CODES,
        list_codes,
        summary="The partner's redeemable codes (owner or staff)",
        errors=(401, 403, 404, 461),
    ),
]
