"""Lookups of achievements and their earnings (the tables ``resources/achievements.py``
declares) that the live event of an earning shows."""

from __future__ import annotations

from explorer.emulator.db.engine import Transaction


def catalogued(tx: Transaction, slug: str) -> tuple[str, str, str, int]:
    """``(slug, name, description, sparks)`` of the achievement ``slug`` (which exists)."""
    found = tx.one(
        "SELECT slug, name, description, sparks FROM achievements WHERE slug = ?", (slug,)
    )
    assert found is not None, slug
    return found[0], found[1], found[2], found[3]


def earning_id(tx: Transaction, user_id: int, slug: str) -> int:
    """The id of ``user_id``'s earning of ``slug`` (which exists)."""
    found: int = tx.scalar(
        "SELECT rowid FROM achievement_earnings WHERE userId = ? AND slug = ?", (user_id, slug)
    )
    return found
