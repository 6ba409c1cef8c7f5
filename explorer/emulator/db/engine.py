"""The engine seam of the platform's data layer, its embedded SQLite engine and the core
records' schema.

:class:`Store` is the platform's database: ``Store(path)`` (or ``":memory:"``) opens SQLite,
the embedded default, and ``Store("postgresql://...")`` the PostgreSQL engine
(:mod:`.postgres`, registered under its URL scheme in :data:`ENGINES`), a subclass that does
each engine-specific step (connections, transaction boundaries, schema rendering, bulk loads,
statistics) the PostgreSQL way behind the same methods, as ``pathlib.Path(...)`` gives the
path class of its system. Statements are written once, with ``?`` placeholders, in the dialect
both engines accept; schema is written once in SQLite's dialect, which the PostgreSQL engine
translates, but for what has no common form (triggers), given per engine as a
:class:`PerEngine`.

The rest of the platform never holds a driver connection: :meth:`Store.transaction` hands out
a :class:`Transaction`, whose statements commit together or not at all. One connection, used
only from the platform's event-loop thread (``check_same_thread`` stays on, so a stray
cross-thread call fails loudly). WAL journaling lets readers of the same file
(another ``explorer serve`` chat node, ``sqlite3`` in a terminal) see committed state while the
platform writes. Every write runs inside :meth:`Store.transaction`, so a crash or a bad request
never leaves half a record behind. This module owns the schema of the core records (users,
channels, types, credentials); chat and resource modules of the other groups declare
their own tables (``SCHEMA``) and keep their queries next to their routes.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Collection, Coroutine, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

import orjson

from explorer.emulator.db.listener import Hearing
from explorer.emulator.db.protocols import Connection, IndexBuild, Rows

T = TypeVar("T")

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);

-- Bumped by triggers on every write to what channel listings show, from any connection or
-- process, so read caches can never serve a stale page.
CREATE TABLE IF NOT EXISTS versions (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
INSERT INTO versions (name, value) VALUES ('catalog', 0), ('grouping', 0), ('sessions', 0)
ON CONFLICT DO NOTHING;

CREATE TABLE IF NOT EXISTS types (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL, parent TEXT NOT NULL, description TEXT,
    source TEXT NOT NULL, coverUrl TEXT, backgroundUrl TEXT, availableAt TEXT
);

CREATE TABLE IF NOT EXISTS users (
    id INTEGER PRIMARY KEY, username TEXT NOT NULL, email TEXT, password_hash TEXT,
    level INTEGER NOT NULL DEFAULT 0, experience INTEGER NOT NULL DEFAULT 0,
    sparks INTEGER NOT NULL DEFAULT 0, avatarUrl TEXT, bio TEXT, social TEXT NOT NULL DEFAULT '{}',
    primaryTeam INTEGER, verified INTEGER NOT NULL DEFAULT 0, confirm_code TEXT,
    groups TEXT NOT NULL DEFAULT '["User"]', preferences TEXT NOT NULL DEFAULT '{}',
    createdAt TEXT NOT NULL, updatedAt TEXT NOT NULL, deletedAt TEXT
);
-- Names and tokens are unique and found in any case: lower() indexes, which both engines
-- build and use for ``lower(x) = lower(?)`` (replacing the SQLite-only NOCASE ones).
DROP INDEX IF EXISTS users_username;
CREATE UNIQUE INDEX IF NOT EXISTS users_username_lower ON users (lower(username));

CREATE TABLE IF NOT EXISTS channels (
    id INTEGER PRIMARY KEY, userId INTEGER NOT NULL UNIQUE REFERENCES users (id),
    token TEXT NOT NULL, name TEXT NOT NULL, online INTEGER NOT NULL DEFAULT 0,
    featured INTEGER NOT NULL DEFAULT 0, partnered INTEGER NOT NULL DEFAULT 0,
    suspended INTEGER NOT NULL DEFAULT 0, interactive INTEGER NOT NULL DEFAULT 0,
    hasVod INTEGER NOT NULL DEFAULT 0, vodsEnabled INTEGER NOT NULL DEFAULT 1,
    hasTranscodes INTEGER NOT NULL DEFAULT 0, featureLevel INTEGER NOT NULL DEFAULT 0,
    ftl INTEGER NOT NULL DEFAULT 0, audience TEXT NOT NULL DEFAULT 'teen',
    viewersTotal INTEGER NOT NULL DEFAULT 0, viewersCurrent INTEGER NOT NULL DEFAULT 0,
    numFollowers INTEGER NOT NULL DEFAULT 0, description TEXT, typeId INTEGER REFERENCES types (id),
    languageId TEXT, interactiveGameId INTEGER, transcodingProfileId INTEGER, coverId INTEGER,
    thumbnailId INTEGER, badgeId INTEGER, hosteeId INTEGER, bannerUrl TEXT, costreamId TEXT,
    createdAt TEXT NOT NULL, updatedAt TEXT NOT NULL, deletedAt TEXT, streamKey TEXT NOT NULL
);
DROP INDEX IF EXISTS channels_token;
CREATE UNIQUE INDEX IF NOT EXISTS channels_token_lower ON channels (lower(token));
-- Rankings read highest first with ties by ascending id, listed (unsuspended) channels only:
-- these indexes are in that order and hold every column such a page's ids need, so skipping,
-- seeking or counting rows never reads the table.
DROP INDEX IF EXISTS channels_viewers_total;
DROP INDEX IF EXISTS channels_viewers_current;
DROP INDEX IF EXISTS channels_followers;
CREATE INDEX IF NOT EXISTS channels_rank_viewers_total
    ON channels (suspended, viewersTotal DESC, id);
CREATE INDEX IF NOT EXISTS channels_rank_viewers_current
    ON channels (suspended, viewersCurrent DESC, id);
CREATE INDEX IF NOT EXISTS channels_online ON channels (online, viewersCurrent);
-- The hosts of a channel (GET /channels/{id}/hosters): few channels host at all.
CREATE INDEX IF NOT EXISTS channels_hostee ON channels (hosteeId) WHERE hosteeId IS NOT NULL;
{later};

CREATE TABLE IF NOT EXISTS channel_roles (
    channelId INTEGER NOT NULL, userId INTEGER NOT NULL, roles TEXT NOT NULL,
    PRIMARY KEY (channelId, userId)
);

CREATE TABLE IF NOT EXISTS sessions (
    id INTEGER PRIMARY KEY, token_hash TEXT NOT NULL UNIQUE, userId INTEGER NOT NULL,
    createdAt REAL NOT NULL, expiresAt REAL NOT NULL
);

CREATE TABLE IF NOT EXISTS oauth_clients (
    id TEXT PRIMARY KEY, secret_hash TEXT, name TEXT NOT NULL, website TEXT,
    ownerId INTEGER, redirectUris TEXT NOT NULL, createdAt TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS oauth_codes (
    code_hash TEXT PRIMARY KEY, clientId TEXT NOT NULL, userId INTEGER NOT NULL,
    scopes TEXT NOT NULL, redirectUri TEXT NOT NULL, expiresAt REAL NOT NULL,
    used INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE IF NOT EXISTS oauth_tokens (
    token_hash TEXT PRIMARY KEY, kind TEXT NOT NULL, userId INTEGER NOT NULL,
    clientId TEXT NOT NULL, scopes TEXT NOT NULL, family TEXT NOT NULL,
    expiresAt REAL NOT NULL, revoked INTEGER NOT NULL DEFAULT 0, used INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS oauth_tokens_family ON oauth_tokens (family);
"""

#: Indexes a new world's seeding leaves for later (:class:`LaterIndexes`), each read only by
#: listings ordered by followers or filtered by language or type: at a million channels they
#: cost seconds of the start, and a listing before they exist is still right (it scans).
LATER_INDEXES = {
    "channels_rank_followers": "CREATE INDEX IF NOT EXISTS channels_rank_followers "
    "ON channels (suspended, numFollowers DESC, id)",
    "channels_language": "CREATE INDEX IF NOT EXISTS channels_language "
    "ON channels (languageId, viewersTotal)",
    "channels_type": "CREATE INDEX IF NOT EXISTS channels_type ON channels (typeId, viewersTotal)",
    # Related channels (``resources/channel_related.py``): each tier of a channel's relatives
    # in its order, counted and paged without reading the table or sorting.
    "channels_related_type": "CREATE INDEX IF NOT EXISTS channels_related_type ON channels "
    "(typeId, suspended, online DESC, viewersCurrent DESC, viewersTotal DESC, id, languageId)",
    "channels_related_language": "CREATE INDEX IF NOT EXISTS channels_related_language ON "
    "channels (languageId, suspended, online DESC, viewersCurrent DESC, viewersTotal DESC, id, "
    "typeId)",
}
#: Every table and index; opening a database made by an older version, or one whose later
#: indexes a stop interrupted, builds what is missing.
SCHEMA = SCHEMA.replace("{later}", ";\n".join(LATER_INDEXES.values()))


#: Tables whose writes change what channel listings show (see the ``versions`` table).
CATALOG_TABLES = ("channels", "users", "types")
#: The ``channels`` columns whose change regroups the listed channels (the grouping version).
GROUPING_COLUMNS = ("typeId", "languageId", "suspended")
CATALOG_TRIGGERS = (
    "\n".join(
        f"CREATE TRIGGER IF NOT EXISTS {table}_{op.lower()}_catalog AFTER {op} ON {table} "
        "BEGIN UPDATE versions SET value = value + 1 WHERE name = 'catalog'; END;"
        for table in CATALOG_TABLES
        for op in ("INSERT", "UPDATE", "DELETE")
    )
    + "".join(
        # The grouping version: which channels share a type or a language (and are listed) changed.
        f"\nCREATE TRIGGER IF NOT EXISTS channels_{name}_grouping AFTER {op} ON channels "
        "BEGIN UPDATE versions SET value = value + 1 WHERE name = 'grouping'; END;"
        for name, op in (
            ("insert", "INSERT"),
            ("delete", "DELETE"),
            ("update", f"UPDATE OF {', '.join(GROUPING_COLUMNS)}"),
        )
    )
    + "".join(
        # The sessions version: a session ended or changed (what a kept lookup may no longer say).
        f"\nCREATE TRIGGER IF NOT EXISTS sessions_{op.lower()}_version AFTER {op} ON sessions "
        "BEGIN UPDATE versions SET value = value + 1 WHERE name = 'sessions'; END;"
        for op in ("UPDATE", "DELETE")
    )
)


@dataclass(frozen=True)
class PerEngine:
    """A repository's schema with parts that have no form both engines accept: ``source``
    (SQLite's dialect, which the PostgreSQL engine translates), then ``sqlite`` on SQLite or
    ``postgresql`` (PostgreSQL's own dialect, run as written) on PostgreSQL. A fragment of a
    statement with no common form is one too (``source`` empty), its engine's part picked by
    :meth:`Reads.fragment`."""

    source: str
    sqlite: str = ""
    postgresql: str = ""


#: The items of a JSON list (a text column, ``{}`` its name) as a table of one column,
#: ``value``, for ``EXISTS (SELECT 1 FROM ... WHERE value = ?)``.
JSON_ITEMS = PerEngine(
    source="", sqlite="json_each({})", postgresql="jsonb_array_elements_text({}::jsonb)"
)


#: What a repository's ``SCHEMA`` is: one text for both engines, or parts per engine.
Schema = str | PerEngine


def connect(path: str | Path, check_same_thread: bool = True) -> sqlite3.Connection:
    """Open ``path`` (or ``":memory:"``) in autocommit mode with WAL and sane pragmas."""
    if str(path) != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(
        str(path), isolation_level=None, timeout=10.0, check_same_thread=check_same_thread
    )
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA busy_timeout=10000")
    return conn


class Reads:
    """Queries on a connection: what the :class:`Store` (outside any transaction) and an open
    :class:`Transaction` both answer."""

    __slots__ = ()
    _conn: Connection
    #: The engine the statements run on (``"sqlite"``, ``"postgresql"``).
    engine: str

    def one(self, sql: str, params: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        """The first row of ``sql``, or None."""
        row: tuple[Any, ...] | None = self._conn.execute(sql, params).fetchone()
        return row

    def all(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Every row of ``sql``."""
        return self._conn.execute(sql, params).fetchall()

    def scalar(self, sql: str, params: Sequence[Any] = ()) -> Any:
        """The first column of the first row of ``sql``, or None."""
        row = self.one(sql, params)
        return None if row is None else row[0]

    def fragment(self, fragment: PerEngine) -> str:
        """This engine's part of a statement ``fragment`` that has no common form."""
        return fragment.postgresql if self.engine == "postgresql" else fragment.sqlite

    def chunks(
        self, sql: str, params: Sequence[Any] = (), size: int = 65_536
    ) -> Iterator[list[tuple[Any, ...]]]:
        """The rows of ``sql``, ``size`` at a time (a large read need not hold every row as a
        tuple at once)."""
        rows = self._conn.execute(sql, params)
        while chunk := rows.fetchmany(size):
            yield chunk


class Reader(Reads):
    """Reads of one state of the database, in one transaction: a read-only one handed out by
    :meth:`Store.reader`, valid only inside its block."""

    __slots__ = ("_conn", "engine")

    def __init__(self, conn: Connection, engine: str = "sqlite") -> None:
        self._conn = conn
        self.engine = engine


class Transaction(Reader):
    """One open transaction: every statement run through it commits with the others, or none
    does. Handed out by :meth:`Store.transaction`; valid only inside its block."""

    __slots__ = ()

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Rows:
        """Run one statement with ``params`` bound to its placeholders."""
        return self._conn.execute(sql, params)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> Rows:
        """Run one statement once per parameter row."""
        return self._conn.executemany(sql, rows)

    def executescript(self, script: str) -> None:
        """Run statements separated by semicolons (DDL)."""
        self._conn.executescript(script)


#: The engines a URL opens, by its scheme (``explorer.emulator.db`` registers PostgreSQL's).
ENGINES: dict[str, type[Store]] = {}
_URL = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")


def engine_of(target: str | Path) -> str:
    """The engine ``target`` names: a URL's scheme, else ``"sqlite"`` (a path)."""
    found = _URL.match(str(target))
    return "sqlite" if found is None else found.group(1)


class Store(Reads, Hearing):
    """The platform's database: schema, transactions and shared lookups. This class is the
    SQLite engine; a URL opens the engine registered for its scheme in :data:`ENGINES` (a
    subclass doing each engine-specific method its way)."""

    engine = "sqlite"
    #: Whether a bulk load (:meth:`load`) runs in another process, the database server, so
    #: that a seeding making its next rows meanwhile runs beside it. Not SQLite's: its
    #: ``executemany`` lets go of the GIL for each row only, and a thread making rows would
    #: take it at each, slowing both.
    loads_beside = False
    #: Whether a request's reads are awaited (:meth:`serve` does something): the platform puts
    #: its requests through :meth:`serve` only then. Not SQLite's, whose reads run as written.
    awaits_reads = False

    def __new__(cls, target: str | Path = ":memory:", extra_ddl: Iterable[Schema] = ()) -> Store:
        if cls is Store:
            engine = engine_of(target)
            if engine != "sqlite":
                if engine not in ENGINES:
                    raise ValueError(
                        f"{engine}:// is not a database engine of the platform: give a SQLite "
                        f"file path (or :memory:) or a URL of {', '.join(sorted(ENGINES))}"
                    )
                cls = ENGINES[engine]
        return super().__new__(cls)

    def __init__(self, target: str | Path = ":memory:", extra_ddl: Iterable[Schema] = ()) -> None:
        self.path = str(target)
        self.conn = self._conn = connect(target)
        self.conn.executescript(SCHEMA)
        self.conn.executescript(CATALOG_TRIGGERS)
        scripts = [ddl if isinstance(ddl, str) else ddl.source + ddl.sqlite for ddl in extra_ddl]
        for script in scripts:
            self.conn.executescript(script)
        self._depth = 0
        self._tx = Transaction(self.conn)
        self._add_keys(scripts)
        #: The catalog version last read outside a transaction, and this connection's change
        #: count then. Only an in-memory database is this connection's alone; a file may
        #: have other writers, whose changes only a query sees.
        self._private = self.path == ":memory:"
        self._version_seen: tuple[int, int] = (-1, 0)

    def close(self) -> None:
        """Close the connection (idempotent)."""
        self.conn.close()

    def unavailable(self, error: BaseException) -> bool:
        """Whether ``error`` says the database server is away (down or restarting), which a
        request answers 503 rather than 500: never, for an engine without a server (a file);
        the PostgreSQL engine's store overrides it."""
        return False

    async def serve(self, request: Coroutine[Any, Any, T]) -> T:
        """Await ``request`` (a request's ASGI call): here its statements run on the loop, as
        they are written (a SQLite read takes microseconds, less than a hop to a thread: see
        ``docs/architecture.md``); the PostgreSQL engine's store awaits its reads."""
        return await request

    async def stop_serving(self) -> None:
        """Release what serving requests on the running loop holds: nothing here (the
        PostgreSQL engine's store closes its async connections of reads)."""

    @contextmanager
    def transaction(self) -> Iterator[Transaction]:
        """Run a block atomically: all of its writes commit, or none do.

        Nested use joins the outer transaction, so helpers can write without knowing who
        called them. Only one transaction writes at a time (for SQLite ``BEGIN IMMEDIATE``
        takes the write lock up front, which keeps a second process on the same file from
        interleaving).
        """
        if self._depth:
            self._depth += 1
            try:
                yield self._tx
            finally:
                self._depth -= 1
            return
        tx = self._begin()
        self._depth = 1
        try:
            yield tx
        except BaseException:
            self._depth = 0
            self._end(commit=False)
            raise
        self._depth = 0
        self._end(commit=True)

    @contextmanager
    def reader(self) -> Iterator[Reader]:
        """Reads of one state, for a long read in a thread of its own while the loop serves:
        on a file a connection of its own, opened here (in the calling thread, which alone may
        use it) and closed after; on PostgreSQL a pooled one. In memory the store's own
        connection, so from the store's thread only (joining a transaction open on it)."""
        shared = self.path == ":memory:"
        conn = self.conn if shared else connect(self.path)
        began = not conn.in_transaction
        try:
            if began:
                conn.execute("BEGIN")
            try:
                yield Reader(conn)
            finally:
                if began:
                    conn.execute("COMMIT")
        finally:
            if not shared:
                conn.close()

    def _begin(self) -> Transaction:
        """Open the outermost transaction; the one every nested block joins."""
        self.conn.execute("BEGIN IMMEDIATE")
        return self._tx

    def _end(self, commit: bool) -> None:
        """Commit or roll back the outermost transaction."""
        self.conn.execute("COMMIT" if commit else "ROLLBACK")

    @contextmanager
    def filling(self) -> Iterator[Transaction]:
        """Fill a new database in one transaction, quickly, and as safely as any other.

        Under a rollback journal instead of WAL: it copies only the pages a transaction
        changes that were there before it; pages appended past the file's end need no copy
        (a crash truncates them). So the rows are written once, not to the WAL and again at
        the checkpoint. When another connection holds the file (the switch needs it alone) it
        stays in WAL: slower, the same result. Foreign keys are checked once over the whole
        database before the commit (``PRAGMA foreign_key_check``) instead of row by row (a
        quarter of the time at a million channels); a violation rolls it all back.
        """
        switched = False
        if self.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal":
            try:
                mode = self.conn.execute("PRAGMA journal_mode=DELETE").fetchone()[0]
            except sqlite3.OperationalError:
                mode = "wal"
            switched = mode == "delete"
        self.conn.execute("PRAGMA foreign_keys=OFF")
        try:
            with self.transaction() as conn:
                yield conn
                broken = conn.execute("PRAGMA foreign_key_check").fetchone()
                if broken is not None:
                    raise sqlite3.IntegrityError(f"a row breaks a foreign key: {broken}")
        finally:
            self.conn.execute("PRAGMA foreign_keys=ON")
            if switched:
                self.conn.execute("PRAGMA journal_mode=WAL")

    @property
    def defers_indexes(self) -> bool:
        """Whether a seeding leaves the :data:`LATER_INDEXES` to :meth:`later_indexes` (a
        file: its platform builds them while it serves)."""
        return self.path != ":memory:"

    def later_indexes(self) -> IndexBuild:
        """A build of the :data:`LATER_INDEXES` a seeding left out (not started)."""
        return LaterIndexes(self.path)

    @contextmanager
    def set_aside(self, tables: Sequence[str], later: Collection[str] = ()) -> Iterator[None]:
        """Bulk-load ``tables``: drop their indexes and triggers, then rebuild them after the
        block, but for the indexes named in ``later``, bumping the catalog version once
        (building an index over loaded rows sorts once instead of updating it row by row).
        Use inside :meth:`transaction`."""
        marks = ", ".join("?" * len(tables))
        kept = self.all(
            f"SELECT type, name, sql FROM sqlite_master WHERE tbl_name IN ({marks}) "
            "AND type IN ('index', 'trigger') AND sql IS NOT NULL",
            tables,
        )
        for kind, name, _ in kept:
            self.conn.execute(f"DROP {kind.upper()} {name}")
        yield
        for _, name, sql in kept:
            if name not in later:
                self.conn.execute(sql)
        self._bump_versions()

    def _bump_versions(self) -> None:
        """Change the catalog and grouping versions once (after a bulk load)."""
        with self.transaction() as tx:
            tx.execute(
                "UPDATE versions SET value = value + 1 WHERE name IN ('catalog', 'grouping')"
            )

    def analyze(self) -> None:
        """Gather the planner's statistics from a sample of each index: exact enough for the
        planner, quick at any size."""
        self.conn.execute("PRAGMA analysis_limit = 1000")
        self.conn.execute("ANALYZE")

    def grouping_version(self) -> int:
        """A number that changes whenever a channel is added or removed, or changes its type,
        language or suspension (by any writer): what counts of channels by type or language
        depend on."""
        value: int = self.scalar("SELECT value FROM versions WHERE name = 'grouping'")
        return value

    def catalog_version(self) -> int:
        """A number that changes whenever channels, users or types change (by any writer).

        In memory, the one connection's change count stands in for the query while it is
        unchanged: no statement can change the version without changing the count.
        """
        conn = self.conn
        changes = conn.total_changes
        if self._private and changes == self._version_seen[0] and not conn.in_transaction:
            return self._version_seen[1]
        value: int = self.scalar("SELECT value FROM versions WHERE name = 'catalog'")
        if self._private and not conn.in_transaction:
            self._version_seen = changes, value
        return value

    # --- generic helpers ------------------------------------------------------------------

    def meta(self, key: str) -> str | None:
        """A value from the key/value ``meta`` table."""
        value: str | None = self.scalar("SELECT value FROM meta WHERE key = ?", (key,))
        return value

    def set_meta(self, values: Mapping[str, str]) -> None:
        """Store every key of ``values`` with its value in the key/value ``meta`` table, in one
        statement (inside the caller's transaction, if one is open)."""
        rows = ", ".join(["(?, ?)"] * len(values))
        with self.transaction() as tx:
            tx.execute(
                f"INSERT INTO meta (key, value) VALUES {rows} "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                [part for pair in values.items() for part in pair],
            )

    def columns(self, table: str) -> list[str]:
        """Column names of ``table`` in declaration order."""
        return [row[1] for row in self.conn.execute(f"PRAGMA table_info({table})")]

    def _add_keys(self, scripts: Sequence[str]) -> None:
        """Give each table of ``scripts`` that a file made before its key (an ``INTEGER PRIMARY
        KEY``, the rowid's alias: an insertion order made explicit) holds without it that key:
        the table is made again as its script declares it, each row keeping its rowid as its
        key, then the script builds the table's indexes again."""
        made = dict(self.conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'"))
        for script in scripts:
            missing = [
                (name, body, key)
                for name, body, key in _keyed(script)
                if f"{key} INTEGER PRIMARY KEY" not in made[name]
            ]
            for name, body, key in missing:
                with self.transaction() as tx:
                    old = self.columns(name)
                    if key in old:  # another process opening the file did it first
                        continue
                    kept = ", ".join(old)
                    tx.execute(f"CREATE TABLE {name}_keyed ({body})")
                    tx.execute(
                        f"INSERT INTO {name}_keyed ({key}, {kept}) SELECT rowid, {kept} FROM {name}"
                    )
                    tx.execute(f"DROP TABLE {name}")
                    tx.execute(f"ALTER TABLE {name}_keyed RENAME TO {name}")
            if missing:
                self.conn.executescript(script)

    def load(
        self, table: str, columns: Sequence[str], same: Mapping[str, Any], rows: Iterable[Any]
    ) -> None:
        """Bulk-insert ``rows`` (tuples of ``columns``) into ``table``, every row also holding
        the values of ``same``. Use inside :meth:`transaction`."""
        with self.loading(table, columns, same) as write:
            write(rows)

    @contextmanager
    def loading(
        self, table: str, columns: Sequence[str], same: Mapping[str, Any]
    ) -> Iterator[Callable[[Iterable[Any]], None]]:
        """A bulk load of ``table`` in several parts: yields a writer of rows (tuples of
        ``columns``), every row also holding the values of ``same`` (column: value, written into
        the statement once as literals). What a load needs is prepared once, not per part. Use
        inside :meth:`transaction`."""
        literals = {name: literal(value) for name, value in same.items()}
        names = [*columns, *literals]
        values = ["?"] * len(columns) + list(literals.values())
        sql = f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join(values)})"
        with self.transaction() as tx:

            def write(rows: Iterable[Any]) -> None:
                tx.executemany(sql, rows)

            yield write

    def insert_many(self, table: str, rows: Iterable[dict[str, Any]]) -> None:
        """Insert dict rows (all with the same keys) in one statement batch."""
        rows = list(rows)
        if not rows:
            return
        keys = list(rows[0])
        sql = f"INSERT INTO {table} ({', '.join(keys)}) VALUES ({', '.join('?' * len(keys))})"
        with self.transaction() as conn:
            conn.executemany(sql, [tuple(r[k] for k in keys) for r in rows])


#: A table a schema creates (its name and body), and the column in a body that aliases the
#: rowid (a key SQLite fills with the largest plus one).
TABLE = re.compile(
    r"CREATE TABLE IF NOT EXISTS (\w+) \((.*?)\)\s*(?:WITHOUT ROWID)?\s*;", re.DOTALL
)
ROWID = re.compile(r"(\w+) INTEGER PRIMARY KEY\b(?! AUTOINCREMENT)")


@cache
def _keyed(script: str) -> tuple[tuple[str, str, str], ...]:
    """``(name, body, key column)`` of each table of ``script`` keyed by the rowid's alias."""
    return tuple(
        (name, body, key.group(1))
        for name, body in TABLE.findall(script)
        if (key := ROWID.search(body)) is not None
    )


def literal(value: Any) -> str:
    """``value`` (None, an int or a str) as an SQL literal."""
    if value is None:
        return "NULL"
    if isinstance(value, int):
        return str(value)
    return "'" + str(value).replace("'", "''") + "'"


def dumps(value: Any) -> str:
    """JSON text for a TEXT column."""
    return orjson.dumps(value).decode()


class LaterIndexes(IndexBuild):
    """Builds the :data:`LATER_INDEXES` a seeding left out, in a thread on a connection of its
    own, while the platform serves: in WAL its readers keep reading meanwhile, and its writers
    wait for each index (under a second at a million channels). A stop interrupts the build
    and rolls the index back; the next start builds it (``SCHEMA``)."""

    def __init__(self, path: str) -> None:
        self.conn = connect(path, check_same_thread=False)
        super().__init__()

    def _build(self) -> None:
        """Each missing index, then its sampled statistics (as the seeding's ``ANALYZE``)."""
        try:
            self.conn.execute("PRAGMA analysis_limit = 1000")
            present = {row[0] for row in self.conn.execute("SELECT name FROM sqlite_master")}
            for name, sql in LATER_INDEXES.items():
                for statement in () if name in present else (sql, f"ANALYZE {name}"):
                    if self._stopped.is_set():
                        return
                    self.conn.execute(statement)
        except sqlite3.OperationalError:  # stopped, or busy too long: the next open builds it
            return

    def _interrupt(self) -> None:
        self.conn.interrupt()

    def _release(self) -> None:
        self.conn.close()
