"""The two engines behind one store: what each does its own way gives the same result
(ids, case-insensitive keys, the outbox's patches, camelCase names, the seeded world), and
the PostgreSQL engine's conversion of statements and schema."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from explorer.emulator import start
from explorer.emulator.categories import opening
from explorer.emulator.db import ddl, live_events, sessions
from explorer.emulator.db.engine import LATER_INDEXES, Store
from explorer.emulator.db.postgres import PostgresStore, statement, translate
from explorer.emulator.world import seed_store
from tests import databases
from tests.pgcluster import Cluster

pytestmark = pytest.mark.any_engine("runs both engines itself, in every pass")


_USER = (
    "INSERT INTO users (id, username, createdAt, updatedAt) VALUES (?, ?, 'c', 'u') RETURNING id"
)


def test_placeholders_become_psycopgs_outside_literals() -> None:
    """``?`` becomes ``%s`` and every ``%`` is doubled, but a ``?`` inside a literal stays."""
    converted = statement("SELECT '?%' || a FROM t WHERE b LIKE '%x' AND c = ? AND d % 2 = ?")
    assert converted == "SELECT '?%%' || a FROM t WHERE b ILIKE '%%x' AND c = %s AND d %% 2 = %s"


def test_camel_case_names_are_quoted_and_keywords_are_not() -> None:
    """camelCase names are quoted (PostgreSQL keeps their case); keywords, snake_case names
    and literals are left alone."""
    converted = statement("SELECT c.viewersTotal, user_id FROM channels c WHERE name = 'aB'")
    assert converted == "SELECT c.\"viewersTotal\", user_id FROM channels c WHERE name = 'aB'"


def test_like_ignores_case_on_both_engines(new_database: Callable[[], str]) -> None:
    """``LIKE`` matches whatever the case (SQLite's does; PostgreSQL's runs as ``ILIKE``), and
    its escaped wildcards stay literal."""
    store = Store(new_database())
    with store.transaction() as tx:
        tx.execute(_USER, (1, "ChessMaster"))
        tx.execute(_USER, (2, "chess_fan"))
    found = store.all(
        "SELECT username FROM users WHERE username LIKE ? ESCAPE '\\' ORDER BY id", ("%CHESS%",)
    )
    assert found == [("ChessMaster",), ("chess_fan",)]
    assert store.all("SELECT id FROM users WHERE username LIKE ? ESCAPE '\\'", ("%s\\_%",)) == [
        (2,)
    ]
    store.close()


def test_text_columns_compare_bytewise_on_postgresql() -> None:
    """Text columns are declared in the "C" collation, so PostgreSQL orders and compares them
    as SQLite does (bytewise), whatever the server's locale."""
    translated = translate("CREATE TABLE IF NOT EXISTS t (a TEXT NOT NULL, b INTEGER);")
    assert 'a TEXT COLLATE "C" NOT NULL' in translated and "b BIGINT" in translated


def test_schema_translation_refuses_what_needs_a_form_per_engine() -> None:
    """A trigger or ``INSERT OR IGNORE`` in a schema both engines run is refused, naming it."""
    with pytest.raises(ValueError, match="CREATE TRIGGER"):
        translate("CREATE TRIGGER IF NOT EXISTS t AFTER INSERT ON x BEGIN SELECT 1; END;")


def test_an_unknown_url_scheme_is_a_clear_error() -> None:
    """A URL of an engine the platform lacks is refused, naming the engines it has."""
    with pytest.raises(ValueError, match=r"mysql:// is not a database engine.*postgresql"):
        Store("mysql://localhost/db")


def test_a_platform_serves_from_postgresql_over_http(
    postgres: Cluster, signed_in: Callable[..., httpx.Client]
) -> None:
    """A platform started on a PostgreSQL URL seeds it, lists its channels over HTTP, takes a
    write and reads it back, and a second start on the same URL serves what was written."""
    url = postgres.schema()
    with start(db=url, channels=100, rate_limits=False) as platform:
        listed = httpx.get(f"{platform.base_url}/channels", params={"limit": 5}, timeout=10)
        assert listed.status_code == 200 and len(listed.json()) == 5
        assert int(listed.headers["X-Total-Count"]) > 5
        owner = signed_in(platform.base_url, "streamer")
        written = owner.patch("/channels/streamer", json={"name": "Served from PostgreSQL"})
        assert written.status_code == 200
        read = httpx.get(f"{platform.base_url}/channels/streamer", timeout=10).json()
        assert read["name"] == "Served from PostgreSQL"
    with start(db=url, channels=100, rate_limits=False) as again:
        read = httpx.get(f"{again.base_url}/channels/streamer", timeout=10).json()
        assert read["name"] == "Served from PostgreSQL"


def test_a_listing_waiting_on_postgresql_leaves_the_loop_serving(postgres: Cluster) -> None:
    """While a listing's read waits on PostgreSQL (its table locked by another session),
    another request's read is answered, and the listing completes once the lock goes."""
    import psycopg

    url = postgres.schema()
    with (
        start(db=url, channels=100, rate_limits=False) as platform,
        psycopg.connect(url) as locker,
        psycopg.connect(url, autocommit=True) as watcher,
        ThreadPoolExecutor(1) as requests,
    ):
        # The seeding's later indexes first: a concurrent index build beside the lock can
        # deadlock with it (PostgreSQL then ends one of them).
        assert platform.indexes is None or platform.indexes.wait(60)
        locker.execute("LOCK TABLE channels IN ACCESS EXCLUSIVE MODE")
        try:
            waiting = requests.submit(
                httpx.get,
                f"{platform.base_url}/channels",
                params={"order": "numFollowers:desc", "limit": 3},
                timeout=30,
            )
            _until_a_read_waits_for_a_lock(watcher, "channels")
            other = httpx.get(f"{platform.base_url}/achievements", timeout=10)
            assert other.status_code == 200 and other.json()
            assert not waiting.done()
        finally:
            locker.rollback()
        listed = waiting.result(timeout=30)
        assert listed.status_code == 200 and len(listed.json()) == 3


def _until_a_read_waits_for_a_lock(conn: Any, text: str, timeout: float = 30.0) -> None:
    """Wait (polling on ``conn``, in autocommit: a transaction reads the activity once) until
    another session's statement holding ``text`` waits for a lock."""
    deadline = time.monotonic() + timeout
    while not conn.execute(
        "SELECT 1 FROM pg_stat_activity "
        "WHERE wait_event_type = 'Lock' AND position(%s in query) > 0",
        (text,),
    ).fetchone():
        assert time.monotonic() < deadline, "no read waited for the lock"
        time.sleep(0.02)


def _wait_disconnected(conn: Any, databases: list[str]) -> None:
    """Wait until no backend is connected to ``databases`` (a closed or ended session's backend
    leaves ``pg_stat_activity`` a moment after its client), at most 30 s."""
    deadline = time.monotonic() + 30
    while conn.execute(
        "SELECT 1 FROM pg_stat_activity WHERE datname = ANY(%s)", (databases,)
    ).fetchone():
        assert time.monotonic() < deadline, f"sessions stayed connected to {databases}"
        time.sleep(0.05)


def test_the_switch_gives_each_platform_a_copy_of_a_seeded_world(
    postgres: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under ``EXPLORER_TEST_DATABASE=postgresql`` a platform asked for a new file gets a copy
    of the seeded world of its seed and size, the same one each time for that path (another
    for ``:memory:``), dropped once nothing is connected to it."""
    monkeypatch.setattr(databases, "ENGINE", "postgresql")
    path = tmp_path / "platform.db"
    url = databases.target(path, seed=0, channels=20)
    other = databases.target(":memory:", seed=0, channels=20)
    assert databases.target(path) == url and other != url and not path.exists()
    with databases.opened(path) as store:
        assert store.meta("seed") is not None and store.scalar("SELECT COUNT(*) FROM users") > 5
    import psycopg  # the postgres extra, installed where the cluster runs

    copies = [url.rsplit("/", 1)[1], other.rsplit("/", 1)[1]]
    with psycopg.connect(postgres.url, autocommit=True) as conn:
        _wait_disconnected(conn, copies)
        databases.release()
        names = {row[0] for row in conn.execute("SELECT datname FROM pg_database")}
    assert not set(copies) & names


def test_on_sqlite_each_platform_gets_a_file_copied_from_a_seeded_world(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On SQLite a platform asked for ``:memory:`` gets a new file, a copy of the seeded world
    of its seed and size with its later indexes built, removed once nothing holds it open; a
    file path given is that file itself."""
    monkeypatch.setattr(databases, "ENGINE", "sqlite")
    path = tmp_path / "platform.db"
    first, second = (Path(databases.target(":memory:", seed=0, channels=20)) for _ in range(2))
    assert databases.target(path) == str(path) and not path.exists() and first != second
    with databases.opened(first) as one, databases.opened(second) as other:
        with one.transaction() as tx:
            tx.execute("DELETE FROM chat_messages")
        assert other.scalar("SELECT COUNT(*) FROM chat_messages") > 0
        assert one.meta("seed") is not None and one.scalar("SELECT COUNT(*) FROM users") > 5
        names = {name for (name,) in one.all("SELECT name FROM sqlite_master")}
        assert set(LATER_INDEXES) <= names
        other.close()
        databases.release()
        assert first.exists() and not second.exists()
    databases.release()
    assert not first.exists()


def test_a_row_without_its_id_gets_the_largest_plus_one(new_database: Callable[[], str]) -> None:
    """An insert without an id after rows inserted with theirs gets the largest id plus one,
    read back with RETURNING, as SQLite gives a rowid."""
    store = Store(new_database())
    with store.transaction() as tx:
        tx.execute(_USER, (41, "seeded"))
        added = tx.execute(
            "INSERT INTO users (username, createdAt, updatedAt) VALUES ('new', 'c', 'u') "
            "RETURNING id"
        ).fetchone()[0]
    assert added == 42
    store.close()


def test_usernames_are_unique_whatever_their_case(new_database: Callable[[], str]) -> None:
    """A second user whose name differs only in case breaks the unique index and writes
    nothing."""
    store = Store(new_database())
    with store.transaction() as tx:
        tx.execute(_USER, (1, "Ada"))
    with pytest.raises(Exception, match=r"users_username|UNIQUE"), store.transaction() as tx:
        tx.execute(_USER, (2, "aDA"))
    assert store.scalar("SELECT COUNT(*) FROM users") == 1
    store.close()


def test_camel_case_columns_read_back_as_declared(new_database: Callable[[], str]) -> None:
    """The columns of a table keep the case they are declared in."""
    store = Store(new_database())
    assert store.columns("channels")[:5] == ["id", "userId", "token", "name", "online"]
    store.close()


def test_a_channel_update_writes_its_patch_to_the_outbox(new_database: Callable[[], str]) -> None:
    """Updating a channel writes one event with the public fields that changed (a flag as a
    JSON boolean), and none when only ``updatedAt`` changed."""
    store = Store(new_database(), ddl())
    seed_store(store, 0, 8, lambda password: "x", opening)
    channel = store.scalar("SELECT MIN(id) FROM channels WHERE online = 0")
    before = live_events.newest(store)
    with store.transaction() as tx:
        tx.execute("UPDATE channels SET updatedAt = 'later' WHERE id = ?", (channel,))
        tx.execute(
            "UPDATE channels SET online = 1, viewersCurrent = 9, name = 'n' WHERE id = ?",
            (channel,),
        )
    events = live_events.after(store, before, 10)
    assert [(topic, orjson.loads(payload)) for _, topic, payload in events] == [
        (f"channel:{channel}:update", {"name": "n", "online": True, "viewersCurrent": 9})
    ]
    store.close()


def test_a_bulk_load_breaking_a_foreign_key_writes_nothing(
    new_database: Callable[[], str],
) -> None:
    """A channel loaded without its user, its keys set aside, fails the whole fill (the key is
    checked once at the end) and leaves nothing; the key holds for writes after it."""
    store = Store(new_database())
    columns = ("id", "userId", "token", "name", "createdAt", "updatedAt", "streamKey")
    orphan = [(1, 42, "t", "n", "c", "u", "k")]
    with (
        pytest.raises(Exception, match=r"foreign key"),
        store.filling(),
        store.set_aside(("channels",)),
    ):
        store.load("channels", columns, {}, orphan)
    assert store.scalar("SELECT COUNT(*) FROM channels") == 0
    with pytest.raises(Exception, match=r"(?i)foreign key"), store.transaction():
        store.load("channels", columns, {}, orphan)
    store.close()


def test_work_beside_a_seeding_runs_once_in_another_thread(
    new_database: Callable[[], str],
) -> None:
    """The work a seeding is given to do beside its index build runs once, off the seeding
    thread, and the world it seeds is whole."""
    store = Store(new_database(), ddl())
    threads: list[threading.Thread] = []
    beside = lambda: threads.append(threading.current_thread())  # noqa: E731
    assert seed_store(store, 3, 300, lambda password: "x", opening, beside)
    assert len(threads) == 1 and threads[0] is not threading.current_thread()
    assert store.scalar("SELECT COUNT(*) FROM channels") == 300
    store.close()


def test_a_seeding_whose_work_beside_fails_writes_nothing(
    new_database: Callable[[], str],
) -> None:
    """A failure of the work beside the index build fails the seeding, which leaves no rows
    and no seed behind."""
    store = Store(new_database(), ddl())

    def beside() -> None:
        raise RuntimeError("nothing to prepare")

    with pytest.raises(RuntimeError, match="nothing to prepare"):
        seed_store(store, 3, 300, lambda password: "x", opening, beside)
    assert store.meta("seed") is None
    assert store.scalar("SELECT COUNT(*) FROM channels") == 0
    store.close()


def test_a_load_in_parts_writes_every_part_with_its_common_values(
    new_database: Callable[[], str],
) -> None:
    """A load written in several parts stores every part's rows, each with the load's common
    values, and a row written after the load takes the declared defaults again."""
    store = Store(new_database(), ddl())
    columns = ("id", "username", "createdAt", "updatedAt")
    with store.transaction(), store.loading("users", columns, {"verified": 1}) as write:
        write([(1, "one", "c", "u"), (2, "two", "c", "u")])
        write([(3, "three", "c", "u")])
    with store.transaction() as tx:
        tx.execute(_USER, (4, "late"))
    assert store.all("SELECT id, username, verified FROM users ORDER BY id") == [
        (1, "one", 1),
        (2, "two", 1),
        (3, "three", 1),
        (4, "late", 0),
    ]
    store.close()


def test_a_seeding_leaves_the_declared_defaults_and_keys(new_database: Callable[[], str]) -> None:
    """After a seeding (its load sets the seeded rows' common values as defaults on
    PostgreSQL, and sets the keys aside), a new user takes the declared defaults, and a
    repeated id is refused."""
    store = Store(new_database(), ddl())
    seed_store(store, 0, 8, lambda password: "x", opening)
    with store.transaction() as tx:
        tx.execute(_USER, (100, "late"))
    columns = "verified, groups, preferences, password_hash"
    assert store.one(f"SELECT {columns} FROM users WHERE id = 100") == (0, '["User"]', "{}", None)
    with pytest.raises(Exception, match=r"(?i)unique|duplicate"), store.transaction() as tx:
        tx.execute(_USER, (100, "again"))
    store.close()


def test_sums_read_back_as_numbers(new_database: Callable[[], str]) -> None:
    """A sum of integers reads back as an ``int``, an average as a ``float``, on either
    engine (PostgreSQL's ``numeric`` is not a ``Decimal`` here)."""
    store = Store(new_database())
    store.insert_many(
        "types", [{"id": i, "name": "t", "parent": "p", "source": "s"} for i in (1, 2)]
    )
    total, mean = store.one("SELECT SUM(id), AVG(id) FROM types") or (None, None)
    assert (type(total), total, type(mean), mean) == (int, 3, float, 1.5)
    store.close()


def test_the_outbox_stays_bounded_without_readers(new_database: Callable[[], str]) -> None:
    """The outbox prunes itself (a trigger): after many more events than it keeps, at most
    KEEP + PRUNE_EVERY remain, the newest."""
    store = Store(new_database(), [live_events.SCHEMA])
    total = live_events.KEEP + 3 * live_events.PRUNE_EVERY + 7
    with store.transaction() as conn:
        conn.executemany(
            "INSERT INTO live_events (topic, payload) VALUES ('channel:1:update', '{}')",
            [()] * total,
        )
    kept, newest = store.one("SELECT COUNT(*), MAX(seq) FROM live_events") or (0, 0)
    assert (
        newest == total and live_events.KEEP <= kept <= live_events.KEEP + live_events.PRUNE_EVERY
    )
    store.close()


def test_a_seeding_leaves_the_later_indexes_to_their_build(
    new_database: Callable[[], str],
) -> None:
    """A seeded database lacks the later indexes until their build runs in its thread; after
    it, it has them all."""
    store = Store(new_database(), ddl())
    seed_store(store, 0, 50, lambda password: "x", opening)
    assert store.defers_indexes and not _indexes(store) & set(LATER_INDEXES)
    build = store.later_indexes().start()
    ended = build.wait(30)
    build.stop()
    assert ended and set(LATER_INDEXES) <= _indexes(store)
    store.close()


def _indexes(store: Store) -> set[str]:
    """The names of the store's indexes, on either engine."""
    sql = (
        "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()"
        if isinstance(store, PostgresStore)
        else "SELECT name FROM sqlite_master WHERE type = 'index'"
    )
    return {name for (name,) in store.all(sql)}


def test_both_engines_hold_the_same_world(postgres: Cluster) -> None:
    """A seed gives the same users and channels, value for value, on SQLite and PostgreSQL."""

    def rows(target: str) -> list[tuple[object, ...]]:
        store = Store(target, ddl())
        seed_store(store, 5, 300, lambda password: "x", opening)
        found = [
            row
            for table in ("types", "users", "channels", "channel_roles")
            for row in store.all(f"SELECT * FROM {table} ORDER BY 1, 2")
        ]
        store.close()
        return found

    assert rows(":memory:") == rows(postgres.schema())


def test_a_pooled_connection_whose_backend_ended_is_replaced_when_taken(
    postgres: Cluster,
) -> None:
    """A pooled connection whose backend the server ended while it sat idle is found out and
    replaced when the next request takes it: the request is answered, not failed."""
    import psycopg  # the postgres extra, installed where the cluster runs

    database = "pooled_backend_ended"
    postgres.create(database)
    store = Store(postgres.url_of(database))
    try:
        assert store.scalar("SELECT COUNT(*) FROM users") == 0
        with psycopg.connect(postgres.url, autocommit=True) as conn:
            ended = "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s"
            assert conn.execute(ended, (database,)).fetchall()
            _wait_disconnected(conn, [database])
        assert store.scalar("SELECT COUNT(*) FROM users") == 0
    finally:
        store.close()


def test_a_session_lookup_is_kept_only_where_its_counter_is_heard_without_a_read(
    new_database: Callable[[], str],
) -> None:
    """PostgreSQL's store keeps a found session (its listener hears the ``sessions``
    counter); SQLite's reads it each time (reading the counter would cost as much)."""
    store = Store(new_database())
    try:
        if isinstance(store, PostgresStore):
            assert store.listening().wait_up(10.0)
        sessions.open_session(store, "digest", 1, 0.0, 1e12)
        kept: dict[str, tuple[int, tuple[int, int, float]]] = {}
        assert sessions.found(store, kept, "digest") == sessions.find(store, "digest")
        assert list(kept) == (["digest"] if store.engine == "postgresql" else [])
    finally:
        store.close()


def test_a_requests_read_on_a_connection_whose_backend_ended_is_answered(
    postgres: Cluster,
) -> None:
    """A request's read (awaited on an async connection) taking a connection whose backend the
    server ended while it sat idle is answered on a new one, not failed."""
    import psycopg  # the postgres extra, installed where the cluster runs

    database = "awaited_backend_ended"
    postgres.create(database)
    store = Store(postgres.url_of(database))

    async def read() -> Any:
        return store.scalar("SELECT COUNT(*) FROM users")

    def end_backends() -> None:
        with psycopg.connect(postgres.url, autocommit=True) as conn:
            ended = "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s"
            assert conn.execute(ended, (database,)).fetchall()
            _wait_disconnected(conn, [database])

    async def scenario() -> tuple[Any, Any]:
        try:
            first = await store.serve(read())
            await asyncio.to_thread(end_backends)
            return first, await store.serve(read())
        finally:
            await store.stop_serving()

    try:
        assert asyncio.run(scenario()) == (0, 0)
    finally:
        store.close()
