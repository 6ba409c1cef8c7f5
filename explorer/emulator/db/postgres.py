"""The PostgreSQL engine of the data layer: ``Store("postgresql://user@host/db")``.

Psycopg 3 with pools of its connections (``psycopg_pool``), called synchronously like SQLite's
connection, on the platform's event-loop thread; a request's reads outside a transaction are
awaited there on async connections of their own while the loop serves others (:mod:`.offload`;
see ``docs/architecture.md``, "The data layer"). What differs from SQLite is done here, behind
the :class:`~.engine.Store` methods:

- **Statements** keep SQLite's ``?`` placeholders; each text is converted once (cached) to
  psycopg's ``%s``, with literal ``%`` doubled, as Synapse's ``convert_param_style`` does, and
  ``LIKE`` to ``ILIKE``: SQLite's ``LIKE`` ignores case, so a search matches the same rows.
  camelCase identifiers (``viewersTotal``) are quoted in statements and schema alike, so
  PostgreSQL keeps their case (it folds unquoted names to lower case) and rows read back name
  them as written.
- **Transactions** take a pooled connection for their block, and a transaction-level advisory
  lock first: one transaction writes at a time, as SQLite's ``BEGIN IMMEDIATE`` makes it, so
  statements written for SQLite's isolation (read, then write) keep their meaning. Reads
  outside a transaction take a pooled connection in autocommit for one statement (a
  request's one of at most :data:`.pools.READ_CONNECTIONS`, awaited, the loop serving others).
- **Values** read back as SQLite's: ``numeric`` (what ``SUM`` of integers gives) as ``int``
  or ``float``, never ``Decimal``.
- **Schema** is translated from SQLite's dialect (:func:`translate`): 64-bit integers, text
  in the ``"C"`` collation (bytewise, as SQLite's: names sort alike on both engines, whatever
  the server's locale), an ``INTEGER PRIMARY KEY`` filled as SQLite fills a rowid (the
  largest plus one, by a trigger, so ids given explicitly, as a seeding gives them, never
  collide with later ones), an ``AUTOINCREMENT`` column an identity; the ``versions``
  counters bumped by PL/pgSQL statement triggers.
- **Across processes**, the ``versions`` counters and the outbox's readers go by
  ``LISTEN``/``NOTIFY`` (:mod:`.listener`) instead of a query per cached listing and a poll.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Collection, Coroutine, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import lru_cache
from itertools import count, islice
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from explorer.emulator.db import listener, pools
from explorer.emulator.db.engine import (
    CATALOG_TABLES,
    GROUPING_COLUMNS,
    LATER_INDEXES,
    ROWID,
    SCHEMA,
    TABLE,
    Reader,
    Schema,
    Store,
    Transaction,
    literal,
)
from explorer.emulator.db.protocols import IndexBuild, Rows

if TYPE_CHECKING:
    import psycopg
    import psycopg_pool

T = TypeVar("T")

#: The advisory lock every transaction takes first (one writer at a time, like SQLite's).
WRITE_LOCK = 0x6578706C6F726572
#: The statistics target of a seeding's sampled ``ANALYZE`` (the server's default is 100: a
#: sample of 300 rows a unit, 30,000 a table).
SAMPLED_STATISTICS = 10

#: A statement's tokens the conversion looks at: string literals, quoted names, comments,
#: placeholders, percent signs and words.
_TOKENS = re.compile(r"'(?:[^']|'')*'|\"[^\"]*\"|--[^\n]*|\?|%|[A-Za-z_][A-Za-z0-9_]*")
#: SQLite column types and their PostgreSQL equivalents (SQLite's integers are 64-bit; its
#: text compares bytewise, as the "C" collation does whatever the server's locale).
_TYPES = {
    "INTEGER": "BIGINT",
    "REAL": "DOUBLE PRECISION",
    "BLOB": "BYTEA",
    "TEXT": 'TEXT COLLATE "C"',
}
_NOT_PORTABLE = re.compile(r"\bCREATE TRIGGER\b|\bINSERT OR\b|\bPRAGMA\b|\bjson_each\b")


def _mixed(word: str) -> bool:
    """Whether ``word`` is a camelCase name (PostgreSQL would fold it to lower case)."""
    return word != word.lower() and word != word.upper()


def _rewrite(sql: str, bound: bool, types: bool = False) -> str:
    """``sql`` with camelCase names quoted and ``LIKE`` as ``ILIKE`` (SQLite's ``LIKE``
    ignores case, PostgreSQL's does not); with ``bound``, ``?`` as ``%s`` and ``%`` doubled
    (psycopg reads every ``%`` of a statement that has parameters); with ``types``, SQLite's
    column types as PostgreSQL's."""

    def token(found: re.Match[str]) -> str:
        text = found.group(0)
        first = text[0]
        if first in "'-":
            return text.replace("%", "%%") if bound else text
        if first == '"':
            return text
        if text == "?":
            return "%s" if bound else text
        if text == "%":
            return "%%" if bound else text
        if types and text in _TYPES:
            return _TYPES[text]
        if text.upper() == "LIKE":
            return "ILIKE"
        return f'"{text}"' if _mixed(text) else text

    return _TOKENS.sub(token, sql)


@lru_cache(maxsize=4096)
def statement(sql: str) -> str:
    """A statement written for both engines (``?`` placeholders), as psycopg takes it."""
    return _rewrite(sql, bound=True)


def translate(ddl: str) -> str:
    """Schema in SQLite's dialect as PostgreSQL's (see the module's docstring); what has no
    mechanical translation (triggers, ``INSERT OR``, ``PRAGMA``, ``json_each``) is refused:
    give it per engine (:class:`~.engine.PerEngine`)."""
    refused = _NOT_PORTABLE.search(ddl)
    if refused is not None:
        raise ValueError(f"{refused.group(0)} in a schema both engines run: give it per engine")
    ddl = re.sub(r"--[^\n]*", "", ddl)
    ddl = ddl.replace(
        "INTEGER PRIMARY KEY AUTOINCREMENT", "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY"
    )

    def table(found: re.Match[str]) -> str:
        name, body = found.group(1), found.group(2)
        rowid = ROWID.search(body)
        created = f"CREATE TABLE IF NOT EXISTS {name} ({body});"
        return created if rowid is None else created + _rowid_trigger(name, rowid.group(1))

    return _rewrite(TABLE.sub(table, ddl), bound=False, types=True)


def _rowid_trigger(table: str, column: str) -> str:
    """A trigger giving an inserted row without ``column`` the largest one plus one, as SQLite
    gives a rowid (writers take turns: :data:`WRITE_LOCK`)."""
    return (
        f"\nCREATE OR REPLACE FUNCTION {table}_rowid() RETURNS trigger LANGUAGE plpgsql AS $$ "
        f"BEGIN SELECT COALESCE(MAX({column}), 0) + 1 INTO NEW.{column} FROM {table}; "
        f"RETURN NEW; END $$;\nCREATE OR REPLACE TRIGGER {table}_rowid BEFORE INSERT ON {table} "
        f"FOR EACH ROW WHEN (NEW.{column} IS NULL) EXECUTE FUNCTION {table}_rowid();"
    )


def catalog_triggers() -> str:
    """The ``versions`` counters' triggers: once per statement that writes a catalog table
    (SQLite's run per row; a counter only has to change, and a tick's bulk update would
    otherwise rewrite its row once per channel); and the notification of each bump."""
    grouping = ", ".join(GROUPING_COLUMNS)
    return _rewrite(
        "CREATE OR REPLACE FUNCTION bump_version() RETURNS trigger LANGUAGE plpgsql AS $$ "
        "BEGIN UPDATE versions SET value = value + 1 WHERE name = TG_ARGV[0]; RETURN NULL; "
        "END $$;\n"
        + "".join(
            f"CREATE OR REPLACE TRIGGER {table}_catalog AFTER INSERT OR UPDATE OR DELETE ON "
            f"{table} FOR EACH STATEMENT EXECUTE FUNCTION bump_version('catalog');\n"
            for table in CATALOG_TABLES
        )
        + "CREATE OR REPLACE TRIGGER channels_grouping AFTER INSERT OR DELETE OR UPDATE OF "
        f"{grouping} ON channels FOR EACH STATEMENT EXECUTE FUNCTION bump_version('grouping');\n"
        "CREATE OR REPLACE TRIGGER sessions_version AFTER UPDATE OR DELETE ON sessions "
        "FOR EACH STATEMENT EXECUTE FUNCTION bump_version('sessions');\n"
        # Every process hears each bump, by any writer (:mod:`.listener`).
        "CREATE OR REPLACE FUNCTION versions_notify() RETURNS trigger LANGUAGE plpgsql AS $$ "
        f"BEGIN PERFORM pg_notify({listener.channel(listener.VERSIONS)}, "
        "NEW.name || ' ' || NEW.value); RETURN NULL; END $$;\n"
        "CREATE OR REPLACE TRIGGER versions_notify AFTER UPDATE ON versions FOR EACH ROW "
        "EXECUTE FUNCTION versions_notify();",
        bound=False,
    )


def render(schema: Schema) -> str:
    """A repository's schema as the PostgreSQL engine runs it."""
    if isinstance(schema, str):
        return translate(schema)
    return translate(schema.source) + "\n" + _rewrite(schema.postgresql, bound=False)


class _Fetched:
    """A statement's rows, read at once (so that one run outside a transaction gives its
    pooled connection back before the caller reads them)."""

    __slots__ = ("_rows", "rowcount")

    def __init__(self, rows: list[Any], rowcount: int) -> None:
        self._rows = iter(rows)
        self.rowcount = rowcount

    def fetchone(self) -> Any:
        """The next row, or None."""
        return next(self._rows, None)

    def fetchall(self) -> list[Any]:
        """The remaining rows."""
        return list(self._rows)

    def fetchmany(self, size: int, /) -> list[Any]:
        """The next ``size`` rows at most."""
        return list(islice(self._rows, size))

    def __iter__(self) -> Iterator[Any]:
        """The remaining rows, one at a time."""
        return self._rows


class _Session:
    """One pooled connection inside a transaction, as the engine seam's connection."""

    __slots__ = ("_conn",)

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn

    def execute(self, sql: str, params: Sequence[Any] = (), /) -> Rows:
        """Run one statement (converted once per text)."""
        cursor = self._conn.execute(statement(sql), params)
        return _Fetched(cursor.fetchall() if cursor.description else [], cursor.rowcount)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]], /) -> Rows:
        """Run one statement once per parameter row (pipelined by psycopg)."""
        cursor = self._conn.cursor()
        cursor.executemany(statement(sql), rows)
        return _Fetched([], cursor.rowcount)

    def executescript(self, script: str, /) -> object:
        """Run statements separated by semicolons, without parameters."""
        return self._conn.execute(_rewrite(script, bound=False))


class _Reading(_Session):
    """A pooled connection in a read transaction (:meth:`PostgresStore.reader`): each
    statement runs in a server-side cursor (a named one, ``DECLARE``), whose rows cross over
    as they are fetched, so a large scan read a chunk at a time (``Reads.chunks``: ``FETCH``
    of a chunk) never holds all of them at once, here or in the driver (a client-side cursor
    receives the whole result first)."""

    __slots__ = ("_cursors",)

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        super().__init__(conn)
        self._cursors = count()

    def execute(self, sql: str, params: Sequence[Any] = (), /) -> Rows:
        """Run one statement in a cursor of its own on the server; it hands out the rows."""
        cursor = self._conn.cursor(name=f"reading_{next(self._cursors)}")
        cursor.execute(statement(sql), params)
        return cursor


class _Pooled:
    """Statements outside a transaction: each on a pooled connection in autocommit; a
    request's reads awaited on the loop (:mod:`.offload`, :class:`.pools.LoopReads`)."""

    __slots__ = ("_blocking", "_pool", "_reads")

    def __init__(
        self,
        pool: psycopg_pool.ConnectionPool[Any],
        reads: pools.LoopReads,
        blocking: Callable[..., Rows],
    ) -> None:
        self._pool = pool
        self._reads = reads
        #: :func:`.offload.blocking` (greenlet is imported with psycopg, by the store).
        self._blocking = blocking

    def execute(self, sql: str, params: Sequence[Any] = (), /) -> Rows:
        """Run one statement and read its rows: inside a request (:meth:`PostgresStore.serve`)
        awaited, the loop serving other requests meanwhile."""
        return self._blocking(self.run, self._awaited, sql, params)

    async def _awaited(self, sql: str, params: Sequence[Any]) -> Rows:
        """:meth:`run`, awaited on the loop's async connections."""
        rows, count = await self._reads.fetch(statement(sql), params)
        return _Fetched(rows, count)

    def run(self, sql: str, params: Sequence[Any] = (), /) -> Rows:
        """Run one statement and read its rows, in the calling thread."""
        with self._pool.connection() as conn:
            return _Session(conn).execute(sql, params)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]], /) -> Rows:
        """Run one statement once per parameter row."""
        with self._pool.connection() as conn:
            return _Session(conn).executemany(sql, rows)

    def executescript(self, script: str, /) -> object:
        """Run statements separated by semicolons, without parameters."""
        with self._pool.connection() as conn:
            return _Session(conn).executescript(script)


class PostgresStore(Store):
    """The platform's database on a PostgreSQL server (a ``postgresql://`` URL)."""

    engine = "postgresql"
    loads_beside = True
    awaits_reads = True

    def __init__(self, target: str | Path = ":memory:", extra_ddl: Iterable[Schema] = ()) -> None:
        self.path = str(target)
        try:
            from explorer.emulator.db import offload

            self._pool = pools.blocking_pool(self.path)
        except ModuleNotFoundError as missing:
            raise ModuleNotFoundError(
                "the PostgreSQL engine needs psycopg 3, its pool and greenlet: "
                "pip install 'explorer-livestream[postgres]'"
            ) from missing
        self._reads = pools.LoopReads(self.path)
        self._offload = offload
        self._pooled = _Pooled(self._pool, self._reads, offload.blocking)
        self._conn = self._pooled
        self._depth = 0
        self._held: psycopg.Connection[Any] | None = None
        self._tx = Transaction(self._pooled, self.engine)
        #: This process's listener (started on first use); this store's commits so far, and
        #: how many of them the counters last read include (its own notification of a newer
        #: one may not have arrived yet: the next read asks).
        self._listener: listener.Listener | None = None
        self._commits = self._counted = 0
        with self.transaction() as tx:
            tx.executescript(translate(SCHEMA) + "\n" + catalog_triggers())
            for ddl in extra_ddl:
                tx.executescript(render(ddl))

    def close(self) -> None:
        """Stop the listener; close the blocking pool and its connections (idempotent). The
        async connections of requests' reads close with :meth:`stop_serving`."""
        if self._listener is not None and not self._pool.closed:
            self._listener.close(self._notify)
        self._pool.close()

    async def serve(self, request: Coroutine[Any, Any, T]) -> T:
        """Await ``request`` with its reads outside a transaction awaited on the loop
        (:mod:`.offload`): the loop serves other requests while one waits for the server.
        Transactions stay blocking on the loop, one at a time (:data:`WRITE_LOCK`)."""
        return await self._offload.overlapping(request)

    async def stop_serving(self) -> None:
        """Close this loop's idle async connections of requests' reads."""
        await self._reads.close()

    def unavailable(self, error: BaseException) -> bool:
        """Whether ``error`` is the server's absence: a connection refused or cut (psycopg's
        ``OperationalError``, the pool's ``PoolTimeout`` among them)."""
        from psycopg import OperationalError

        return isinstance(error, OperationalError)

    def _notify(self, channel: str, payload: str) -> None:
        """Send a notification (to this store's listener)."""
        self._pooled.run("SELECT pg_notify(?, ?)", (channel, payload))

    def listening(self) -> listener.Listener:
        """This store's :class:`~.listener.Listener`, started on the first call."""
        if self._listener is None:
            self._listener = listener.Listener(self.path)
            # Its first read of the counters, once it listens, sees every commit made so far.
            self._counted = self._commits
        return self._listener

    @contextmanager
    def reader(self) -> Iterator[Reader]:
        """Reads of one state of the database on a pooled connection of their own (a
        read-only ``REPEATABLE READ`` transaction), for a thread of its own: the pool is
        thread-safe."""
        with self._pool.connection() as conn:
            conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            try:
                yield Reader(_Reading(conn), self.engine)
            finally:
                conn.execute("COMMIT")

    def _begin(self) -> Transaction:
        """Take a pooled connection, begin, and wait for the write lock (one round trip)."""
        conn = self._pool.getconn()
        try:
            # One round trip: statements without parameters go out as one query.
            conn.execute(f"BEGIN; SELECT pg_advisory_xact_lock({WRITE_LOCK})")
        except BaseException:
            self._pool.putconn(conn)
            raise
        self._held = conn
        self._conn = session = _Session(conn)
        self._tx = Transaction(session, self.engine)
        return self._tx

    def _end(self, commit: bool) -> None:
        """Commit or roll back, and give the connection back to the pool. A commit reads the
        ``versions`` counters in its round trip, as it leaves them (no other writer commits
        in between: it holds the write lock), so its own bumps are known at once."""
        conn, self._held, self._conn = self._held, None, self._pooled
        assert conn is not None
        try:
            if not commit:
                conn.execute("ROLLBACK")
                return
            counters = conn.execute("SELECT name, value FROM versions; COMMIT").fetchall()
            self._commits += 1
            if self._listener is not None:
                self._counted = self._commits
                self._listener.saw(counters)
        finally:
            self._pool.putconn(conn)

    @contextmanager
    def filling(self) -> Iterator[Transaction]:
        """Fill a new database in one transaction (foreign keys checked row by row)."""
        with self.transaction() as tx:
            yield tx

    def later_indexes(self) -> IndexBuild:
        """A build of the :data:`~.engine.LATER_INDEXES` a seeding left out (not started)."""
        return LaterIndexes(self.path)

    @contextmanager
    def set_aside(self, tables: Sequence[str], later: Collection[str] = ()) -> Iterator[None]:
        """Bulk-load ``tables``: drop their indexes, their keys (primary, unique and foreign,
        and the foreign keys of other tables that name theirs) and disable their triggers, then
        rebuild, add back and enable them after the block, but for the indexes named in
        ``later``, bumping the catalog version once: each index is built once over the loaded
        rows, sorted, instead of updated row by row, and each foreign key checked once. Use
        inside :meth:`transaction`."""
        with self.transaction() as tx:
            kept = tx.all(
                "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema() "
                "AND tablename = ANY(?) AND indexname NOT IN (SELECT conname FROM pg_constraint)",
                (list(tables),),
            )
            # Foreign keys first: a key another table's foreign key names goes after it.
            keys = tx.all(
                "SELECT CAST(conrelid::regclass AS TEXT), conname, pg_get_constraintdef(oid) "
                "FROM pg_constraint WHERE connamespace = current_schema()::regnamespace "
                "AND (contype IN ('p', 'u', 'f') AND CAST(conrelid::regclass AS TEXT) = ANY(?) "
                "OR contype = 'f' AND CAST(confrelid::regclass AS TEXT) = ANY(?)) "
                "ORDER BY contype = 'f' DESC",
                (list(tables), list(tables)),
            )
            for name, _ in kept:
                tx.execute(f"DROP INDEX {name}")
            for table, name, _ in keys:
                tx.execute(f'ALTER TABLE {table} DROP CONSTRAINT "{name}"')
            for table in tables:
                tx.execute(f"ALTER TABLE {table} DISABLE TRIGGER USER")
        yield
        with self.transaction() as tx:
            for name, sql in kept:
                if name not in later:
                    tx.execute(sql)
            for table, name, definition in reversed(keys):
                tx.execute(f'ALTER TABLE {table} ADD CONSTRAINT "{name}" {definition}')
            for table in tables:
                tx.execute(f"ALTER TABLE {table} ENABLE TRIGGER USER")
        self._bump_versions()

    @contextmanager
    def loading(
        self, table: str, columns: Sequence[str], same: Mapping[str, Any]
    ) -> Iterator[Callable[[Iterable[Any]], None]]:
        """A bulk load of ``table`` in several parts: yields a writer of rows (tuples of
        ``columns``), each with the values of ``same``, each part one binary ``COPY`` (each
        value sent as the server stores it: nothing to parse there). The columns of ``same``
        are the table's defaults for the load, their declared ones given back after it: neither
        sent nor read a row. The table is described and its defaults set and given back once,
        not per part (a million channels load in 50 parts a table: 3 statements, not 150). Use
        inside :meth:`transaction`."""
        with self.transaction() as tx:
            assert self._held is not None
            held = self._held
            described = tx.all(
                "SELECT attname, format_type(atttypid, NULL), pg_get_expr(adbin, adrelid) "
                "FROM pg_attribute LEFT JOIN pg_attrdef ON adrelid = attrelid AND adnum = attnum "
                "WHERE attrelid = CAST(? AS regclass) AND attnum > 0 AND NOT attisdropped",
                (table,),
            )
            if same:
                tx.execute(_defaults(table, {name: literal(value) for name, value in same.items()}))
            listed = _rewrite(", ".join(columns), bound=False)
            types = {name: kind for name, kind, _ in described}
            kinds = [types[name] for name in columns]

            def write(rows: Iterable[Any]) -> None:
                with held.cursor().copy(
                    f"COPY {table} ({listed}) FROM STDIN (FORMAT binary)"
                ) as copy:
                    copy.set_types(kinds)
                    for row in rows:
                        copy.write_row(row)

            yield write
            if same:
                declared = {name: default for name, _, default in described}
                tx.execute(_defaults(table, {name: declared[name] for name in same}))

    def analyze(self) -> None:
        """Gather the planner's statistics from a small sample of each table (a tenth of the
        default's rows: quick at any size, exact enough for the planner, as SQLite's sampled
        ``ANALYZE``); the later build gathers the full ones (:class:`LaterIndexes`)."""
        with self.transaction() as tx:
            tx.execute(f"SET LOCAL default_statistics_target = {SAMPLED_STATISTICS}")
            tx.execute("ANALYZE")

    def catalog_version(self) -> int:
        """A number that changes whenever channels, users or types change (by any writer):
        as the listener heard it (no round trip), else read (see :meth:`_version`)."""
        return self._version("catalog")

    def grouping_version(self) -> int:
        """The grouping counter (see :meth:`~.engine.Store.grouping_version`), as
        :meth:`catalog_version` reads it."""
        return self._version("grouping")

    def _version(self, name: str) -> int:
        """The ``versions`` counter ``name``: the listener's when it is up, confirmed and no
        transaction of this store committed since the last read (its own notification may
        still be on its way); else read (inside a transaction, as that transaction sees it),
        the listener taking what was read."""
        heard = self.listening()
        commits = self._commits
        value = self.heard_version(name)
        if value is None:
            rows = self.all("SELECT name, value FROM versions")
            if self._held is None:
                # Only the commits made before the read (it may be awaited meanwhile).
                self._counted = max(self._counted, commits)
                heard.saw(rows)
            value = dict(rows)[name]
        return value

    def heard_version(self, name: str) -> int | None:
        """The ``versions`` counter ``name`` as the listener heard it, when that includes every
        commit of this store (see :meth:`_version`); else None (no round trip either way)."""
        fresh = self._commits == self._counted and self._held is None
        return self.listening().version(name) if fresh else None

    def catch_up(self, timeout: float = 10.0) -> None:
        """Make the counters this store answers include every commit made before the call:
        a confirmation of its listener (a round trip; nothing while it is down, as the
        counters are read then)."""
        heard = self.listening()
        if heard.up and not heard.confirm(self._notify, timeout):
            self._commits += 1  # not confirmed: as after a commit of its own, the next read asks

    async def wait_for_events(self, after: int, poll: float, idle: float = 1.0) -> None:
        """Wait until an outbox event after ``after`` is notified, at most ``idle`` seconds;
        while the listener is down, ``poll`` seconds."""
        heard = self.listening()
        if heard.up:
            await heard.wait(after, idle)
        else:
            await asyncio.sleep(poll)

    def columns(self, table: str) -> list[str]:
        """Column names of ``table`` in declaration order."""
        return [
            row[0]
            for row in self.all(
                "SELECT column_name FROM information_schema.columns WHERE table_name = ? "
                "AND table_schema = current_schema() ORDER BY ordinal_position",
                (table,),
            )
        ]


def _defaults(table: str, defaults: Mapping[str, str | None]) -> str:
    """An ``ALTER TABLE`` (for :meth:`Transaction.execute`) giving each column of ``defaults``
    its default (an SQL expression; None: none)."""
    changes = ", ".join(
        f"ALTER COLUMN {name} " + ("DROP DEFAULT" if default is None else f"SET DEFAULT {default}")
        for name, default in defaults.items()
    )
    return f"ALTER TABLE {table} {changes}"


class LaterIndexes(IndexBuild):
    """Builds the :data:`~.engine.LATER_INDEXES` a seeding left out, in a thread on a
    connection of its own, while the platform serves: ``CREATE INDEX CONCURRENTLY`` lets its
    readers and writers go on meanwhile. A stop cancels the build; an index it left invalid is
    dropped and built again by the next build."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._conn: psycopg.Connection[Any] | None = None
        super().__init__()

    def _build(self) -> None:
        """Each missing (or invalid) index, then the full statistics of the seeded tables
        (the seeding's were sampled)."""
        import psycopg

        try:
            with psycopg.connect(self.url, autocommit=True) as conn:
                self._conn = conn
                valid: dict[str, bool] = dict(
                    conn.execute(
                        "SELECT c.relname, i.indisvalid FROM pg_index i "
                        "JOIN pg_class c ON c.oid = i.indexrelid "
                        "WHERE c.relnamespace = current_schema()::regnamespace"
                    ).fetchall()
                )
                for name, sql in LATER_INDEXES.items():
                    if valid.get(name):
                        continue
                    steps = [f"DROP INDEX IF EXISTS {name}"] if name in valid else []
                    steps.append(sql.replace("CREATE INDEX", "CREATE INDEX CONCURRENTLY", 1))
                    for step in steps:
                        if self._stopped.is_set():
                            return
                        conn.execute(_rewrite(step, bound=False))
                if not self._stopped.is_set():
                    conn.execute("ANALYZE channels, users")
        except psycopg.Error:  # stopped, or the server went away: the next build does it
            return

    def _interrupt(self) -> None:
        conn = self._conn
        if conn is not None and not conn.closed:
            conn.cancel_safe()

    def _release(self) -> None:
        """Nothing: the build's connection closes with its ``with`` block."""
