"""The outbox of live events: ``live_events``, read by every process of a platform in
increasing ``seq`` (see :mod:`explorer.emulator.live.outbox` for what goes in and who reads).

``channel:{id}:update`` and ``user:{id}:update`` are written by triggers on the ``channels``
and ``users`` tables, carrying the public fields that changed and their new values (a patch);
``updatedAt`` alone is no change worth an event, and private columns (``streamKey``, e-mail,
password hashes) never reach one. A trigger keeps the newest :data:`KEEP` events, pruning
every :data:`PRUNE_EVERY` writes. On PostgreSQL a statement that writes events also notifies
(once per transaction: identical notifications fold, :mod:`.listener`), so readers wake when
there is something to read. The triggers are given per engine (SQLite's and PostgreSQL's
own dialect); they name other families' tables, so
:func:`explorer.emulator.db.ddl` gives this schema last.
"""

from __future__ import annotations

from typing import Any

import orjson

from explorer.emulator.db.engine import PerEngine, Store, Transaction
from explorer.emulator.db.listener import LIVE_EVENTS, channel
from explorer.wire.records import CHANNEL, USER, Field

#: Events kept in the table; older ones are pruned (a reader further behind skips them).
KEEP = 50_000
#: Events written between two prunings (by a trigger: the table stays bounded whether or not
#: anyone reads it).
PRUNE_EVERY = 1000

#: Channel and user fields an update event may carry (not ids, not timestamps).
_SKIP = frozenset({"id", "userId", "createdAt", "updatedAt"})


def _patch(fields: tuple[Field, ...]) -> tuple[str, str]:
    """The SQLite trigger's WHEN condition and the JSON patch expression over ``fields``."""
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


def _pg_trigger(table: str, kind: str, fields: tuple[Field, ...]) -> str:
    """The PostgreSQL trigger of :func:`_trigger`: a PL/pgSQL function concatenating one
    ``jsonb`` object per changed field (its engine quotes the camelCase names)."""
    kept = [f for f in fields if f.name not in _SKIP]
    changed = " OR ".join(f"OLD.{f.name} IS DISTINCT FROM NEW.{f.name}" for f in kept)
    parts = []
    for f in kept:
        value = f"to_jsonb(NEW.{f.name})"
        if f.kind == "bool":
            value = f"to_jsonb(NEW.{f.name} <> 0)"
        elif f.kind == "object":
            value = f"NEW.{f.name}::jsonb"
        parts.append(
            f"CASE WHEN OLD.{f.name} IS DISTINCT FROM NEW.{f.name} "
            f"THEN jsonb_build_object('{f.name}', {value}) ELSE '{{}}'::jsonb END"
        )
    return (
        f"CREATE OR REPLACE FUNCTION {table}_live_update() RETURNS trigger LANGUAGE plpgsql "
        f"AS $$ BEGIN INSERT INTO live_events (topic, payload) VALUES "
        f"('{kind}:' || NEW.id || ':update', ({' || '.join(parts)})::text); "
        f"RETURN NULL; END $$;\n"
        f"CREATE OR REPLACE TRIGGER {table}_live_update AFTER UPDATE ON {table} "
        f"FOR EACH ROW WHEN ({changed}) EXECUTE FUNCTION {table}_live_update();"
    )


SCHEMA = PerEngine(
    source="""
CREATE TABLE IF NOT EXISTS live_events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, topic TEXT NOT NULL, payload TEXT NOT NULL
);
""",
    sqlite=f"""
{_trigger("channels", "channel", CHANNEL)}
{_trigger("users", "user", USER)}
CREATE TRIGGER IF NOT EXISTS live_events_prune AFTER INSERT ON live_events
WHEN NEW.seq % {PRUNE_EVERY} = 0
BEGIN DELETE FROM live_events WHERE seq <= NEW.seq - {KEEP}; END;
""",
    postgresql=f"""
{_pg_trigger("channels", "channel", CHANNEL)}
{_pg_trigger("users", "user", USER)}
CREATE OR REPLACE FUNCTION live_events_prune() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN DELETE FROM live_events WHERE seq <= NEW.seq - {KEEP}; RETURN NULL; END $$;
CREATE OR REPLACE TRIGGER live_events_prune AFTER INSERT ON live_events
FOR EACH ROW WHEN (NEW.seq % {PRUNE_EVERY} = 0) EXECUTE FUNCTION live_events_prune();
CREATE OR REPLACE FUNCTION live_events_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN PERFORM pg_notify({channel(LIVE_EVENTS)}, (SELECT CAST(MAX(seq) AS TEXT) FROM inserted));
RETURN NULL; END $$;
CREATE OR REPLACE TRIGGER live_events_notify AFTER INSERT ON live_events
REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION live_events_notify();
""",
)


def publish(tx: Transaction, topic: str, payload: Any) -> None:
    """Write one event, inside the caller's transaction (it goes out once that commits)."""
    tx.execute(
        "INSERT INTO live_events (topic, payload) VALUES (?, ?)",
        (topic, orjson.dumps(payload).decode()),
    )


def newest(db: Store) -> int:
    """The ``seq`` of the newest event (0 when there is none)."""
    found: int = db.scalar("SELECT COALESCE(MAX(seq), 0) FROM live_events")
    return found


def after(db: Store, seen: int, limit: int) -> list[tuple[int, str, str]]:
    """``(seq, topic, payload JSON)`` of up to ``limit`` events after ``seen``, oldest first."""
    return db.all(
        "SELECT seq, topic, payload FROM live_events WHERE seq > ? ORDER BY seq LIMIT ?",
        (seen, limit),
    )


def start_cursor(db: Store, key: str) -> None:
    """Start the shared cursor ``key`` (a ``meta`` entry) at the newest event, unless it is
    started."""
    with db.transaction() as tx:
        tx.execute(
            "INSERT INTO meta (key, value) "
            "SELECT ?, CAST(COALESCE(MAX(seq), 0) AS TEXT) FROM live_events WHERE true "
            "ON CONFLICT DO NOTHING",
            (key,),
        )


def claim(db: Store, key: str) -> list[tuple[str, str]]:
    """``(topic, payload JSON)`` of up to 1000 events after the shared cursor ``key``, oldest
    first, moving the cursor past them in the same transaction (so one reader claims each)."""
    with db.transaction() as tx:
        seen = int(tx.scalar("SELECT value FROM meta WHERE key = ?", (key,)))
        rows = tx.all(
            "SELECT seq, topic, payload FROM live_events WHERE seq > ? ORDER BY seq LIMIT 1000",
            (seen,),
        )
        if rows:
            tx.execute("UPDATE meta SET value = ? WHERE key = ?", (str(rows[-1][0]), key))
    return [(topic, payload) for _, topic, payload in rows]
