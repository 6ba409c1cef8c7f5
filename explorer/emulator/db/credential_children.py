"""Which credential each authorization code and approved shortcode not yet exchanged was
handed out through (``credential_children``), so that they end with it
(:mod:`explorer.emulator.endings`)."""

from __future__ import annotations

from explorer.emulator.db.engine import Store, Transaction

SCHEMA = """
CREATE TABLE IF NOT EXISTS credential_children (
    child TEXT PRIMARY KEY, credential TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS credential_children_of ON credential_children (credential);
"""


def record(db: Store, child: str, credential: str) -> None:
    """Record that ``child`` was handed out through ``credential`` (replacing an older record)."""
    with db.transaction() as tx:
        tx.execute(
            "INSERT INTO credential_children (child, credential) VALUES (?, ?) "
            "ON CONFLICT (child) DO UPDATE SET credential = excluded.credential",
            (child, credential),
        )


def source_of(db: Store, child: str) -> str | None:
    """The credential ``child`` was handed out through, or None."""
    found: str | None = db.scalar(
        "SELECT credential FROM credential_children WHERE child = ?", (child,)
    )
    return found


def of(tx: Transaction, credential: str) -> list[str]:
    """The children handed out through ``credential``."""
    return [
        row[0]
        for row in tx.all(
            "SELECT child FROM credential_children WHERE credential = ?", (credential,)
        )
    ]


def forget(tx: Transaction, child: str) -> None:
    """Delete the record of ``child``."""
    tx.execute("DELETE FROM credential_children WHERE child = ?", (child,))
