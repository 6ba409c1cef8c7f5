"""Web hooks (``hooks``) and the live events each one receives (``hook_events``, indexed for
delivery)."""

from __future__ import annotations

from typing import Any

from explorer.emulator.db.engine import PerEngine, Store, Transaction, dumps

SCHEMA = PerEngine(
    source="""
CREATE TABLE IF NOT EXISTS hooks (
    id TEXT PRIMARY KEY, clientId TEXT NOT NULL, kind TEXT NOT NULL, url TEXT NOT NULL,
    events TEXT NOT NULL, secret TEXT, isActive INTEGER NOT NULL DEFAULT 1,
    deactivationReason TEXT, failures INTEGER NOT NULL DEFAULT 0,
    expiresAt TEXT NOT NULL, createdAt TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS hooks_client ON hooks (clientId, createdAt);
CREATE TABLE IF NOT EXISTS hook_events (
    topic TEXT NOT NULL, hookId TEXT NOT NULL, PRIMARY KEY (topic, hookId)
) WITHOUT ROWID;
""",
    # Hooks registered before the index existed (in a SQLite file only: PostgreSQL's schema
    # came after it).
    sqlite="""
INSERT INTO hook_events (topic, hookId)
    SELECT json_each.value, hooks.id FROM hooks, json_each(hooks.events) WHERE true
    ON CONFLICT DO NOTHING;
""",
)

#: The columns of a hook as the API shows it (never its secret), in the order rows hold them.
FIELDS = ("id", "events", "kind", "url", "isActive", "deactivationReason", "expiresAt", "createdAt")
_FIELDS = ", ".join(FIELDS)


def active_of_owner(db: Store, client_id: str, now: str) -> int:
    """How many hooks active and unexpired at ``now`` the clients of ``client_id``'s owner
    hold together."""
    count: int = db.scalar(
        "SELECT COUNT(*) FROM hooks h JOIN oauth_clients c ON c.id = h.clientId "
        "WHERE c.ownerId = (SELECT ownerId FROM oauth_clients WHERE id = ?) "
        "AND h.isActive = 1 AND h.expiresAt > ?",
        (client_id, now),
    )
    return count


def hook(db: Store, hook_id: str, client_id: str | None = None) -> tuple[Any, ...] | None:
    """The :data:`FIELDS` row of hook ``hook_id`` (only if ``client_id``'s, when given)."""
    if client_id is None:
        return db.one(f"SELECT {_FIELDS} FROM hooks WHERE id = ?", (hook_id,))
    return db.one(
        f"SELECT {_FIELDS} FROM hooks WHERE id = ? AND clientId = ?", (hook_id, client_id)
    )


def of_client(db: Store, client_id: str) -> list[tuple[Any, ...]]:
    """The :data:`FIELDS` rows of ``client_id``'s hooks, newest first."""
    return db.all(
        f"SELECT {_FIELDS} FROM hooks WHERE clientId = ? ORDER BY createdAt DESC, id",
        (client_id,),
    )


def add(
    db: Store,
    hook_id: str,
    client_id: str,
    url: str,
    events: list[str],
    secret: str | None,
    expires_at: str,
    created_at: str,
) -> None:
    """Register a web hook of ``client_id`` and index its ``events``."""
    with db.transaction() as tx:
        tx.execute(
            "INSERT INTO hooks (id, clientId, kind, url, events, secret, expiresAt, createdAt) "
            "VALUES (?, ?, 'web', ?, ?, ?, ?, ?)",
            (hook_id, client_id, url, dumps(events), secret, expires_at, created_at),
        )
        tx.executemany(
            "INSERT INTO hook_events (topic, hookId) VALUES (?, ?)",
            [(event, hook_id) for event in events],
        )


def renew(db: Store, hook_id: str, expires_at: str) -> None:
    """Make hook ``hook_id`` active again until ``expires_at``, its failures forgotten."""
    with db.transaction() as tx:
        tx.execute(
            "UPDATE hooks SET expiresAt = ?, isActive = 1, deactivationReason = NULL, "
            "failures = 0 WHERE id = ?",
            (expires_at, hook_id),
        )


def deactivate(db: Store, hook_id: str) -> None:
    """End hook ``hook_id`` at its client's request (reason ``deactivated``)."""
    with db.transaction() as tx:
        tx.execute(
            "UPDATE hooks SET isActive = 0, deactivationReason = 'deactivated' WHERE id = ?",
            (hook_id,),
        )


def end_of_client(tx: Transaction, client_id: str) -> None:
    """End the active hooks of ``client_id``, deleted (reason ``clientDeleted``)."""
    tx.execute(
        "UPDATE hooks SET isActive = 0, deactivationReason = 'clientDeleted' "
        "WHERE clientId = ? AND isActive = 1",
        (client_id,),
    )
