"""Interactive game versions: drafts, review and publication.

A version belongs to one game (access rules in ``interactive_games``, tables in
``db/interactive.py``). States::

    draft --submit (owner/editor)--> pending --publish (staff)--> published
      ^                                 |
      +--- withdraw (owner/editor) -----+
      +--- reject (staff) --------------+

Only a draft's content (``version``, ``changelog``, ``installation``, ``download``,
``controlVersion``, ``controls``) can change; a published version is final and cannot be
deleted. A move is a PUT with ``state``; a move not drawn above answers 409, a move the caller
may not make 403. Unpublished versions are visible only to the owner, editors and staff.
``version`` is ``major.minor.patch``, unique within the game; ``versionOrder`` numbers a
game's versions in creation order.
"""

from __future__ import annotations

import re
from typing import Any

import orjson
from starlette.responses import Response

from explorer.emulator.context import Context
from explorer.emulator.db import interactive
from explorer.emulator.db.engine import Store, Transaction, dumps
from explorer.emulator.db.interactive import VERSION_FIELDS
from explorer.emulator.policy import Route
from explorer.emulator.resources.interactive_games import (
    GAME_FIELDS,
    GameAccess,
    game_access,
    text_values,
)
from explorer.emulator.responses import ApiError, JSONResponse, bad_request, not_found
from explorer.emulator.shapes import json_schema
from explorer.wire import routes as wire
from explorer.wire.models import VERSION_CONTENT_FIELDS, VERSION_STATES, text_limits

STATES = VERSION_STATES
#: Allowed moves, and who may make each: "editor" (owner or editor) and/or "staff".
TRANSITIONS: dict[tuple[str, str], frozenset[str]] = {
    ("draft", "pending"): frozenset({"editor"}),
    ("pending", "draft"): frozenset({"editor", "staff"}),
    ("pending", "published"): frozenset({"staff"}),
}
_STATE = VERSION_FIELDS.index("state")
#: Text content of a version: the longest value each may hold.
VERSION_TEXT = text_limits(VERSION_CONTENT_FIELDS)
_NOT_NULL = tuple(field.name for field in VERSION_CONTENT_FIELDS if not field.nullable)
_SEMVER = re.compile(r"[0-9]{1,9}\.[0-9]{1,9}\.[0-9]{1,9}")


def render_version(row: tuple[Any, ...]) -> dict[str, Any]:
    """An InteractiveVersion object from a row of ``VERSION_FIELDS``."""
    version = dict(zip(VERSION_FIELDS, row, strict=True))
    version["controls"] = orjson.loads(version["controls"])
    return version


def _content(body: dict[str, Any], *, creating: bool) -> dict[str, Any]:
    """The validated content columns ``body`` sets."""
    values: dict[str, Any] = text_values(
        body, VERSION_TEXT, required=("version",) if creating else (), not_null=_NOT_NULL
    )
    if "version" in values and not _SEMVER.fullmatch(values["version"]):
        raise bad_request("version must be major.minor.patch, e.g. 1.0.0.", "version")
    if "controls" in body:
        if not isinstance(body["controls"], dict):
            raise bad_request("controls must be a JSON object.", "controls")
        values["controls"] = dumps(body["controls"])
    return values


def _version(ctx: Context) -> tuple[tuple[Any, ...], GameAccess]:
    """The version of the path and its game's access; 404 when the caller may not see it."""
    row = interactive.version(ctx.store, ctx.path_int("version"))
    if row is None:
        raise not_found("Version")
    access = game_access(ctx, row[1])
    if row[_STATE] != "published" and not access.sees_drafts:
        raise not_found("Version")
    return row, access


def _check_unique(
    db: Store | Transaction, game_id: int, version: str, own_id: int | None = None
) -> None:
    """409 when game ``game_id`` has a version ``version`` other than ``own_id``."""
    clash = interactive.version_named(db, game_id, version)
    if clash is not None and clash != own_id:
        raise ApiError(409, f"Version {version} of this game exists already.")


async def create_version(ctx: Context) -> Response:
    """POST /interactive/versions: add a draft version to a game (owner or editor)."""
    body = await ctx.json_object()
    game_id = body.get("gameId")
    if isinstance(game_id, bool) or not isinstance(game_id, int):
        raise bad_request("gameId must be a game id.", "gameId")
    access = game_access(ctx, game_id)
    access.require_edit()
    values = _content(body, creating=True)
    values.setdefault("controlVersion", access.row[GAME_FIELDS.index("controlVersion")])
    values.setdefault("controls", "{}")
    now = ctx.iso_now()
    with ctx.store.transaction() as tx:
        _check_unique(tx, game_id, values["version"])
        version_id = interactive.add_version(tx, game_id, "draft", values, now, now)
        interactive.touch_game(tx, game_id, now)
    row = interactive.version(ctx.store, version_id)
    assert row is not None
    return JSONResponse(render_version(row), status_code=201)


async def get_version(ctx: Context) -> dict[str, Any]:
    """GET /interactive/versions/{version}: one version."""
    return render_version(_version(ctx)[0])


def _check_move(access: GameAccess, current: str, target: str) -> None:
    """409 for a move the state machine does not have, 403 for one the caller may not make."""
    allowed = TRANSITIONS.get((current, target))
    if allowed is None:
        raise ApiError(409, f"A {current} version cannot become {target}.")
    if not (("editor" in allowed and access.can_edit) or ("staff" in allowed and access.staff)):
        who = " or ".join("staff" if role == "staff" else "its editors" for role in sorted(allowed))
        raise ApiError(403, f"Only {who} can move a version from {current} to {target}.")


async def update_version(ctx: Context) -> dict[str, Any]:
    """PUT /interactive/versions/{version}: change a draft's content and/or move its state."""
    row, access = _version(ctx)
    if not (access.can_edit or access.staff):
        raise ApiError(403, "Only the game's owner, its editors or staff can change a version.")
    body = await ctx.json_object()
    values = _content(body, creating=False)
    current, target = row[_STATE], body.get("state", row[_STATE])
    if target not in STATES:
        raise bad_request(f"state must be one of {', '.join(STATES)}.", "state")
    if not values and target == current:
        raise bad_request("Nothing to change: send content fields or a new state.", "body")
    if values:
        access.require_edit()
        if current != "draft":
            raise ApiError(409, f"Only a draft can change; this version is {current}.")
        if "version" in values:
            _check_unique(ctx.store, access.id, values["version"], own_id=row[0])
    if target != current:
        _check_move(access, current, target)
        values["state"] = target
    now = ctx.iso_now()
    with ctx.store.transaction() as tx:
        interactive.update_version(tx, row[0], values, now)
        interactive.touch_game(tx, access.id, now)
    return render_version(_version(ctx)[0])


async def delete_version(ctx: Context) -> None:
    """DELETE /interactive/versions/{version}: delete an unpublished version (owner/editor)."""
    row, access = _version(ctx)
    access.require_edit()
    if row[_STATE] == "published":
        raise ApiError(409, "A published version cannot be deleted.")
    with ctx.store.transaction() as tx:
        interactive.delete_version(tx, row[0])


async def game_versions(ctx: Context) -> list[dict[str, Any]]:
    """GET /interactive/games/{game}/versions: the game's versions, newest first (published
    only, unless the caller sees drafts)."""
    access = game_access(ctx, ctx.path_int("game"))
    rows = interactive.versions(ctx.store, access.id, published_only=not access.sees_drafts)
    return [render_version(row) for row in rows]


_CONTENT_SCHEMA = {field.name: json_schema(field) for field in VERSION_CONTENT_FIELDS}

SCHEMAS: dict[str, Any] = {
    "InteractiveVersionCreate": {
        "type": "object",
        "required": ["gameId", "version"],
        "properties": {"gameId": {"type": "integer"}, **_CONTENT_SCHEMA},
    },
    "InteractiveVersionChange": {
        "type": "object",
        "properties": {
            **_CONTENT_SCHEMA,
            "state": {
                "type": "string",
                "enum": list(STATES),
                "description": "draft->pending (editors), pending->draft (editors or staff), "
                "pending->published (staff)",
            },
        },
    },
}

routes = [
    Route(
        wire.GAME_VERSIONS,
        game_versions,
        summary="A game's versions, newest first",
        errors=(400, 404, 461),
    ),
    Route(
        wire.GAME_ADD_VERSION,
        create_version,
        summary="Add a draft version to a game (owner or editor)",
        body={"$ref": "#/components/schemas/InteractiveVersionCreate"},
        status=201,
        errors=(400, 401, 403, 404, 409, 413, 461),
    ),
    Route(
        wire.GAME_VERSION,
        get_version,
        summary="One version",
        errors=(400, 404, 461),
    ),
    Route(
        wire.GAME_VERSION_UPDATE,
        update_version,
        summary="Change a draft and/or move its state (submit, withdraw, reject, publish)",
        body={"$ref": "#/components/schemas/InteractiveVersionChange"},
        errors=(400, 401, 403, 404, 409, 413, 461),
    ),
    Route(
        wire.GAME_VERSION_DELETE,
        delete_version,
        summary="Delete an unpublished version (owner or editor)",
        status=204,
        errors=(400, 401, 403, 404, 409, 461),
    ),
]
