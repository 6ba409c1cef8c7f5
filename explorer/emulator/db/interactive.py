"""Interactive games (``interactive_games``), their editors (``interactive_editors``), their
versions (``interactive_versions``) and the hosts viewers join them on
(``interactive_hosts``); the channels that run a game point at it (``interactiveGameId``)."""

from __future__ import annotations

from typing import Any, Literal

from explorer.emulator.db.engine import Store, Transaction
from explorer.wire.models import INTERACTIVE_GAME, INTERACTIVE_VERSION

SCHEMA = """
CREATE TABLE IF NOT EXISTS interactive_games (
    id INTEGER PRIMARY KEY, ownerId INTEGER NOT NULL, name TEXT NOT NULL, description TEXT,
    coverUrl TEXT, controlVersion TEXT NOT NULL, installation TEXT,
    createdAt TEXT NOT NULL, updatedAt TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS interactive_games_owner ON interactive_games (ownerId, id);

CREATE TABLE IF NOT EXISTS interactive_editors (
    gameId INTEGER NOT NULL REFERENCES interactive_games (id) ON DELETE CASCADE,
    userId INTEGER NOT NULL, addedAt TEXT NOT NULL, PRIMARY KEY (gameId, userId)
);
CREATE INDEX IF NOT EXISTS interactive_editors_user ON interactive_editors (userId, gameId);

CREATE TABLE IF NOT EXISTS interactive_versions (
    id INTEGER PRIMARY KEY,
    gameId INTEGER NOT NULL REFERENCES interactive_games (id) ON DELETE CASCADE,
    version TEXT NOT NULL, versionOrder INTEGER NOT NULL, state TEXT NOT NULL,
    changelog TEXT, installation TEXT, download TEXT, controlVersion TEXT NOT NULL,
    controls TEXT NOT NULL, createdAt TEXT NOT NULL, updatedAt TEXT NOT NULL,
    UNIQUE (gameId, version)
);
CREATE INDEX IF NOT EXISTS interactive_versions_state ON interactive_versions (state, gameId);

CREATE TABLE IF NOT EXISTS interactive_hosts (id INTEGER PRIMARY KEY, address TEXT UNIQUE);
"""

#: The stored fields of a game, in the order its rows hold them; a game's row then says
#: whether it has a published version (``hasPublishedVersions`` is not stored).
GAME_FIELDS: tuple[str, ...] = tuple(
    name for name in INTERACTIVE_GAME.names if name != "hasPublishedVersions"
)
#: The fields of a version, in the order its rows hold them.
VERSION_FIELDS = INTERACTIVE_VERSION.names

_PUBLISHED = (
    "EXISTS (SELECT 1 FROM interactive_versions v WHERE v.gameId = g.id AND v.state = 'published')"
)
_SELECT = (
    f"SELECT {', '.join(f'g.{f}' for f in GAME_FIELDS)}, {_PUBLISHED} FROM interactive_games g"
)
_EDITED_BY = "g.id IN (SELECT gameId FROM interactive_editors WHERE userId = ?)"
_SELECT_VERSION = f"SELECT {', '.join(VERSION_FIELDS)} FROM interactive_versions"

#: The game listings: the public catalogue (a published version), the user's own games, those
#: they edit for someone else, both, and those with a version awaiting review.
Listing = Literal["published", "owned", "shared", "editor", "reviewing"]
_LISTINGS: dict[Listing, str] = {
    "published": _PUBLISHED,
    "owned": "g.ownerId = ?",
    "shared": _EDITED_BY,
    "editor": f"(g.ownerId = ? OR {_EDITED_BY})",
    "reviewing": "EXISTS (SELECT 1 FROM interactive_versions v WHERE v.gameId = g.id "
    "AND v.state = 'pending')",
}


# --- games ----------------------------------------------------------------------------------


def game(db: Store, game_id: int) -> tuple[Any, ...] | None:
    """Game ``game_id``: its ``GAME_FIELDS``, then whether it has a published version."""
    return db.one(f"{_SELECT} WHERE g.id = ?", (game_id,))


def has_games(db: Store) -> bool:
    """Whether any game is stored."""
    return bool(db.scalar("SELECT COUNT(*) FROM interactive_games"))


def _condition(
    listing: Listing, user_id: int | None, name_like: str | None
) -> tuple[str, list[Any]]:
    """The condition of ``listing`` for ``user_id``, with a name ``LIKE`` pattern if given."""
    where = _LISTINGS[listing]
    clauses = [where]
    values: list[Any] = [user_id] * where.count("?")
    if name_like is not None:
        clauses.append("lower(g.name) LIKE lower(?) ESCAPE '\\'")
        values.append(name_like)
    return " AND ".join(clauses), values


def games_page(
    db: Store,
    listing: Listing,
    user_id: int | None,
    name_like: str | None,
    limit: int,
    offset: int,
) -> list[tuple[Any, ...]]:
    """One page of the games of ``listing`` for ``user_id`` (rows as :func:`game`'s) by id,
    those whose name matches ``name_like`` (a ``LIKE`` pattern escaped with ``\\``) if given."""
    condition, values = _condition(listing, user_id, name_like)
    return db.all(
        f"{_SELECT} WHERE {condition} ORDER BY g.id LIMIT ? OFFSET ?", (*values, limit, offset)
    )


def games_count(db: Store, listing: Listing, user_id: int | None, name_like: str | None) -> int:
    """How many games :func:`games_page` pages through."""
    condition, values = _condition(listing, user_id, name_like)
    total: int = db.scalar(f"SELECT COUNT(*) FROM interactive_games g WHERE {condition}", values)
    return total


def add_game(
    tx: Transaction, owner_id: int, values: dict[str, Any], created_at: str, updated_at: str
) -> int:
    """Store a game of ``owner_id`` with the columns of ``values``; returns its id."""
    game_id: int = tx.scalar(
        f"INSERT INTO interactive_games (ownerId, {', '.join(values)}, createdAt, updatedAt) "
        f"VALUES (?, {', '.join('?' * len(values))}, ?, ?) RETURNING id",
        (owner_id, *values.values(), created_at, updated_at),
    )
    return game_id


def update_game(tx: Transaction, game_id: int, values: dict[str, Any], updated_at: str) -> None:
    """Set the columns of ``values`` on game ``game_id`` and stamp ``updatedAt``."""
    sets = "".join(f"{column} = ?, " for column in values)
    tx.execute(
        f"UPDATE interactive_games SET {sets}updatedAt = ? WHERE id = ?",
        (*values.values(), updated_at, game_id),
    )


def delete_game(tx: Transaction, game_id: int, updated_at: str) -> None:
    """Delete game ``game_id`` with its versions and editors; the channels that ran it stop
    being interactive."""
    tx.execute(
        "UPDATE channels SET interactive = 0, interactiveGameId = NULL, updatedAt = ? "
        "WHERE interactiveGameId = ?",
        (updated_at, game_id),
    )
    tx.execute("DELETE FROM interactive_games WHERE id = ?", (game_id,))


def run_on_channel(tx: Transaction, game_id: int, owner_id: int) -> None:
    """Make the channel of user ``owner_id`` run game ``game_id`` (the seeded world's)."""
    tx.execute(
        "UPDATE channels SET interactive = 1, interactiveGameId = ? WHERE userId = ?",
        (game_id, owner_id),
    )


# --- editors --------------------------------------------------------------------------------


def is_editor(db: Store, game_id: int, user_id: int) -> bool:
    """Whether user ``user_id`` edits game ``game_id``."""
    found = db.one(
        "SELECT 1 FROM interactive_editors WHERE gameId = ? AND userId = ?", (game_id, user_id)
    )
    return found is not None


def editors(db: Store, game_id: int) -> list[tuple[int, str, str]]:
    """The editors of game ``game_id``: user id, username and when added, oldest first."""
    rows = db.all(
        "SELECT e.userId, u.username, e.addedAt FROM interactive_editors e "
        "JOIN users u ON u.id = e.userId WHERE e.gameId = ? ORDER BY e.addedAt, e.userId",
        (game_id,),
    )
    return [(user_id, name, added) for user_id, name, added in rows]


def add_editor(tx: Transaction, game_id: int, user_id: int, added_at: str) -> bool:
    """Let user ``user_id`` edit game ``game_id``; False when they did already."""
    added: int = tx.execute(
        "INSERT INTO interactive_editors (gameId, userId, addedAt) VALUES (?, ?, ?) "
        "ON CONFLICT DO NOTHING",
        (game_id, user_id, added_at),
    ).rowcount
    return bool(added)


def remove_editor(tx: Transaction, game_id: int, user_id: int) -> bool:
    """Stop user ``user_id`` editing game ``game_id``; False when they did not."""
    removed: int = tx.execute(
        "DELETE FROM interactive_editors WHERE gameId = ? AND userId = ?", (game_id, user_id)
    ).rowcount
    return bool(removed)


# --- versions -------------------------------------------------------------------------------


def version(db: Store, version_id: int) -> tuple[Any, ...] | None:
    """Version ``version_id`` (a row of ``VERSION_FIELDS``), or None."""
    return db.one(f"{_SELECT_VERSION} WHERE id = ?", (version_id,))


def latest_published(db: Store, game_id: int) -> tuple[Any, ...] | None:
    """The newest published version of game ``game_id`` (the one channels run), or None."""
    return db.one(
        f"{_SELECT_VERSION} WHERE gameId = ? AND state = 'published' "
        "ORDER BY versionOrder DESC LIMIT 1",
        (game_id,),
    )


def versions(db: Store, game_id: int, *, published_only: bool) -> list[tuple[Any, ...]]:
    """The versions of game ``game_id``, newest first (only the published ones, if asked)."""
    published = " AND state = 'published'" if published_only else ""
    return db.all(
        f"{_SELECT_VERSION} WHERE gameId = ?{published} ORDER BY versionOrder DESC", (game_id,)
    )


def version_named(db: Store | Transaction, game_id: int, name: str) -> int | None:
    """The id of game ``game_id``'s version ``name`` (``major.minor.patch``), or None."""
    found: int | None = db.scalar(
        "SELECT id FROM interactive_versions WHERE gameId = ? AND version = ?", (game_id, name)
    )
    return found


def add_version(
    tx: Transaction,
    game_id: int,
    state: str,
    values: dict[str, Any],
    created_at: str,
    updated_at: str,
) -> int:
    """Store a version of game ``game_id`` in ``state`` with the columns of ``values``, after
    the game's others (``versionOrder``); returns its id."""
    order = tx.scalar(
        "SELECT COALESCE(MAX(versionOrder), 0) + 1 FROM interactive_versions WHERE gameId = ?",
        (game_id,),
    )
    version_id: int = tx.scalar(
        f"INSERT INTO interactive_versions (gameId, versionOrder, state, {', '.join(values)}, "
        f"createdAt, updatedAt) VALUES (?, ?, ?, {', '.join('?' * len(values))}, ?, ?) "
        "RETURNING id",
        (game_id, order, state, *values.values(), created_at, updated_at),
    )
    return version_id


def update_version(
    tx: Transaction, version_id: int, values: dict[str, Any], updated_at: str
) -> None:
    """Set the columns of ``values`` on version ``version_id`` and stamp ``updatedAt``."""
    sets = "".join(f"{column} = ?, " for column in values)
    tx.execute(
        f"UPDATE interactive_versions SET {sets}updatedAt = ? WHERE id = ?",
        (*values.values(), updated_at, version_id),
    )


def touch_game(tx: Transaction, game_id: int, updated_at: str) -> None:
    """Stamp game ``game_id``'s ``updatedAt`` (one of its versions changed)."""
    tx.execute("UPDATE interactive_games SET updatedAt = ? WHERE id = ?", (updated_at, game_id))


def delete_version(tx: Transaction, version_id: int) -> None:
    """Delete version ``version_id``."""
    tx.execute("DELETE FROM interactive_versions WHERE id = ?", (version_id,))


# --- hosts ----------------------------------------------------------------------------------


def add_hosts(db: Store, addresses: tuple[str, ...]) -> None:
    """Store the hosts at ``addresses`` (those stored already are left as they are)."""
    with db.transaction() as tx:
        tx.executemany(
            "INSERT INTO interactive_hosts (address) VALUES (?) ON CONFLICT DO NOTHING",
            [(address,) for address in addresses],
        )


def hosts(db: Store) -> list[str]:
    """The addresses of the hosts, in id order."""
    return [row[0] for row in db.all("SELECT address FROM interactive_hosts ORDER BY id")]
