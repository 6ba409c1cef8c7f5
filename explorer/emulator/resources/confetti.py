"""Confetti: the particle bursts a channel can fire in celebrations.

A confetti belongs to one channel, or to no channel (``channelId`` null): a platform-wide one
every channel may use. ``GET /channels/{id}/confetti`` lists exactly what a channel may use:
the platform-wide ones plus its own. Creating (``PUT /confetti``, the spec's verb) for a
channel takes its owner (or staff); platform-wide ones take staff. Changing or deleting takes
the confetti's creator, the owner of its channel, or staff. Reads are public.

A burst is ``count`` particles over ``durationMs``, drawn from ``particles``: each a ``color``
(``#rrggbb``), an ``emoji`` (up to 8 characters) or an ``image`` (an http(s) or
platform-relative URL).
"""

from __future__ import annotations

import re
from typing import Any

import orjson
from starlette.responses import Response

from explorer.emulator import names
from explorer.emulator.access import channel_ref, is_staff
from explorer.emulator.context import Context
from explorer.emulator.db import channels, confetti
from explorer.emulator.db.engine import Store, dumps
from explorer.emulator.policy import Route
from explorer.emulator.responses import ApiError, JSONResponse, bad_request, not_found
from explorer.emulator.shapes import json_schema
from explorer.emulator.world import WORLD_NOW, iso
from explorer.wire import channel_routes as channel_wire
from explorer.wire import routes as wire
from explorer.wire.models import (
    CONFETTI,
    CONFETTI_LIMITS,
    CONFETTI_NAME_MOST,
    CONFETTI_PARTICLES_MOST,
    CONFETTI_SETTINGS,
)

MAX_NAME = CONFETTI_NAME_MOST
MAX_PARTICLES = CONFETTI_PARTICLES_MOST
#: Integer settings: (lowest, highest, default).
LIMITS = CONFETTI_LIMITS
_COLOR = re.compile(r"#[0-9a-fA-F]{6}")
_PARTICLE_CHECKS = {
    "color": lambda text: bool(_COLOR.fullmatch(text)),
    "emoji": lambda text: 1 <= len(text) <= 8,
    "image": lambda text: text.startswith(("https://", "http://", "/")) and len(text) <= 500,
}
_FIELDS = CONFETTI.names


def seed(store: Store, world_seed: int) -> None:
    """Two platform-wide confetti (by staff) and one of the streamer's, once per database."""
    if confetti.any_stored(store):
        return
    staff, streamer, channel = confetti.seed_owners(store)
    colors = [{"type": "color", "value": v} for v in ("#ff3b30", "#ffcc00", "#34c759", "#0a84ff")]
    party = [{"type": "emoji", "value": v} for v in ("🎉", "✨", "🎊")]
    sparkle = [{"type": "emoji", "value": "⭐"}, {"type": "color", "value": "#ffd700"}]
    when = iso(WORLD_NOW)
    confetti.add_many(
        store,
        [
            (None, staff, "Classic", dumps(colors), 150, 3000, when, when),
            (None, staff, "Party", dumps(party), 80, 4000, when, when),
            (channel, streamer, "Streamer sparkle", dumps(sparkle), 200, 5000, when, when),
        ],
    )


def render(row: tuple[Any, ...]) -> dict[str, Any]:
    """A Confetti object from a row of ``_COLUMNS``."""
    item = dict(zip(_FIELDS, row, strict=True))
    item["particles"] = orjson.loads(item["particles"])
    return item


def _particles(value: Any) -> str:
    """The validated ``particles`` list, as stored JSON."""
    if not isinstance(value, list) or not 1 <= len(value) <= MAX_PARTICLES:
        raise bad_request(f"particles must be a list of 1-{MAX_PARTICLES} particles.", "particles")
    clean = []
    for index, particle in enumerate(value):
        kind = particle.get("type") if isinstance(particle, dict) else None
        text = particle.get("value") if isinstance(particle, dict) else None
        check = _PARTICLE_CHECKS.get(kind) if isinstance(kind, str) else None
        if check is None or not isinstance(text, str) or not check(text):
            raise bad_request(
                "Each particle is {type: color|emoji|image, value}: a #rrggbb color, an emoji "
                "of up to 8 characters, or an image URL.",
                f"particles.{index}",
            )
        clean.append({"type": kind, "value": text})
    return dumps(clean)


def _settings(body: dict[str, Any], *, creating: bool) -> dict[str, Any]:
    """The validated column values ``body`` sets (all of them, with defaults, when creating)."""
    values: dict[str, Any] = {}
    if creating or "name" in body:
        name = body.get("name")
        if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME:
            raise bad_request(f"name must be 1-{MAX_NAME} characters.", "name")
        if (wrong := names.problem(name)) is not None:
            raise bad_request(f"name {wrong}.", "name")
        values["name"] = name
    if creating or "particles" in body:
        values["particles"] = _particles(body.get("particles"))
    for field, (low, high, default) in LIMITS.items():
        if field not in body:
            if creating:
                values[field] = default
            continue
        number = body[field]
        if isinstance(number, bool) or not isinstance(number, int) or not low <= number <= high:
            raise bad_request(f"{field} must be an integer from {low} to {high}.", field)
        values[field] = number
    return values


def _target_channel(ctx: Context, body: dict[str, Any]) -> int | None:
    """The channel a new confetti is for: given, else the caller's own; None = platform-wide."""
    if "channelId" not in body:
        own = channels.id_of_owner(ctx.store, ctx.user_id())
        assert own is not None  # every user has a channel
        return own
    channel_id = body["channelId"]
    if channel_id is None:
        if not is_staff(ctx):
            raise ApiError(403, "Only staff can create platform-wide confetti.")
        return None
    if isinstance(channel_id, bool) or not isinstance(channel_id, int):
        raise bad_request("channelId must be a channel id or null.", "channelId")
    owner = channels.owner(ctx.store, channel_id)
    if owner is None:
        raise not_found("Channel")
    if owner != ctx.user_id() and not is_staff(ctx):
        raise ApiError(403, "Only the channel owner can add confetti to it.")
    return channel_id


async def create_confetti(ctx: Context) -> Response:
    """PUT /confetti: create a confetti for a channel (or platform-wide, for staff)."""
    body = await ctx.json_object()
    channel_id = _target_channel(ctx, body)
    values = _settings(body, creating=True)
    now = ctx.iso_now()
    confetti_id = confetti.add(ctx.store, channel_id, ctx.user_id(), values, now)
    return JSONResponse(render(_row(ctx, confetti_id)), status_code=201)


def _row(ctx: Context, confetti_id: int) -> tuple[Any, ...]:
    row = confetti.find(ctx.store, confetti_id, _FIELDS)
    if row is None:
        raise not_found("Confetti")
    return row


def _editable(ctx: Context) -> tuple[Any, ...]:
    """The confetti of the path, if the caller created it, owns its channel or is staff."""
    row = _row(ctx, ctx.path_int("confetti"))
    user_id = ctx.user_id()
    owner = channels.owner(ctx.store, row[1])
    if user_id not in (row[2], owner) and not is_staff(ctx):
        raise ApiError(403, "Only its creator, the channel owner or staff can change this.")
    return row


async def get_confetti(ctx: Context) -> dict[str, Any]:
    """GET /confetti/{id}: one confetti."""
    return render(_row(ctx, ctx.path_int("confetti")))


async def update_confetti(ctx: Context) -> dict[str, Any]:
    """PATCH /confetti/{id}: change name, particles, count or duration."""
    row = _editable(ctx)
    body = await ctx.json_object()
    values = _settings(body, creating=False)
    if not values:
        raise bad_request("Nothing to change: send name, particles, count or durationMs.", "body")
    confetti.update(ctx.store, row[0], values, ctx.iso_now())
    return render(_row(ctx, row[0]))


async def delete_confetti(ctx: Context) -> None:
    """DELETE /confetti/{id}: remove a confetti."""
    row = _editable(ctx)
    confetti.delete(ctx.store, row[0])


async def channel_confetti(ctx: Context) -> list[dict[str, Any]]:
    """GET /channels/{id}/confetti: the platform-wide confetti plus the channel's own."""
    channel = channel_ref(ctx)
    rows = confetti.usable(ctx.store, channel.id, _FIELDS)
    return [render(row) for row in rows]


_WRITE = ("channel:update:self",)
_SETTINGS = {field.name: json_schema(field) for field in CONFETTI_SETTINGS}

SCHEMAS: dict[str, Any] = {
    "ConfettiCreate": {
        "type": "object",
        "required": ["name", "particles"],
        "properties": {
            "channelId": {
                "type": "integer",
                "nullable": True,
                "description": "Default: the caller's channel; null: platform-wide (staff).",
            },
            **_SETTINGS,
        },
    },
    "ConfettiChange": {"type": "object", "properties": _SETTINGS},
}

routes = [
    Route(
        wire.CREATE_CONFETTI,
        create_confetti,
        summary="Create a confetti for a channel (or platform-wide, staff)",
        body={"$ref": "#/components/schemas/ConfettiCreate"},
        status=201,
        errors=(400, 401, 403, 404, 413, 461),
    ),
    Route(wire.CONFETTI, get_confetti, summary="One confetti", errors=(400, 404)),
    Route(
        wire.CONFETTI_UPDATE,
        update_confetti,
        summary="Change a confetti (creator, channel owner or staff)",
        body={"$ref": "#/components/schemas/ConfettiChange"},
        errors=(400, 401, 403, 404, 413, 461),
    ),
    Route(
        wire.CONFETTI_DELETE,
        delete_confetti,
        summary="Delete a confetti (creator, channel owner or staff)",
        status=204,
        errors=(400, 401, 403, 404, 461),
    ),
    Route(
        channel_wire.CHANNEL_CONFETTI,
        channel_confetti,
        summary="The confetti a channel may use: platform-wide plus its own",
        errors=(404, 461),
    ),
]
