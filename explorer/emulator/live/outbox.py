"""The outbox of live events: one table in the platform's database, read by every process.

A change is written where it happens, in the same transaction, so an event goes out exactly
when its change is committed, never for a write that rolled back:

* ``channel:{id}:update`` and ``user:{id}:update`` come from triggers on the ``channels`` and
  ``users`` tables (declared with the table in :mod:`explorer.emulator.db.live_events`),
  carrying the public fields that changed and their new values (a patch, as the historical
  events were). Every writer is covered without knowing it: REST handlers, the simulator's
  viewer counts, a stream going online, another process on the same database file.
  ``updatedAt`` alone is no change worth an event; private columns (``streamKey``, e-mail,
  password hashes) never reach an event.
* the other happenings are written by the handler that makes them, with
  :func:`~explorer.emulator.db.live_events.publish` (follows, hosts).
* :data:`ENDED` is no event but a notice to every process: a credential (or every credential
  of a user) has ended, so sockets signed in with it must end too (written by
  :mod:`~explorer.emulator.endings`; no client can subscribe to it, no hook name it).

Readers (:class:`Outbox`) follow the table by its increasing ``seq``; every process of a
platform shares the database, so an event written by one reaches subscribers on all (the chat
side's broker is not needed, and nothing is lost while Redis is away). On SQLite they poll; on
PostgreSQL a commit of events wakes them (``LISTEN``/``NOTIFY``, see
:mod:`explorer.emulator.db.listener`), the table staying the record they read from. A trigger
keeps the newest :data:`~explorer.emulator.db.live_events.KEEP` events.
"""

from __future__ import annotations

from explorer.emulator.db import live_events
from explorer.emulator.db.engine import Store, Transaction

#: The topic of the notice that a credential ended: ``{"credential": name}`` or
#: ``{"user": id}``.
ENDED = "_credential:ended"


def ended(conn: Transaction, credential: str = "", user: int | None = None) -> None:
    """Tell every process that ``credential`` (or every credential of ``user``) has ended."""
    payload = {"user": user} if user is not None else {"credential": credential}
    live_events.publish(conn, ENDED, payload)


class Outbox:
    """A reader of the outbox, following it from where it is now."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.seen = live_events.newest(store)

    async def wait(self, poll: float) -> None:
        """Wait until there may be events to read: ``poll`` seconds on SQLite; on PostgreSQL
        until one is committed, by any process (``Store.wait_for_events``)."""
        await self.store.wait_for_events(self.seen, poll)

    def read(self, limit: int = 10_000) -> list[tuple[str, str]]:
        """``(topic, payload JSON)`` of the events written since the last read, oldest first."""
        rows = live_events.after(self.store, self.seen, limit)
        if rows:
            self.seen = rows[-1][0]
        return [(topic, payload) for _, topic, payload in rows]
