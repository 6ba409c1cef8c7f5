"""What ends when a credential ends: everything derived from it, in one place.

A credential is a cookie session (``session:<digest prefix>``) or an OAuth grant family
(``grant:<family>``). What it hands out carries its name: a JWT names it in its ``src``
claim (a JWT minted from a JWT keeps the first one's), a chat authkey in
``chat_authkey_credentials``, an authorization code or an approved shortcode not yet exchanged
in ``credential_children`` (below). A JWT is accepted only while its source lives
(:func:`source_alive`), so logout, revocation, a password change and a suspension end it at
once instead of at its expiry; a live-events socket signed in with a credential is closed
when it ends (the notice :func:`~explorer.emulator.live.outbox.ended`, which every process
reads). Session credentials use the cookie digest, not the row id:
SQLite may hand a deleted row's id to the next session, which must not revive old JWTs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from explorer.emulator.chat import authkeys
from explorer.emulator.live import outbox

if TYPE_CHECKING:
    from explorer.emulator.context import Services

SCHEMA = """
CREATE TABLE IF NOT EXISTS credential_children (
    child TEXT PRIMARY KEY, credential TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS credential_children_of ON credential_children (credential);
"""

#: Hex digits of the cookie digest naming a session credential (64 bits: no collisions).
SESSION_PREFIX = 16


def session_credential(token_hash: str) -> str:
    """The credential name of the session whose cookie digest is ``token_hash``."""
    return f"session:{token_hash[:SESSION_PREFIX]}"


def code_child(code_hash: str) -> str:
    """The child name of an authorization code (by its digest)."""
    return f"code:{code_hash}"


def shortcode_child(handle_hash: str) -> str:
    """The child name of an approved shortcode (by its handle's digest)."""
    return f"shortcode:{handle_hash}"


def source_alive(services: Services, credential: str, user_id: int) -> bool:
    """Whether ``credential`` (a JWT's ``src``) still lives for ``user_id``."""
    kind, _, name = credential.partition(":")
    now = services.clock()
    if kind == "session" and len(name) == SESSION_PREFIX:
        # A range on the unique digest index: the session whose digest starts with ``name``.
        row = services.store.one(
            "SELECT userId, expiresAt FROM sessions WHERE token_hash >= ? AND token_hash < ?",
            (name, name + "g"),
        )
        return row is not None and row[0] == user_id and row[1] >= now
    if kind == "grant" and name:
        row = services.store.one(
            "SELECT 1 FROM oauth_tokens WHERE family = ? AND userId = ? AND revoked = 0 "
            "AND expiresAt >= ? LIMIT 1",
            (name, user_id, now),
        )
        return row is not None
    return False


def derive(services: Services, child: str, credential: str) -> None:
    """Record that ``child`` (a code or shortcode) was handed out through ``credential``."""
    with services.store.transaction() as conn:
        conn.execute(
            "INSERT OR REPLACE INTO credential_children (child, credential) VALUES (?, ?)",
            (child, credential),
        )


def source_of(services: Services, child: str) -> str:
    """The credential ``child`` was handed out through ('' when none was recorded)."""
    found = services.store.scalar(
        "SELECT credential FROM credential_children WHERE child = ?", (child,)
    )
    return str(found or "")


def _drop_children(services: Services, where: str, value: str | int) -> None:
    """Delete the unexchanged codes and uncollected shortcodes selected by ``where``."""
    with services.store.transaction() as conn:
        children = [
            row[0]
            for row in conn.execute(
                f"SELECT child FROM credential_children WHERE {where}", (value,)
            ).fetchall()
        ]
        for child in children:
            kind, _, digest = child.partition(":")
            if kind == "code":
                conn.execute("DELETE FROM oauth_codes WHERE code_hash = ? AND used = 0", (digest,))
            elif kind == "shortcode":
                conn.execute(
                    "DELETE FROM oauth_shortcodes WHERE handle_hash = ? AND state != 'denied'",
                    (digest,),
                )
            conn.execute("DELETE FROM credential_children WHERE child = ?", (child,))


def end_credential(services: Services, credential: str) -> None:
    """End what ``credential`` handed out: codes, shortcodes and chat authkeys (its JWTs die
    with it through :func:`source_alive`)."""
    _drop_children(services, "credential = ?", credential)
    with services.store.transaction() as conn:
        outbox.ended(conn, credential)
    authkeys.end(services, "credential", credential)


def end_user(services: Services, user_id: int, keep: str = "") -> None:
    """End every credential of ``user_id`` but the session ``keep`` names: sessions, OAuth
    tokens, unexchanged codes and shortcodes, chat authkeys (and so every JWT)."""
    store = services.store
    kept = [
        row[0]
        for row in store.all("SELECT token_hash FROM sessions WHERE userId = ?", (user_id,))
        if keep and session_credential(row[0]) == keep
    ]
    with store.transaction() as conn:
        conn.execute(
            "DELETE FROM sessions WHERE userId = ? AND token_hash != ?",
            (user_id, kept[0] if kept else ""),
        )
        conn.execute("UPDATE oauth_tokens SET revoked = 1 WHERE userId = ?", (user_id,))
        conn.execute("DELETE FROM oauth_codes WHERE userId = ? AND used = 0", (user_id,))
        conn.execute(
            "DELETE FROM oauth_shortcodes WHERE userId = ? AND state = 'approved'", (user_id,)
        )
        outbox.ended(conn, user=user_id)
    authkeys.end(services, "user", user_id)
