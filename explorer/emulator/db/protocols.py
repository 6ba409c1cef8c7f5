"""The interfaces of the data layer's engines: what a connection runs (:class:`Connection`)
and what a statement returns (:class:`Rows`), both as ``sqlite3`` has them and PostgreSQL's
adapter (:mod:`.postgres`) follows; and the later indexes' build (:class:`IndexBuild`), whose
thread is common and whose statements are each engine's. Kept apart from :mod:`.engine` so
that module holds the store itself."""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Protocol


class Rows(Protocol):
    """What a statement returns: its rows, and what a write changed."""

    @property
    def rowcount(self) -> int:
        """Rows a write changed."""
        ...

    def fetchone(self) -> Any:
        """The next row, or None."""
        ...

    def fetchall(self) -> list[Any]:
        """The remaining rows."""
        ...

    def fetchmany(self, size: int, /) -> list[Any]:
        """The next ``size`` rows at most (none: no rows left)."""
        ...

    def __iter__(self) -> Iterator[Any]:
        """The remaining rows, one at a time."""
        ...


class Connection(Protocol):
    """What an engine's connection runs: ``sqlite3.Connection`` as it is, PostgreSQL's through
    an adapter that converts the placeholders (:mod:`.postgres`)."""

    def execute(self, sql: str, params: Sequence[Any] = (), /) -> Rows:
        """Run one statement with ``params`` bound to its ``?`` placeholders."""
        ...

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]], /) -> Rows:
        """Run one statement once per parameter row."""
        ...

    def executescript(self, script: str, /) -> object:
        """Run statements separated by semicolons, without parameters (DDL)."""
        ...


class IndexBuild(ABC):
    """A build of the :data:`~.engine.LATER_INDEXES` in a thread of its own: the thread's life is
    here, the build and how to interrupt it are each engine's."""

    def __init__(self) -> None:
        self._stopped, self._done = threading.Event(), threading.Event()
        self._thread = threading.Thread(target=self._run, name="explorer-indexes", daemon=True)

    def start(self) -> IndexBuild:
        """Start building; returns self."""
        self._thread.start()
        return self

    def _run(self) -> None:
        try:
            self._build()
        finally:
            self._done.set()

    @abstractmethod
    def _build(self) -> None:
        """Build each missing index, returning early once ``_stopped`` is set."""

    @abstractmethod
    def _interrupt(self) -> None:
        """End the statement in progress, if any, at once."""

    @abstractmethod
    def _release(self) -> None:
        """Release what the build held, once its thread has ended."""

    def stop(self) -> None:
        """Interrupt a build still running and wait for its thread."""
        self._stopped.set()
        self._interrupt()
        if self._thread.ident is not None:
            self._thread.join()
        self._release()
        self._done.set()

    def wait(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the build to end; whether it has."""
        return self._done.wait(timeout)
