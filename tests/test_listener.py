"""The PostgreSQL engine's listener (``LISTEN``/``NOTIFY``), with two stores on one schema of
the private cluster standing for two processes: outbox readers woken by commits and catching
up after a dropped connection, and the ``versions`` counters kept in memory."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from explorer.emulator.db import live_events, sessions
from explorer.emulator.db.engine import Store
from explorer.emulator.db.listener import Listener
from explorer.emulator.db.postgres import PostgresStore
from explorer.emulator.live.outbox import Outbox
from tests.pgcluster import Cluster

pytestmark = pytest.mark.any_engine("runs both engines itself, in every pass")


#: Seconds a test waits for what it expects before failing.
DEADLINE = 10.0
_TYPE = "INSERT INTO types (id, name, parent, source) VALUES (?, 'a', 'b', 'c')"


@pytest.fixture
def pair(postgres: Cluster) -> Iterator[tuple[PostgresStore, PostgresStore]]:
    """Two stores on one new schema (the outbox's table included), each listener up."""
    url = postgres.schema()
    first, second = Store(url, [live_events.SCHEMA]), Store(url, [live_events.SCHEMA])
    try:
        assert isinstance(first, PostgresStore) and isinstance(second, PostgresStore)
        assert first.listening().wait_up(DEADLINE) and second.listening().wait_up(DEADLINE)
        yield first, second
    finally:
        first.close()
        second.close()


def _until(condition: Callable[[], bool]) -> None:
    """Wait for ``condition`` (checked every 10 ms), failing after :data:`DEADLINE`."""
    deadline = time.monotonic() + DEADLINE
    while not condition():
        assert time.monotonic() < deadline, "the condition did not come true in time"
        threading.Event().wait(0.01)


def _publish(store: Store, number: int) -> None:
    with store.transaction() as tx:
        live_events.publish(tx, "channel:1:update", {"n": number})


def test_an_outbox_reader_wakes_on_a_commit_in_another_store(
    pair: tuple[PostgresStore, PostgresStore],
) -> None:
    """A reader waiting with an hour to go is woken by the other store's committed event."""
    writer, reader = pair
    outbox = Outbox(reader)

    async def run() -> list[tuple[str, str]]:
        waiting = asyncio.ensure_future(reader.wait_for_events(outbox.seen, 3600, 3600))
        await asyncio.sleep(0)
        _publish(writer, 1)
        await asyncio.wait_for(waiting, DEADLINE)
        return outbox.read()

    assert asyncio.run(run()) == [("channel:1:update", '{"n":1}')]


def test_a_reader_catches_up_from_its_seq_after_its_listener_reconnects(
    pair: tuple[PostgresStore, PostgresStore],
) -> None:
    """Events committed while a reader's listener was cut off are read once it is back, and
    the next commit wakes it again."""
    writer, reader = pair
    outbox = Outbox(reader)
    heard = reader.listening()
    cut = heard.pid
    writer.scalar("SELECT pg_terminate_backend(?)", (cut,))
    _publish(writer, 1)
    _until(lambda: heard.up and heard.pid != cut)

    async def run() -> list[tuple[str, str]]:
        await asyncio.wait_for(reader.wait_for_events(outbox.seen, 3600, 3600), DEADLINE)
        missed = outbox.read()
        waiting = asyncio.ensure_future(reader.wait_for_events(outbox.seen, 3600, 3600))
        await asyncio.sleep(0)
        _publish(writer, 2)
        await asyncio.wait_for(waiting, DEADLINE)
        return missed + outbox.read()

    assert [payload for _, payload in asyncio.run(run())] == ['{"n":1}', '{"n":2}']


def test_another_stores_write_is_heard_without_a_query(
    pair: tuple[PostgresStore, PostgresStore],
) -> None:
    """A write in one store is in the other's catalog version once it has caught up with the
    commits so far, as its listener heard it (the listener's counters are never queried)."""
    writer, reader = pair
    before = reader.catalog_version()
    with writer.transaction() as tx:
        tx.execute(_TYPE, (1,))
    reader.catch_up()
    assert reader.listening().version("catalog") == before + 1
    assert reader.catalog_version() == before + 1


def test_a_stores_own_write_is_in_its_next_catalog_version(
    pair: tuple[PostgresStore, PostgresStore],
) -> None:
    """A store's committed write is in its very next catalog and grouping versions, before
    its own notification need have arrived."""
    store = pair[0]
    catalog, grouping = store.catalog_version(), store.grouping_version()
    with store.transaction() as tx:
        tx.execute(_TYPE, (1,))
        tx.execute(
            "INSERT INTO users (id, username, createdAt, updatedAt) VALUES (1, 'u', 'c', 'u')"
        )
        tx.execute(
            "INSERT INTO channels (id, userId, token, name, createdAt, updatedAt, streamKey) "
            "VALUES (1, 1, 't', 'n', 'c', 'u', 'k')"
        )
    assert store.catalog_version() == catalog + 3
    assert store.grouping_version() == grouping + 1


def test_a_listener_that_cannot_connect_answers_nothing() -> None:
    """A listener whose server is away is down: no counters (so the store reads them), and a
    reader's wait returns at once (so it polls)."""
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    heard = Listener(f"postgresql://explorer@127.0.0.1:{port}/postgres")
    try:
        assert not heard.wait_up(0.3)
        assert heard.version("catalog") is None
        asyncio.run(asyncio.wait_for(heard.wait(0, 3600), DEADLINE))
    finally:
        heard.close(lambda channel, payload: None)


def test_an_outbox_notification_says_the_newest_seq_its_statement_wrote(
    postgres: Cluster,
) -> None:
    """The outbox's notification carries the newest ``seq`` of the statement's events, so the
    listener need not ask for it."""
    import psycopg  # the postgres extra, installed where the cluster runs

    url = postgres.schema()
    store = Store(url, [live_events.SCHEMA])
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            name = conn.execute(
                "SELECT 'explorer_' || current_schema()::regnamespace::oid || '_live_events'"
            ).fetchone()
            assert name is not None
            conn.execute(f"LISTEN {name[0]}")
            _publish(store, 1)
            _publish(store, 2)
            notes = [n.payload for n in conn.notifies(timeout=DEADLINE, stop_after=2)]
        assert notes == [
            str(seq) for seq in (live_events.newest(store) - 1, live_events.newest(store))
        ]
    finally:
        store.close()


def test_a_stores_own_commit_is_heard_at_once_without_a_read(
    pair: tuple[PostgresStore, PostgresStore],
) -> None:
    """A commit reads the counters it leaves in its own round trip: a session ended in this
    store is in its heard ``sessions`` counter at once, before its notification need have
    arrived."""
    store = pair[0]
    before = store.heard_version("sessions")
    assert before is not None
    with store.transaction() as tx:
        tx.execute(
            "INSERT INTO sessions (token_hash, userId, createdAt, expiresAt) "
            "VALUES ('a', 1, 0, 1e12)"
        )
    assert store.heard_version("sessions") == before
    with store.transaction() as tx:
        tx.execute("DELETE FROM sessions WHERE token_hash = 'a'")
    assert store.heard_version("sessions") == before + 1


def test_a_session_another_store_ended_is_refused_once_heard(
    pair: tuple[PostgresStore, PostgresStore],
) -> None:
    """A session lookup kept by one store (found again without a read: the same row) is
    refused there once the other store's end of that session is heard."""
    kept_by, ender = pair
    sessions.open_session(kept_by, "digest", 1, 0.0, 1e12)
    kept: dict[str, tuple[int, tuple[int, int, float]]] = {}
    first = sessions.found(kept_by, kept, "digest")
    assert first is not None and sessions.found(kept_by, kept, "digest") is first
    found = sessions.find(ender, "digest")
    assert found is not None
    sessions.end(ender, found[0])
    kept_by.catch_up()
    assert sessions.found(kept_by, kept, "digest") is None
