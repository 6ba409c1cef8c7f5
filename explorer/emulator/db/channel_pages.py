"""Pages of channel listings (``GET /channels``): the statements behind ``listing.py``'s
keyset seeks, counts and rankings. ``listing.py`` decides which to run (cursors, rankings,
bisection); this module holds their SQL: a listing's filter (:func:`where`), the reads of a
page's ids and sort keys past a key or from an end (:func:`entries`), its rows
(:func:`rows`), a count and the scan a ranking is built from (:func:`scan_listed`).

An order is ``(field, descending)`` terms of channel fields, named by the platform's code
(the wire's records), never by a request.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from explorer.emulator.db.channels import JOINED, WITH_OWNER
from explorer.emulator.db.engine import Reads, Store
from explorer.wire.query import Condition
from explorer.wire.records import CHANNEL

#: The channels a listing reads (``c``): every filter and order names its columns so.
LISTED = "channels c"
#: Fields whose ranges are counted from a ranking index (``db/engine.py``), not the table.
INDEXED = frozenset({"viewersTotal", "viewersCurrent", "numFollowers"})

_SQL_OPS = {"eq": "=", "ne": "!=", "gt": ">", "gte": ">=", "lt": "<", "lte": "<="}
_SCOPE_COLUMNS = {
    "names": ("c.token",),
    "titles": ("c.name",),
    "types": ("t.name",),
    "all": ("c.token", "c.name", "t.name"),
}
#: How a search tests a column for its pattern (``""``: any channel column).
_LIKE = {
    "": "LIKE ? ESCAPE '\\'",
    "t.name": "c.typeId IN (SELECT id FROM types WHERE name LIKE ? ESCAPE '\\')",
}

#: The channel fields that may be NULL, and where their NULLs go (descending?): below values.
_NULLABLE = frozenset(field.name for field in CHANNEL if field.nullable)
_NULLS = {False: " NULLS FIRST", True: " NULLS LAST"}

#: An order: ``(field, descending)`` terms.
Order = Sequence[tuple[str, bool]]


def _condition_sql(cond: Condition, args: list[Any]) -> str:
    column = f"c.{cond.field}"
    if cond.op == "in":
        args.extend(cond.value)
        return f"{column} IN ({', '.join('?' * len(cond.value))})"
    args.append(int(cond.value) if isinstance(cond.value, bool) else cond.value)
    return f"{column} {_SQL_OPS[cond.op]} ?"


def where(
    conditions: Sequence[Condition], pattern: str | None, scope: str, indexed: bool
) -> tuple[str, tuple[Any, ...]]:
    """The filter of the listed channels meeting ``conditions`` and, given a search
    ``pattern`` (``LIKE ... ESCAPE '\\'``), matching it in the columns of ``scope``; and its
    arguments. Unless ``indexed``, the table is read in its order (``+c.suspended``: the
    sampled statistics would send SQLite through a ranking index, fetching every row by id)."""
    args: list[Any] = []
    clauses = ["c.suspended = 0" if indexed else "+c.suspended = 0"]
    clauses += [_condition_sql(c, args) for c in conditions]
    if pattern is not None:
        # The type names matched once, not joined per channel (issue 36: cost per request).
        columns = _SCOPE_COLUMNS[scope]
        clauses.append(
            "(" + " OR ".join(_LIKE.get(col, f"{col} {_LIKE['']}") for col in columns) + ")"
        )
        args.extend([pattern] * len(columns))
    return " AND ".join(clauses), tuple(args)


def _ordering(order: Order, reverse: bool = False) -> str:
    """``order`` (reversed, with ``reverse``) as an ``ORDER BY`` list; a nullable field's NULLs
    where SQLite puts them, below every value (PostgreSQL's default is above), said for that
    field only (a ``NULLS`` clause on a column never NULL would keep PostgreSQL from reading
    its ranking index in order)."""
    return ", ".join(
        f"c.{name} {'DESC' if desc != reverse else 'ASC'}"
        + (_NULLS[desc != reverse] if name in _NULLABLE else "")
        for name, desc in order
    )


def count(db: Store, where: str, args: Sequence[Any]) -> int:
    """How many channels the filter ``where`` (with ``args``) holds."""
    return int(db.scalar(f"SELECT COUNT(*) FROM {LISTED} WHERE {where}", args))


def largest_id(db: Store) -> int:
    """The largest channel id (0: no channel)."""
    return int(db.scalar("SELECT MAX(id) FROM channels") or 0)


def value_of(db: Store, name: str) -> Callable[[int], Any]:
    """The value of field ``name`` of a channel by id (a ranking's bisection of text)."""
    sql = f"SELECT {name} FROM channels WHERE id = ?"
    return lambda row_id: db.scalar(sql, (row_id,))


def entries(
    db: Store,
    where: str,
    args: Sequence[Any],
    order: Order,
    key: Sequence[Any] | None,
    skip: int,
    limit: int,
    reverse: bool = False,
) -> list[tuple[Any, ...]]:
    """``(id, *sort key)`` of ``limit`` rows of the filter, ``skip`` rows past ``key`` (None:
    the start) in ``order`` (or its reverse), read from the index alone."""
    ordering = _ordering(order, reverse)
    keys = ", ".join(f"c.{name} AS k{i}" for i, (name, _) in enumerate(order))
    if key is None:
        sql = (
            f"SELECT c.id, {keys} FROM {LISTED} WHERE {where} ORDER BY {ordering} LIMIT ? OFFSET ?"
        )
        return db.all(sql, [*args, limit, skip])
    # Past the key: one index range per leading prefix of equal fields, each at most
    # skip + limit rows, merged in order (a row-value comparison cannot mix directions).
    # The branches carry their sort keys, read from the index, so rows skipped are never
    # looked up in the table. Every subquery is named (PostgreSQL requires it).
    merged = ", ".join(
        f"k{i} {'DESC' if desc != reverse else 'ASC'}" for i, (_, desc) in enumerate(order)
    )
    branches, bound = [], []
    for depth, (name, desc) in enumerate(order):
        equal = [f"c.{n} = ?" for n, _ in order[:depth]]
        past = f"c.{name} {'<' if desc != reverse else '>'} ?"
        branches.append(
            f"SELECT * FROM (SELECT c.id, {keys} FROM {LISTED} WHERE "
            f"{where} AND {' AND '.join([*equal, past])} "
            f"ORDER BY {ordering} LIMIT ?) AS b{depth}"
        )
        bound += [*args, *key[: depth + 1], skip + limit]
    columns = ", ".join(f"k{i}" for i in range(len(order)))
    sql = (
        f"SELECT id, {columns} FROM ({' UNION ALL '.join(branches)}) AS merged "
        f"ORDER BY {merged} LIMIT ? OFFSET ?"
    )
    return db.all(sql, [*bound, limit, skip])


def rows(db: Store, ids: Sequence[int], order: Order) -> list[tuple[Any, ...]]:
    """The :data:`~.channels.WITH_OWNER` rows of channels ``ids`` (one or more), in
    ``order``."""
    return db.all(
        f"SELECT {WITH_OWNER} FROM {JOINED} "
        f"WHERE c.id IN ({', '.join('?' * len(ids))}) ORDER BY {_ordering(order)}",
        ids,
    )


def scan_listed(
    reader: Reads, names: Sequence[str], size: int
) -> tuple[int, Iterator[list[tuple[Any, ...]]]]:
    """The catalog version and ``(id, *names)`` of every listed channel, by descending id
    (the table's order, no sort), ``size`` rows at a time; read inside one read transaction
    (:meth:`~.engine.Store.reader`), so both are of one state."""
    version = int(reader.scalar("SELECT value FROM versions WHERE name = 'catalog'"))
    return version, reader.chunks(
        f"SELECT id, {', '.join(names)} FROM channels WHERE +suspended = 0 ORDER BY id DESC",
        (),
        size,
    )
