"""Achievements: the catalogue (``achievements``) and who earned what
(``achievement_earnings``)."""

from __future__ import annotations

from collections.abc import Iterable

from explorer.emulator.db.engine import Store, Transaction


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
        "SELECT id FROM achievement_earnings WHERE userId = ? AND slug = ?", (user_id, slug)
    )
    return found


SCHEMA = """
CREATE TABLE IF NOT EXISTS achievements (
    slug TEXT PRIMARY KEY, name TEXT NOT NULL, description TEXT NOT NULL,
    sparks INTEGER NOT NULL, position INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS achievement_earnings (
    id INTEGER PRIMARY KEY, userId INTEGER NOT NULL,
    slug TEXT NOT NULL REFERENCES achievements (slug), earnedAt TEXT NOT NULL,
    UNIQUE (userId, slug)
);
"""


def set_catalogue(tx: Transaction, entries: Iterable[tuple[str, str, str, int, int]]) -> None:
    """Store (or update) catalogue ``entries``: slug, name, description, sparks, position."""
    tx.executemany(
        "INSERT INTO achievements (slug, name, description, sparks, position) "
        "VALUES (?, ?, ?, ?, ?) ON CONFLICT (slug) DO UPDATE SET name = excluded.name, "
        "description = excluded.description, sparks = excluded.sparks, "
        "position = excluded.position",
        entries,
    )


def any_earned(tx: Transaction) -> bool:
    """Whether anyone has earned anything."""
    return bool(tx.scalar("SELECT COUNT(*) FROM achievement_earnings"))


def add_earnings(tx: Transaction, earnings: Iterable[tuple[int | None, str, str]]) -> None:
    """Store ``earnings``: userId, slug, earnedAt."""
    tx.executemany(
        "INSERT INTO achievement_earnings (userId, slug, earnedAt) VALUES (?, ?, ?)", earnings
    )


def earn(tx: Transaction, user_id: int, slug: str, when: str) -> bool:
    """Record that ``user_id`` earned ``slug`` at ``when`` and credit its sparks to them;
    False (and nothing changed) if they already held it."""
    cursor = tx.execute(
        "INSERT INTO achievement_earnings (userId, slug, earnedAt) VALUES (?, ?, ?) "
        "ON CONFLICT DO NOTHING",
        (user_id, slug, when),
    )
    if cursor.rowcount == 0:
        return False
    tx.execute(
        "UPDATE users SET sparks = sparks + (SELECT sparks FROM achievements WHERE slug = ?) "
        "WHERE id = ?",
        (slug, user_id),
    )
    return True


def catalogue(db: Store) -> list[tuple[str, str, str, int]]:
    """Every achievement in display order: slug, name, description, sparks."""
    rows = db.all("SELECT slug, name, description, sparks FROM achievements ORDER BY position")
    return [(row[0], row[1], row[2], row[3]) for row in rows]


def earned_by(db: Store, user_id: int) -> dict[str, str]:
    """When ``user_id`` earned each achievement they hold, by slug."""
    rows = db.all("SELECT slug, earnedAt FROM achievement_earnings WHERE userId = ?", (user_id,))
    return {row[0]: row[1] for row in rows}
