"""Channel listings paged by seek: every page equals the same slice of one full ordering."""

from __future__ import annotations

import random

import pytest

from explorer.emulator.listing import Pager, listing_of
from explorer.emulator.shapes import CHANNEL_FILTERS
from explorer.emulator.store import Store
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
    seed_store(seeded, 3, 1200, lambda password: "x")
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
