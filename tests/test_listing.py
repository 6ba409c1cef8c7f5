"""Channel listings paged by seek: every page equals the same slice of one full ordering."""

from __future__ import annotations

import asyncio
import gc
import random
import re
import tracemalloc
from pathlib import Path

import orjson
import pytest

from explorer.emulator import listing as listing_module
from explorer.emulator.categories import opening
from explorer.emulator.db.engine import Reads, Store
from explorer.emulator.listing import Listing, Pager, Ranking, listing_of, read_rankings
from explorer.emulator.resources.channels import ChannelBodies
from explorer.emulator.shapes import CHANNEL_FILTERS, TypeCatalog, render_channel
from explorer.emulator.world import seed_store
from explorer.wire.query import parse_list_query

ORDERS = (
    "viewersTotal:desc",
    "viewersCurrent:desc,numFollowers:asc",
    "online:asc,viewersTotal:asc",
    "languageId:asc",
    "id:desc",
)


@pytest.fixture(scope="module")
def store() -> Store:
    """A world of 1,200 channels, a few suspended."""
    seeded = Store()
    seed_store(seeded, 3, 1200, lambda password: "x", opening)
    with seeded.transaction() as conn:
        conn.execute("UPDATE channels SET suspended = 1 WHERE id % 97 = 0")
    return seeded


def ordered(store: Store, order: str, where: str) -> list[int]:
    """Every listed channel id in the listing's order, by one plain statement."""
    listing = listing_of(parse_list_query({"order": order, "where": where}, CHANNEL_FILTERS, ()))
    terms = ", ".join(f"c.{n} {'DESC' if d else 'ASC'}" for n, d in listing.order)
    rows = store.all(
        f"SELECT c.id FROM {listing.source} WHERE {listing.where} ORDER BY {terms}", listing.args
    )
    return [row[0] for row in rows]


def counted(pager: Pager, listing: Listing, version: int = 1) -> None:
    """Ask for the listing's total as a request does: its ranking is read once it is due."""
    asyncio.run(pager.ready(listing, version, counting=True))


#: The only statement a ranked page or total runs: a text's value looked up by id.
LOOKUP = re.compile(r"SELECT \w+ FROM channels WHERE id = \d+")


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("where", ["", "online:eq:false"])
def test_pages_in_any_order_are_slices_of_the_ordering(
    store: Store, order: str, where: str
) -> None:
    """Pages asked in order, backwards and at random give the same rows as OFFSET would."""
    pager = Pager(store, near=40)
    expected = ordered(store, order, where)
    listing = listing_of(parse_list_query({"order": order, "where": where}, CHANNEL_FILTERS, ()))
    limit = 25
    pages = list(range(len(expected) // limit + 2))
    sequence = pages + pages[::-1] + random.Random(order).sample(pages, len(pages))
    for page in sequence:
        rows = pager.page(listing, 1, page * limit, limit)
        assert [row[0] for row in rows] == expected[page * limit : (page + 1) * limit], page
    assert pager.total(listing, 1) == len(expected)


def test_a_new_catalog_version_forgets_cursors(store: Store) -> None:
    """Cursors belong to one catalog version: after a write the pages follow the new order."""
    pager = Pager(store, near=40)
    listing = listing_of(parse_list_query({"order": "viewersTotal:desc"}, CHANNEL_FILTERS, ()))
    first = [row[0] for row in pager.page(listing, 1, 100, 10)]
    top = first[0]
    with store.transaction() as conn:
        conn.execute(
            "UPDATE channels SET viewersTotal = viewersTotal + 10000000 WHERE id = ?", (top,)
        )
    again = [row[0] for row in pager.page(listing, 2, 100, 10)]
    assert again == ordered(store, "viewersTotal:desc", "")[100:110]
    with store.transaction() as conn:
        conn.execute(
            "UPDATE channels SET viewersTotal = viewersTotal - 10000000 WHERE id = ?", (top,)
        )


@pytest.mark.parametrize(
    "where",
    [
        "viewersTotal:lt:5000",
        "viewersTotal:lte:0",
        "viewersTotal:gt:100,viewersTotal:lte:90000",
        "numFollowers:gte:10",
        "numFollowers:eq:0",
        "featureLevel:eq:0",
        "id:gte:100600",
        "viewersTotal:gt:9,viewersTotal:lt:3",
        "viewersTotal:lt:99999999999999",
        "viewersTotal:gte:-99999999999999",
        "token:lt:m",
        "name:gte:Late,name:lt:Sunday",
        "createdAt:lt:2018-04-04T10:50:18.130Z",
        "updatedAt:gt:2019",
        "audience:eq:teen",
        "languageId:lt:fr",
        "typeId:gte:40",
        "online:eq:true",
        "partnered:lt:1",
    ],
)
def test_range_totals_from_sorted_values_equal_the_count(store: Store, where: str) -> None:
    """A range of one sortable field (a number, a flag, text, a time, a nullable field) is
    counted by bisection exactly as COUNT(*) counts it."""
    listing = listing_of(parse_list_query({"where": where}, CHANNEL_FILTERS, ()))
    assert listing.range is not None
    pager = Pager(store, sort_after=0)
    counted(pager, listing)
    expected = len(ordered(store, "id:asc", where))
    calls: list[str] = []
    store.conn.set_trace_callback(calls.append)
    try:
        assert pager.total(listing, 1) == expected
    finally:
        store.conn.set_trace_callback(None)
    assert all(LOOKUP.fullmatch(call) for call in calls), calls


@pytest.mark.parametrize(
    ("where", "order"),
    [
        ("viewersTotal:lt:5000", "viewersTotal:desc"),
        ("viewersTotal:gte:10,viewersTotal:lt:90000", "viewersTotal:asc"),
        ("viewersCurrent:lte:3", "viewersCurrent:desc"),
        ("numFollowers:eq:0", "numFollowers:asc"),
        ("numFollowers:gt:5", "numFollowers:desc"),
        ("id:gte:100600", "id:desc"),
        ("viewersTotal:gt:9,viewersTotal:lt:3", "viewersTotal:desc"),
        ("token:lt:m", "token:desc"),
        ("name:gte:Late", "name:desc"),
        ("name:lt:Sunday", "name:asc"),
        ("createdAt:lt:2018-04-04", "createdAt:desc"),
        ("audience:lte:teen", "audience:desc"),
        ("languageId:gt:de", "languageId:desc"),
        ("typeId:lt:40", "typeId:desc"),
        ("online:lte:true", "online:desc"),
    ],
)
def test_ranked_pages_are_slices_of_the_ordering(store: Store, where: str, order: str) -> None:
    """A counted range ordered by its own field, paged from the field's ranking, gives OFFSET's
    rows (ties by id), and the same total as COUNT(*), without reading rows (text values are
    looked up by id)."""
    pager = Pager(store, sort_after=0)
    listing = listing_of(parse_list_query({"order": order, "where": where}, CHANNEL_FILTERS, ()))
    expected = ordered(store, order, where)
    counted(pager, listing)
    assert pager.total(listing, 1) == len(expected)
    limit = 25
    for page in range(len(expected) // limit + 2):
        assert pager.ids(listing, 1, page * limit, limit) == expected[page * limit :][:limit]
    calls: list[str] = []
    store.conn.set_trace_callback(calls.append)
    try:
        pager.ids(listing, 1, limit, limit)
    finally:
        store.conn.set_trace_callback(None)
    assert all(LOOKUP.fullmatch(call) for call in calls), calls


def test_a_text_range_looks_up_a_few_values_once(store: Store) -> None:
    """A range of text is placed among its ranking's kept values first: its page and total
    look up at most 5 values by id between them (20 when a bisection looked up any row)."""
    query = {"where": "token:lt:m", "order": "token:desc"}
    listing = listing_of(parse_list_query(query, CHANNEL_FILTERS, ()))
    pager = Pager(store, sort_after=0)
    counted(pager, listing)
    calls: list[str] = []
    store.conn.set_trace_callback(calls.append)
    try:
        ids = pager.ids(listing, 1, 25, 25)
        total = pager.total(listing, 1)
    finally:
        store.conn.set_trace_callback(None)
    expected = ordered(store, query["order"], query["where"])
    assert (ids, total) == (expected[25:50], len(expected))
    assert 0 < len(calls) <= 5 and all(LOOKUP.fullmatch(call) for call in calls), calls


def test_a_ranking_is_read_again_at_a_new_version(store: Store) -> None:
    """A ranked page follows a write: the ranking belongs to one catalog version."""
    pager = Pager(store, sort_after=0)
    query = {"where": "viewersTotal:lt:100000000", "order": "viewersTotal:desc"}
    listing = listing_of(parse_list_query(query, CHANNEL_FILTERS, ()))
    counted(pager, listing)
    last = pager.ids(listing, 1, 1150, 100)[-1]
    before = store.scalar("SELECT viewersTotal FROM channels WHERE id = ?", (last,))
    with store.transaction() as conn:
        conn.execute("UPDATE channels SET viewersTotal = 99999999 WHERE id = ?", (last,))
    try:
        counted(pager, listing, 2)
        assert pager.total(listing, 2) == len(ordered(store, "id:asc", query["where"]))
        assert pager.ids(listing, 2, 0, 1) == [last]
    finally:
        with store.transaction() as conn:
            conn.execute("UPDATE channels SET viewersTotal = ? WHERE id = ?", (before, last))


def test_sorted_values_are_read_again_at_a_new_version(store: Store) -> None:
    """After a write (a new catalog version) a range total counts the written value."""
    pager = Pager(store, sort_after=0)
    query = parse_list_query({"where": "viewersTotal:gt:99999999"}, CHANNEL_FILTERS, ())
    listing = listing_of(query)
    counted(pager, listing)
    assert pager.total(listing, 1) == 0
    first = store.scalar("SELECT MIN(id) FROM channels")
    before = store.scalar("SELECT viewersTotal FROM channels WHERE id = ?", (first,))
    with store.transaction() as conn:
        conn.execute("UPDATE channels SET viewersTotal = 100000000 WHERE id = ?", (first,))
    try:
        counted(pager, listing, 2)
        assert pager.total(listing, 2) == 1
    finally:
        with store.transaction() as conn:
            conn.execute("UPDATE channels SET viewersTotal = ? WHERE id = ?", (before, first))


def test_a_page_body_is_its_channels_encoded_in_order(store: Store) -> None:
    """A page joined from encoded channels equals the page's rows rendered and encoded."""
    pager = Pager(store, near=40)
    listing = listing_of(parse_list_query({"order": "numFollowers:desc"}, CHANNEL_FILTERS, ()))
    types = TypeCatalog(store)
    bodies = ChannelBodies(size=60)
    for offset in (0, 30, 900, 30):
        rows = pager.page(listing, 1, offset, 25)
        expected = orjson.dumps([render_channel(row, types.all()) for row in rows])
        assert bodies.page(store, types, 1, pager.ids(listing, 1, offset, 25)) == expected


@pytest.fixture(scope="module")
def sampled() -> Store:
    """A world of 5,000 channels, big enough that its statistics are sampled as a default
    world's are (``analysis_limit``)."""
    seeded = Store()
    seed_store(seeded, 3, 5000, lambda password: "x", opening)
    return seeded


@pytest.mark.parametrize("where", ["createdAt:lt:2018", "token:gte:m", "featured:eq:true", ""])
def test_a_listing_by_an_unindexed_field_reads_the_table_in_order(
    sampled: Store, where: str
) -> None:
    """Counting or sorting by a field no ranking index holds reads the table (or an index
    alone), not every listed row fetched by id through a ranking index."""
    field = where.partition(":")[0] or "name"
    query = parse_list_query({"where": where, "order": f"{field}:desc"}, CHANNEL_FILTERS, ())
    listing = listing_of(query)
    for sql in (
        f"SELECT COUNT(*) FROM {listing.source} WHERE {listing.where}",
        f"SELECT c.id FROM {listing.source} WHERE {listing.where} ORDER BY c.{field} DESC",
    ):
        plan = sampled.all(f"EXPLAIN QUERY PLAN {sql}", listing.args)
        assert not any("USING INDEX channels_rank" in row[-1] for row in plan), plan


def test_rankings_past_their_budget_leave_the_one_used_longest_ago(store: Store) -> None:
    """Rankings kept together hold at most ``ranked_rows`` rows: a new one sends the one used
    longest ago, and totals stay exact either way."""
    listed = len(ordered(store, "id:asc", ""))
    pager = Pager(store, sort_after=0, ranked_rows=2 * listed)
    wheres = ("viewersTotal:lt:50", "numFollowers:gte:10", "featureLevel:lt:1")
    for where in (*wheres, wheres[0]):
        listing = listing_of(parse_list_query({"where": where}, CHANNEL_FILTERS, ()))
        counted(pager, listing)
        assert pager.total(listing, 1) == len(ordered(store, "id:asc", where))
    for where, kept in (("featureLevel:gte:1", True), ("numFollowers:lt:10", False)):
        listing = listing_of(parse_list_query({"where": where}, CHANNEL_FILTERS, ()))
        calls: list[str] = []
        store.conn.set_trace_callback(calls.append)
        try:
            pager.total(listing, 1)
        finally:
            store.conn.set_trace_callback(None)
        assert (calls == []) == kept, where


def test_encoded_channels_hold_about_their_own_size(store: Store) -> None:
    """Encoded channels kept for pages cost about their bytes, not the encoder's buffer."""
    ids = ordered(store, "id:asc", "")[:400]
    bodies = ChannelBodies()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        page = bodies.page(store, TypeCatalog(store), 1, ids)
        held = tracemalloc.get_traced_memory()[0] - before - len(page)
    finally:
        tracemalloc.stop()
    assert held < 2 * len(page), (held, len(page))


@pytest.fixture(scope="module")
def filed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database file of 300 channels."""
    path = tmp_path_factory.mktemp("filed") / "world.db"
    world = Store(path)
    seed_store(world, 3, 300, lambda password: "x", opening)
    world.close()
    return path


@pytest.mark.parametrize(
    ("where", "order", "then"),
    [
        ("name:gte:M", "name:asc", ()),
        ("viewersTotal:lt:500", "viewersTotal:desc", ("featureLevel:gte:1", "typeId:lt:40")),
    ],
)
def test_a_ranking_of_a_file_is_read_on_a_connection_of_its_own(
    filed: Path, where: str, order: str, then: tuple[str, ...]
) -> None:
    """Past ``scan_rows`` channels a range listing's first page, uncounted, is read from its
    field's ranking, which a thread reads on its own connection (the loop's reads no rows);
    a number's read brings every other number's ranking along (``then``)."""
    world = Store(filed)
    pager = Pager(world, scan_rows=0)
    version = world.catalog_version()
    asked = [(where, order), *((other, other.split(":")[0] + ":asc") for other in then)]
    listings = [
        listing_of(parse_list_query({"where": w, "order": o}, CHANNEL_FILTERS, ()))
        for w, o in asked
    ]
    calls: list[str] = []
    world.conn.set_trace_callback(calls.append)
    try:
        asyncio.run(pager.ready(listings[0], version, counting=False))
        pages = [pager.ids(listing, version, 25, 25) for listing in listings]
    finally:
        world.conn.set_trace_callback(None)
    try:
        for (w, o), page in zip(asked, pages, strict=True):
            assert page == ordered(world, o, w)[25:50], w
    finally:
        world.close()
    assert not [call for call in calls if "ORDER BY" in call or "COUNT" in call], calls


@pytest.mark.parametrize("enabled", [True, False])
def test_a_ranking_read_pauses_the_cyclic_collector(
    filed: Path, enabled: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file's ranking is read with the cyclic collector off (its row tuples would set off
    hundreds of collections), which is left on or off as it was."""
    world = Store(filed)
    query = {"where": "name:gte:M", "order": "name:desc"}
    listing = listing_of(parse_list_query(query, CHANNEL_FILTERS, ()))
    during: list[bool] = []

    def read(reader: Reads, names: list[str]) -> tuple[int, list[Ranking]]:
        during.append(gc.isenabled())
        return read_rankings(reader, names)

    monkeypatch.setattr(listing_module, "read_rankings", read)
    was = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    try:
        asyncio.run(Pager(world, scan_rows=0).ready(listing, world.catalog_version(), False))
        after = gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()
        world.close()
    assert (during, after) == ([False], enabled)
