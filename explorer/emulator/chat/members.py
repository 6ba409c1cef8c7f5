"""Who acts in a room: a connection's user or a bot, with the roles and permissions they hold.

Permissions come from :func:`~explorer.emulator.chat.roles.roles_of` and
:func:`~explorer.emulator.chat.roles.permissions_of` (one table for REST and chat), narrowed
by the authkey's token scopes; :func:`require` is the check every rule makes first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from explorer.emulator.chat.roles import permissions_of, roles_of
from explorer.emulator.db import users
from explorer.emulator.db.engine import Store
from explorer.wire.codes import UACCESS, ChatErrorCode, Refusal


@dataclass(eq=False, slots=True)
class Member:
    """Who acts in a room: a connection's user (``user_id`` None when anonymous) or a bot."""

    user_id: int | None
    username: str = ""
    level: int = 0
    avatar: str | None = None
    roles: list[str] = field(default_factory=list)
    permissions: frozenset[str] = frozenset()
    #: The authkey's token scopes (None: a session key, every permission of the roles).
    scopes: frozenset[str] | None = None
    #: Set by ``attachEmotes``: messages shown to this member carry ``meta.emoticons``.
    emotes: bool = False

    def identity(self) -> dict[str, Any]:
        """The sender fields of chat message data."""
        return {
            "user_name": self.username,
            "user_id": self.user_id,
            "user_roles": self.roles,
            "user_level": self.level,
            "user_avatar": self.avatar,
        }

    def moderator(self) -> dict[str, Any]:
        """The ``moderator``/``clearer`` object of moderation events."""
        return {
            "user_name": self.username,
            "user_id": self.user_id,
            "user_roles": self.roles,
            "user_level": self.level,
        }

    def author(self) -> dict[str, Any]:
        """The ``author`` of a poll, the ``user`` of ``UserTimeout``."""
        return {"user_name": self.username, "user_id": self.user_id, "user_roles": self.roles}


def member_of(store: Store, channel_id: int, user_id: int, scopes: frozenset[str] | None) -> Member:
    """The member ``user_id`` is in ``channel_id``: name, level, roles, permissions."""
    row = users.chat_profile(store, user_id)
    username, level, avatar = row if row is not None else (f"user{user_id}", 0, None)
    member = Member(user_id, username, level, avatar, scopes=scopes)
    refresh(store, member, channel_id)
    return member


def refresh(store: Store, member: Member, channel_id: int) -> None:
    """Re-read ``member``'s roles in ``channel_id`` (after ``UserUpdate``)."""
    if member.user_id is None:
        return
    member.roles = roles_of(store, channel_id, member.user_id)
    member.permissions = frozenset(permissions_of(member.roles, member.scopes))


def require(member: Member, permission: str, action: str) -> int:
    """The member's user id, or the refusal when they may not ``action``: 4003 anonymous,
    4002 banned or without ``permission``."""
    if member.user_id is None:
        raise Refusal(ChatErrorCode.NOT_AUTHENTICATED, f"You must be signed in to {action}.")
    if "Banned" in member.roles:
        raise Refusal(ChatErrorCode.ACCESS_DENIED, UACCESS)
    if permission not in member.permissions:
        raise Refusal(
            ChatErrorCode.ACCESS_DENIED,
            f"You need the {permission} permission to {action}.",
        )
    return member.user_id
