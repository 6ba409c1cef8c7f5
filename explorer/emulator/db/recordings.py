"""Recordings of past broadcasts (``recordings``), their files (``recording_vods``) and up to
when each channel's are stored (``recordings_synced``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from explorer.emulator.db.engine import Store
from explorer.wire.models import RECORDING, VOD

SCHEMA = """
CREATE TABLE IF NOT EXISTS recordings (
    id INTEGER PRIMARY KEY, channelId INTEGER NOT NULL, name TEXT NOT NULL, typeId INTEGER,
    state TEXT NOT NULL, viewsTotal INTEGER NOT NULL, duration REAL NOT NULL,
    expiresAt TEXT NOT NULL, createdAt TEXT NOT NULL, updatedAt TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS recordings_channel ON recordings (channelId, createdAt);
CREATE TABLE IF NOT EXISTS recording_vods (
    id INTEGER PRIMARY KEY, recordingId INTEGER NOT NULL REFERENCES recordings (id),
    baseUrl TEXT NOT NULL, format TEXT NOT NULL, data TEXT, createdAt TEXT NOT NULL,
    updatedAt TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS recording_vods_recording ON recording_vods (recordingId, id);
CREATE TABLE IF NOT EXISTS recordings_synced (channelId INTEGER PRIMARY KEY, until REAL NOT NULL);
"""

#: The stored fields of a past broadcast, in the order rows hold them (its ``vods`` are read
#: beside them).
RECORDING_FIELDS = tuple(name for name in RECORDING.names if name != "vods")
#: The fields of one of its files, in the order rows hold them.
VOD_FIELDS = VOD.names
#: Ids per statement when reading channels by id.
_CHUNK = 500
_INSERT_RECORDING = (
    f"INSERT INTO recordings ({', '.join(RECORDING_FIELDS)}) "
    f"VALUES ({', '.join('?' * len(RECORDING_FIELDS))}) ON CONFLICT DO NOTHING"
)
_INSERT_VOD = (
    f"INSERT INTO recording_vods ({', '.join(VOD_FIELDS)}) "
    f"VALUES ({', '.join('?' * len(VOD_FIELDS))}) ON CONFLICT DO NOTHING"
)
_SELECT = f"SELECT {', '.join(RECORDING_FIELDS)} FROM recordings"


def recorded_channels(db: Store, ids: Sequence[int]) -> dict[int, str]:
    """The titles of those channels among ``ids`` that keep recordings (``hasVod``), by id."""
    return {
        row[0]: row[1]
        for chunk in range(0, len(ids), _CHUNK)
        for row in db.all(
            "SELECT id, name FROM channels WHERE hasVod = 1 AND id IN "
            f"({', '.join('?' * len(ids[chunk : chunk + _CHUNK]))})",
            ids[chunk : chunk + _CHUNK],
        )
    }


def add(db: Store, recordings: Iterable[Sequence[Any]], vods: Iterable[Sequence[Any]]) -> int:
    """Store recordings (rows of ``RECORDING_FIELDS``) and their files (rows of ``VOD_FIELDS``)
    in one transaction, those stored already left as they are; returns how many recordings
    were new."""
    with db.transaction() as tx:
        added = tx.executemany(_INSERT_RECORDING, recordings).rowcount
        tx.executemany(_INSERT_VOD, vods)
    return added


def synced_until(db: Store, channel_id: int) -> float | None:
    """Up to when channel ``channel_id``'s recordings are stored; None before the first time."""
    until: float | None = db.scalar(
        "SELECT until FROM recordings_synced WHERE channelId = ?", (channel_id,)
    )
    return until


def mark_synced(db: Store, channel_id: int, until: float) -> None:
    """Note that channel ``channel_id``'s recordings are stored up to ``until``."""
    with db.transaction() as tx:
        tx.execute(
            "INSERT INTO recordings_synced (channelId, until) VALUES (?, ?) "
            "ON CONFLICT (channelId) DO UPDATE SET until = excluded.until",
            (channel_id, until),
        )


def page(
    db: Store, channel_id: int, order: Sequence[tuple[str, bool]], limit: int, offset: int
) -> list[tuple[Any, ...]]:
    """One page of channel ``channel_id``'s recordings (rows of ``RECORDING_FIELDS``), in
    ``order`` ((field, descending) pairs of ``RECORDING_FIELDS``; newest first when empty),
    ties by descending id."""
    terms = [f"{name} {'DESC' if descending else 'ASC'}" for name, descending in order]
    return db.all(
        f"{_SELECT} WHERE channelId = ? "
        f"ORDER BY {', '.join(terms or ['createdAt DESC'])}, id DESC LIMIT ? OFFSET ?",
        (channel_id, limit, offset),
    )


def count(db: Store, channel_id: int) -> int:
    """How many recordings of channel ``channel_id`` are stored."""
    total: int = db.scalar("SELECT COUNT(*) FROM recordings WHERE channelId = ?", (channel_id,))
    return total


def by_id(db: Store, recording_id: int) -> tuple[Any, ...] | None:
    """Recording ``recording_id`` (a row of ``RECORDING_FIELDS``); None when not stored."""
    return db.one(f"{_SELECT} WHERE id = ?", (recording_id,))


def vods(db: Store, recording_ids: Sequence[int]) -> list[tuple[Any, ...]]:
    """The files of the recordings ``recording_ids`` (rows of ``VOD_FIELDS``), by id."""
    if not recording_ids:
        return []
    marks = ", ".join("?" * len(recording_ids))
    return db.all(
        f"SELECT {', '.join(VOD_FIELDS)} FROM recording_vods WHERE recordingId IN ({marks}) "
        "ORDER BY id",
        recording_ids,
    )
