"""The channel ranking's pages at one cost at any depth: ``page`` mapped to keyset seeks.

``GET /channels`` keeps one stable ordering (the requested terms, then ``id``), so a page is a
slice of it. Reading the slice with ``OFFSET`` costs in proportion to its depth, which makes a
full ranking quadratic. Instead every page served leaves a *cursor*: the sort key of its last
row, remembered for that listing (its filter and order) while the catalog version stands. The
next page seeks past that key through the ordering's index and reads ``limit`` rows, whatever
its depth. A page with no cursor before it nearby is read from whichever end is nearer: a deep
page in reverse order from the last row (the listing's total, counted once per catalog version,
says where that is). Rows passed over on the way come from the covering ranking indexes
(``db/engine.py``), never from the table. Orderings on nullable fields keep ``OFFSET`` (a NULL key
has no seek).

A range of one sortable field ordered by that field (``where=viewersTotal:lt:N&order=
viewersTotal:desc``, different ``N`` and pages from many notebooks) is the common distinct
listing: once ranges of that field have been counted often enough at a catalog version (for
``X-Total-Count``) its listed channels are kept as a :class:`Ranking` (ids in order, with their
values), and such a page, or any range's total, is found by bisection without a statement.
Every field a listing filters by has one, so ``X-Total-Count`` stays exact and cheap whatever
the field: counting a range of a field without an index reads every row.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from explorer.emulator.db.engine import Store
from explorer.emulator.shapes import CHANNEL_FROM, CHANNEL_SELECT
from explorer.wire.query import Condition, ListQuery, QueryError
from explorer.wire.records import CHANNEL

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
#: Fields never NULL, so a key made of them can be sought past.
_SEEKABLE = frozenset(f.name for f in CHANNEL if not f.nullable)
#: Rows a page may be read past (from a cursor or an end) before another way is cheaper.
NEAR = 1000
#: Listings whose cursors are kept, and cursors per listing (a million channels, 100 a page).
LISTINGS = 16
CURSORS = 20_000
#: Counts of one field's ranges at one catalog version before its ranking is kept, so later
#: counts (and the pages of such ranges) are bisections. Reading the ranking of a field with a
#: ranking index costs about 15 counts of half of the channels (measured at 5,000 and 100,000
#: channels alike), so waiting that long costs at most twice what either way alone would. A
#: count of any other field reads the whole table (10-20 ms at 50,000 channels on a busy
#: machine) and its ranking that read plus a sort (75-220 ms): it is read after
#: :data:`SORT_AFTER_SCAN` counts, sooner than the balance, since until then each page of such
#: a listing sorts the table too. Pages alone never build one: a seek costs far less than a
#: count.
SORT_AFTER = 16
SORT_AFTER_SCAN = 3
#: Rows all kept rankings may hold together (about 16 bytes each, more for distinct text):
#: the default world's every field in both directions, or about ten fields of a million
#: channels. Past it the ranking used longest ago goes, and its field waits for counts again.
RANKED_ROWS = 10_000_000
#: Fields whose ranges SQLite counts from a ranking index (``db/engine.py``), not the table.
_INDEXED = frozenset({"viewersTotal", "viewersCurrent", "numFollowers"})
#: Every field a listing filters by: a range of one is counted (and paged) from its ranking,
#: which holds the channels with a value (a comparison never matches NULL).
_COUNTABLE = frozenset(f.name for f in CHANNEL if f.filter)
#: Fields whose ranking keys are numbers (kept in a typed array; others in a list).
_NUMERIC = frozenset(f.name for f in CHANNEL if f.kind in ("int", "bool"))


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
    #: The field and conditions when the filter is only a range of one sortable field.
    range: tuple[str, tuple[Condition, ...]] | None = None

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
    """The listing ``query`` pages through."""
    args: list[Any] = []
    order = [(o.field, o.descending) for o in query.order]
    fields = {c.field for c in query.where}
    # The ranking indexes lead with ``suspended``, and the sampled statistics take
    # ``suspended = 0`` for a selective term: for a listing that neither filters nor orders by
    # an indexed field SQLite would walk one of them and fetch every listed row by id, ten
    # times slower than reading the table in order, which ``+`` makes it do. A search tests
    # every row: read in table order too.
    indexed = not query.q and (fields | {name for name, _ in order[:1]}) & _INDEXED
    clauses = ["c.suspended = 0" if indexed else "+c.suspended = 0"]
    clauses += [_condition_sql(c, args) for c in query.where]
    if query.q:
        # The type names matched once, not joined per channel (issue 36: cost per request).
        pattern = contains_pattern(query.q)
        columns = _SCOPE_COLUMNS[query.scope]
        clauses.append(
            "(" + " OR ".join(_LIKE.get(col, f"{col} {_LIKE['']}") for col in columns) + ")"
        )
        args.extend([pattern] * len(columns))
    if not any(name == "id" for name, _ in order):
        order.append(("id", False))
    ranged = (
        not query.q
        and len(fields) == 1
        and fields <= _COUNTABLE
        and all(c.op in _RANGE_OPS for c in query.where)
    )
    span = (fields.pop(), query.where) if ranged else None
    return Listing("channels c", " AND ".join(clauses), tuple(args), tuple(order), span)


#: Comparisons a range count answers by bisection.
_RANGE_OPS = frozenset({"lt", "lte", "gt", "gte", "eq"})


@dataclass(frozen=True, slots=True)
class Ranking:
    """The listed channels with a value of one field, by ascending value: their keys (the
    values) and ids. Ties are by ascending id, or by descending id when the ranking serves a
    descending order, which reads it backwards (``field DESC, id``)."""

    descending: bool
    keys: array[int] | list[Any]
    ids: array[int]

    def span(self, conditions: tuple[Condition, ...]) -> tuple[int, int]:
        """The positions ``[lo, hi)`` of the rows meeting every condition (each in
        :data:`_RANGE_OPS`): rows meeting a range of the field are consecutive."""
        lo, hi = 0, len(self.keys)
        for cond in conditions:
            op: str = cond.op
            value = int(cond.value) if isinstance(cond.value, bool) else cond.value
            if op in ("gt", "gte", "eq"):
                lo = max(lo, (bisect_right if op == "gt" else bisect_left)(self.keys, value))
            if op in ("lt", "lte", "eq"):
                hi = min(hi, (bisect_left if op == "lt" else bisect_right)(self.keys, value))
        return lo, max(hi, lo)

    def page(self, conditions: tuple[Condition, ...], offset: int, limit: int) -> list[int]:
        """The ids at ``offset`` of the rows meeting ``conditions``, in the ranking's order."""
        lo, hi = self.span(conditions)
        if not self.descending:
            return self.ids[lo + offset : min(lo + offset + limit, hi)].tolist()
        end = hi - offset
        ids = self.ids[max(end - limit, lo) : max(end, lo)].tolist()
        ids.reverse()
        return ids


def _ranked(listing: Listing) -> bool | None:
    """Whether a listing's pages are a range of a :class:`Ranking` (its filter a range of one
    sortable field, its order that field, then ``id``): the field's direction, else None."""
    if listing.range is None:
        return None
    name, descending = listing.order[0]
    rest = listing.order[1:]
    if name == listing.range[0] and (name == "id" or rest == (("id", False),)):
        return descending
    return None


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

    def __init__(
        self,
        store: Store,
        near: int = NEAR,
        sort_after: int = SORT_AFTER,
        ranked_rows: int = RANKED_ROWS,
    ) -> None:
        self.store = store
        self.near = near
        self.sort_after = sort_after
        self.ranked_rows = ranked_rows
        self._listings: OrderedDict[tuple[Any, ...], _Cursors] = OrderedDict()
        #: Per field and direction at one catalog version: counts, then its ranking (the
        #: one used longest ago first).
        self._used: dict[tuple[str, bool], int] = {}
        self._rankings: OrderedDict[tuple[str, bool], Ranking] = OrderedDict()
        self._rankings_version = -1

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
        if listing.range is not None:
            descending = _ranked(listing) or False
            ranking = self._ranking(listing.range[0], descending, version, counting=True)
            if ranking is not None:
                lo, hi = ranking.span(listing.range[1])
                return hi - lo
        cursors = self._cursors(listing, version)
        if cursors.total is None:
            cursors.total = int(
                self.store.scalar(
                    f"SELECT COUNT(*) FROM {listing.source} WHERE {listing.where}", listing.args
                )
            )
        return cursors.total

    def _ranking(
        self, name: str, descending: bool, version: int, counting: bool = False
    ) -> Ranking | None:
        """The ranking of field ``name`` in that direction at ``version`` once a range
        of it has been counted ``sort_after`` times (None before; a page, not ``counting``,
        only takes one that exists)."""
        if version != self._rankings_version:
            self._rankings_version, self._used = version, {}
            self._rankings = OrderedDict()
        key = (name, descending)
        found = self._rankings.get(key)
        if found is not None:
            self._rankings.move_to_end(key)
        elif counting:
            self._used[key] = self._used.get(key, 0) + 1
            wait = self.sort_after if name in _INDEXED else min(self.sort_after, SORT_AFTER_SCAN)
            if self._used[key] <= wait:
                return None
            found = self._rankings[key] = self._read_ranking(name, descending)
            rows = sum(len(ranking.ids) for ranking in self._rankings.values())
            while rows > self.ranked_rows and len(self._rankings) > 1:
                gone, ranking = self._rankings.popitem(last=False)
                rows -= len(ranking.ids)
                self._used.pop(gone, None)
        return found

    def _read_ranking(self, name: str, descending: bool) -> Ranking:
        """Read the ranking of field ``name`` (see :class:`Ranking`), row by row into its
        arrays: a million channels never stand as a million tuples. Equal text values are
        kept once (a language, a title or an audience repeats across many channels)."""
        listed = "suspended = 0" if name in _INDEXED else "+suspended = 0"  # see listing_of
        rows = self.store.conn.execute(
            f"SELECT {name}, id FROM channels WHERE {listed} AND {name} IS NOT NULL "
            f"ORDER BY {name}, id {'DESC' if descending else 'ASC'}"
        )
        ids: array[int] = array("q")
        if name in _NUMERIC:
            keys: array[int] | list[Any] = array("q")
            for value, row_id in rows:
                keys.append(value)
                ids.append(row_id)
        else:
            keys = []
            seen: dict[Any, Any] = {}
            for value, row_id in rows:
                keys.append(seen.setdefault(value, value))
                ids.append(row_id)
        return Ranking(descending, keys, ids)

    def page(
        self, listing: Listing, version: int, offset: int, limit: int
    ) -> list[tuple[Any, ...]]:
        """The rows (:data:`~explorer.emulator.shapes.CHANNEL_SELECT`) at ``offset``."""
        return self._rows(listing, self.ids(listing, version, offset, limit))

    def ids(self, listing: Listing, version: int, offset: int, limit: int) -> list[int]:
        """The ids of the page at ``offset``, in the listing's order, read from the index
        alone (the caller may have their rows already)."""
        descending = _ranked(listing)
        if descending is not None and listing.range is not None:
            ranking = self._ranking(listing.range[0], descending, version)
            if ranking is not None:
                return ranking.page(listing.range[1], offset, limit)
        cursors = self._cursors(listing, version)
        start = cursors.before(offset) if listing.seekable else 0
        far = listing.seekable and offset - start > self.near
        total = self.total(listing, version) if far else None
        if total is not None and total - offset < offset - start:
            skip = total - offset - limit  # from the last row backwards
            entries = self._entries(listing, None, max(skip, 0), limit + min(skip, 0), True)
            entries.reverse()
        else:
            entries = self._entries(listing, cursors.keys.get(start), offset - start, limit)
        if entries and listing.seekable:
            cursors.remember(offset + len(entries), entries[-1][1:])
        return [entry[0] for entry in entries]

    def _entries(
        self,
        listing: Listing,
        key: tuple[Any, ...] | None,
        skip: int,
        limit: int,
        reverse: bool = False,
    ) -> list[tuple[Any, ...]]:
        """``(id, *sort key)`` of ``limit`` rows, ``skip`` rows past ``key`` (None: the start)
        in the listing's order (or its reverse)."""
        if limit <= 0:
            return []
        ordering = _ordering(listing.order, reverse)
        keys = ", ".join(f"c.{name} AS k{i}" for i, (name, _) in enumerate(listing.order))
        if key is None:
            sql = (
                f"SELECT c.id, {keys} FROM {listing.source} WHERE {listing.where} "
                f"ORDER BY {ordering} LIMIT ? OFFSET ?"
            )
            return self.store.all(sql, [*listing.args, limit, skip])
        # Past the key: one index range per leading prefix of equal fields, each at most
        # skip + limit rows, merged in order (a row-value comparison cannot mix directions).
        # The branches carry their sort keys, read from the index, so rows skipped are never
        # looked up in the table.
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
        columns = ", ".join(f"k{i}" for i in range(len(listing.order)))
        sql = (
            f"SELECT id, {columns} FROM ({' UNION ALL '.join(branches)}) "
            f"ORDER BY {merged} LIMIT ? OFFSET ?"
        )
        return self.store.all(sql, [*args, limit, skip])

    def _rows(self, listing: Listing, ids: list[int]) -> list[tuple[Any, ...]]:
        if not ids:
            return []
        return self.store.all(
            f"SELECT {CHANNEL_SELECT} FROM {CHANNEL_FROM} "
            f"WHERE c.id IN ({', '.join('?' * len(ids))}) ORDER BY {_ordering(listing.order)}",
            ids,
        )
