"""Notifications (what the platform told each user) and e-mail opt-outs
(``email_unsubscribes``)."""

from __future__ import annotations

from typing import Any

from explorer.emulator.db.engine import PerEngine, Store, Transaction

SCHEMA = """
CREATE TABLE IF NOT EXISTS notifications (
    id INTEGER PRIMARY KEY, uuid TEXT NOT NULL UNIQUE, userId INTEGER NOT NULL,
    type TEXT NOT NULL, payload TEXT NOT NULL, sentAt TEXT NOT NULL,
    shared INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS notifications_user ON notifications (userId, id);

CREATE TABLE IF NOT EXISTS email_unsubscribes (
    userId INTEGER NOT NULL, category TEXT NOT NULL, createdAt TEXT NOT NULL,
    PRIMARY KEY (userId, category)
);
"""

#: A notification as rows hold it: uuid, userId, type, payload (JSON text), sentAt, shared.
Row = tuple[str, int, str, str, str, int]
_COLUMNS = "uuid, userId, type, payload, sentAt, shared"
#: A random (version 4) UUID made by the database, for notifications inserted by one
#: statement (a fragment per engine: SQLite has no UUID function).
_UUID4 = PerEngine(
    source="",
    sqlite="lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || "
    "substr(hex(randomblob(2)), 2) || '-' || substr('89ab', 1 + abs(random()) % 4, 1) || "
    "substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))",
    postgresql="CAST(gen_random_uuid() AS TEXT)",
)
#: The types a database made before notifications had UUIDs called by other names.
_RENAMED = {
    "followed": "follow",
    "subscribed": "subscribe",
    "resubscribed": "resubscribe",
    "hosted": "host",
}


def upgrade(db: Store) -> None:
    """Bring a database made before notifications had UUIDs and types to this shape: each
    notification gets a UUID, ``trigger`` becomes ``type`` with this version's names."""
    if "uuid" in db.columns("notifications"):
        return
    with db.transaction() as tx:
        tx.execute("ALTER TABLE notifications RENAME COLUMN trigger TO type")
        tx.execute("ALTER TABLE notifications ADD COLUMN uuid TEXT")
        tx.execute(f"UPDATE notifications SET uuid = {tx.fragment(_UUID4)}")
        tx.execute("CREATE UNIQUE INDEX notifications_uuid ON notifications (uuid)")
        for old, new in _RENAMED.items():
            tx.execute("UPDATE notifications SET type = ? WHERE type = ?", (new, old))
        for old, new in _RENAMED.items():
            tx.execute("UPDATE email_unsubscribes SET category = ? WHERE category = ?", (new, old))


def add(tx: Transaction, uuid: str, user_id: int, kind: str, payload: str, sent_at: str) -> None:
    """Add one notification (``payload`` as JSON text)."""
    tx.execute(
        "INSERT INTO notifications (uuid, userId, type, payload, sentAt) VALUES (?, ?, ?, ?, ?)",
        (uuid, user_id, kind, payload, sent_at),
    )


def add_for_everyone(tx: Transaction, kind: str, payload: str, sent_at: str) -> int:
    """Add one notification for every current user, each with a new UUID; how many."""
    cursor = tx.execute(
        "INSERT INTO notifications (uuid, userId, type, payload, sentAt) "
        f"SELECT {tx.fragment(_UUID4)}, id, ?, ?, ? FROM users WHERE deletedAt IS NULL",
        (kind, payload, sent_at),
    )
    return int(cursor.rowcount)


def count(db: Store) -> int:
    """How many notifications there are."""
    found: int = db.scalar("SELECT COUNT(*) FROM notifications")
    return found


def by_uuid(db: Store, uuid: str) -> Row | None:
    """The notification ``uuid``, or None."""
    return _row(db.one(f"SELECT {_COLUMNS} FROM notifications WHERE uuid = ?", (uuid,)))


def page_of(db: Store, user_id: int, limit: int, offset: int) -> list[Row]:
    """``limit`` of ``user_id``'s notifications from ``offset``, newest first."""
    rows = db.all(
        f"SELECT {_COLUMNS} FROM notifications WHERE userId = ? ORDER BY id DESC LIMIT ? OFFSET ?",
        (user_id, limit, offset),
    )
    return [row for row in map(_row, rows) if row is not None]


def _row(row: tuple[Any, ...] | None) -> Row | None:
    return None if row is None else (row[0], row[1], row[2], row[3], row[4], row[5])


def count_of(db: Store, user_id: int) -> int:
    """How many notifications ``user_id`` has."""
    found: int = db.scalar("SELECT COUNT(*) FROM notifications WHERE userId = ?", (user_id,))
    return found


def set_shared(db: Store, uuid: str, shared: bool) -> None:
    """Mark the notification ``uuid`` shared to chat, or not."""
    with db.transaction() as tx:
        tx.execute("UPDATE notifications SET shared = ? WHERE uuid = ?", (int(shared), uuid))


def unsubscribe(db: Store, user_id: int, category: str, now: str) -> None:
    """Record that ``user_id`` wants no e-mail of ``category`` (kept from its first time)."""
    with db.transaction() as tx:
        tx.execute(
            "INSERT INTO email_unsubscribes (userId, category, createdAt) VALUES (?, ?, ?) "
            "ON CONFLICT DO NOTHING",
            (user_id, category, now),
        )


def unsubscribed(db: Store, user_id: int) -> list[tuple[str, str]]:
    """``(category, since)`` of every e-mail opt-out of ``user_id``, by category."""
    rows = db.all(
        "SELECT category, createdAt FROM email_unsubscribes WHERE userId = ? ORDER BY category",
        (user_id,),
    )
    return [(row[0], row[1]) for row in rows]
