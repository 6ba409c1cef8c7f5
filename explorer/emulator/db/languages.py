"""The repository of the language catalogue (``languages``) and the channels speaking each."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from explorer.emulator.db.engine import Store

SCHEMA = """
CREATE TABLE IF NOT EXISTS languages (id TEXT PRIMARY KEY, name TEXT NOT NULL);
"""

#: Which languages a count lists: those some channel uses, those with a live channel, or
#: every language of the catalogue.
Which = Literal["used", "active", "available"]
#: A language's counts: id, name, channels, live channels, their live viewers.
LanguageCounts = tuple[str, str, int, int, int]

# Counts per language over visible channels; the outer query decides which languages appear.
_COUNTS = """
SELECT languageId AS id, COUNT(*) AS channels, CAST(SUM(online) AS BIGINT) AS online,
       CAST(SUM(CASE WHEN online = 1 THEN viewersCurrent ELSE 0 END) AS BIGINT) AS viewers
FROM channels WHERE suspended = 0 AND languageId IS NOT NULL GROUP BY languageId
"""
_IN_USE = f"""
SELECT c.id, COALESCE(l.name, c.id), c.channels, c.online, c.viewers
FROM ({_COUNTS}) c LEFT JOIN languages l ON l.id = c.id
"""
_QUERIES: dict[Which, str] = {
    "used": f"{_IN_USE} ORDER BY c.channels DESC, c.id",
    "active": f"{_IN_USE} WHERE c.online > 0 ORDER BY c.viewers DESC, c.id",
    "available": f"""
        SELECT l.id, l.name, COALESCE(c.channels, 0), COALESCE(c.online, 0),
               COALESCE(c.viewers, 0)
        FROM languages l LEFT JOIN ({_COUNTS}) c ON c.id = l.id ORDER BY l.id
    """,
}


def set_languages(db: Store, names: Iterable[tuple[str, str]]) -> None:
    """Store ``(id, name)`` languages, replacing the names of those already stored."""
    with db.transaction() as tx:
        tx.executemany(
            "INSERT INTO languages (id, name) VALUES (?, ?) "
            "ON CONFLICT (id) DO UPDATE SET name = excluded.name",
            names,
        )


def language_counts(db: Store, which: Which) -> list[LanguageCounts]:
    """The counts of ``which`` languages over unsuspended channels: used ones by most channels,
    active ones by most live viewers, available ones by id (a language of no channel in the
    catalogue is named by its id)."""
    return db.all(_QUERIES[which])
