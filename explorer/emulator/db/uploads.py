"""Uploaded images (``uploads``): their bytes, kept in the database, one per (kind, record)."""

from __future__ import annotations

import hashlib

from explorer.emulator.db.engine import Store, Transaction

SCHEMA = """
CREATE TABLE IF NOT EXISTS uploads (
    id INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL, relid INTEGER NOT NULL,
    contentType TEXT NOT NULL, size INTEGER NOT NULL, sha256 TEXT NOT NULL, data BLOB NOT NULL,
    createdAt TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS uploads_owner ON uploads (kind, relid);
"""

#: An upload as a Resource shows it: id, kind, relid, contentType, size, createdAt.
Described = tuple[int, str, int, str, int, str]


def replace(
    tx: Transaction, kind: str, relid: int, content_type: str, data: bytes, created_at: str
) -> int:
    """Store ``data`` as the ``kind`` upload of record ``relid``, drop the one it replaces and
    return its id (ids are never reused: AUTOINCREMENT)."""
    resource_id: int = tx.scalar(
        "INSERT INTO uploads (kind, relid, contentType, size, sha256, data, createdAt) "
        "VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
        (kind, relid, content_type, len(data), hashlib.sha256(data).hexdigest(), data, created_at),
    )
    tx.execute(
        "DELETE FROM uploads WHERE kind = ? AND relid = ? AND id != ?",
        (kind, relid, resource_id),
    )
    return resource_id


def described(db: Store, kind: str, relid: int) -> Described | None:
    """The ``kind`` upload of record ``relid`` without its bytes; None when there is none."""
    row = db.one(
        "SELECT id, kind, relid, contentType, size, createdAt FROM uploads "
        "WHERE kind = ? AND relid = ?",
        (kind, relid),
    )
    return None if row is None else (row[0], row[1], row[2], row[3], row[4], row[5])


def content(db: Store, resource_id: int) -> tuple[str, bytes, str] | None:
    """Upload ``resource_id``'s content type, bytes and SHA-256 (hex); None when there is none."""
    row = db.one("SELECT contentType, data, sha256 FROM uploads WHERE id = ?", (resource_id,))
    return None if row is None else (row[0], row[1], row[2])


def delete(tx: Transaction, kind: str, relid: int) -> None:
    """Drop the ``kind`` upload of record ``relid`` (if any)."""
    tx.execute("DELETE FROM uploads WHERE kind = ? AND relid = ?", (kind, relid))
