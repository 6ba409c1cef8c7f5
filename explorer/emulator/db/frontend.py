"""The repository of client releases (``frontend_versions``): what ``GET /frontendVersions``
lists."""

from __future__ import annotations

from collections.abc import Iterable

from explorer.emulator.db.engine import Store

SCHEMA = """
CREATE TABLE IF NOT EXISTS frontend_versions (
    id INTEGER PRIMARY KEY, app TEXT NOT NULL, version TEXT NOT NULL, commitHash TEXT NOT NULL,
    releasedAt TEXT NOT NULL, UNIQUE (app, version)
);
"""

#: A release as listed: id, app, version, commit, release time, whether the app's newest.
Release = tuple[int, str, str, str, str, int]


def add_releases(db: Store, releases: Iterable[tuple[str, str, str, str]]) -> None:
    """Store ``(app, version, commit, releasedAt)`` releases; those already stored stay."""
    with db.transaction() as tx:
        tx.executemany(
            "INSERT INTO frontend_versions (app, version, commitHash, releasedAt) "
            "VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
            releases,
        )


def releases(db: Store, app: str | None) -> list[Release]:
    """The releases of ``app`` (every app's when None), by app then newest first, each marked
    when it is its app's newest."""
    where, args = ("WHERE app = ? ", (app,)) if app is not None else ("", ())
    return db.all(
        "SELECT id, app, version, commitHash, releasedAt, CASE WHEN releasedAt = "
        "MAX(releasedAt) OVER (PARTITION BY app) THEN 1 ELSE 0 END FROM frontend_versions "
        f"{where}ORDER BY app, releasedAt DESC, id DESC",
        args,
    )
