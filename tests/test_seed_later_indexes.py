"""Indexes a new world's file leaves for later: built while the platform serves, and listings
before then answer the same rows."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from explorer.emulator.categories import opening
from explorer.emulator.db.engine import LATER_INDEXES, LaterIndexes, Store
from explorer.emulator.listing import Pager, listing_of
from explorer.emulator.server import Platform
from explorer.emulator.shapes import CHANNEL_FILTERS
from explorer.emulator.world import seed_store
from explorer.wire.query import parse_list_query

# PostgreSQL's later indexes are tests/test_engines.py's (a seeding on either engine).
pytestmark = pytest.mark.sqlite_only(
    "a SQLite file's later indexes: its builder thread, sqlite_master and sqlite_stat1"
)

#: Listings each of the later indexes serves.
QUERIES = (
    {"order": "numFollowers:desc", "where": ""},
    {"order": "viewersTotal:desc", "where": "languageId:eq:en"},
    {"order": "viewersTotal:asc", "where": "typeId:eq:1"},
)


def indexes(store: Store) -> set[str]:
    """The names of the store's indexes."""
    return {name for (name,) in store.all("SELECT name FROM sqlite_master WHERE type = 'index'")}


def pages(store: Store) -> list[list[tuple[object, ...]]]:
    """The first page of each of :data:`QUERIES`."""
    pager = Pager(store, near=40)
    return [
        pager.page(listing_of(parse_list_query(query, CHANNEL_FILTERS, ())), 1, 0, 50)
        for query in QUERIES
    ]


def seeded(path: Path) -> Store:
    """A file store seeded with 400 channels."""
    store = Store(path)
    seed_store(store, 0, 400, lambda password: "x", opening)
    return store


def built(path: str) -> bool:
    """Run a builder on ``path`` to its end (bounded), then stop it; whether it ended."""
    builder = LaterIndexes(path).start()
    ended = builder.wait(30)
    builder.stop()
    return ended


def test_a_listing_before_the_later_indexes_answers_as_after(tmp_path: Path) -> None:
    """A seeded file lacks the later indexes until their builder runs; listings they serve
    give the same rows before and after, and the built indexes have statistics."""
    store = seeded(tmp_path / "world.db")
    assert not indexes(store) & set(LATER_INDEXES)
    before = pages(store)
    assert all(before)
    assert built(store.path)
    assert set(LATER_INDEXES) <= indexes(store)
    assert pages(store) == before
    analyzed = {name for (name,) in store.all("SELECT idx FROM sqlite_stat1")}
    assert set(LATER_INDEXES) <= analyzed


def test_a_file_opened_without_its_later_indexes_builds_them(tmp_path: Path) -> None:
    """A stop before the build leaves the indexes out; the next open of the file builds them."""
    seeded(tmp_path / "world.db").close()
    assert set(LATER_INDEXES) <= indexes(Store(tmp_path / "world.db"))


def test_a_stopped_builder_builds_nothing_more(tmp_path: Path) -> None:
    """A builder stopped before its thread runs leaves the indexes out and its thread ended."""
    store = seeded(tmp_path / "world.db")
    builder = LaterIndexes(store.path)
    builder.stop()
    assert builder.wait(0)
    assert not indexes(store) & set(LATER_INDEXES)


def test_a_platform_on_a_new_file_builds_the_later_indexes(
    tmp_path: Path, make_platform: Callable[..., Platform]
) -> None:
    """A platform on a new file answers a listing the later indexes serve and builds them."""
    platform = make_platform(db=tmp_path / "world.db", channels=400)
    response = httpx.get(f"{platform.base_url}/channels?where=languageId:eq:en", timeout=10)
    assert response.status_code == 200 and response.json()
    assert platform.indexes is not None and platform.indexes.wait(30)
    assert set(LATER_INDEXES) <= indexes(Store(tmp_path / "world.db"))


def test_an_index_already_there_is_left_alone(tmp_path: Path) -> None:
    """At a restart the builder neither builds nor analyzes an index the file already has."""
    store = seeded(tmp_path / "world.db")
    assert built(store.path)
    with store.transaction() as conn:
        conn.execute("DELETE FROM sqlite_stat1 WHERE idx = 'channels_type'")
    assert built(store.path)
    assert store.scalar("SELECT COUNT(*) FROM sqlite_stat1 WHERE idx = 'channels_type'") == 0
