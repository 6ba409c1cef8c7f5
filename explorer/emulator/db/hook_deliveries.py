"""What the dispatcher of web hooks reads and writes of the ``hooks`` family (declared by
``resources/hooks.py``): which hooks an event goes to, and their failure counts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from explorer.emulator.db.engine import Store


def subscribed(db: Store, topics: Sequence[str], now: str) -> list[tuple[Any, ...]]:
    """``(topic, owner, hook id, url, secret, failures)`` of each active hook unexpired at
    ``now`` of an existing client naming one of ``topics``."""
    if not topics:
        return []
    return db.all(
        "SELECT e.topic, c.ownerId, h.id, h.url, h.secret, h.failures FROM hook_events e "
        "JOIN hooks h ON h.id = e.hookId JOIN oauth_clients c ON c.id = h.clientId "
        f"WHERE e.topic IN ({', '.join('?' * len(topics))}) AND h.isActive = 1 "
        "AND h.expiresAt > ?",
        (*topics, now),
    )


def delivered(db: Store, hook_id: str) -> None:
    """Forget hook ``hook_id``'s failures (a delivery succeeded)."""
    with db.transaction() as tx:
        tx.execute("UPDATE hooks SET failures = 0 WHERE id = ?", (hook_id,))


def failed(db: Store, hook_id: str, most: int) -> None:
    """Count a failed delivery to hook ``hook_id``; its ``most``-th in a row deactivates it
    (reason ``failing``)."""
    with db.transaction() as tx:
        tx.execute(
            "UPDATE hooks SET failures = failures + 1, isActive = CASE WHEN failures + 1 >= ? "
            "THEN 0 ELSE isActive END, deactivationReason = CASE WHEN failures + 1 >= ? "
            "THEN 'failing' ELSE deactivationReason END WHERE id = ?",
            (most, most, hook_id),
        )
