"""Invoices: a user's purchases in sparks (``invoices``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from explorer.emulator.db.engine import Store, Transaction

SCHEMA = """
CREATE TABLE IF NOT EXISTS invoices (
    id INTEGER PRIMARY KEY, userId INTEGER NOT NULL, status TEXT NOT NULL,
    items TEXT NOT NULL, sparks INTEGER NOT NULL, createdAt TEXT NOT NULL,
    updatedAt TEXT NOT NULL, capturedAt TEXT
);
CREATE INDEX IF NOT EXISTS invoices_user ON invoices (userId, id);
"""

#: An invoice as rows hold it: id, userId, status, items (JSON text), sparks, createdAt,
#: updatedAt, capturedAt.
Row = tuple[int, int, str, str, int, str, str, str | None]
_COLUMNS = "id, userId, status, items, sparks, createdAt, updatedAt, capturedAt"


def count(db: Store) -> int:
    """How many invoices there are."""
    found: int = db.scalar("SELECT COUNT(*) FROM invoices")
    return found


def add_many(db: Store, rows: Iterable[tuple[int, str, str, int, str, str, str | None]]) -> None:
    """Store invoices: userId, status, items (JSON text), sparks, createdAt, updatedAt,
    capturedAt."""
    with db.transaction() as tx:
        tx.executemany(
            "INSERT INTO invoices (userId, status, items, sparks, createdAt, updatedAt, "
            "capturedAt) VALUES (?, ?, ?, ?, ?, ?, ?)",
            rows,
        )


def invoice(db: Store, invoice_id: int) -> Row | None:
    """The invoice ``invoice_id``, or None."""
    return _row(db.one(f"SELECT {_COLUMNS} FROM invoices WHERE id = ?", (invoice_id,)))


def of_user(db: Store, user_id: int) -> list[Row]:
    """``user_id``'s invoices, newest first."""
    rows = db.all(f"SELECT {_COLUMNS} FROM invoices WHERE userId = ? ORDER BY id DESC", (user_id,))
    return [row for row in map(_row, rows) if row is not None]


def _row(row: tuple[Any, ...] | None) -> Row | None:
    if row is None:
        return None
    return (row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7])


def capture(tx: Transaction, invoice_id: int, now: str) -> bool:
    """Move the invoice ``invoice_id`` from pending to captured at ``now``; False when it was
    not pending."""
    moved = tx.execute(
        "UPDATE invoices SET status = 'captured', capturedAt = ?, updatedAt = ? "
        "WHERE id = ? AND status = 'pending'",
        (now, now, invoice_id),
    ).rowcount
    return bool(moved)
