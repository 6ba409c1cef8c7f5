"""The repository of the ``types`` table's lookups by other resources (the table is the engine's,
a core record; the catalogue with its aggregates is ``shapes.TypeCatalog``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from explorer.emulator.db.engine import Store


def exists(db: Store, type_id: int) -> bool:
    """Whether a type of id ``type_id`` exists."""
    return db.one("SELECT 1 FROM types WHERE id = ?", (type_id,)) is not None


def live(db: Store) -> dict[int, tuple[int, int]]:
    """Per type with a listed channel online: how many are online and their live viewers."""
    return {
        row[0]: (row[1], row[2])
        for row in db.all(
            "SELECT typeId, COUNT(*), CAST(SUM(viewersCurrent) AS BIGINT) FROM channels "
            "WHERE online = 1 AND suspended = 0 AND typeId IS NOT NULL GROUP BY typeId"
        )
    }


def rows(db: Store, columns: Sequence[str]) -> list[tuple[Any, ...]]:
    """Every type's ``columns`` (named by the platform's code), by id."""
    return db.all(f"SELECT {', '.join(columns)} FROM types ORDER BY id")
