"""The repository of confetti (``confetti``): particle bursts of a channel, or platform-wide
ones (``channelId`` null)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from explorer.emulator.db import users
from explorer.emulator.db.engine import Store

SCHEMA = """
CREATE TABLE IF NOT EXISTS confetti (
    id INTEGER PRIMARY KEY, channelId INTEGER, creatorId INTEGER NOT NULL, name TEXT NOT NULL,
    particles TEXT NOT NULL, count INTEGER NOT NULL, durationMs INTEGER NOT NULL,
    createdAt TEXT NOT NULL, updatedAt TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS confetti_channel ON confetti (channelId, id);
"""


def any_stored(db: Store) -> bool:
    """Whether any confetti is stored."""
    return bool(db.scalar("SELECT COUNT(*) FROM confetti"))


def seed_owners(db: Store) -> tuple[int | None, int | None, int | None]:
    """The seeded world's ``staff`` user, ``streamer`` user and the streamer's channel (each
    None when missing)."""
    staff, streamer = users.id_named(db, "staff"), users.id_named(db, "streamer")
    channel = db.scalar("SELECT id FROM channels WHERE userId = ?", (streamer,))
    return staff, streamer, channel


def add_many(db: Store, rows: Iterable[tuple[Any, ...]]) -> None:
    """Store ``(channelId, creatorId, name, particles JSON, count, durationMs, createdAt,
    updatedAt)`` confetti in one transaction."""
    with db.transaction() as tx:
        tx.executemany(
            "INSERT INTO confetti (channelId, creatorId, name, particles, count, durationMs, "
            "createdAt, updatedAt) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )


def add(
    db: Store, channel_id: int | None, creator_id: int, values: Mapping[str, Any], now: str
) -> int:
    """Store a confetti of ``channel_id`` by ``creator_id`` with the settings ``values`` (the
    caller's checked column names); its id."""
    with db.transaction() as tx:
        confetti_id: int = tx.scalar(
            f"INSERT INTO confetti (channelId, creatorId, {', '.join(values)}, createdAt, "
            f"updatedAt) VALUES (?, ?, {', '.join('?' * len(values))}, ?, ?) RETURNING id",
            (channel_id, creator_id, *values.values(), now, now),
        )
    return confetti_id


def find(db: Store, confetti_id: int, fields: Sequence[str]) -> tuple[Any, ...] | None:
    """The ``fields`` of confetti ``confetti_id``, or None."""
    return db.one(f"SELECT {', '.join(fields)} FROM confetti WHERE id = ?", (confetti_id,))


def usable(db: Store, channel_id: int, fields: Sequence[str]) -> list[tuple[Any, ...]]:
    """The ``fields`` of the platform-wide confetti and those of ``channel_id``, by id."""
    return db.all(
        f"SELECT {', '.join(fields)} FROM confetti WHERE channelId IS NULL OR channelId = ? "
        "ORDER BY id",
        (channel_id,),
    )


def update(db: Store, confetti_id: int, values: Mapping[str, Any], now: str) -> None:
    """Set the settings ``values`` (the caller's checked column names) of ``confetti_id``."""
    sets = ", ".join(f"{column} = ?" for column in values)
    with db.transaction() as tx:
        tx.execute(
            f"UPDATE confetti SET {sets}, updatedAt = ? WHERE id = ?",
            (*values.values(), now, confetti_id),
        )


def delete(db: Store, confetti_id: int) -> None:
    """Remove confetti ``confetti_id``."""
    with db.transaction() as tx:
        tx.execute("DELETE FROM confetti WHERE id = ?", (confetti_id,))
