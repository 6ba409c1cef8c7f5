"""Channel roles: the ``channel_roles`` table (in the engine's core schema), the roles a
channel gave a user beyond those of ownership and global groups: who holds which, and changing
them."""

from __future__ import annotations

from collections.abc import Collection, Sequence, Set
from typing import Any

import orjson

from explorer.emulator.db.engine import JSON_ITEMS, Store, dumps
from explorer.emulator.db.users import USER_COLUMNS


def standing(db: Store, channel_id: int, user_id: int) -> tuple[bool, bool, str | None, str | None]:
    """Whether ``channel_id`` is listed (an unsuspended channel) and what ``user_id``'s chat
    roles in it come from, in one statement: whether they own it, the JSON list of roles it
    gave them (or None) and their global groups' (None: an unknown user)."""
    row = db.one(
        "SELECT EXISTS (SELECT 1 FROM channels WHERE id = ? AND suspended = 0), "
        "(SELECT userId FROM channels WHERE id = ?) = ?, "
        "(SELECT roles FROM channel_roles WHERE channelId = ? AND userId = ?), "
        "(SELECT groups FROM users WHERE id = ?)",
        (channel_id, channel_id, user_id, channel_id, user_id, user_id),
    )
    assert row is not None
    return bool(row[0]), bool(row[1]), row[2], row[3]


def given(db: Store, channel_ids: Sequence[int]) -> dict[tuple[int, int], str]:
    """The JSON list of roles each of ``channel_ids`` (a batch small enough for one
    statement's parameters) gave a user, by (channel id, user id)."""
    if not channel_ids:  # ``IN ()``: SQLite reads it as no match, PostgreSQL refuses it
        return {}
    rows = db.all(
        "SELECT channelId, userId, roles FROM channel_roles "
        f"WHERE channelId IN ({', '.join('?' * len(channel_ids))})",
        channel_ids,
    )
    return {(row[0], row[1]): row[2] for row in rows}


def role_holders(
    db: Store,
    channel_id: int,
    owner_id: int,
    role: str | None,
    hidden: Collection[str],
    listed: str,
    limit: int,
    offset: int,
) -> tuple[list[tuple[Any, ...]], int]:
    """A page of the users of ``channel_id`` meeting ``listed`` (a condition on users ``u``), by
    name then id, as the User record's columns; and their total. ``role`` None lists the
    owner and every holder of a role, ``"Owner"`` the owner alone, another role its holders;
    holders of a ``hidden`` role are left out (the owner never is)."""
    conditions = ["r.channelId = ?"]
    args: list[Any] = [channel_id]
    held = db.fragment(JSON_ITEMS).format("r.roles")
    if role is not None and role != "Owner":
        conditions.append(f"EXISTS (SELECT 1 FROM {held} WHERE value = ?)")
        args.append(role)
    if hidden:
        names = ", ".join(f"'{name}'" for name in sorted(hidden))
        conditions.append(f"NOT EXISTS (SELECT 1 FROM {held} WHERE value IN ({names}))")
    holders = f"SELECT r.userId FROM channel_roles r WHERE {' AND '.join(conditions)}"
    if role is None:
        holders, args = f"SELECT ? UNION {holders}", [owner_id, *args]
    elif role == "Owner":
        holders, args = "SELECT ?", [owner_id]
    where = f"FROM users u WHERE u.id IN ({holders}) AND {listed}"
    rows = db.all(
        f"SELECT {USER_COLUMNS} {where} ORDER BY lower(u.username), u.id LIMIT ? OFFSET ?",
        [*args, limit, offset],
    )
    total: int = db.scalar(f"SELECT COUNT(*) {where}", args)
    return rows, total


def change_roles(db: Store, channel_id: int, user_id: int, add: Set[str], remove: Set[str]) -> None:
    """Give ``user_id`` the roles ``add`` and take ``remove`` in ``channel_id``, in one
    transaction (no roles left: no row)."""
    with db.transaction() as tx:
        stored = tx.scalar(
            "SELECT roles FROM channel_roles WHERE channelId = ? AND userId = ?",
            (channel_id, user_id),
        )
        roles = (set(orjson.loads(stored)) if stored else set()) | add
        roles -= remove
        if roles:
            tx.execute(
                "INSERT INTO channel_roles (channelId, userId, roles) VALUES (?, ?, ?) "
                "ON CONFLICT (channelId, userId) DO UPDATE SET roles = excluded.roles",
                (channel_id, user_id, dumps(sorted(roles))),
            )
        else:
            tx.execute(
                "DELETE FROM channel_roles WHERE channelId = ? AND userId = ?",
                (channel_id, user_id),
            )
