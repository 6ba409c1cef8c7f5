"""Chat authkeys: issued by ``GET /chats/{channelId}``, checked by the chat ``auth`` method.

A key is bound to one channel and one user, and to what the REST credential allowed: a
session key carries every permission the user's roles grant, a bearer or JWT key only those
its scopes unlock (``chat:chat`` to send messages, ...), remembered in
``chat_authkey_scopes``. While a key is valid, the same caller gets the same key back, so
official clients that re-send one key on every reconnect keep working until it expires
(reference.md fact 6; ``Config.authkey_ttl``, 5 minutes by default).

A key also dies with the credential that fetched it (``chat_authkey_credentials``: the
cookie session, the OAuth grant family, or ``jwt``): logout, token revocation, refresh-token
reuse, a password change and a suspension call :func:`end`, which deletes the keys (so no node
accepts them in ``auth``) and has the chat hub close the connections already signed in with
them, on every node and process (:data:`REVOKED`, see :mod:`~explorer.emulator.chat.node`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from explorer.emulator import credentials
from explorer.emulator.db.engine import Store

if TYPE_CHECKING:
    from explorer.emulator.context import Services

#: The broker event that carries a revoked key to every node (never sent to a client).
REVOKED = "explorer:authkey-revoked"

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


@dataclass(frozen=True, slots=True)
class KeyGrant:
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
    credential: str,
) -> str:
    """A valid key for (channel, user, scopes, credential): the live one if there is one, else
    a new one."""
    wanted = _scope_text(scopes)
    for key, held in store.all(
        "SELECT k.key, s.scopes FROM chat_authkeys k "
        "JOIN chat_authkey_credentials c ON c.key = k.key AND c.credential = ? "
        "LEFT JOIN chat_authkey_scopes s ON s.key = k.key "
        "WHERE k.channelId = ? AND k.userId = ? AND k.expiresAt > ? ORDER BY k.expiresAt DESC",
        (credential, channel_id, user_id, now + 5),
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
        conn.execute(
            "INSERT INTO chat_authkey_credentials (key, credential) VALUES (?, ?)",
            (key, credential),
        )
        if wanted is not None:
            conn.execute(
                "INSERT INTO chat_authkey_scopes (key, scopes) VALUES (?, ?)", (key, wanted)
            )
    return key


def verify(store: Store, key: str, channel_id: int, user_id: int, now: float) -> KeyGrant | None:
    """The grant of ``key`` when it is live and was issued for exactly this channel and user."""
    row = store.one(
        "SELECT s.scopes FROM chat_authkeys k LEFT JOIN chat_authkey_scopes s ON s.key = k.key "
        "WHERE k.key = ? AND k.channelId = ? AND k.userId = ? AND k.expiresAt > ?",
        (key, channel_id, user_id, now),
    )
    if row is None:
        return None
    return KeyGrant(None if row[0] is None else frozenset(row[0].split()))


#: What :func:`revoke` may select keys by, and the SQL condition of each.
_SELECTORS = {
    "credential": "key IN (SELECT key FROM chat_authkey_credentials WHERE credential = ?)",
    "user": "userId = ?",
    "channel": "channelId = ?",
}


def revoke(
    store: Store, by: Literal["credential", "user", "channel"], value: str | int
) -> list[tuple[int, int, str]]:
    """Delete the keys issued through a credential, to a user or for a channel;
    ``(channel, user, key)`` of each."""
    where = _SELECTORS[by]
    with store.transaction() as conn:
        rows = conn.execute(
            f"SELECT channelId, userId, key FROM chat_authkeys WHERE {where}", (value,)
        ).fetchall()
        conn.execute(f"DELETE FROM chat_authkeys WHERE {where}", (value,))
    return [(int(channel), int(user), str(key)) for channel, user, key in rows]


def end(services: Services, by: Literal["credential", "user", "channel"], value: str | int) -> None:
    """Revoke keys as :func:`revoke` does and close the connections signed in with them."""
    revoked = revoke(services.store, by, value)
    if revoked and services.chat is not None:
        services.chat.revoke(revoked)
