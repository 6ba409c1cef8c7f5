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
``X-Total-Count``), or at once in a world past :data:`SCAN_ROWS` channels, its listed channels
are kept as a :class:`Ranking` (ids in order, with their values or the rank of their text), and
such a page, or any range's total, is found by bisection without a statement. Every field a
listing filters by has one, so ``X-Total-Count`` stays exact and cheap whatever the field:
counting a range of a field without an index reads every row. A ranking of a database file is
read in a thread on a connection of its own (:meth:`Pager.ready`): the requests that need it
wait for it, every other one is served meanwhile.
"""

from __future__ import annotations

import asyncio
import gc
import threading
from bisect import bisect_left, bisect_right
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

import numpy as np

from explorer.emulator.db import channel_pages
from explorer.emulator.db.engine import Reads, Store
from explorer.wire.query import Condition, ListQuery, QueryError
from explorer.wire.records import CHANNEL

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
#: Channels (by the largest id) past which a range listing waits for its field's ranking from
#: its first request instead: a count or a sort by SQL would read that many rows on the event
#: loop (about a second at a million channels), every other request waiting behind it.
SCAN_ROWS = 200_000
#: Rows all kept rankings may hold together (4 bytes an id, 4 or 8 a key: text is kept as the
#: rank of its value, the value itself looked up by id): every sortable field of a million
#: channels, under 200 MB. Past it the ranking used longest ago goes, and its field waits for
#: counts again.
RANKED_ROWS = 24_000_000
#: Rows of a text ranking per value it keeps (its marks): a bisection then looks up at most 5
#: values by id, against 20 at a million rows with none kept (about 15 us each), and a field
#: of a million channels keeps 31,250 values.
MARK_EVERY = 32
#: Spans a ranking remembers (by conditions) before it forgets them all.
SPANS = 4096
#: Every field a listing filters by: a range of one is counted (and paged) from its ranking,
#: which holds the channels with a value (a comparison never matches NULL).
_COUNTABLE = frozenset(f.name for f in CHANNEL if f.filter)
#: Fields never NULL (read into a typed array at once).
_NULLLESS = frozenset(f.name for f in CHANNEL if not f.nullable)
#: Fields whose ranking keys are their values; a ranking of any other field keeps the rank of
#: each row's value among the field's distinct values, and bisects by looking values up.
_NUMERIC = frozenset(f.name for f in CHANNEL if f.kind in ("int", "bool"))


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
    order = [(o.field, o.descending) for o in query.order]
    fields = {c.field for c in query.where}
    # The ranking indexes lead with ``suspended``, and the sampled statistics take
    # ``suspended = 0`` for a selective term: for a listing that neither filters nor orders by
    # an indexed field SQLite would walk one of them and fetch every listed row by id, ten
    # times slower than reading the table in order, which ``+`` makes it do. A search tests
    # every row: read in table order too.
    leading = fields | {name for name, _ in order[:1]}
    indexed = not query.q and bool(leading & channel_pages.INDEXED)
    pattern = contains_pattern(query.q) if query.q else None
    where, args = channel_pages.where(query.where, pattern, query.scope, indexed)
    if not any(name == "id" for name, _ in order):
        order.append(("id", False))
    ranged = (
        not query.q
        and len(fields) == 1
        and fields <= _COUNTABLE
        and all(c.op in _RANGE_OPS for c in query.where)
    )
    span = (fields.pop(), query.where) if ranged else None
    return Listing(channel_pages.LISTED, where, args, tuple(order), span)


#: Comparisons a range count answers by bisection.
_RANGE_OPS = frozenset({"lt", "lte", "gt", "gte", "eq"})


@dataclass(frozen=True, slots=True)
class Texts:
    """A sequence of texts kept as one string and where each ends: a ranking's marks, one in
    32 of a million values read, each its own object, would keep the allocator's memory of
    all of them (measured: 165 MiB more resident after reading two text fields)."""

    joined: str
    ends: np.ndarray[Any, np.dtype[np.int64]]

    @classmethod
    def of(cls, texts: Sequence[str]) -> Texts:
        """``texts`` kept together."""
        return cls("".join(texts), np.cumsum([len(text) for text in texts], dtype=np.int64))

    def __len__(self) -> int:
        return len(self.ends)

    def __getitem__(self, index: int) -> str:
        start = int(self.ends[index - 1]) if index else 0
        return self.joined[start : int(self.ends[index])]


@dataclass(frozen=True, slots=True)
class Ranking:
    """The listed channels with a value of field ``name``, by ascending value with ties by
    descending id, so a descending listing (``field DESC, id``) reads it backwards: their ids
    and keys. A key is the value of a number or a flag (:data:`_NUMERIC`), else the rank of
    the value among the field's distinct values: equal values stay consecutive equal keys.
    Of text only ``marks`` are held, the value of every :data:`MARK_EVERY`-th row: a
    bisection finds its run of rows among them and looks the few values it compares there up
    by id (``value_of``)."""

    name: str
    keys: np.ndarray[Any, np.dtype[np.signedinteger[Any]]]
    ids: np.ndarray[Any, np.dtype[np.signedinteger[Any]]]
    marks: Texts = field(default_factory=lambda: Texts.of([]))
    #: Spans found, by conditions (a page and its total ask for the same one).
    spans: dict[tuple[Condition, ...], tuple[int, int]] = field(
        default_factory=dict, compare=False, repr=False
    )

    def span(
        self, conditions: tuple[Condition, ...], value_of: Callable[[int], Any]
    ) -> tuple[int, int]:
        """The positions ``[lo, hi)`` of the rows meeting every condition (each in
        :data:`_RANGE_OPS`): rows meeting a range of the field are consecutive."""
        found = self.spans.get(conditions)
        if found is not None:
            return found
        lo, hi = 0, len(self.ids)
        for cond in conditions:
            op: str = cond.op
            value = int(cond.value) if isinstance(cond.value, bool) else cond.value
            if op in ("gt", "gte", "eq"):
                lo = max(lo, self._bisect(op == "gt", value, value_of))
            if op in ("lt", "lte", "eq"):
                hi = min(hi, self._bisect(op != "lt", value, value_of))
        if len(self.spans) >= SPANS:
            self.spans.clear()
        found = self.spans[conditions] = lo, max(hi, lo)
        return found

    def _bisect(self, right: bool, value: Any, value_of: Callable[[int], Any]) -> int:
        """Where ``value`` goes among the rows: after its equals (``right``) or before."""
        keys = self.keys
        if self.name in _NUMERIC:
            bounds = np.iinfo(keys.dtype)
            if value > bounds.max or value < bounds.min:  # past what the keys can hold
                return len(keys) if value > bounds.max else 0
            # In the keys' own type: given a Python int, numpy first copied every key to
            # 8 bytes (2.4 ms a bisection at a million rows, against 2 us).
            return int(keys.searchsorted(keys.dtype.type(value), "right" if right else "left"))
        find = bisect_right if right else bisect_left
        # Row ``m * MARK_EVERY`` holds ``marks[m]``: the place is after the last mark before
        # it (or at it, ``right``) and at most the next mark's row.
        mark = find(self.marks, value)
        lo = max((mark - 1) * MARK_EVERY + 1, 0)
        hi = min(mark * MARK_EVERY, len(keys))
        ids = self.ids
        return lo + find(range(lo, hi), value, key=lambda position: value_of(int(ids[position])))

    def page(
        self,
        conditions: tuple[Condition, ...],
        offset: int,
        limit: int,
        descending: bool,
        value_of: Callable[[int], Any],
    ) -> list[int]:
        """The ids at ``offset`` of the rows meeting ``conditions``, by the field in that
        direction, then ascending id."""
        lo, hi = self.span(conditions, value_of)
        ids, keys = self.ids, self.keys
        if descending:
            end = hi - offset
            page: list[int] = ids[max(end - limit, lo) : max(end, lo)][::-1].tolist()
            return page
        # Ascending: each run of equal keys read backwards, from the position ``offset`` is in.
        page, at = [], lo + offset
        while at < hi and len(page) < limit:
            first = lo + int(np.searchsorted(keys[lo:at], keys[at], "left"))
            last = at + int(np.searchsorted(keys[at:hi], keys[at], "right"))
            take = min(last - at, limit - len(page))
            top = last - (at - first)
            page += ids[top - take : top][::-1].tolist()
            at += take
        return page


#: Rows fetched at a time while a ranking is read.
_CHUNK = 65_536


def read_rankings(reader: Reads, names: Sequence[str]) -> tuple[int, list[Ranking]]:
    """The catalog version and the :class:`Ranking` of each field of ``names`` at it, read on
    ``reader`` (one state, :meth:`~explorer.emulator.db.engine.Store.reader`) by one scan of
    the table in its order (by descending id, no sort), then sorted by value here, stably:
    numbers by numpy, text by Python's sort and then ranked (SQLite's own sort of a million
    rows took several times as long, and a scan per field most of a ranking's time). Numbers
    are kept as arrays chunk by chunk as they arrive."""
    numbers: dict[str, list[np.ndarray[Any, Any]]] = {name: [] for name in names}
    texts: dict[str, list[Any]] = {name: [] for name in names if name not in _NUMERIC}
    found: dict[str, list[np.ndarray[Any, Any]]] = {name: [] for name in names}
    version, chunks = channel_pages.scan_listed(reader, names, _CHUNK)
    for chunk in chunks:
        row_ids, *columns = zip(*chunk, strict=True)
        ids = np.array(row_ids, dtype=np.int64)
        for name, column in zip(names, columns, strict=True):
            present: Any = slice(None)
            kept: Sequence[Any] = column
            if name not in _NULLLESS:
                present = np.array(column, dtype=object) != None  # noqa: E711
                kept = [value for value in column if value is not None]
            found[name].append(ids[present])
            if name in _NUMERIC:
                numbers[name].append(np.array(kept, dtype=np.int64))
            else:
                texts[name] += kept
    rankings = []
    for name in names:
        marks = Texts.of([])
        ids = np.concatenate(found.pop(name) or [np.zeros(0, np.int64)])
        if name in _NUMERIC:
            keys = np.concatenate(numbers.pop(name) or [np.zeros(0, np.int64)])
            order = np.argsort(keys, kind="stable")
            keys = keys[order]
        else:
            text = texts.pop(name)
            positions = sorted(range(len(text)), key=text.__getitem__)
            ordered = [text[position] for position in positions]
            keys = np.zeros(len(ordered), dtype=np.int64)
            np.cumsum([a != b for a, b in pairwise(ordered)], out=keys[1:])
            order = np.array(positions, dtype=np.int64)
            marks = Texts.of(ordered[::MARK_EVERY])
        rankings.append(Ranking(name, _narrow(keys), _narrow(ids[order]), marks))
    return version, rankings


def _narrow(
    values: np.ndarray[Any, np.dtype[np.int64]],
) -> np.ndarray[Any, np.dtype[np.signedinteger[Any]]]:
    """``values`` in 4 bytes each when every one fits."""
    if len(values) and values.min() >= -(2**31) and values.max() < 2**31:
        return values.astype(np.int32)
    return values


def _read_apart(store: Store, names: Sequence[str]) -> tuple[int, list[Ranking]]:
    """:func:`read_rankings` on a reader of its own of ``store`` (in the calling thread),
    the cyclic collector paused meanwhile."""
    with _PAUSE.held(), store.reader() as reader:
        return read_rankings(reader, names)


class _CollectorPause:
    """The cyclic collector off while any ranking read is under way, process-wide. A read
    holds a chunk of 65,536 row tuples at a time (none in a cycle): at a million channels
    they set off about 230 collections a field, 21 of them full ones of 20-40 ms each that
    held the GIL against every request, a fifth of the read's CPU. Reads are counted, so
    overlapping ones (platforms in one process) turn it back on once, and only if it was."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._reads = 0
        self._was_on = False

    @contextmanager
    def held(self) -> Iterator[None]:
        """The collector off in the block (unless another read keeps it off already)."""
        with self._lock:
            if not self._reads:
                self._was_on = gc.isenabled()
                gc.disable()
            self._reads += 1
        try:
            yield
        finally:
            with self._lock:
                self._reads -= 1
                if not self._reads and self._was_on:
                    gc.enable()


_PAUSE = _CollectorPause()


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
        scan_rows: int = SCAN_ROWS,
    ) -> None:
        self.store = store
        self.near = near
        self.sort_after = sort_after
        self.ranked_rows = ranked_rows
        self.scan_rows = scan_rows
        self._listings: OrderedDict[tuple[Any, ...], _Cursors] = OrderedDict()
        #: Per field at one catalog version: counts, then its ranking (the one used longest ago
        #: first); and the largest channel id at the version (see :data:`SCAN_ROWS`).
        self._used: dict[str, int] = {}
        self._rankings: OrderedDict[str, Ranking] = OrderedDict()
        self._rankings_version = -1
        self._largest: tuple[int, int] = (-1, 0)
        #: Rankings being read in a thread, by field, one at a time (the machine's other cores
        #: serve the loop).
        self._reads: dict[str, asyncio.Task[None]] = {}
        self._one_read: asyncio.Lock | None = None

    def _cursors(self, listing: Listing, version: int) -> _Cursors:
        found = self._listings.get(listing.signature)
        if found is None or found.version != version:
            found = self._listings[listing.signature] = _Cursors(version)
        self._listings.move_to_end(listing.signature)
        while len(self._listings) > LISTINGS:
            self._listings.popitem(last=False)
        return found

    async def ready(self, listing: Listing, version: int, counting: bool) -> None:
        """Keep the ranking the listing's page (and its total, when ``counting``) would be read
        from once it is due: after ``sort_after`` counts of the field's ranges at ``version``
        (fewer for a field without a ranking index), at once past ``scan_rows`` channels.
        A database file's ranking is read in a thread on a connection of its own, and only
        the requests needing it wait; an in-memory one (one connection) is read here."""
        name = self._due(listing, version, counting)
        if name is None:
            return
        if self.store.path == ":memory:":  # read at ``version``: nothing writes meanwhile
            with self.store.reader() as reader:
                self._keep(version, read_rankings(reader, [name])[1])
            return
        task = self._reads.get(name)
        if task is None:
            # A number's read takes every other number not kept along: one scan for all.
            names = [name]
            if name in _NUMERIC:
                names += sorted(
                    _NUMERIC & _COUNTABLE - {name} - set(self._rankings) - set(self._reads)
                )
            task = asyncio.ensure_future(self._read(names))
            self._reads.update(dict.fromkeys(names, task))
        await asyncio.shield(task)

    def _due(self, listing: Listing, version: int, counting: bool) -> str | None:
        """The field whose ranking the listing needs, not kept and due (counting one more
        count of it), else None."""
        if listing.range is None or not (counting or _ranked(listing) is not None):
            return None
        name = listing.range[0]
        if self._ranking(name, version) is not None:
            return None
        if self._largest[0] != version:
            self._largest = version, channel_pages.largest_id(self.store)
        if self._largest[1] > self.scan_rows:
            return name
        if not counting:
            return None
        self._used[name] = self._used.get(name, 0) + 1
        indexed = name in channel_pages.INDEXED
        wait = self.sort_after if indexed else min(self.sort_after, SORT_AFTER_SCAN)
        return name if self._used[name] > wait else None

    async def _read(self, names: list[str]) -> None:
        """Read the rankings of fields ``names`` in a thread, after any other read; keep them."""
        if self._one_read is None:
            self._one_read = asyncio.Lock()
        try:
            async with self._one_read:
                self._keep(*await asyncio.to_thread(_read_apart, self.store, names))
        finally:
            for name in names:
                self._reads.pop(name, None)

    def _keep(self, version: int, rankings: list[Ranking]) -> None:
        """Keep ``rankings``, read at catalog ``version``, unless a later version is known;
        past ``ranked_rows`` the rankings used longest ago go."""
        if version < self._rankings_version:
            return
        self._at(version)
        for ranking in rankings:
            self._rankings[ranking.name] = ranking
        rows = sum(len(kept.ids) for kept in self._rankings.values())
        while rows > self.ranked_rows and len(self._rankings) > 1:
            gone, dropped = self._rankings.popitem(last=False)
            rows -= len(dropped.ids)
            self._used.pop(gone, None)

    def _at(self, version: int) -> None:
        """Forget the rankings and counts of any other catalog version."""
        if version != self._rankings_version:
            self._rankings_version, self._used = version, {}
            self._rankings = OrderedDict()

    def _ranking(self, name: str, version: int) -> Ranking | None:
        """The kept ranking of field ``name`` at ``version``, if any."""
        self._at(version)
        found = self._rankings.get(name)
        if found is not None:
            self._rankings.move_to_end(name)
        return found

    def total(self, listing: Listing, version: int) -> int:
        """How many channels the listing holds (counted once per catalog version)."""
        if listing.range is not None:
            ranking = self._ranking(listing.range[0], version)
            if ranking is not None:
                lo, hi = ranking.span(
                    listing.range[1], channel_pages.value_of(self.store, ranking.name)
                )
                return hi - lo
        cursors = self._cursors(listing, version)
        if cursors.total is None:
            cursors.total = channel_pages.count(self.store, listing.where, listing.args)
        return cursors.total

    def page(
        self, listing: Listing, version: int, offset: int, limit: int
    ) -> list[tuple[Any, ...]]:
        """The rows (:data:`~explorer.emulator.db.channels.WITH_OWNER`) at ``offset``."""
        return self._rows(listing, self.ids(listing, version, offset, limit))

    def ids(self, listing: Listing, version: int, offset: int, limit: int) -> list[int]:
        """The ids of the page at ``offset``, in the listing's order, read from the index
        alone (the caller may have their rows already)."""
        descending = _ranked(listing)
        if descending is not None and listing.range is not None:
            ranking = self._ranking(listing.range[0], version)
            if ranking is not None:
                value_of = channel_pages.value_of(self.store, ranking.name)
                return ranking.page(listing.range[1], offset, limit, descending, value_of)
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
        return channel_pages.entries(
            self.store, listing.where, listing.args, listing.order, key, skip, limit, reverse
        )

    def _rows(self, listing: Listing, ids: list[int]) -> list[tuple[Any, ...]]:
        if not ids:
            return []
        return channel_pages.rows(self.store, ids, listing.order)
