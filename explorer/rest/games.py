"""Interactive games and their versions as handles: ``api.game(id)``, ``api.game_version(id)``.

A game is a record with a cover, a team of editors and versions; a version moves from draft to
pending review to published. Listings of games are on the client (``api.games()``).
"""

from __future__ import annotations

from typing import Any, Unpack

import pandas as pd

from explorer.rest.endpoints import Result
from explorer.rest.handle import Call, Handle, Image, ListingOptions, M, endpoint
from explorer.wire import routes as wire


class Game(Handle[M]):
    """One interactive game, by id: ``api.game(7)``."""

    _bound = ("game_id",)

    def __repr__(self) -> str:
        return f"<Game {self._values['game_id']!r} at {self.base_url} as {self._identity()}>"

    @endpoint(wire.GAME)
    def info(self) -> Call[pd.DataFrame]:
        """The game, as one row."""
        return Call()

    @endpoint(wire.GAME_UPDATE)
    def update(self, **changes: Any) -> Call[pd.DataFrame]:
        """Change the ``name``, ``description``, ``controlVersion`` or ``installation`` (owner
        or editor); the game afterwards."""
        return Call(json=changes)

    @endpoint(wire.GAME_DELETE, result=Result.NONE)
    def delete(self) -> Call[None]:
        """Delete the game with all its versions (owner or staff)."""
        return Call()

    @endpoint(wire.GAME_SET_COVER)
    def set_cover(self, image: Image) -> Call[pd.DataFrame]:
        """Upload the cover (owner or editor; PNG or JPEG bytes or file path)."""
        return Call(image=image)

    @endpoint(wire.GAME_EDITORS, result=Result.TABLE)
    def editors(self, **options: Unpack[ListingOptions]) -> Call[pd.DataFrame]:
        """The game's editors, indexed by user id."""
        return Call(**options)

    @endpoint(wire.GAME_ADD_EDITOR)
    def add_editor(self, user_id: int) -> Call[pd.DataFrame]:
        """Let a user edit the game (owner); the new editor as one row."""
        return Call(json={"userId": user_id})

    @endpoint(wire.GAME_REMOVE_EDITOR, result=Result.NONE)
    def remove_editor(self, user_id: int) -> Call[None]:
        """Remove an editor (owner), or stop editing the game (the editor themself)."""
        return Call()

    @endpoint(wire.GAME_VERSIONS, result=Result.TABLE)
    def versions(self, **options: Unpack[ListingOptions]) -> Call[pd.DataFrame]:
        """The game's versions, newest first, indexed by id (drafts only for its team)."""
        return Call(**options)

    @endpoint(wire.GAME_ADD_VERSION)
    def add_version(self, version: str, **fields: Any) -> Call[pd.DataFrame]:
        """Add a draft ``major.minor.patch`` version (owner or editor); ``fields`` may give
        ``changelog``, ``installation``, ``download``, ``controlVersion`` and ``controls``.
        The version as one row."""
        return Call(json={"gameId": self._values["game_id"], "version": version, **fields})


class GameVersion(Handle[M]):
    """One version of an interactive game, by id: ``api.game_version(3)``."""

    _bound = ("version_id",)

    def __repr__(self) -> str:
        key = self._values["version_id"]
        return f"<GameVersion {key!r} at {self.base_url} as {self._identity()}>"

    @endpoint(wire.GAME_VERSION)
    def info(self) -> Call[pd.DataFrame]:
        """The version, as one row."""
        return Call()

    @endpoint(wire.GAME_VERSION_UPDATE)
    def update(self, **changes: Any) -> Call[pd.DataFrame]:
        """Change a draft's content and/or move its ``state`` (``pending`` submits it for
        review, ``draft`` withdraws it; staff publish or reject). The version afterwards."""
        return Call(json=changes)

    @endpoint(wire.GAME_VERSION_DELETE, result=Result.NONE)
    def delete(self) -> Call[None]:
        """Delete an unpublished version (owner or editor)."""
        return Call()
