"""The seeded world's bulk load: types, users, channels and roles in one filling transaction,
with the indexes and triggers of users and channels set aside, then sampled statistics.

The rows come from ``world.py`` (a pure function of the seed); this module only writes them,
with one ``executemany`` per chunk and table (no Python per row); columns every row shares,
or that follow from other columns, are written by the INSERT itself (:data:`Layout`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from explorer.emulator.db.engine import LATER_INDEXES, Store

#: One chunk of the world: its user rows and its channel rows.
Chunk = tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]
#: A bulk-loaded table's layout: the columns each row binds, in order; the columns every row
#: holds the same value in (column: value), written into the INSERT once as literals; and the
#: columns written as SQL expressions of bound values (column: expression, ``{name}`` standing
#: for bound column ``name``'s value; a bound column named here is written as its expression).
Layout = tuple[tuple[str, ...], dict[str, Any], dict[str, str]]


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
    users = _insert_sql("users", *layouts[0])
    rows = _insert_sql("channels", *layouts[1])
    with store.filling() as conn:
        store.insert_many("types", types)
        later = LATER_INDEXES if store.path != ":memory:" else ()
        with store.set_aside(("users", "channels"), later):
            for user_rows, channel_rows in chunks:
                conn.executemany(users, user_rows)
                conn.executemany(rows, channel_rows)
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
    store.conn.execute("PRAGMA analysis_limit = 1000")
    store.conn.execute("ANALYZE")


def _insert_sql(
    table: str, columns: tuple[str, ...], same: dict[str, Any], derived: dict[str, str]
) -> str:
    """An INSERT binding ``columns`` (``?1``, ``?2``, ...), writing the columns in ``derived``
    as their expressions of those and the values in ``same`` as literals."""
    marks = {name: f"?{number}" for number, name in enumerate(columns, start=1)}
    written = {name: derived.get(name, "{" + name + "}") for name in columns} | derived
    for name, sql in written.items():
        for bound, mark in marks.items():
            sql = sql.replace("{" + bound + "}", mark)
        written[name] = sql
    written |= {name: _literal(value) for name, value in same.items()}
    return f"INSERT INTO {table} ({', '.join(written)}) VALUES ({', '.join(written.values())})"


def _literal(value: Any) -> str:
    """``value`` (None, an int or a str) as an SQL literal."""
    if value is None:
        return "NULL"
    if isinstance(value, int):
        return str(value)
    return "'" + str(value).replace("'", "''") + "'"
