"""Cookie sessions (the ``sessions`` table, declared with the core records in
:mod:`.engine`): opened at sign-in, found by the cookie's digest, ended at sign-out or with
the user's other credentials."""

from __future__ import annotations

from explorer.emulator.db.engine import Store, Transaction


def open_session(db: Store, token_hash: str, user_id: int, now: float, ttl: float) -> None:
    """Store a session for ``user_id`` whose cookie digests to ``token_hash``, lasting ``ttl``
    seconds from ``now``."""
    with db.transaction() as tx:
        tx.execute(
            "INSERT INTO sessions (token_hash, userId, createdAt, expiresAt) VALUES (?, ?, ?, ?)",
            (token_hash, user_id, now, now + ttl),
        )


def find(db: Store, token_hash: str) -> tuple[int, int, float] | None:
    """``(id, userId, expiresAt)`` of the session whose cookie digests to ``token_hash``."""
    row = db.one("SELECT id, userId, expiresAt FROM sessions WHERE token_hash = ?", (token_hash,))
    return None if row is None else (row[0], row[1], row[2])


#: Sessions a :func:`found` keeps at most (all dropped at once past it).
KEPT = 10_000


def found(
    db: Store, kept: dict[str, tuple[int, tuple[int, int, float]]], token_hash: str
) -> tuple[int, int, float] | None:
    """:func:`find`, kept in ``kept`` while the ``sessions`` counter (bumped whenever a session
    ends, by any process) stays as it was before the read: on an engine that hears the
    counter without a round trip (PostgreSQL's listener), a signed-in request finds its
    session without one. A session ended in another process is refused once that commit is
    heard (milliseconds); one ended here, at once (a commit knows its own bumps)."""
    version = db.heard_version("sessions")
    if version is None:
        return find(db, token_hash)
    held = kept.get(token_hash)
    if held is not None and held[0] == version:
        return held[1]
    row = find(db, token_hash)
    if row is not None:
        if len(kept) >= KEPT:
            kept.clear()
        kept[token_hash] = (version, row)
    return row


def by_prefix(db: Store, prefix: str) -> tuple[int, float] | None:
    """``(userId, expiresAt)`` of the session whose cookie digest starts with ``prefix`` (a
    range on the unique digest index)."""
    row = db.one(
        "SELECT userId, expiresAt FROM sessions WHERE token_hash >= ? AND token_hash < ?",
        (prefix, prefix + "g"),
    )
    return None if row is None else (row[0], row[1])


def digests_of(db: Store, user_id: int) -> list[str]:
    """The cookie digests of every session of ``user_id``."""
    return [
        row[0] for row in db.all("SELECT token_hash FROM sessions WHERE userId = ?", (user_id,))
    ]


def end(db: Store, session_id: int) -> None:
    """Delete the session ``session_id``."""
    with db.transaction() as tx:
        tx.execute("DELETE FROM sessions WHERE id = ?", (session_id,))


def end_all_but(tx: Transaction, user_id: int, kept_hash: str) -> None:
    """Delete every session of ``user_id`` but the one whose digest is ``kept_hash``."""
    tx.execute("DELETE FROM sessions WHERE userId = ? AND token_hash != ?", (user_id, kept_hash))
