"""Chat authkeys: issued by ``GET /chats/{channelId}``, checked by the chat ``auth`` method.

A key is bound to one channel and one user, and to what the REST credential allowed: a
session key carries every permission the user's roles grant, a bearer or JWT key only those
its scopes unlock (``chat:chat`` to send messages, ...), remembered in
``chat_authkey_scopes``. While a key is valid, the same caller gets the same key back, so
official clients that re-send one key on every reconnect keep working until it expires
(reference.md fact 6; ``Config.authkey_ttl``, 5 minutes by default).
"""

from __future__ import annotations

from dataclasses import dataclass

from explorer.emulator import credentials
from explorer.emulator.store import Store

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
"""


@dataclass(frozen=True, slots=True)
class Grant:
    """What a valid key lets its holder do: ``scopes`` None means every permission of the
    user's roles (a session key)."""

    scopes: frozenset[str] | None


def _scope_text(scopes: frozenset[str] | None) -> str | None:
    return None if scopes is None else " ".join(sorted(scopes))


def issue(
    store: Store,
    channel_id: int,
    user_id: int,
    scopes: frozenset[str] | None,
    now: float,
    ttl: float,
) -> str:
    """A valid key for (channel, user, scopes): the live one if there is one, else a new one."""
    wanted = _scope_text(scopes)
    for key, held in store.all(
        "SELECT k.key, s.scopes FROM chat_authkeys k LEFT JOIN chat_authkey_scopes s "
        "ON s.key = k.key WHERE k.channelId = ? AND k.userId = ? AND k.expiresAt > ? "
        "ORDER BY k.expiresAt DESC",
        (channel_id, user_id, now + 5),
    ):
        if held == wanted:
            return str(key)
    key = credentials.new_token(16)
    with store.transaction() as conn:
        conn.execute("DELETE FROM chat_authkeys WHERE expiresAt < ?", (now,))
        conn.execute(
            "INSERT INTO chat_authkeys (key, channelId, userId, expiresAt) VALUES (?, ?, ?, ?)",
            (key, channel_id, user_id, now + ttl),
        )
        if wanted is not None:
            conn.execute(
                "INSERT INTO chat_authkey_scopes (key, scopes) VALUES (?, ?)", (key, wanted)
            )
    return key


def verify(store: Store, key: str, channel_id: int, user_id: int, now: float) -> Grant | None:
    """The grant of ``key`` when it is live and was issued for exactly this channel and user."""
    row = store.one(
        "SELECT s.scopes FROM chat_authkeys k LEFT JOIN chat_authkey_scopes s ON s.key = k.key "
        "WHERE k.key = ? AND k.channelId = ? AND k.userId = ? AND k.expiresAt > ?",
        (key, channel_id, user_id, now),
    )
    if row is None:
        return None
    return Grant(None if row[0] is None else frozenset(row[0].split()))
