"""The database each platform of the tests runs on: the engine switch.

By default a test's platform runs on what the test gives (``:memory:``, or a SQLite file). With
``EXPLORER_TEST_DATABASE=postgresql`` (as Synapse's ``SYNAPSE_POSTGRES=1``) every platform the
tests start through :func:`start` or :func:`open_services` (and the ``platform`` and
``make_platform`` fixtures, which do) runs on a fresh database of this process's private
PostgreSQL cluster (:mod:`tests.pgcluster`) instead: the same tests, parametrized by the
environment, not a copy of them. A fresh database is cheap: the world of each (seed, channel
count) is seeded once per process into a database of its own, and each platform gets a ``CREATE
DATABASE ... TEMPLATE`` copy of it (measured on a shared, loaded machine: about 0.17 s a copy
of the 1,000-channel world, whose seeding took 17 s). A file path the test gives stands for one
database for the whole test, so a restart on the same path finds what was written. A test about
SQLite itself (its file, WAL, ``:memory:``) is marked ``@pytest.mark.sqlite_only("why")`` and
skipped under the switch, saying why. Without the server or psycopg the switched tests skip,
saying why; under CI (``CI`` set) they fail instead.
"""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from explorer.emulator import Platform, world
from explorer.emulator import start as start_platform
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
#: The seeded world of each (seed, channels): a database name.
_worlds: dict[tuple[int, int], str] = {}
#: The database each file path given stands for.
_standing: dict[str, str] = {}
#: Databases copied for platforms and not dropped yet, and the numbers that name them.
_copies: list[str] = []
_numbers = itertools.count(1)


def cluster() -> pgcluster.Cluster:
    """This process's private PostgreSQL cluster, started on first use (the test skips,
    saying why, where it cannot start; under CI it fails)."""
    global _cluster
    if _cluster is None:
        reason = pgcluster.missing()
        if reason is not None and os.environ.get("CI"):
            pytest.fail(f"CI runs the platform's tests on PostgreSQL too: {reason}")
        if reason is not None:
            pytest.skip(f"PostgreSQL: {reason}")
        _cluster = pgcluster.Cluster()
    return _cluster


def target(db: str | Path = ":memory:", seed: int = 0, channels: int = 0) -> str:
    """The database a platform asked to run on ``db`` gets: ``db`` itself on SQLite (and
    for a URL, or a file the test already made); under the switch a fresh copy of the world
    of ``seed`` and ``channels`` (0: the default size), the same one each time for a path."""
    db = str(db)
    if ENGINE == "sqlite" or engine_of(db) != "sqlite":
        return db
    if db in _standing:
        return cluster().url_of(_standing[db])
    if db != ":memory:" and Path(db).exists():
        return db
    server = cluster()
    name = f"platform_{next(_numbers)}"
    server.create(name, template=_world(seed, channels or world.DEFAULT_CHANNELS))
    _copies.append(name)
    if db != ":memory:":
        _standing[db] = name
    return server.url_of(name)


def _world(seed: int, channels: int) -> str:
    """The database holding the seeded world of ``seed`` and ``channels`` (seeded on first
    use, its later indexes built, then closed: a template copies only an idle database)."""
    key = (seed, channels)
    if key not in _worlds:
        server = cluster()
        # Numbered: a seeding that failed leaves its database, and the next try its own error.
        name = f"world_{next(_numbers)}"
        server.create(name)
        services = open_platform_services(server.url_of(name), Config(seed=seed, channels=channels))
        try:
            build = services.store.later_indexes().start()
            if not build.wait(BUILD_TIMEOUT):
                raise TimeoutError(f"the later indexes of {name} took over {BUILD_TIMEOUT} s")
            build.stop()
        finally:
            services.store.close()
        _worlds[key] = name
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
    """Drop the copies no session uses any more (their platforms stopped)."""
    if _cluster is None or not _copies:
        return
    dropped = _cluster.drop_idle(_copies)
    _copies[:] = [name for name in _copies if name not in dropped]
    for path in [path for path, name in _standing.items() if name in dropped]:
        del _standing[path]


def stop() -> None:
    """Stop the cluster, if this process started one (its databases go with it)."""
    global _cluster
    if _cluster is not None:
        _cluster.stop()
        _cluster = None
