"""Interactive games: create, read, update and delete games, and manage their editors.

This module owns the routes of games and their editors (versions' routes are in
``interactive_versions``, the tables in ``db/interactive.py``). Who may do what with a game:

| who | sees drafts | edits game and versions | manages editors | deletes game |
|---|---|---|---|---|
| owner | yes | yes | yes | yes |
| editor | yes | yes | leaves only | no |
| staff | yes | reviews versions | no | yes |
| anyone else | no | no | no | no |

A game without a published version is visible only to those who see drafts (404 for the
rest); a visible game that the caller may not change answers 403. Listings: ``/games`` is the
public catalogue (games with a published version), ``/owned`` the caller's games, ``/shared``
those they edit for someone else, ``/editor`` both, and ``/reviewing`` (staff) the games
with a version awaiting review. Creating a first game earns the ``game-creator`` achievement.
Covers are uploaded through the shared upload flow (``uploads.store_upload``); ``coverUrl``
then serves the image, until the game is deleted.

Routes with a literal segment (``/games/owned``) win over ``/games/{game}`` and over
``interactive_hosts``' ``/interactive/{channel}``: the router orders routes by specificity
(:mod:`~explorer.emulator.routing`), not by module or declaration order.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from starlette.responses import Response

from explorer.emulator import names
from explorer.emulator.access import is_staff, require_staff
from explorer.emulator.context import Context
from explorer.emulator.db import interactive
from explorer.emulator.db import uploads as db_uploads
from explorer.emulator.db import users as db_users
from explorer.emulator.db.engine import Store, Transaction, dumps
from explorer.emulator.db.interactive import GAME_FIELDS
from explorer.emulator.listing import contains_pattern
from explorer.emulator.policy import Param, Route
from explorer.emulator.resources.achievements import award
from explorer.emulator.resources.uploads import store_upload
from explorer.emulator.responses import ApiError, JSONResponse, bad_request, not_found
from explorer.emulator.shapes import json_schema
from explorer.emulator.world import WORLD_NOW, iso
from explorer.wire import routes as wire
from explorer.wire.endpoint import Endpoint
from explorer.wire.models import GAME_TEXT_FIELDS, text_limits
from explorer.wire.query import MAX_PAGE, parse_list_query

#: Text fields of a game: the longest value each may hold.
GAME_TEXT = text_limits(GAME_TEXT_FIELDS)
_GAME_NOT_NULL = tuple(field.name for field in GAME_TEXT_FIELDS if not field.nullable)
#: The upload kind of game covers (distinct from any channel media kind, as ids may overlap).
COVER_KIND = "gameCover"


def render_game(row: tuple[Any, ...]) -> dict[str, Any]:
    """An InteractiveGame object from a game's row (``interactive.game``)."""
    game = dict(zip(GAME_FIELDS, row, strict=False))
    game["hasPublishedVersions"] = bool(row[len(GAME_FIELDS)])
    return game


@dataclass(frozen=True, slots=True)
class GameAccess:
    """A game and what the caller may do with it."""

    row: tuple[Any, ...]
    owner: bool
    editor: bool
    staff: bool

    @property
    def id(self) -> int:
        """The game's id."""
        return int(self.row[0])

    @property
    def can_edit(self) -> bool:
        """Owner or editor: may change the game and its versions."""
        return self.owner or self.editor

    @property
    def sees_drafts(self) -> bool:
        """May see unpublished versions (and games with nothing published)."""
        return self.can_edit or self.staff

    def require_edit(self) -> None:
        """403 unless the caller is the owner or an editor."""
        if not self.can_edit:
            raise ApiError(403, "Only the game's owner or its editors can do this.")

    def require_owner(self, *, staff_too: bool = False) -> None:
        """403 unless the caller owns the game (or is staff, when ``staff_too``)."""
        if not (self.owner or (staff_too and self.staff)):
            raise ApiError(403, "Only the game's owner can do this.")


def game_access(ctx: Context, game_id: int) -> GameAccess:
    """The game ``game_id`` as the caller may see it; 404 when missing or hidden from them."""
    row = interactive.game(ctx.store, game_id)
    if row is None:
        raise not_found("Game")
    user_id = ctx.caller.user_id if ctx.caller else None
    editor = user_id is not None and interactive.is_editor(ctx.store, game_id, user_id)
    access = GameAccess(row, row[1] == user_id, editor, is_staff(ctx))
    if not row[len(GAME_FIELDS)] and not access.sees_drafts:
        raise not_found("Game")
    return access


def text_values(
    body: dict[str, Any],
    limits: dict[str, int],
    *,
    required: tuple[str, ...] = (),
    not_null: tuple[str, ...] = (),
) -> dict[str, str | None]:
    """The text fields of ``limits`` that ``body`` sets, validated (400 naming the field).

    Fields in ``required`` must be present; those and the ``not_null`` ones must be non-empty
    strings, the others may also be null.
    """
    values: dict[str, str | None] = {}
    for field, limit in limits.items():
        if field not in body and field not in required:
            continue
        value = body.get(field)
        nullable = field not in required and field not in not_null
        if value is None and nullable:
            values[field] = None
        elif isinstance(value, str) and value.strip() and len(value) <= limit:
            values[field] = value
        else:
            allowed = " or null" if nullable else ""
            raise bad_request(f"{field} must be a string of 1-{limit} characters{allowed}.", field)
    name = values.get("name")
    if name is not None and (wrong := names.problem(name)) is not None:
        raise bad_request(f"name {wrong}.", "name")
    return values


def seed(store: Store, world_seed: int) -> None:
    """A published game of the streamer (edited by the moderator, run on their channel) and a
    private prototype of the viewer, once per database."""
    if interactive.has_games(store):
        return
    users = db_users.ids_by_name(store, ("streamer", "moderator", "viewer"))
    made = iso(WORLD_NOW - timedelta(days=60))
    when = iso(WORLD_NOW)
    controls = dumps({"scenes": [{"sceneID": "default", "controls": []}]})
    with store.transaction() as tx:
        games = {}
        for owner, name, description in (
            ("streamer", "Streamer Trivia", "Answer questions live to win sparks."),
            ("viewer", "Prototype Racer", "A racing game in the works."),
        ):
            game = {
                "name": name,
                "description": description,
                "controlVersion": "2.0",
                "installation": "Add the board to your stream.",
            }
            games[owner] = interactive.add_game(tx, users[owner], game, made, when)
        interactive.add_editor(tx, games["streamer"], users["moderator"], made)
        for owner, version, state, changelog, at in (
            ("streamer", "1.0.0", "published", "First release.", made),
            ("streamer", "1.1.0", "pending", "More questions.", when),
            ("streamer", "1.2.0", "draft", "Team mode.", when),
            ("viewer", "0.1.0", "draft", "Prototype.", when),
        ):
            content = {
                "version": version,
                "changelog": changelog,
                "installation": None,
                "download": None,
                "controlVersion": "2.0",
                "controls": controls,
            }
            interactive.add_version(tx, games[owner], state, content, at, at)
        interactive.run_on_channel(tx, games["streamer"], users["streamer"])


def _games_page(ctx: Context, listing: interactive.Listing, user_id: int | None) -> Response:
    """One page of the games of ``listing`` for ``user_id`` (and the ``q`` name search), by
    id."""
    query = parse_list_query(ctx.params, {}, ())
    like = contains_pattern(query.q) if query.q else None
    offset = query.page * query.limit
    rows = interactive.games_page(ctx.store, listing, user_id, like, query.limit, offset)
    headers = {}
    if query.count:
        total = interactive.games_count(ctx.store, listing, user_id, like)
        headers["X-Total-Count"] = str(total)
    return JSONResponse([render_game(row) for row in rows], headers=headers)


async def list_games(ctx: Context) -> Response:
    """GET /interactive/games: the public catalogue (games with a published version)."""
    return _games_page(ctx, "published", None)


async def owned_games(ctx: Context) -> Response:
    """GET /interactive/games/owned: the caller's own games."""
    return _games_page(ctx, "owned", ctx.user_id())


async def shared_games(ctx: Context) -> Response:
    """GET /interactive/games/shared: games the caller edits for someone else."""
    return _games_page(ctx, "shared", ctx.user_id())


async def editor_games(ctx: Context) -> Response:
    """GET /interactive/games/editor: every game the caller may edit (owned or shared)."""
    return _games_page(ctx, "editor", ctx.user_id())


async def reviewing_games(ctx: Context) -> Response:
    """GET /interactive/games/reviewing: games with a version awaiting review (staff)."""
    require_staff(ctx)
    return _games_page(ctx, "reviewing", None)


async def create_game(ctx: Context) -> Response:
    """POST /interactive/games: create a game owned by the caller."""
    body = await ctx.json_object()
    values = text_values(body, GAME_TEXT, required=("name",), not_null=_GAME_NOT_NULL)
    values.setdefault("controlVersion", "2.0")
    owner, now = ctx.user_id(), ctx.iso_now()
    with ctx.store.transaction() as tx:
        game_id = interactive.add_game(tx, owner, values, now, now)
        award(tx, owner, "game-creator", now)
    return JSONResponse(render_game(game_access(ctx, game_id).row), status_code=201)


async def get_game(ctx: Context) -> dict[str, Any]:
    """GET /interactive/games/{game}: one game."""
    return render_game(game_access(ctx, ctx.path_int("game")).row)


async def update_game(ctx: Context) -> dict[str, Any]:
    """PUT /interactive/games/{game}: change name, description, controlVersion, installation."""
    access = game_access(ctx, ctx.path_int("game"))
    access.require_edit()
    body = await ctx.json_object()
    values = text_values(body, GAME_TEXT, not_null=_GAME_NOT_NULL)
    if not values:
        raise bad_request(f"Nothing to change: send {', '.join(GAME_TEXT)}.", "body")
    with ctx.store.transaction() as tx:
        interactive.update_game(tx, access.id, values, ctx.iso_now())
    return render_game(game_access(ctx, access.id).row)


async def delete_game(ctx: Context) -> None:
    """DELETE /interactive/games/{game}: delete a game with its versions, editors and cover;
    channels that ran it stop being interactive."""
    access = game_access(ctx, ctx.path_int("game"))
    access.require_owner(staff_too=True)
    with ctx.store.transaction() as tx:
        interactive.delete_game(tx, access.id, ctx.iso_now())
        db_uploads.delete(tx, COVER_KIND, access.id)


async def upload_cover(ctx: Context) -> dict[str, Any]:
    """POST /interactive/games/{game}/cover: upload the cover image (owner or editor); the
    game's ``coverUrl`` points at it from the same transaction."""
    access = game_access(ctx, ctx.path_int("game"))
    access.require_edit()
    updated = ctx.iso_now()

    def link(tx: Transaction, resource: dict[str, Any]) -> None:
        interactive.update_game(tx, access.id, {"coverUrl": resource["url"]}, updated)

    return await store_upload(ctx, COVER_KIND, access.id, link)


def _editors(ctx: Context, game_id: int) -> list[dict[str, Any]]:
    rows = interactive.editors(ctx.store, game_id)
    return [{"userId": u, "username": name, "addedAt": added} for u, name, added in rows]


async def list_editors(ctx: Context) -> list[dict[str, Any]]:
    """GET /interactive/games/{game}/editors: who may edit the game besides its owner."""
    return _editors(ctx, game_access(ctx, ctx.path_int("game")).id)


async def add_editor(ctx: Context) -> Response:
    """POST /interactive/games/{game}/editors: let another user edit the game (owner only)."""
    access = game_access(ctx, ctx.path_int("game"))
    access.require_owner()
    body = await ctx.json_object()
    user_id = body.get("userId")
    if isinstance(user_id, bool) or not isinstance(user_id, int):
        raise bad_request("userId must be a user id.", "userId")
    if user_id == access.row[1]:
        raise bad_request("The owner edits the game already.", "userId")
    if not db_users.is_undeleted(ctx.store, user_id):
        raise not_found("User")
    with ctx.store.transaction() as tx:
        added = interactive.add_editor(tx, access.id, user_id, ctx.iso_now())
    if not added:
        raise ApiError(409, "That user is an editor already.")
    editor = next(e for e in _editors(ctx, access.id) if e["userId"] == user_id)
    return JSONResponse(editor, status_code=201)


async def remove_editor(ctx: Context) -> None:
    """DELETE /interactive/games/{game}/editors/{user}: the owner removes an editor, or an
    editor leaves."""
    access = game_access(ctx, ctx.path_int("game"))
    user_id = ctx.path_int("user")
    if not (access.owner or user_id == ctx.user_id()):
        raise ApiError(403, "Only the game's owner can remove another editor.")
    with ctx.store.transaction() as tx:
        removed = interactive.remove_editor(tx, access.id, user_id)
    if not removed:
        raise not_found("Editor")


_PAGE_PARAMS = (
    Param("page", {"type": "integer", "minimum": 0, "maximum": MAX_PAGE}, "0-based page number"),
    Param("limit", {"type": "integer", "minimum": 1, "maximum": 100}, "page size (default 50)"),
    Param("q", {"type": "string"}, "name contains"),
    Param("noCount", {"type": "string", "enum": ["0", "1", "true", "false"]}),
)
_GAME_TEXT_SCHEMA = {field.name: json_schema(field) for field in GAME_TEXT_FIELDS}

SCHEMAS: dict[str, Any] = {
    "InteractiveGameCreate": {
        "type": "object",
        "required": ["name"],
        "properties": _GAME_TEXT_SCHEMA,
    },
    "InteractiveGameChange": {"type": "object", "properties": _GAME_TEXT_SCHEMA},
    "InteractiveEditorAdd": {
        "type": "object",
        "required": ["userId"],
        "properties": {"userId": {"type": "integer"}},
    },
}


def _listing(endpoint: Endpoint, handler: Any, summary: str) -> Route:
    """A signed-in listing of games under ``/interactive/games``."""
    return Route(
        endpoint, handler, summary=summary, params=_PAGE_PARAMS, errors=(400, 401, 403, 461)
    )


routes = [
    Route(
        wire.GAMES_PUBLISHED,
        list_games,
        summary="Games with a published version",
        params=_PAGE_PARAMS,
        errors=(400,),
    ),
    Route(
        wire.CREATE_GAME,
        create_game,
        summary="Create a game owned by the caller",
        body={"$ref": "#/components/schemas/InteractiveGameCreate"},
        status=201,
        errors=(400, 401, 403, 413, 461),
    ),
    _listing(wire.GAMES_OWNED, owned_games, "The caller's own games"),
    _listing(wire.GAMES_SHARED, shared_games, "Games the caller edits for others"),
    _listing(wire.GAMES_EDITOR, editor_games, "Every game the caller may edit"),
    _listing(
        wire.GAMES_REVIEWING,
        reviewing_games,
        "Games with a version awaiting review (staff)",
    ),
    Route(wire.GAME, get_game, summary="One game", errors=(400, 404, 461)),
    Route(
        wire.GAME_UPDATE,
        update_game,
        summary="Change a game (owner or editor)",
        body={"$ref": "#/components/schemas/InteractiveGameChange"},
        errors=(400, 401, 403, 404, 413, 461),
    ),
    Route(
        wire.GAME_DELETE,
        delete_game,
        summary="Delete a game with its versions (owner or staff)",
        status=204,
        errors=(400, 401, 403, 404, 461),
    ),
    Route(
        wire.GAME_SET_COVER,
        upload_cover,
        summary="Upload the game's cover (PNG or JPEG; owner or editor)",
        body={"content": "multipart/form-data"},
        status=201,
        errors=(400, 401, 403, 404, 413, 415, 461),
    ),
    Route(wire.GAME_EDITORS, list_editors, summary="The game's editors", errors=(400, 404, 461)),
    Route(
        wire.GAME_ADD_EDITOR,
        add_editor,
        summary="Add an editor (owner only)",
        body={"$ref": "#/components/schemas/InteractiveEditorAdd"},
        status=201,
        errors=(400, 401, 403, 404, 409, 413, 461),
    ),
    Route(
        wire.GAME_REMOVE_EDITOR,
        remove_editor,
        summary="Remove an editor (owner), or leave (the editor)",
        status=204,
        errors=(400, 401, 403, 404, 461),
    ),
]
