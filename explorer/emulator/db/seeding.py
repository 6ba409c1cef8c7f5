"""The seeded world's bulk load: types, users, channels and roles in one filling transaction,
with the indexes and triggers of users and channels set aside, then sampled statistics.

The rows come from ``world.py`` (a pure function of the seed); this module only writes them,
with one bulk load per chunk and table (:meth:`~explorer.emulator.db.engine.Store.load`: an
``executemany`` on SQLite, no Python per row; ``COPY`` on PostgreSQL).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from explorer.emulator.db.engine import LATER_INDEXES, Store

#: One chunk of the world: its user rows and its channel rows.
Chunk = tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]
#: A bulk-loaded table's layout: the columns each row binds, in order, and the columns every
#: row holds the same value in (column: value), written into the INSERT once as literals.
Layout = tuple[tuple[str, ...], dict[str, Any]]


def fill(
    store: Store,
    seed: int,
    channels: int,
    types: list[dict[str, Any]],
    roles: list[dict[str, Any]],
    chunks: Iterable[Chunk],
    accounts: list[tuple[str | None, str, int]],
    layouts: tuple[Layout, Layout],
) -> None:
    """Write the world for ``seed`` (``channels`` channels) into an empty store, in one
    transaction: ``types``, the ``chunks`` of user and channel rows (laid out as ``layouts``),
    the demo ``accounts``' (password hash, groups, user id), the channel ``roles``, and the
    ``seed`` and ``channels`` meta keys.

    Users and channels load with their indexes and triggers set aside, rebuilt once after; in
    a file, the :data:`~explorer.emulator.db.engine.LATER_INDEXES` are left to
    :class:`~explorer.emulator.db.engine.LaterIndexes`.
    """
    with store.filling() as conn:
        store.insert_many("types", types)
        later = LATER_INDEXES if store.defers_indexes else ()
        with store.set_aside(("users", "channels"), later):
            for user_rows, channel_rows in chunks:
                store.load("users", *layouts[0], user_rows)
                store.load("channels", *layouts[1], channel_rows)
            conn.executemany(
                "UPDATE users SET password_hash = ?, groups = ? WHERE id = ?", accounts
            )
        store.insert_many("channel_roles", roles)
        conn.execute(
            "INSERT INTO meta (key, value) VALUES ('seed', ?), ('channels', ?)",
            (str(seed), str(channels)),
        )


def analyze(store: Store) -> None:
    """Gather the planner's statistics from a sample of each index: exact enough for the
    planner, quick at any size."""
    store.analyze()
