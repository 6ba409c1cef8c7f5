"""The PostgreSQL engine's connections: the blocking pool (``psycopg_pool``) of its
transactions and of reads outside a request, and each loop's async connections of requests'
reads (:mod:`.offload`); how a connection is set up (numbers read back as SQLite's) and when it
is checked before it is used again."""

from __future__ import annotations

import asyncio
import contextlib
import select
from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import psycopg
    import psycopg_pool

#: Async connections a loop's requests' reads outside a transaction use at most at once
#: (:mod:`.offload`): how many of the process's round trips overlap.
READ_CONNECTIONS = 8
#: Connections the blocking pool keeps at most (made as needed): a transaction's, reads
#: outside a request (the simulator's, a notification's, a ranking's reader in its thread, one
#: at a time), with spares, so the loop never waits for one.
POOL_SIZE = 6
#: Seconds a caller waits for a pooled connection before :class:`psycopg_pool.PoolTimeout`
#: (the server down: a request answers 503 within this, rather than hang).
POOL_TIMEOUT = 5.0


@cache
def _numeric_loader() -> type[Any]:
    """A loader of ``numeric`` values as SQLite gives them: an ``int`` when whole (``SUM`` of
    integers is ``numeric`` in PostgreSQL), else a ``float``, never a ``Decimal``."""
    from psycopg.adapt import Loader

    class NumericLoader(Loader):
        """``numeric`` text as an ``int`` or a ``float``."""

        def load(self, data: Any) -> int | float:
            """The number ``data`` spells."""
            text = bytes(data).decode()
            return int(text) if text.lstrip("-").isdigit() else float(text)

    return NumericLoader


def configure(conn: psycopg.Connection[Any] | psycopg.AsyncConnection[Any]) -> None:
    """Set up a new pooled connection: numbers read back as SQLite's."""
    conn.adapters.register_loader("numeric", _numeric_loader())


def blocking_pool(url: str) -> psycopg_pool.ConnectionPool[Any]:
    """The blocking pool of ``url`` (opened, a connection made)."""
    from psycopg_pool import ConnectionPool

    pool: ConnectionPool[Any] = ConnectionPool(
        url,
        min_size=1,
        max_size=POOL_SIZE,
        kwargs={"autocommit": True},
        configure=configure,
        # A connection the server closed (a restart) is found out and replaced when it is
        # taken, rather than failing the request that took it.
        check=_check_if_stirred,
        timeout=POOL_TIMEOUT,
        open=False,
    )
    pool.open(wait=True, timeout=10.0)
    return pool


class LoopReads:
    """A request's reads outside a transaction, awaited on the loop that serves it: async
    connections in autocommit, made as reads need them (at most :data:`READ_CONNECTIONS` in
    use), kept idle for the next read, one whose socket stirred (:func:`_stirred`) or whose
    read failed closed and not reused. They have no task of their own, so a loop may end with
    them (tests run one after another; a loop after it makes connections of its own, the
    ended one's closing when collected): psycopg's ``AsyncConnectionPool`` keeps worker tasks
    on its loop, which a loop ending without the pool's ``close`` left pending (the suite
    hung in ``asyncio.run``'s cancelling of them)."""

    def __init__(self, url: str) -> None:
        self._url = url
        self._loop: asyncio.AbstractEventLoop | None = None
        self._idle: list[psycopg.AsyncConnection[Any]] = []
        self._slots = asyncio.Semaphore(READ_CONNECTIONS)

    async def fetch(self, sql: str, params: Sequence[Any] = ()) -> tuple[list[Any], int]:
        """Run one statement (as psycopg takes it) and read its rows: them and its count. A
        read waits at most :data:`POOL_TIMEOUT` for a connection (``PoolTimeout``, an
        ``OperationalError``: the platform answers 503)."""
        from psycopg_pool import PoolTimeout

        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            self._loop, self._idle = loop, []
            self._slots = asyncio.Semaphore(READ_CONNECTIONS)
        slots = self._slots
        try:
            await asyncio.wait_for(slots.acquire(), POOL_TIMEOUT)
        except TimeoutError:
            raise PoolTimeout(f"no connection for a read within {POOL_TIMEOUT} s") from None
        try:
            conn = await self._take()
            try:
                cursor = await conn.execute(sql, params)
                rows = await cursor.fetchall() if cursor.description else []
            except BaseException:  # an error or a cancellation: its state is unknown
                with contextlib.suppress(Exception):
                    await conn.close()
                raise
            self._idle.append(conn)
            return rows, cursor.rowcount
        finally:
            slots.release()

    async def _take(self) -> psycopg.AsyncConnection[Any]:
        """An idle connection that has not stirred, else a new one."""
        import psycopg

        while self._idle:
            conn = self._idle.pop()
            if not _stirred(conn):
                return conn
            await conn.close()
        conn = await psycopg.AsyncConnection.connect(
            self._url, autocommit=True, connect_timeout=int(POOL_TIMEOUT)
        )
        configure(conn)
        return conn

    async def close(self) -> None:
        """Close the running loop's idle connections."""
        if self._loop is asyncio.get_running_loop():
            idle, self._idle = self._idle, []
            for conn in idle:
                await conn.close()


def _stirred(conn: psycopg.Connection[Any] | psycopg.AsyncConnection[Any]) -> bool:
    """Whether an idle connection may no longer serve (the blocking pool checks it with a round
    trip, :class:`LoopReads` makes a new one): closed, or its socket has something to read (a
    server that closes a connection, restarting or ending its backend, says so or hangs up,
    and either makes it readable).
    Checking every checkout cost a write request one more round trip: about a third of the
    platform's samples under the benchmark's writes."""
    if conn.closed:
        return True
    # poll, not select: a busy platform's descriptors can pass select's limit of 1,024.
    readable = select.poll()
    readable.register(conn.fileno(), select.POLLIN)
    return bool(readable.poll(0))


def _check_if_stirred(conn: psycopg.Connection[Any]) -> None:
    """The blocking pool's check of a connection it hands out (:func:`_stirred`)."""
    if _stirred(conn):
        from psycopg_pool import ConnectionPool

        ConnectionPool.check_connection(conn)
