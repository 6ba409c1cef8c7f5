"""OAuth clients, authorization codes, tokens and shortcodes (``oauth_clients``,
``oauth_codes`` and ``oauth_tokens`` are declared with the core records in :mod:`.engine`;
``oauth_shortcodes`` here).

Tokens and codes are stored as digests. Every token belongs to one grant, its *family*,
revoked as a whole."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from explorer.emulator.db.engine import Store, Transaction

SCHEMA = """
CREATE TABLE IF NOT EXISTS oauth_shortcodes (
    handle_hash TEXT PRIMARY KEY, code TEXT NOT NULL UNIQUE, clientId TEXT NOT NULL,
    scopes TEXT NOT NULL, expiresAt REAL NOT NULL, state TEXT NOT NULL DEFAULT 'waiting',
    userId INTEGER
);
"""

#: A client: id, secret_hash (None for a public client), name, website, ownerId,
#: redirectUris (JSON text), createdAt.
Client = tuple[str, str | None, str, str | None, int | None, str, str]
_CLIENT = "id, secret_hash, name, website, ownerId, redirectUris, createdAt"

# --- clients ------------------------------------------------------------------------------


def add_client_once(db: Store, client_id: str, name: str, redirect_uris: str, at: str) -> None:
    """Register the public, ownerless client ``client_id`` unless it exists."""
    if db.one("SELECT 1 FROM oauth_clients WHERE id = ?", (client_id,)) is None:
        with db.transaction() as tx:
            tx.execute(
                "INSERT INTO oauth_clients (id, secret_hash, name, website, ownerId, "
                "redirectUris, createdAt) VALUES (?, NULL, ?, NULL, NULL, ?, ?)",
                (client_id, name, redirect_uris, at),
            )


def add_client(db: Store, client: Client) -> None:
    """Register ``client``."""
    with db.transaction() as tx:
        tx.execute(
            "INSERT INTO oauth_clients (id, secret_hash, name, website, ownerId, redirectUris, "
            "createdAt) VALUES (?, ?, ?, ?, ?, ?, ?)",
            client,
        )


def client(db: Store, client_id: str) -> Client | None:
    """The client ``client_id``, or None."""
    row = db.one(f"SELECT {_CLIENT} FROM oauth_clients WHERE id = ?", (client_id,))
    return None if row is None else _client(row)


def clients_of(db: Store, owner_id: int) -> list[Client]:
    """The clients ``owner_id`` registered, oldest first."""
    rows = db.all(
        f"SELECT {_CLIENT} FROM oauth_clients WHERE ownerId = ? ORDER BY createdAt, id",
        (owner_id,),
    )
    return [_client(row) for row in rows]


def _client(row: tuple[Any, ...]) -> Client:
    return (row[0], row[1], row[2], row[3], row[4], row[5], row[6])


def owner(db: Store, client_id: str) -> int | None:
    """Who registered ``client_id`` (None for an unknown or ownerless client)."""
    found: int | None = db.scalar("SELECT ownerId FROM oauth_clients WHERE id = ?", (client_id,))
    return found


def secret_hash(db: Store, client_id: str) -> str | None:
    """The digest of ``client_id``'s secret (None for an unknown or public client)."""
    found: str | None = db.scalar(
        "SELECT secret_hash FROM oauth_clients WHERE id = ?", (client_id,)
    )
    return found


def families_of_client(db: Store, client_id: str) -> list[str]:
    """The grant families of ``client_id``'s tokens."""
    rows = db.all("SELECT DISTINCT family FROM oauth_tokens WHERE clientId = ?", (client_id,))
    return [row[0] for row in rows]


def revoke_client_tokens(tx: Transaction, client_id: str) -> None:
    """Revoke every token of ``client_id``."""
    tx.execute("UPDATE oauth_tokens SET revoked = 1 WHERE clientId = ?", (client_id,))


def delete_client(tx: Transaction, client_id: str) -> None:
    """Delete the client ``client_id``."""
    tx.execute("DELETE FROM oauth_clients WHERE id = ?", (client_id,))


# --- tokens -------------------------------------------------------------------------------

#: A token to store: digest, kind (``access`` or ``refresh``), userId, clientId, scopes
#: (space-separated), family, expiresAt.
NewToken = tuple[str, str, int, str, str, str, float]


def add_tokens(db: Store, tokens: Iterable[NewToken]) -> None:
    """Store ``tokens`` (joining the caller's transaction, if any)."""
    with db.transaction() as tx:
        tx.executemany(
            "INSERT INTO oauth_tokens (token_hash, kind, userId, clientId, scopes, family, "
            "expiresAt) VALUES (?, ?, ?, ?, ?, ?, ?)",
            tokens,
        )


def access_token(db: Store, token_hash: str) -> tuple[int, str, float, int, str] | None:
    """``(userId, scopes, expiresAt, revoked, family)`` of the access token ``token_hash``."""
    row = db.one(
        "SELECT userId, scopes, expiresAt, revoked, family FROM oauth_tokens "
        "WHERE token_hash = ? AND kind = 'access'",
        (token_hash,),
    )
    return None if row is None else (row[0], row[1], row[2], row[3], row[4])


def refresh_token(db: Store, token_hash: str) -> tuple[int, str, str, str, float, int, int] | None:
    """``(userId, clientId, scopes, family, expiresAt, revoked, used)`` of the refresh token
    ``token_hash``."""
    row = db.one(
        "SELECT userId, clientId, scopes, family, expiresAt, revoked, used FROM oauth_tokens "
        "WHERE token_hash = ? AND kind = 'refresh'",
        (token_hash,),
    )
    return None if row is None else (row[0], row[1], row[2], row[3], row[4], row[5], row[6])


def described_token(
    db: Store, token_hash: str
) -> tuple[int, str, str, str, float, int, int, str] | None:
    """``(userId, clientId, scopes, kind, expiresAt, revoked, used, username)`` of any token
    ``token_hash``, with its owner's name."""
    row = db.one(
        "SELECT t.userId, t.clientId, t.scopes, t.kind, t.expiresAt, t.revoked, t.used, "
        "u.username FROM oauth_tokens t JOIN users u ON u.id = t.userId WHERE t.token_hash = ?",
        (token_hash,),
    )
    return None if row is None else (row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7])


def family_of(db: Store, token_hash: str) -> str | None:
    """The grant family of the token ``token_hash``, or None."""
    found: str | None = db.scalar(
        "SELECT family FROM oauth_tokens WHERE token_hash = ?", (token_hash,)
    )
    return found


def family_alive(db: Store, family: str, user_id: int, now: float) -> bool:
    """Whether ``family`` holds a token of ``user_id`` neither revoked nor expired at ``now``."""
    row = db.one(
        "SELECT 1 FROM oauth_tokens WHERE family = ? AND userId = ? AND revoked = 0 "
        "AND expiresAt >= ? LIMIT 1",
        (family, user_id, now),
    )
    return row is not None


def revoke_family(db: Store, family: str) -> None:
    """Revoke every token of ``family``."""
    with db.transaction() as tx:
        tx.execute("UPDATE oauth_tokens SET revoked = 1 WHERE family = ?", (family,))


def rotate(tx: Transaction, token_hash: str, family: str) -> None:
    """Spend the refresh token ``token_hash`` and revoke the access tokens of its ``family``."""
    tx.execute("UPDATE oauth_tokens SET used = 1 WHERE token_hash = ?", (token_hash,))
    tx.execute(
        "UPDATE oauth_tokens SET revoked = 1 WHERE family = ? AND kind = 'access'", (family,)
    )


def end_user_grants(tx: Transaction, user_id: int) -> None:
    """Revoke every token of ``user_id`` and delete their unexchanged codes and approved
    shortcodes."""
    tx.execute("UPDATE oauth_tokens SET revoked = 1 WHERE userId = ?", (user_id,))
    tx.execute("DELETE FROM oauth_codes WHERE userId = ? AND used = 0", (user_id,))
    tx.execute("DELETE FROM oauth_shortcodes WHERE userId = ? AND state = 'approved'", (user_id,))


# --- authorization codes ------------------------------------------------------------------


def add_code(
    db: Store,
    code_hash: str,
    client_id: str,
    user_id: int,
    scopes: str,
    redirect: str,
    expires_at: float,
) -> None:
    """Store an authorization code (by its digest)."""
    with db.transaction() as tx:
        tx.execute(
            "INSERT INTO oauth_codes (code_hash, clientId, userId, scopes, redirectUri, "
            "expiresAt) VALUES (?, ?, ?, ?, ?, ?)",
            (code_hash, client_id, user_id, scopes, redirect, expires_at),
        )


def code(db: Store, code_hash: str) -> tuple[str, int, str, str, float, int] | None:
    """``(clientId, userId, scopes, redirectUri, expiresAt, used)`` of the code ``code_hash``."""
    row = db.one(
        "SELECT clientId, userId, scopes, redirectUri, expiresAt, used FROM oauth_codes "
        "WHERE code_hash = ?",
        (code_hash,),
    )
    return None if row is None else (row[0], row[1], row[2], row[3], row[4], row[5])


def use_code(tx: Transaction, code_hash: str) -> None:
    """Mark the code ``code_hash`` exchanged."""
    tx.execute("UPDATE oauth_codes SET used = 1 WHERE code_hash = ?", (code_hash,))


def drop_unused_code(tx: Transaction, code_hash: str) -> None:
    """Delete the code ``code_hash`` unless it was exchanged."""
    tx.execute("DELETE FROM oauth_codes WHERE code_hash = ? AND used = 0", (code_hash,))


# --- shortcodes ---------------------------------------------------------------------------


def start_shortcode(
    db: Store,
    handle_hash: str,
    new_code: Callable[[], str],
    client_id: str,
    scopes: str,
    now: float,
    ttl: float,
) -> str:
    """Drop the shortcodes expired at ``now`` and store a new one for ``handle_hash``, whose
    code is the first of ``new_code()`` not in use; that code."""
    with db.transaction() as tx:
        tx.execute("DELETE FROM oauth_shortcodes WHERE expiresAt < ?", (now,))
        while True:
            code = new_code()
            if tx.one("SELECT 1 FROM oauth_shortcodes WHERE code = ?", (code,)) is None:
                break
        tx.execute(
            "INSERT INTO oauth_shortcodes (handle_hash, code, clientId, scopes, expiresAt) "
            "VALUES (?, ?, ?, ?, ?)",
            (handle_hash, code, client_id, scopes, now + ttl),
        )
    return code


def shortcode(db: Store, handle_hash: str) -> tuple[str, str, float, str, int | None] | None:
    """``(clientId, scopes, expiresAt, state, userId)`` of the shortcode ``handle_hash``."""
    row = db.one(
        "SELECT clientId, scopes, expiresAt, state, userId FROM oauth_shortcodes "
        "WHERE handle_hash = ?",
        (handle_hash,),
    )
    return None if row is None else (row[0], row[1], row[2], row[3], row[4])


def collect_shortcode(db: Store, handle_hash: str) -> None:
    """Mark the shortcode ``handle_hash`` collected."""
    with db.transaction() as tx:
        tx.execute(
            "UPDATE oauth_shortcodes SET state = 'collected' WHERE handle_hash = ?", (handle_hash,)
        )


def waiting_shortcode(db: Store, code: str, now: float) -> tuple[str, str, str, str | None] | None:
    """``(scopes, client id, client name, client website)`` of the shortcode ``code`` while it
    waits for a decision, or None."""
    row = db.one(
        "SELECT s.scopes, c.id, c.name, c.website FROM oauth_shortcodes s "
        "JOIN oauth_clients c ON c.id = s.clientId "
        "WHERE s.code = ? AND s.state = 'waiting' AND s.expiresAt >= ?",
        (code, now),
    )
    return None if row is None else (row[0], row[1], row[2], row[3])


def decide_shortcode(db: Store, code: str, state: str, user_id: int, now: float) -> str | None:
    """Move the waiting shortcode ``code`` to ``state``, decided by ``user_id``; its handle's
    digest, or None when no such code waits."""
    with db.transaction() as tx:
        row = tx.one(
            "UPDATE oauth_shortcodes SET state = ?, userId = ? "
            "WHERE code = ? AND state = 'waiting' AND expiresAt >= ? RETURNING handle_hash",
            (state, user_id, code, now),
        )
    return None if row is None else str(row[0])


def drop_undenied_shortcode(tx: Transaction, handle_hash: str) -> None:
    """Delete the shortcode ``handle_hash`` unless it was denied."""
    tx.execute(
        "DELETE FROM oauth_shortcodes WHERE handle_hash = ? AND state != 'denied'", (handle_hash,)
    )
