"""The repository of the ``types`` table's lookups by other resources (the table is the engine's,
a core record; the catalogue with its aggregates is ``shapes.TypeCatalog``)."""

from __future__ import annotations

from explorer.emulator.db.engine import Store


def exists(db: Store, type_id: int) -> bool:
    """Whether a type of id ``type_id`` exists."""
    return db.one("SELECT 1 FROM types WHERE id = ?", (type_id,)) is not None
