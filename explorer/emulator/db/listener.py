"""What a process of the PostgreSQL engine hears of the commits of every process: one
dedicated connection that ``LISTEN``\\s, so a change reaches the others in milliseconds
without their asking (see ``docs/architecture.md``, "Live events across processes").

Two channels per schema (several platforms may share a database, each in a schema of its
own), both notified by triggers, so in the writer's transaction: PostgreSQL delivers a
notification only when that commits, in commit order, to every listener (the writer's own
process too).

- ``versions``: ``name value`` on every bump of a ``versions`` counter (by any writer), so a
  process keeps the counters in memory instead of asking on every cached listing.
- ``live_events``: events were written to the outbox, the newest ``seq`` a statement wrote as
  the payload, so its readers read when there is something to read instead of on a timer
  (the listener reads the newest ``seq`` itself only for a notification without one).

The tables stay the record; a notification only says "read now". The :class:`Listener` is
*up* once it has ``LISTEN``\\ed and then read the counters and the newest event: what commits
after the ``LISTEN`` is notified, what committed before it the reads see. A dropped connection
makes it *down* (versions come from queries again, outbox readers poll) until it has
reconnected, ``LISTEN``\\ed and read again; a reader catches up from its last ``seq``.

The window: a notification is in flight for the time PostgreSQL takes to hand it over (a
fraction of a millisecond on one host), during which another process's counters are still the
old ones. Notifications reach each listener in commit order, so one that a process sends to
its own listener after a moment arrives after everything committed before that moment: a
*confirmation*. :meth:`Listener.confirm` makes one (a round trip) when a caller must see every
earlier commit; the listener makes one itself every :data:`HEARTBEAT` seconds, and its
counters are believed only until :data:`STALE_AFTER` seconds after the last (a connection that
stalls without breaking cannot keep them old longer); past that, a query answers.

:class:`Hearing` is the store's side as an engine without notifications has it (SQLite's:
readers poll, counters are read), which the PostgreSQL store overrides with its listener.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import threading
from collections.abc import Callable, Iterable
from time import monotonic
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import psycopg

log = logging.getLogger(__name__)

#: Seconds between two confirmations of the listening connection.
HEARTBEAT = 0.5
#: Seconds after the last confirmation that the counters heard are still believed.
STALE_AFTER = 2.0
#: Seconds between two attempts to connect again after the connection broke.
RETRY = 0.2
#: The ``application_name`` of the listening connections (in ``pg_stat_activity``).
APPLICATION = "explorer-listener"
#: The topics notified: the ``versions`` counters and the outbox.
VERSIONS, LIVE_EVENTS = "versions", "live_events"


def channel(topic: str) -> str:
    """The SQL expression naming ``topic``'s channel in the writer's schema (for a trigger's
    ``pg_notify``): ``explorer_{schema's oid}_{topic}``."""
    return f"'explorer_' || current_schema()::regnamespace::oid || '_{topic}'"


class Hearing:
    """What a store hears of the commits of other processes, as an engine without
    notifications (SQLite) does: nothing, so outbox readers poll and the ``versions`` counters
    are read each time. The PostgreSQL engine's store overrides both with its
    :class:`Listener`."""

    def heard_version(self, name: str) -> int | None:
        """The ``versions`` counter ``name`` when known without a round trip (None here, where
        counters are read: a lookup kept while a counter stays put would cost a read too)."""
        return None

    async def wait_for_events(self, after: int, poll: float, idle: float = 1.0) -> None:
        """Wait until the outbox (``live_events``) may hold events after ``seq`` ``after``,
        written by any process: here ``poll`` seconds (a store that is notified waits for a
        commit, at most ``idle`` seconds)."""
        await asyncio.sleep(poll)

    def catch_up(self, timeout: float = 10.0) -> None:
        """Make the store's ``versions`` counters include every commit made before the call,
        by any process: nothing to do here, where they are read each time (a store that keeps
        them as notified waits at most ``timeout`` seconds to have heard all of it)."""


class Listener:
    """A thread listening on a connection of its own for one schema's notifications, from its
    start until :meth:`close`, reconnecting whenever the connection breaks."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._lock = threading.Lock()
        self._heard = threading.Condition(self._lock)
        self._stopped = threading.Event()
        #: The counters heard, None while down.
        self._values: dict[str, int] | None = None
        #: When the newest confirmation heard was sent (``monotonic``).
        self._synced = 0.0
        #: The newest outbox ``seq`` heard of.
        self._newest = 0
        self._waiters: set[tuple[asyncio.AbstractEventLoop, asyncio.Event, int]] = set()
        #: Confirmations by number: when each was sent; the newest heard.
        self._tokens = itertools.count(1)
        self._sent: dict[int, float] = {}
        self._confirmed = 0
        #: The listening session's backend process id (0 before it connected), and the
        #: channel of its confirmations and stop (named after it).
        self.pid = 0
        self.channel = ""
        self._thread = threading.Thread(target=self._run, name=APPLICATION, daemon=True)
        self._thread.start()

    @property
    def up(self) -> bool:
        """Whether the listener hears every commit now."""
        return self._values is not None

    def wait_up(self, timeout: float) -> bool:
        """Wait at most ``timeout`` seconds for the listener to be up; whether it is."""
        with self._heard:
            return self._heard.wait_for(lambda: self._values is not None, timeout)

    def version(self, name: str) -> int | None:
        """The ``versions`` counter ``name`` as heard, or None when that may be old (down,
        or unconfirmed for :data:`STALE_AFTER` seconds)."""
        values = self._values
        if values is None or monotonic() - self._synced > STALE_AFTER:
            return None
        return values.get(name)

    def saw(self, values: Iterable[tuple[str, int]]) -> None:
        """Take counters a query read (never moving one back)."""
        with self._lock:
            if self._values is not None:
                for name, value in values:
                    self._values[name] = max(self._values.get(name, value), value)

    def confirm(self, notify: Callable[[str, str], object], timeout: float) -> bool:
        """Hear everything committed before the call (by any process): ``notify`` sends a
        notification (channel, payload) to this listener, which arrives after all of it;
        wait for it, at most ``timeout`` seconds. Whether it arrived (False: down)."""
        with self._lock:
            channel, token = self.channel, next(self._tokens)
            if self._values is None:
                return False
            self._sent[token] = monotonic()
        notify(channel, str(token))
        with self._heard:
            return (
                self._heard.wait_for(
                    lambda: self._confirmed >= token or self._values is None, timeout
                )
                and self._values is not None
            )

    async def wait(self, after: int, timeout: float) -> None:
        """Return once an outbox event after ``after`` is notified, the listener goes down or
        ``timeout`` seconds pass; at once when one is known already or it is down."""
        waiter = (asyncio.get_running_loop(), asyncio.Event(), after)
        with self._lock:
            if self._values is None or self._newest > after:
                return
            self._waiters.add(waiter)
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(waiter[1].wait(), timeout)
        finally:
            with self._lock:
                self._waiters.discard(waiter)

    def close(self, notify: Callable[[str, str], object]) -> None:
        """End the thread and its connection; ``notify`` sends a notification (channel,
        payload), which wakes the thread at once (failing, it ends within
        :data:`HEARTBEAT` seconds)."""
        self._stopped.set()
        if self.channel:
            with contextlib.suppress(Exception):
                notify(self.channel, "stop")
        self._thread.join(timeout=HEARTBEAT * 4)

    # --- the thread ---------------------------------------------------------------------

    def _run(self) -> None:
        import psycopg

        while not self._stopped.is_set():
            try:
                with psycopg.connect(
                    self.url, autocommit=True, application_name=APPLICATION
                ) as conn:
                    self._listen(conn)
            except psycopg.Error as broken:
                log.debug("listener connection broke: %s", broken)
            self._set(None, 0)
            self._stopped.wait(RETRY)

    def _listen(self, conn: psycopg.Connection[Any]) -> None:
        """``LISTEN``, read the counters and the newest event, then take notifications and
        confirm every :data:`HEARTBEAT` seconds until stopped."""
        schema = conn.execute("SELECT current_schema()::regnamespace::oid").fetchone()
        assert schema is not None
        own = f"explorer_listener_{conn.info.backend_pid}"
        events = f"explorer_{schema[0]}_{LIVE_EVENTS}"
        takes: dict[str, Callable[[str], bool]] = {
            f"explorer_{schema[0]}_{VERSIONS}": self._version,
            own: self._own,
        }
        for name in [*takes, events]:
            conn.execute(f"LISTEN {name}")
        values = {
            name: int(value) for name, value in conn.execute("SELECT name, value FROM versions")
        }
        outbox = conn.execute("SELECT to_regclass('live_events') IS NOT NULL").fetchone()
        newest = _newest(conn) if outbox == (True,) else 0
        self.pid, self.channel, self._synced = conn.info.backend_pid, own, monotonic()
        self._set(values, newest)
        beat = 0.0
        while not self._stopped.is_set():
            if monotonic() >= beat:
                with self._lock:
                    token = next(self._tokens)
                    self._sent[token] = monotonic()
                conn.execute("SELECT pg_notify(%s, %s)", (own, str(token)))
                beat = monotonic() + HEARTBEAT
            written: list[int] = []  # each notification's newest seq (0: not said)
            # What arrived together, or nothing until the next beat: a query cannot run while
            # the generator holds the connection, and leaving it early drops the rest.
            for note in conn.notifies(timeout=max(0.0, beat - monotonic()), stop_after=1):
                if note.channel == events:
                    written.append(int(note.payload) if note.payload.isdigit() else 0)
                elif not takes[note.channel](note.payload):
                    return
            if written:
                self._event(max(written) if all(written) else _newest(conn))

    def _set(self, values: dict[str, int] | None, newest: int) -> None:
        """Be up with ``values`` and the outbox at ``newest`` (or down: None), waking the outbox
        readers that have something to read or must poll now."""
        with self._lock:
            self._values = values
            self._newest = max(self._newest, newest)
            self._wake(lambda after: values is None or after < self._newest)
            if values is None:
                self._sent.clear()
            self._heard.notify_all()

    def _version(self, payload: str) -> bool:
        """A counter bumped: ``name value``."""
        name, value = payload.split()
        self.saw([(name, int(value))])
        return True

    def _event(self, seq: int) -> None:
        """Events written, the newest ``seq``."""
        with self._lock:
            if seq > self._newest:
                self._newest = seq
                self._wake(lambda after: after < seq)

    def _own(self, payload: str) -> bool:
        """A confirmation (its number), or the stop (False)."""
        if payload == "stop":
            return False
        token = int(payload)
        with self._lock:
            sent = self._sent.pop(token, None)
            if sent is not None:
                self._synced = max(self._synced, sent)
            self._confirmed = max(self._confirmed, token)
            self._heard.notify_all()
        return True

    def _wake(self, due: Callable[[int], bool]) -> None:
        """Wake the waiters (on their loops) for which ``due`` of what they read is true."""
        for loop, event, after in self._waiters:
            if due(after):
                with contextlib.suppress(RuntimeError):  # its loop has closed
                    loop.call_soon_threadsafe(event.set)


def _newest(conn: psycopg.Connection[Any]) -> int:
    """The ``seq`` of the newest event in the outbox (0: none)."""
    found = conn.execute("SELECT COALESCE(MAX(seq), 0) FROM live_events").fetchone()
    return int(found[0]) if found else 0
