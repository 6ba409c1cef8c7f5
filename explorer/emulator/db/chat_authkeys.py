"""Chat authkeys: ``chat_authkeys`` (channel, user, expiry), with the scopes a bearer key is
limited to (``chat_authkey_scopes``) and the credential each key dies with
(``chat_authkey_credentials``)."""

from __future__ import annotations

from typing import Literal

from explorer.emulator.db.engine import Store

SCHEMA = """
CREATE TABLE IF NOT EXISTS chat_authkeys (
    key TEXT PRIMARY KEY, channelId INTEGER NOT NULL, userId INTEGER NOT NULL,
    expiresAt REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS chat_authkeys_owner ON chat_authkeys (channelId, userId);
CREATE TABLE IF NOT EXISTS chat_authkey_scopes (
    key TEXT PRIMARY KEY REFERENCES chat_authkeys (key) ON DELETE CASCADE,
    scopes TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS chat_authkey_credentials (
    key TEXT PRIMARY KEY REFERENCES chat_authkeys (key) ON DELETE CASCADE,
    credential TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chat_authkey_credentials_of ON chat_authkey_credentials (credential);
"""

#: What :func:`revoke` may select keys by.
Selector = Literal["credential", "user", "channel"]
#: The SQL condition of each :data:`Selector`.
_SELECTORS: dict[Selector, str] = {
    "credential": "key IN (SELECT key FROM chat_authkey_credentials WHERE credential = ?)",
    "user": "userId = ?",
    "channel": "channelId = ?",
}


def held(
    db: Store, credential: str, channel_id: int, user_id: int, after: float
) -> list[tuple[str, str | None]]:
    """``(key, scopes)`` of the keys issued through ``credential`` for (channel, user) that
    are live after ``after``, the longest-lived first (scopes None: a session key)."""
    return db.all(
        "SELECT k.key, s.scopes FROM chat_authkeys k "
        "JOIN chat_authkey_credentials c ON c.key = k.key AND c.credential = ? "
        "LEFT JOIN chat_authkey_scopes s ON s.key = k.key "
        "WHERE k.channelId = ? AND k.userId = ? AND k.expiresAt > ? ORDER BY k.expiresAt DESC",
        (credential, channel_id, user_id, after),
    )


def add(
    db: Store,
    key: str,
    channel_id: int,
    user_id: int,
    expires: float,
    credential: str,
    scopes: str | None,
    now: float,
) -> None:
    """Store a new key (dropping the keys expired by ``now``)."""
    with db.transaction() as tx:
        tx.execute("DELETE FROM chat_authkeys WHERE expiresAt < ?", (now,))
        tx.execute(
            "INSERT INTO chat_authkeys (key, channelId, userId, expiresAt) VALUES (?, ?, ?, ?)",
            (key, channel_id, user_id, expires),
        )
        tx.execute(
            "INSERT INTO chat_authkey_credentials (key, credential) VALUES (?, ?)",
            (key, credential),
        )
        if scopes is not None:
            tx.execute("INSERT INTO chat_authkey_scopes (key, scopes) VALUES (?, ?)", (key, scopes))


def live(
    db: Store, key: str, channel_id: int, user_id: int, now: float
) -> tuple[str | None] | None:
    """``(scopes,)`` of ``key`` when it is live and was issued for exactly this channel and
    user (scopes None: a session key); None otherwise."""
    row = db.one(
        "SELECT s.scopes FROM chat_authkeys k LEFT JOIN chat_authkey_scopes s ON s.key = k.key "
        "WHERE k.key = ? AND k.channelId = ? AND k.userId = ? AND k.expiresAt > ?",
        (key, channel_id, user_id, now),
    )
    return None if row is None else (row[0],)


def revoke(db: Store, by: Selector, value: str | int) -> list[tuple[int, int, str]]:
    """Delete the keys issued through a credential, to a user or for a channel;
    ``(channel, user, key)`` of each."""
    where = _SELECTORS[by]
    with db.transaction() as tx:
        rows = tx.all(f"SELECT channelId, userId, key FROM chat_authkeys WHERE {where}", (value,))
        tx.execute(f"DELETE FROM chat_authkeys WHERE {where}", (value,))
    return [(int(channel), int(user), str(key)) for channel, user, key in rows]
