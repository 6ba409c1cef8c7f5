"""What ends when a credential ends: everything derived from it, in one place.

A credential is a cookie session (``session:<digest prefix>``) or an OAuth grant family
(``grant:<family>``). What it hands out carries its name: a JWT names it in its ``src``
claim (a JWT minted from a JWT keeps the first one's), a chat authkey in
``chat_authkey_credentials``, an authorization code or an approved shortcode not yet exchanged
in ``credential_children`` (:mod:`explorer.emulator.db.credential_children`). A JWT is
accepted only while its source lives (:func:`source_alive`), so logout, revocation, a password
change and a suspension end it at once instead of at its expiry; a live-events socket signed
in with a credential is closed when it ends (the notice
:func:`~explorer.emulator.live.outbox.ended`, which every process reads). Session credentials
use the cookie digest, not the row id: SQLite may hand a deleted row's id to the next session,
which must not revive old JWTs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from explorer.emulator.chat import authkeys
from explorer.emulator.db import credential_children, oauth, sessions
from explorer.emulator.live import outbox

if TYPE_CHECKING:
    from explorer.emulator.context import Services

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
        found = sessions.by_prefix(services.store, name)
        return found is not None and found[0] == user_id and found[1] >= now
    if kind == "grant" and name:
        return oauth.family_alive(services.store, name, user_id, now)
    return False


def derive(services: Services, child: str, credential: str) -> None:
    """Record that ``child`` (a code or shortcode) was handed out through ``credential``."""
    credential_children.record(services.store, child, credential)


def source_of(services: Services, child: str) -> str:
    """The credential ``child`` was handed out through ('' when none was recorded)."""
    return credential_children.source_of(services.store, child) or ""


def _drop_children(services: Services, credential: str) -> None:
    """Delete the unexchanged codes and uncollected shortcodes ``credential`` handed out."""
    with services.store.transaction() as tx:
        for child in credential_children.of(tx, credential):
            kind, _, digest = child.partition(":")
            if kind == "code":
                oauth.drop_unused_code(tx, digest)
            elif kind == "shortcode":
                oauth.drop_undenied_shortcode(tx, digest)
            credential_children.forget(tx, child)


def end_credential(services: Services, credential: str) -> None:
    """End what ``credential`` handed out: codes, shortcodes and chat authkeys (its JWTs die
    with it through :func:`source_alive`)."""
    _drop_children(services, credential)
    with services.store.transaction() as tx:
        outbox.ended(tx, credential)
    authkeys.end(services, "credential", credential)


def end_user(services: Services, user_id: int, keep: str = "") -> None:
    """End every credential of ``user_id`` but the session ``keep`` names: sessions, OAuth
    tokens, unexchanged codes and shortcodes, chat authkeys (and so every JWT)."""
    store = services.store
    kept = [
        digest
        for digest in sessions.digests_of(store, user_id)
        if keep and session_credential(digest) == keep
    ]
    with store.transaction() as tx:
        sessions.end_all_but(tx, user_id, kept[0] if kept else "")
        oauth.end_user_grants(tx, user_id)
        outbox.ended(tx, user=user_id)
    authkeys.end(services, "user", user_id)
