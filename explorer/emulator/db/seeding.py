"""The seeded world's bulk load: types, users, channels and roles in one filling transaction,
with the indexes and triggers of users and channels set aside, then sampled statistics.

The rows come from ``world.py`` (a pure function of the seed); this module only writes them,
with one bulk load per chunk and table (:meth:`~explorer.emulator.db.engine.Store.loading`: an
``executemany`` on SQLite, no Python per row; a binary ``COPY`` on PostgreSQL).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

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
    beside: Callable[[], object] | None = None,
) -> None:
    """Write the world for ``seed`` (``channels`` channels) into an empty store, in one
    transaction: ``types``, the ``chunks`` of user and channel rows (laid out as ``layouts``),
    the demo ``accounts``' (password hash, groups, user id: users of the first chunk), the
    channel ``roles``, and the ``seed`` and ``channels`` meta keys.

    Users and channels load with their indexes and triggers set aside, rebuilt once after; in
    a file, the :data:`~explorer.emulator.db.engine.LATER_INDEXES` are left to
    :class:`~explorer.emulator.db.engine.LaterIndexes`. Where the database server loads
    (:attr:`~explorer.emulator.db.engine.Store.loads_beside`), each chunk is made in a thread
    while the server loads the one before it, the two on two cores. ``beside`` (work of the
    caller's that needs no database) runs in a thread while the database builds the indexes
    set aside, which leaves the GIL free (SQLite's C code, or a wait on the server); its
    failure fails the fill.
    """
    with (
        ThreadPoolExecutor(1, thread_name_prefix="seeding-beside") as pool,
        store.filling() as conn,
    ):
        store.insert_many("types", types)
        later = LATER_INDEXES if store.defers_indexes else ()
        with (
            store.set_aside(("users", "channels"), later),
            store.loading("users", *layouts[0]) as load_users,
            store.loading("channels", *layouts[1]) as load_channels,
        ):
            made = ahead(chunks) if store.loads_beside else chunks
            for number, (user_rows, channel_rows) in enumerate(made):
                load_users(user_rows)
                if number == 0:
                    # The accounts are the first users: updated while the table holds one
                    # chunk, its key set aside (each update reads every row loaded so far).
                    conn.executemany(
                        "UPDATE users SET password_hash = ?, groups = ? WHERE id = ?", accounts
                    )
                load_channels(channel_rows)
            # The indexes set aside are built as this block ends.
            done = pool.submit(beside) if beside is not None else None
        store.insert_many("channel_roles", roles)
        conn.execute(
            "INSERT INTO meta (key, value) VALUES ('seed', ?), ('channels', ?)",
            (str(seed), str(channels)),
        )
        if done is not None:
            done.result()


T = TypeVar("T")
_END: Any = object()


def ahead(items: Iterable[T]) -> Iterator[T]:
    """``items`` in order, the next one made in a thread while the caller uses this one."""
    made = iter(items)
    with ThreadPoolExecutor(1, thread_name_prefix="seeding") as pool:
        coming = pool.submit(next, made, _END)
        while (item := coming.result()) is not _END:
            coming = pool.submit(next, made, _END)
            yield item


def analyze(store: Store) -> None:
    """Gather the planner's statistics from a sample of each index: exact enough for the
    planner, quick at any size."""
    store.analyze()
