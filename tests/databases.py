"""The database each platform of the tests runs on: the engine switch.

Every platform the tests start through :func:`start` or :func:`open_services` (and the
``platform`` and ``make_platform`` fixtures, which do) and asks for ``:memory:`` gets a fresh
copy of a seeded world instead of seeding its own: the world of each (seed, channel count) is
seeded once per process, its later indexes built, and each such platform runs on a copy of it
(seeding the 1,000-channel world takes about a second, a copy a few milliseconds), removed once
the test is over and nothing has it open. By default the platforms run on SQLite: a copy is a
file of this process's private temporary folder, and a file path the test gives is that file
itself. With ``EXPLORER_TEST_DATABASE=postgresql`` (as Synapse's ``SYNAPSE_POSTGRES=1``) they
run on databases of this process's private PostgreSQL cluster (:mod:`tests.pgcluster`)
instead: the same tests, parametrized by the environment, not a copy of them. A copy there is
a ``CREATE DATABASE ... TEMPLATE`` copy (measured on a shared, loaded machine: about 0.17 s a
copy of the 1,000-channel world, whose seeding took 17 s), and a new file path the test gives
stands for one such copy for the whole test, so a restart on the same path finds what was
written. A test about SQLite itself (its file, WAL, ``:memory:``) is marked
``@pytest.mark.sqlite_only("why")`` and skipped under the switch, saying why; one about
``:memory:`` or about seeding starts its platform with :func:`explorer.emulator.start` (or
:func:`explorer.emulator.server.open_services`) itself, which seeds what it is given. Without
the server or psycopg the switched tests skip, saying why; under CI (``CI`` set) they fail
instead.
"""

from __future__ import annotations

import atexit
import itertools
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from explorer.emulator import Platform
from explorer.emulator import start as start_platform
from explorer.emulator.config import DEFAULT_CHANNELS
from explorer.emulator.context import Config, Services
from explorer.emulator.db.engine import Store, engine_of
from explorer.emulator.server import open_services as open_platform_services
from tests import pgcluster

#: The variable that switches the engine, and its values.
VARIABLE = "EXPLORER_TEST_DATABASE"
ENGINES = ("sqlite", "postgresql")
#: The engine the platforms of this run use.
ENGINE = os.environ.get(VARIABLE) or "sqlite"
if ENGINE not in ENGINES:
    raise pytest.UsageError(f"{VARIABLE}={ENGINE}: give one of {', '.join(ENGINES)}")

#: Seconds a seeded world's later indexes may take to build.
BUILD_TIMEOUT = 60.0

_cluster: pgcluster.Cluster | None = None
#: This process's private folder of SQLite worlds and their copies, made on first use.
_folder: Path | None = None
#: The seeded world of each (engine, seed, channels): a database name, or a SQLite file.
_worlds: dict[tuple[str, int, int], str] = {}
#: The database each file path given stands for.
_standing: dict[str, str] = {}
#: Databases copied for platforms and not dropped yet, SQLite files copied for platforms and
#: not removed yet, and the numbers that name them.
_copies: list[str] = []
_files: list[Path] = []
_numbers = itertools.count(1)


def cluster() -> pgcluster.Cluster:
    """This process's private PostgreSQL cluster, started on first use and stopped at exit
    at the latest (the test skips, saying why, where it cannot start; under CI it fails)."""
    global _cluster
    if _cluster is None:
        reason = pgcluster.missing()
        if reason is not None and os.environ.get("CI"):
            pytest.fail(f"CI runs the platform's tests on PostgreSQL too: {reason}")
        if reason is not None:
            pytest.skip(f"PostgreSQL: {reason}")
        _cluster = pgcluster.Cluster()
        atexit.register(stop)  # a script starting platforms through this module stops it too
    return _cluster


def target(db: str | Path = ":memory:", seed: int = 0, channels: int = 0) -> str:
    """The database a platform asked to run on ``db`` gets: for ``:memory:`` a fresh copy of
    the world of ``seed`` and ``channels`` (0: the default size); for a URL, or a file on
    SQLite (or one the test already made), ``db`` itself; under the switch a copy for a new
    file too, the same one each time for that path."""
    db = str(db)
    if engine_of(db) != "sqlite":
        return db
    size = channels or DEFAULT_CHANNELS
    if ENGINE == "sqlite":
        return _copy_file(seed, size) if db == ":memory:" else db
    if db in _standing:
        return cluster().url_of(_standing[db])
    if db != ":memory:" and Path(db).exists():
        return db
    server = cluster()
    name = f"platform_{next(_numbers)}"
    server.create(name, template=_world(seed, size))
    _copies.append(name)
    if db != ":memory:":
        _standing[db] = name
    return server.url_of(name)


def _copy_file(seed: int, channels: int) -> str:
    """A new SQLite file of the private folder: a copy of the world of ``seed`` and
    ``channels``."""
    copy = _private() / f"platform_{next(_numbers)}.db"
    shutil.copyfile(_world(seed, channels), copy)
    _files.append(copy)
    return str(copy)


def _private() -> Path:
    """This process's private folder of SQLite worlds and copies (made on first use, removed
    when the process exits, pytest or a script that starts platforms through this module; the
    path resolved, as the open files of :func:`_held` name them)."""
    global _folder
    if _folder is None:
        _folder = Path(tempfile.mkdtemp(prefix="explorer-worlds-")).resolve()
        atexit.register(shutil.rmtree, _folder, ignore_errors=True)
    return _folder


def _world(seed: int, channels: int) -> str:
    """The seeded world of ``seed`` and ``channels`` on this run's engine: a database of the
    cluster (its name) or a SQLite file of the private folder (its path). Seeded on first use,
    its later indexes built, then closed: a template copies only an idle database, and a
    closed SQLite file has its WAL checkpointed into it, so the file alone holds the world."""
    key = (ENGINE, seed, channels)
    if key not in _worlds:
        # Numbered: a seeding that failed leaves its database, and the next try its own error.
        name = f"world_{next(_numbers)}"
        if ENGINE == "sqlite":
            db = str(_private() / f"{name}.db")
        else:
            server = cluster()
            server.create(name)
            db = server.url_of(name)
        services = open_platform_services(db, Config(seed=seed, channels=channels))
        try:
            build = services.store.later_indexes().start()
            if not build.wait(BUILD_TIMEOUT):
                raise TimeoutError(f"the later indexes of {name} took over {BUILD_TIMEOUT} s")
            build.stop()
        finally:
            services.store.close()
        _worlds[key] = db if ENGINE == "sqlite" else name
    return _worlds[key]


@contextmanager
def opened(db: str | Path) -> Iterator[Store]:
    """The database a platform started on ``db`` runs on, opened through a connection of the
    test's own (as another process of the platform reads and writes it); closed after."""
    store = Store(target(db))
    try:
        yield store
    finally:
        store.close()


def start(**options: Any) -> Platform:
    """:func:`explorer.emulator.start` on the database :func:`target` gives for ``options``."""
    options["db"] = target(
        options.get("db", ":memory:"), options.get("seed", 0), options.get("channels", 0)
    )
    return start_platform(**options)


def open_services(
    db: str | Path, config: Config, clock: Callable[[], float] = time.time
) -> Services:
    """:func:`explorer.emulator.server.open_services` on the database :func:`target` gives."""
    return open_platform_services(target(db, config.seed, config.channels), config, clock)


def release() -> None:
    """Remove the copies nothing uses any more (their platforms stopped): the SQLite files
    this process holds open no more, the databases no session is connected to."""
    held = _held() if _files else None  # no copy to remove: no listing read after the test
    if held is not None:
        for copy in [copy for copy in _files if copy not in held]:
            for path in (copy, Path(f"{copy}-wal"), Path(f"{copy}-shm")):
                path.unlink(missing_ok=True)
            _files.remove(copy)
    if _cluster is None or not _copies:
        return
    dropped = _cluster.drop_idle(_copies)
    _copies[:] = [name for name in _copies if name not in dropped]
    for path in [path for path, name in _standing.items() if name in dropped]:
        del _standing[path]


def _held() -> set[Path] | None:
    """The files this process holds open, as Linux lists them (``/proc/self/fd``); None on a
    system without that list, where the SQLite copies stay until the process exits."""
    listing = Path("/proc/self/fd")
    if not listing.is_dir():
        return None
    held = set()
    for link in listing.iterdir():
        try:
            held.add(Path(os.readlink(link)))
        except OSError:  # closed since the listing (the listing's own descriptor among them)
            continue
    return held


def stop() -> None:
    """Stop the cluster, if this process started one (its databases go with it)."""
    global _cluster
    if _cluster is not None:
        _cluster.stop()
        _cluster = None
