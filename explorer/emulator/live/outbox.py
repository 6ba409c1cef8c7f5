"""The outbox of live events: one table in the platform's database, read by every process.

A change is written where it happens, in the same transaction, so an event goes out exactly
when its change is committed, never for a write that rolled back:

* ``channel:{id}:update`` and ``user:{id}:update`` come from triggers on the ``channels`` and
  ``users`` tables, carrying the public fields that changed and their new values (a patch,
  as the historical events were). Every writer is covered without knowing it: REST
  handlers, the simulator's viewer counts, a stream going online, another process on the
  same database file. ``updatedAt`` alone is no change worth an event; private columns
  (``streamKey``, e-mail, password hashes) never reach an event.
* the other happenings are written by the handler that makes them, with :func:`publish`
  (follows, hosts).
* :data:`ENDED` is no event but a notice to every process: a credential (or every credential
  of a user) has ended, so sockets signed in with it must end too (written by
  :mod:`~explorer.emulator.endings`; no client can subscribe to it, no hook name it).

Readers (:class:`Outbox`) follow the table by its increasing ``seq``; every process of a
platform shares the file, so an event written by one reaches subscribers on all (the chat
side's broker is not needed, and nothing is lost while Redis is away). A trigger keeps the
newest :data:`KEEP` events, pruning every :data:`PRUNE_EVERY` writes.
"""

from __future__ import annotations

from typing import Any

import orjson

from explorer.emulator.db.engine import Store, Transaction
from explorer.wire.records import CHANNEL, USER, Field

#: The topic of the notice that a credential ended: ``{"credential": name}`` or
#: ``{"user": id}``.
ENDED = "_credential:ended"

#: Events kept in the table; older ones are pruned (a reader further behind skips them).
KEEP = 50_000

#: Channel and user fields an update event may carry (not ids, not timestamps).
_SKIP = frozenset({"id", "userId", "createdAt", "updatedAt"})


def _patch(fields: tuple[Field, ...]) -> tuple[str, str]:
    """The trigger's WHEN condition and the JSON patch expression over ``fields``."""
    kept = [f for f in fields if f.name not in _SKIP]
    changed = " OR ".join(f"OLD.{f.name} IS NOT NEW.{f.name}" for f in kept)
    pairs = []
    for f in kept:
        value = f"NEW.{f.name}"
        if f.kind == "bool":
            value = f"json(CASE WHEN NEW.{f.name} THEN 'true' ELSE 'false' END)"
        elif f.kind == "object":
            value = f"json(NEW.{f.name})"
        path = f"CASE WHEN OLD.{f.name} IS NOT NEW.{f.name} THEN '$.{f.name}' ELSE '$._' END"
        pairs.append(f"{path}, {value}")
    return changed, f"json_remove(json_set('{{}}', {', '.join(pairs)}), '$._')"


def _trigger(table: str, kind: str, fields: tuple[Field, ...]) -> str:
    changed, patch = _patch(fields)
    return (
        f"CREATE TRIGGER IF NOT EXISTS {table}_live_update AFTER UPDATE ON {table} "
        f"WHEN {changed} BEGIN "
        f"INSERT INTO live_events (topic, payload) VALUES ('{kind}:' || NEW.id || ':update', "
        f"{patch}); END;"
    )


#: Events written between two prunings (by a trigger: the table stays bounded whether or not
#: anyone reads it).
PRUNE_EVERY = 1000

SCHEMA = f"""
CREATE TABLE IF NOT EXISTS live_events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, topic TEXT NOT NULL, payload TEXT NOT NULL
);
{_trigger("channels", "channel", CHANNEL)}
{_trigger("users", "user", USER)}
CREATE TRIGGER IF NOT EXISTS live_events_prune AFTER INSERT ON live_events
WHEN NEW.seq % {PRUNE_EVERY} = 0
BEGIN DELETE FROM live_events WHERE seq <= NEW.seq - {KEEP}; END;
"""


def publish(conn: Transaction, topic: str, payload: Any) -> None:
    """Write one event, inside the caller's transaction (it goes out once that commits)."""
    conn.execute(
        "INSERT INTO live_events (topic, payload) VALUES (?, ?)",
        (topic, orjson.dumps(payload).decode()),
    )


def ended(conn: Transaction, credential: str = "", user: int | None = None) -> None:
    """Tell every process that ``credential`` (or every credential of ``user``) has ended."""
    publish(conn, ENDED, {"user": user} if user is not None else {"credential": credential})


class Outbox:
    """A reader of the outbox, following it from where it is now."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.seen: int = store.scalar("SELECT COALESCE(MAX(seq), 0) FROM live_events")

    def read(self, limit: int = 10_000) -> list[tuple[str, str]]:
        """``(topic, payload JSON)`` of the events written since the last read, oldest first."""
        rows = self.store.all(
            "SELECT seq, topic, payload FROM live_events WHERE seq > ? ORDER BY seq LIMIT ?",
            (self.seen, limit),
        )
        if rows:
            self.seen = rows[-1][0]
        return [(topic, payload) for _, topic, payload in rows]
