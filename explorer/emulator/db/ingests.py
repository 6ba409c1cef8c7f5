"""The repository of ingest servers (``ingests``) and the live channels streaming through
each."""

from __future__ import annotations

from collections.abc import Iterable

from explorer.emulator.db.engine import Store

SCHEMA = """
CREATE TABLE IF NOT EXISTS ingests (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, host TEXT NOT NULL,
    capacity INTEGER NOT NULL, protocols TEXT NOT NULL
);
"""


def add_ingests(db: Store, ingests: Iterable[tuple[str, str, int, str]]) -> None:
    """Store ``(name, host, capacity, protocols JSON)`` ingests; those already stored stay."""
    with db.transaction() as tx:
        tx.executemany(
            "INSERT INTO ingests (name, host, capacity, protocols) VALUES (?, ?, ?, ?) "
            "ON CONFLICT DO NOTHING",
            ingests,
        )


def stored(db: Store) -> list[tuple[str, str, int, str]]:
    """Every ingest as ``(name, host, capacity, protocols JSON)``, in id order."""
    return db.all("SELECT name, host, capacity, protocols FROM ingests ORDER BY id")


def live_by_slot(db: Store, slots: int) -> dict[int, int]:
    """How many listed live channels have each ``id % slots`` (slots with none left out)."""
    return dict(
        db.all(
            "SELECT id % ?, COUNT(*) FROM channels WHERE online = 1 AND suspended = 0 GROUP BY 1",
            (slots,),
        )
    )
