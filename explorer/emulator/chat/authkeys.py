"""Chat authkeys: issued by ``GET /chats/{channelId}``, checked by the chat ``auth`` method.

A key is bound to one channel and one user, and to what the REST credential allowed: a session
key carries every permission the user's roles grant, a bearer or JWT key only those its scopes
unlock (``chat:chat`` to send messages, ...), remembered in ``chat_authkey_scopes``
(:mod:`explorer.emulator.db.chat_authkeys`). While a key is valid, the same caller gets the same
key back, so official clients that re-send one key on every reconnect keep working until it
expires (reference.md fact 6; ``Config.authkey_ttl``, 5 minutes by default).

A key also dies with the credential that fetched it (``chat_authkey_credentials``: the
cookie session, the OAuth grant family, or ``jwt``): logout, token revocation, refresh-token
reuse, a password change and a suspension call :func:`end`, which deletes the keys (so no node
accepts them in ``auth``) and has the chat hub close the connections already signed in with
them, on every node and process (:data:`REVOKED`, see :mod:`~explorer.emulator.chat.node`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from explorer.emulator import credentials
from explorer.emulator.db import chat_authkeys
from explorer.emulator.db.chat_authkeys import Selector
from explorer.emulator.db.engine import Store

if TYPE_CHECKING:
    from explorer.emulator.context import Services

#: The broker event that carries a revoked key to every node (never sent to a client).
REVOKED = "explorer:authkey-revoked"


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
    for key, held in chat_authkeys.held(store, credential, channel_id, user_id, now + 5):
        if held == wanted:
            return key
    key = credentials.new_token(16)
    chat_authkeys.add(store, key, channel_id, user_id, now + ttl, credential, wanted, now)
    return key


def verify(store: Store, key: str, channel_id: int, user_id: int, now: float) -> KeyGrant | None:
    """The grant of ``key`` when it is live and was issued for exactly this channel and user."""
    row = chat_authkeys.live(store, key, channel_id, user_id, now)
    if row is None:
        return None
    return KeyGrant(None if row[0] is None else frozenset(row[0].split()))


def end(services: Services, by: Selector, value: str | int) -> None:
    """Delete the keys issued through a credential, to a user or for a channel, and close the
    connections signed in with them."""
    revoked = chat_authkeys.revoke(services.store, by, value)
    if revoked and services.chat is not None:
        services.chat.revoke(revoked)
