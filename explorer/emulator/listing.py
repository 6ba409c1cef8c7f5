"""The channel ranking's pages at one cost at any depth: ``page`` mapped to keyset seeks.

``GET /channels`` keeps one stable ordering (the requested terms, then ``id``), so a page is a
slice of it. Reading the slice with ``OFFSET`` costs in proportion to its depth, which makes a
full ranking quadratic. Instead every page served leaves a *cursor*: the sort key of its last
row, remembered for that listing (its filter and order) while the catalog version stands. The
next page seeks past that key through the ordering's index and reads ``limit`` rows, whatever
its depth. A page with no cursor before it nearby is read from whichever end is nearer: a deep
page in reverse order from the last row (the listing's total, counted once per catalog version,
says where that is). Rows passed over on the way come from the covering ranking indexes
(``store.py``), never from the table. Orderings on nullable fields keep ``OFFSET`` (a NULL key
has no seek).
"""

from __future__ import annotations

from bisect import bisect_right
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from explorer.emulator.shapes import CHANNEL, CHANNEL_FIELDS, CHANNEL_FROM, CHANNEL_SELECT
from explorer.emulator.store import Store
from explorer.wire.query import Condition, ListQuery, QueryError

_SQL_OPS = {"eq": "=", "ne": "!=", "gt": ">", "gte": ">=", "lt": "<", "lte": "<="}
_SCOPE_COLUMNS = {
    "names": ("c.token",),
    "titles": ("c.name",),
    "types": ("t.name",),
    "all": ("c.token", "c.name", "t.name"),
}
#: Fields never NULL, so a key made of them can be sought past.
_SEEKABLE = frozenset(f.name for f in CHANNEL if not f.schema.get("nullable"))
#: Rows a page may be read past (from a cursor or an end) before another way is cheaper.
NEAR = 1000
#: Listings whose cursors are kept, and cursors per listing (a million channels, 100 a page).
LISTINGS = 16
CURSORS = 20_000


def _condition_sql(cond: Condition, args: list[Any]) -> str:
    column = f"c.{cond.field}"
    if cond.op == "in":
        args.extend(cond.value)
        return f"{column} IN ({', '.join('?' * len(cond.value))})"
    args.append(int(cond.value) if isinstance(cond.value, bool) else cond.value)
    return f"{column} {_SQL_OPS[cond.op]} ?"


@dataclass(frozen=True, slots=True)
class Listing:
    """One filtered, ordered channel list: its filter and sort key, without paging."""

    source: str
    where: str
    args: tuple[Any, ...]
    #: ``(field, descending)`` terms, always ending with ``("id", False)`` unless id came first.
    order: tuple[tuple[str, bool], ...]

    @property
    def signature(self) -> tuple[Any, ...]:
        """What identifies the listing's rows and their order."""
        return self.source, self.where, self.args, self.order

    @property
    def seekable(self) -> bool:
        """Whether pages can be sought by key (no nullable field in the order)."""
        return all(name in _SEEKABLE for name, _ in self.order)


#: Longest ``q`` search: longer text could match no name anyway, and SQLite refuses ``LIKE``
#: patterns past 50,000 bytes with an error, not an answer.
MAX_SEARCH = 256


def contains_pattern(q: str) -> str:
    """The ``LIKE ... ESCAPE '\\'`` pattern matching ``q`` literally anywhere in a text (400
    naming ``q`` when it is longer than :data:`MAX_SEARCH`)."""
    if len(q) > MAX_SEARCH:
        raise QueryError("q", f"q must be at most {MAX_SEARCH} characters.")
    escaped = q.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def listing_of(query: ListQuery) -> Listing:
    """The listing ``query`` pages through (the search joins types only when it needs them)."""
    args: list[Any] = []
    clauses = ["c.suspended = 0"]
    clauses += [_condition_sql(c, args) for c in query.where]
    source = "channels c"
    if query.q:
        pattern = contains_pattern(query.q)
        columns = _SCOPE_COLUMNS[query.scope]
        if "t.name" in columns:
            source += " LEFT JOIN types t ON t.id = c.typeId"
        clauses.append("(" + " OR ".join(f"{col} LIKE ? ESCAPE '\\'" for col in columns) + ")")
        args.extend([pattern] * len(columns))
    order = [(o.field, o.descending) for o in query.order]
    if not any(name == "id" for name, _ in order):
        order.append(("id", False))
    return Listing(source, " AND ".join(clauses), tuple(args), tuple(order))


def _ordering(order: tuple[tuple[str, bool], ...], reverse: bool = False) -> str:
    return ", ".join(f"c.{name} {'DESC' if desc != reverse else 'ASC'}" for name, desc in order)


@dataclass(slots=True)
class _Cursors:
    """Known sort keys of one listing at one catalog version: position -> key of the row just
    before it; plus the listing's total once counted."""

    version: int
    positions: list[int] = field(default_factory=list)
    keys: dict[int, tuple[Any, ...]] = field(default_factory=dict)
    total: int | None = None

    def before(self, offset: int) -> int:
        """The nearest known position at or before ``offset`` (0: the start)."""
        index = bisect_right(self.positions, offset)
        return self.positions[index - 1] if index else 0

    def remember(self, position: int, key: tuple[Any, ...]) -> None:
        if position in self.keys or len(self.keys) >= CURSORS:
            return
        self.keys[position] = key
        self.positions.insert(bisect_right(self.positions, position), position)


class Pager:
    """Pages of channel listings by seek (see the module docstring); one per platform."""

    def __init__(self, store: Store, near: int = NEAR) -> None:
        self.store = store
        self.near = near
        self._listings: OrderedDict[tuple[Any, ...], _Cursors] = OrderedDict()

    def _cursors(self, listing: Listing, version: int) -> _Cursors:
        found = self._listings.get(listing.signature)
        if found is None or found.version != version:
            found = self._listings[listing.signature] = _Cursors(version)
        self._listings.move_to_end(listing.signature)
        while len(self._listings) > LISTINGS:
            self._listings.popitem(last=False)
        return found

    def total(self, listing: Listing, version: int) -> int:
        """How many channels the listing holds (counted once per catalog version)."""
        cursors = self._cursors(listing, version)
        if cursors.total is None:
            cursors.total = int(
                self.store.scalar(
                    f"SELECT COUNT(*) FROM {listing.source} WHERE {listing.where}", listing.args
                )
            )
        return cursors.total

    def page(
        self, listing: Listing, version: int, offset: int, limit: int
    ) -> list[tuple[Any, ...]]:
        """The rows (:data:`~explorer.emulator.shapes.CHANNEL_SELECT`) at ``offset``."""
        cursors = self._cursors(listing, version)
        start = cursors.before(offset) if listing.seekable else 0
        far = listing.seekable and offset - start > self.near
        total = self.total(listing, version) if far else None
        if total is not None and total - offset < offset - start:
            skip = total - offset - limit  # from the last row backwards
            ids = self._ids(listing, None, max(skip, 0), limit + min(skip, 0), reverse=True)
        else:
            ids = self._ids(listing, cursors.keys.get(start), offset - start, limit)
        rows = self._rows(listing, ids)
        if rows and listing.seekable:
            cursors.remember(offset + len(rows), self._key(listing, rows[-1]))
        return rows

    def _ids(
        self,
        listing: Listing,
        key: tuple[Any, ...] | None,
        skip: int,
        limit: int,
        reverse: bool = False,
    ) -> list[int]:
        """Ids of ``limit`` rows, ``skip`` rows past ``key`` (None: the start) in the listing's
        order (or its reverse)."""
        if limit <= 0:
            return []
        ordering = _ordering(listing.order, reverse)
        if key is None:
            sql = (
                f"SELECT c.id FROM {listing.source} WHERE {listing.where} "
                f"ORDER BY {ordering} LIMIT ? OFFSET ?"
            )
            return [row[0] for row in self.store.all(sql, [*listing.args, limit, skip])]
        # Past the key: one index range per leading prefix of equal fields, each at most
        # skip + limit rows, merged in order (a row-value comparison cannot mix directions).
        # The branches carry their sort keys, read from the index, so rows skipped are never
        # looked up in the table.
        keys = ", ".join(f"c.{name} AS k{i}" for i, (name, _) in enumerate(listing.order))
        merged = ", ".join(
            f"k{i} {'DESC' if desc != reverse else 'ASC'}"
            for i, (_, desc) in enumerate(listing.order)
        )
        branches, args = [], []
        for depth, (name, desc) in enumerate(listing.order):
            equal = [f"c.{n} = ?" for n, _ in listing.order[:depth]]
            past = f"c.{name} {'<' if desc != reverse else '>'} ?"
            branches.append(
                f"SELECT * FROM (SELECT c.id, {keys} FROM {listing.source} WHERE "
                f"{listing.where} AND {' AND '.join([*equal, past])} "
                f"ORDER BY {ordering} LIMIT ?)"
            )
            args += [*listing.args, *key[: depth + 1], skip + limit]
        sql = f"SELECT id FROM ({' UNION ALL '.join(branches)}) ORDER BY {merged} LIMIT ? OFFSET ?"
        return [row[0] for row in self.store.all(sql, [*args, limit, skip])]

    def _rows(self, listing: Listing, ids: list[int]) -> list[tuple[Any, ...]]:
        if not ids:
            return []
        return self.store.all(
            f"SELECT {CHANNEL_SELECT} FROM {CHANNEL_FROM} "
            f"WHERE c.id IN ({', '.join('?' * len(ids))}) ORDER BY {_ordering(listing.order)}",
            ids,
        )

    @staticmethod
    def _key(listing: Listing, row: tuple[Any, ...]) -> tuple[Any, ...]:
        return tuple(row[CHANNEL_FIELDS.index(name)] for name, _ in listing.order)
