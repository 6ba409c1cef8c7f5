"""Owner edits to a channel: its editable fields (PUT/PATCH) and a fresh stream key.

``PATCH`` takes any non-empty subset of the editable fields and refuses every other key. ``PUT``
takes the same fields but ignores the Channel's read-only fields, so a client can send back a
channel it read with ``GET`` after changing a few values (clients of the historical platform
did). Both validate every value before writing anything and answer the updated channel as its
owner sees it; the description (HTML) is sanitized on write. Deleting the stream key issues a
new one, visible only in the owner's ``GET /channels/{id}``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from explorer.emulator import credentials, names, sanitize
from explorer.emulator.access import channel_ref, require_owner
from explorer.emulator.context import Context
from explorer.emulator.db import channels, types
from explorer.emulator.db.engine import Store
from explorer.emulator.policy import Route
from explorer.emulator.resources.channels import channel_view
from explorer.emulator.responses import bad_request
from explorer.emulator.shapes import CHANNEL_FIELDS
from explorer.wire import channel_routes as channel_wire

AUDIENCES = ("family", "teen", "18+")


def _title(store: Store, value: Any) -> str | None:
    if isinstance(value, str) and value.strip() and len(value) <= 100:
        return names.problem(value)
    return "must be a non-blank string of at most 100 characters"


def _description(store: Store, value: Any) -> str | None:
    if value is None or (isinstance(value, str) and len(value) <= 5000):
        return None
    return "must be a string of at most 5000 characters, or null"


def _type_id(store: Store, value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool) and 0 < value < 2**63:
        if types.exists(store, value):
            return None
        return f"names no type ({value})"
    return "must be a type id or null"


def _language(store: Store, value: Any) -> str | None:
    if value is None or (
        isinstance(value, str) and len(value) == 2 and value.isascii() and value.islower()
    ):
        return None
    return "must be a two-letter lowercase language code (ISO 639-1) or null"


def _audience(store: Store, value: Any) -> str | None:
    return None if value in AUDIENCES else f"must be one of {', '.join(AUDIENCES)}"


def _flag(store: Store, value: Any) -> str | None:
    return None if isinstance(value, bool) else "must be true or false"


#: Field -> check returning what is wrong with a value (None when it is fine).
EDITABLE: dict[str, Callable[[Store, Any], str | None]] = {
    "name": _title,
    "description": _description,
    "typeId": _type_id,
    "languageId": _language,
    "audience": _audience,
    "vodsEnabled": _flag,
}
#: Editable fields holding HTML that clients render: cleaned on write (``sanitize``).
RICH_TEXT = frozenset({"description"})
#: Channel fields a PUT may carry (as read) but never changes.
READ_ONLY = frozenset(CHANNEL_FIELDS) - set(EDITABLE) | {"type", "user", "streamKey"}


def _changes(store: Store, body: dict[str, Any], *, tolerate_read_only: bool) -> dict[str, Any]:
    changes: dict[str, Any] = {}
    for key, value in body.items():
        check = EDITABLE.get(key)
        if check is None:
            if tolerate_read_only and key in READ_ONLY:
                continue
            kind = "read-only" if key in READ_ONLY else "unknown"
            raise bad_request(f"{key} cannot be changed here ({kind} field).", key, kind)
        problem = check(store, value)
        if problem:
            raise bad_request(f"{key} {problem}.", key)
        if key in RICH_TEXT and value is not None:
            value = sanitize.rich_text(value)
        changes[key] = int(value) if isinstance(value, bool) else value
    if not changes:
        fields = ", ".join(EDITABLE)
        raise bad_request(f"Nothing to change: send at least one of {fields}.", "body", "required")
    return changes


async def _edit(ctx: Context, *, tolerate_read_only: bool) -> dict[str, Any]:
    channel = channel_ref(ctx)
    require_owner(ctx, channel)
    changes = _changes(ctx.store, await ctx.json_object(), tolerate_read_only=tolerate_read_only)
    with ctx.store.transaction() as tx:
        channels.update(tx, channel.id, changes, ctx.iso_now())
        return channel_view(ctx, channel)


async def put_channel(ctx: Context) -> dict[str, Any]:
    """PUT /channels/{id}: update from a (possibly whole) channel object; read-only fields are
    ignored."""
    return await _edit(ctx, tolerate_read_only=True)


async def patch_channel(ctx: Context) -> dict[str, Any]:
    """PATCH /channels/{id}: update only the editable fields sent."""
    return await _edit(ctx, tolerate_read_only=False)


async def reset_stream_key(ctx: Context) -> None:
    """DELETE /channels/{id}/streamKey: replace the stream key with a new random one."""
    channel = channel_ref(ctx)
    require_owner(ctx, channel, staff_too=False)
    key = f"{channel.id}-{credentials.new_token(16)}"
    channels.set_stream_key(ctx.store, channel.id, key, ctx.iso_now())


_EDIT_BODY = {"$ref": "#/components/schemas/ChannelEdit"}
_CHANNEL = {"$ref": "#/components/schemas/Channel"}
_EDIT_ERRORS = (400, 401, 403, 404, 413, 461)

SCHEMAS: dict[str, Any] = {
    "ChannelEdit": {
        "type": "object",
        "minProperties": 1,
        "properties": {
            "name": {"type": "string", "minLength": 1, "maxLength": 100},
            "description": {"type": "string", "maxLength": 5000, "nullable": True},
            "typeId": {"type": "integer", "nullable": True},
            "languageId": {"type": "string", "pattern": "^[a-z]{2}$", "nullable": True},
            "audience": {"type": "string", "enum": list(AUDIENCES)},
            "vodsEnabled": {"type": "boolean"},
        },
    },
}

routes = [
    Route(
        channel_wire.CHANNEL_REPLACE,
        put_channel,
        summary="Update a channel (owner); read-only Channel fields in the body are ignored",
        body=_EDIT_BODY,
        errors=_EDIT_ERRORS,
    ),
    Route(
        channel_wire.CHANNEL_UPDATE,
        patch_channel,
        summary="Change some editable fields of a channel (owner)",
        body=_EDIT_BODY,
        errors=_EDIT_ERRORS,
    ),
    Route(
        channel_wire.CHANNEL_DROP_STREAM_KEY,
        reset_stream_key,
        summary="Issue a new stream key (owner); read it from GET /channels/{id}",
        status=204,
        errors=(401, 403, 404, 461),
    ),
]
