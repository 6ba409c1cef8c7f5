"""Chat roles of a user in a channel, and the chat permissions those roles grant.

One place answers "what may this user do in this channel", for the REST side (``GET /chats``
lists the caller's ``permissions``) and for chat nodes (which refuse methods by the same
table). Roles come from channel ownership, the ``channel_roles`` table and the user's global
groups; a bearer token further limits permissions to its ``chat:*`` scopes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import orjson

from explorer.emulator.db import channel_roles, users
from explorer.emulator.db.engine import Store

#: Every permission name of the spec.
ALL_PERMISSIONS: tuple[str, ...] = (
    "chat",
    "connect",
    "poll_vote",
    "poll_start",
    "giveaway_start",
    "change_ban",
    "edit_options",
    "change_role",
    "bypass_links",
    "bypass_slowchat",
    "remove_message",
    "clear_messages",
    "timeout",
)
_USER = ("chat", "connect", "poll_vote")
_MOD = (
    *_USER,
    "poll_start",
    "giveaway_start",
    "change_ban",
    "bypass_links",
    "bypass_slowchat",
    "remove_message",
    "clear_messages",
    "timeout",
)
ROLE_PERMISSIONS: dict[str, tuple[str, ...]] = {
    "Owner": ALL_PERMISSIONS,
    "Staff": ALL_PERMISSIONS,
    "Founder": ALL_PERMISSIONS,
    "GlobalMod": _MOD,
    "Mod": _MOD,
    "Subscriber": (*_USER, "bypass_slowchat"),
    "Pro": _USER,
    "User": _USER,
    "Muted": ("connect", "poll_vote"),
    "Banned": ("connect",),
}
#: Roles the channel owner (or a mod, for the lower ones) may set through REST.
ASSIGNABLE_ROLES: frozenset[str] = frozenset({"Mod", "Banned", "Muted", "Subscriber"})
#: Which token scope unlocks each acting permission for a bearer caller.
PERMISSION_SCOPES: dict[str, str] = {
    "chat": "chat:chat",
    "connect": "chat:connect",
    "poll_vote": "chat:poll_vote",
    "poll_start": "chat:poll_start",
    "giveaway_start": "chat:giveaway_start",
    "timeout": "chat:timeout",
    "remove_message": "chat:remove_message",
    "clear_messages": "chat:clear_messages",
    "change_ban": "chat:purge",
    "change_role": "chat:change_role",
    "edit_options": "chat:edit_options",
    "bypass_links": "chat:bypass_links",
    "bypass_slowchat": "chat:bypass_slowchat",
}
#: Role order in lists: most significant first, ``User`` last, as recorded traffic and the
#: developer docs' examples show (``["Banned", "Pro", "User"]``, ``["Mod", "User"]``).
_ORDER = (
    "Banned",
    "Owner",
    "Staff",
    "Founder",
    "GlobalMod",
    "Mod",
    "Subscriber",
    "Pro",
    "Muted",
    "User",
)


def roles_of(store: Store, channel_id: int, user_id: int) -> list[str]:
    """The chat roles of ``user_id`` in ``channel_id``, most significant first, ``User`` last."""
    return _combined(*channel_roles.standing(store, channel_id, user_id)[1:])


def listed_roles_of(store: Store, channel_id: int, user_id: int) -> list[str] | None:
    """:func:`roles_of`, when ``channel_id`` names a listed (unsuspended) channel, else None:
    both in one statement."""
    listed, owner, given, groups = channel_roles.standing(store, channel_id, user_id)
    return _combined(owner, given, groups) if listed else None


def owners_roles(store: Store, owned: Sequence[tuple[int, int]]) -> dict[int, list[str]]:
    """The chat roles of each owner in their channel, for ``owned`` (channel id, its owner's
    id) pairs, as :func:`roles_of` gives them, by channel id: two reads in all (the seeded
    history's owners; :func:`roles_of` makes one a pair)."""
    given = channel_roles.given(store, [channel_id for channel_id, _ in owned])
    grouped = users.groups_of(store, [owner_id for _, owner_id in owned])
    return {
        channel_id: _combined(True, given.get((channel_id, owner_id)), grouped.get(owner_id))
        for channel_id, owner_id in owned
    }


def _combined(owner: bool, extra: str | None, groups: str | None) -> list[str]:
    """The chat roles of a user: ``User``, ``Owner`` when ``owner``, the channel's ``extra``
    (a JSON list) and the global ``groups`` (a JSON list) that are chat roles; ``Banned``
    alone when banned."""
    roles = {"User"}
    if owner:
        roles.add("Owner")
    if extra:
        roles.update(orjson.loads(extra))
    if groups:
        roles.update(g for g in orjson.loads(groups) if g in ("Staff", "Pro", "Founder"))
    if "Banned" in roles:
        roles = {"Banned"}
    return sorted(roles, key=_ORDER.index)


def permissions_of(roles: Iterable[str], scopes: Iterable[str] | None = None) -> list[str]:
    """The permissions ``roles`` grant, limited to ``scopes`` when a token carries them."""
    granted: set[str] = set()
    role_list = list(roles)
    if "Banned" in role_list:
        granted.update(ROLE_PERMISSIONS["Banned"])
    else:
        for role in role_list:
            granted.update(ROLE_PERMISSIONS.get(role, ()))
    if scopes is not None:
        held = set(scopes)
        granted = {p for p in granted if PERMISSION_SCOPES.get(p, "chat:connect") in held}
    return [p for p in ALL_PERMISSIONS if p in granted]
