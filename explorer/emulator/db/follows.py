"""Follows (``channel_follows``, whose schema ``resources/channel_follows.py`` still declares):
who follows which channel since when."""

from __future__ import annotations

from collections.abc import Iterable

from explorer.emulator.db.engine import Transaction


def add_many(tx: Transaction, rows: Iterable[tuple[int, int, str]]) -> int:
    """Store the ``(channelId, userId, createdAt)`` follows of ``rows`` (one already stored
    stays as it is); how many were new."""
    return tx.executemany(
        "INSERT OR IGNORE INTO channel_follows (channelId, userId, createdAt) VALUES (?, ?, ?)",
        rows,
    ).rowcount
