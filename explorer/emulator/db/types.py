"""The repository of the ``types`` table's lookups by other resources (the table is the engine's,
a core record; the catalogue with its aggregates is ``shapes.TypeCatalog``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from explorer.emulator.db.engine import Store


def exists(db: Store, type_id: int) -> bool:
    """Whether a type of id ``type_id`` exists."""
    return db.one("SELECT 1 FROM types WHERE id = ?", (type_id,)) is not None


def with_live(db: Store, columns: Sequence[str]) -> list[tuple[Any, ...]]:
    """Every type's ``columns`` (named by the platform's code), by id, each followed by how
    many of its listed channels are online and their live viewers (0 and 0 for none), in one
    statement."""
    named = ", ".join(f"t.{column}" for column in columns)
    return db.all(
        f"SELECT {named}, COALESCE(a.online, 0), COALESCE(a.viewers, 0) FROM types t "
        "LEFT JOIN (SELECT typeId, COUNT(*) AS online, CAST(SUM(viewersCurrent) AS BIGINT) "
        "AS viewers FROM channels WHERE online = 1 AND suspended = 0 AND typeId IS NOT NULL "
        "GROUP BY typeId) a ON a.typeId = t.id ORDER BY t.id"
    )
