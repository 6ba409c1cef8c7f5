"""Accounts (the ``users`` table, declared with the core records in :mod:`.engine`): their
public fields, credentials, groups, private settings and sparks; the lookups many families
share."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from explorer.emulator.db.engine import Store, Transaction
from explorer.wire.records import USER


def is_undeleted(db: Store | Transaction, user_id: int) -> bool:
    """Whether user ``user_id`` exists and is not deleted."""
    found = db.one("SELECT 1 FROM users WHERE id = ? AND deletedAt IS NULL", (user_id,))
    return found is not None


def ids_by_name(db: Store | Transaction, usernames: Sequence[str]) -> dict[str, int]:
    """The ids of the users among ``usernames`` (exact names), by username; read through the
    ``users_username_lower`` index, then matched exactly."""
    marks = ", ".join(["lower(?)"] * len(usernames))
    rows = db.all(f"SELECT username, id FROM users WHERE lower(username) IN ({marks})", usernames)
    return {name: user_id for name, user_id in rows if name in usernames}


def sparks(db: Store | Transaction, user_id: int) -> int | None:
    """The sparks user ``user_id`` holds; None when there is no such user."""
    held: int | None = db.scalar("SELECT sparks FROM users WHERE id = ?", (user_id,))
    return held


def spend_sparks(tx: Transaction, user_id: int, amount: int, updated_at: str) -> None:
    """Take ``amount`` sparks from user ``user_id`` (the caller checked they hold them)."""
    tx.execute(
        "UPDATE users SET sparks = sparks - ?, updatedAt = ? WHERE id = ?",
        (amount, updated_at, user_id),
    )


#: The public fields of a user, in the wire record's order (rows hold them so).
FIELDS: tuple[str, ...] = tuple(field.name for field in USER)


_COLUMNS = ", ".join(FIELDS)


def row(db: Store | Transaction, user_id: int) -> tuple[Any, ...] | None:
    """The :data:`FIELDS` row of ``user_id``, or None."""
    return db.one(f"SELECT {_COLUMNS} FROM users WHERE id = ?", (user_id,))


def row_with_channel(
    db: Store | Transaction, user_id: int, channel_columns: Sequence[str]
) -> tuple[Any, ...] | None:
    """The :data:`FIELDS` row of ``user_id`` followed by the ``channel_columns`` (named by the
    platform's code) of the channel they own (all None: none), in one statement; None when
    there is no such user."""
    named = ", ".join(f"c.{column}" for column in channel_columns)
    return db.one(
        f"SELECT {USER_COLUMNS}, {named} FROM users u LEFT JOIN channels c ON c.userId = u.id "
        "WHERE u.id = ?",
        (user_id,),
    )


def username(db: Store, user_id: int) -> str | None:
    """The name of ``user_id``, or None."""
    value: str | None = db.scalar("SELECT username FROM users WHERE id = ?", (user_id,))
    return value


def by_name(db: Store, name: str) -> tuple[int, str] | None:
    """``(id, username)`` of the user called ``name`` (any case), or None."""
    found = db.one("SELECT id, username FROM users WHERE lower(username) = lower(?)", (name,))
    return None if found is None else (found[0], found[1])


def chat_profile(db: Store, user_id: int) -> tuple[str, int, str | None] | None:
    """``(username, level, avatarUrl)`` of ``user_id``, what chat shows of a sender; None for
    an unknown user."""
    found = db.one("SELECT username, level, avatarUrl FROM users WHERE id = ?", (user_id,))
    return None if found is None else (found[0], found[1], found[2])


def groups(db: Store, user_id: int) -> str | None:
    """The JSON list of ``user_id``'s group names, or None for an unknown user."""
    found: str | None = db.scalar("SELECT groups FROM users WHERE id = ?", (user_id,))
    return found


def groups_of(db: Store, user_ids: Sequence[int]) -> dict[int, str | None]:
    """The JSON list of group names of each of ``user_ids`` that exists (a batch small enough
    for one statement's parameters), by id."""
    if not user_ids:  # ``IN ()``: SQLite reads it as no match, PostgreSQL refuses it
        return {}
    rows = db.all(
        f"SELECT id, groups FROM users WHERE id IN ({', '.join('?' * len(user_ids))})", user_ids
    )
    return {row[0]: row[1] for row in rows}


#: The same columns of users ``u`` (for statements joining users to another table).
USER_COLUMNS = ", ".join(f"u.{name}" for name in FIELDS)


#: SQL condition on users ``u``: the account is not suspended (an account is suspended with
#: its channel, see ``resources/channel_suspension.py``).
UNSUSPENDED = "NOT EXISTS (SELECT 1 FROM channels s WHERE s.userId = u.id AND s.suspended != 0)"


def listed(staff: bool) -> str:
    """The SQL condition on users ``u`` every listing of users applies: suspended accounts
    are shown to ``staff`` only."""
    return "1 = 1" if staff else UNSUSPENDED


def is_listed(db: Store, user_id: int, listed: str) -> bool:
    """Whether ``user_id`` exists and meets ``listed``, a condition on users ``u`` (which
    accounts the caller may see)."""
    return db.one(f"SELECT 1 FROM users u WHERE u.id = ? AND {listed}", (user_id,)) is not None


def private(db: Store, user_id: int) -> tuple[str | None, str, str] | None:
    """``(email, groups, preferences)`` of ``user_id`` (groups and preferences as JSON)."""
    found = db.one("SELECT email, groups, preferences FROM users WHERE id = ?", (user_id,))
    return None if found is None else (found[0], found[1], found[2])


def password_hash(db: Store, user_id: int) -> str | None:
    """The stored password hash of ``user_id``."""
    found: str | None = db.scalar("SELECT password_hash FROM users WHERE id = ?", (user_id,))
    return found


def set_password(db: Store, user_id: int, password_hash: str) -> None:
    """Store ``user_id``'s new password hash."""
    with db.transaction() as tx:
        tx.execute("UPDATE users SET password_hash = ? WHERE id = ?", (password_hash, user_id))


def sign_in(db: Store, username: str) -> tuple[int, str | None, int | None] | None:
    """``(id, password_hash, channel suspended)`` of the undeleted account ``username`` (any
    case), or None."""
    found = db.one(
        "SELECT u.id, u.password_hash, c.suspended FROM users u "
        "LEFT JOIN channels c ON c.userId = u.id "
        "WHERE lower(u.username) = lower(?) AND u.deletedAt IS NULL",
        (username,),
    )
    return None if found is None else (found[0], found[1], found[2])


def taken(tx: Transaction, username: str) -> bool:
    """Whether an account is named ``username`` (any case)."""
    found = tx.one("SELECT 1 FROM users WHERE lower(username) = lower(?)", (username,))
    return found is not None


def add(tx: Transaction, username: str, email: str, password_hash: str, code: str, now: str) -> int:
    """Add an unverified account awaiting confirmation ``code``; its id."""
    user_id: int = tx.scalar(
        "INSERT INTO users (username, email, password_hash, verified, confirm_code, "
        "createdAt, updatedAt) VALUES (?, ?, ?, 0, ?, ?, ?) RETURNING id",
        (username, email, password_hash, code, now, now),
    )
    return user_id


def set_avatar(tx: Transaction, user_id: int, url: str) -> None:
    """Set ``user_id``'s avatar address."""
    tx.execute("UPDATE users SET avatarUrl = ? WHERE id = ?", (url, user_id))


def confirmation(db: Store, user_id: int) -> tuple[str | None, int] | None:
    """``(confirm_code, verified)`` of ``user_id``, or None for an unknown user."""
    found = db.one("SELECT confirm_code, verified FROM users WHERE id = ?", (user_id,))
    return None if found is None else (found[0], found[1])


def verify(db: Store, user_id: int, now: str) -> None:
    """Mark ``user_id`` verified and drop its confirmation code."""
    with db.transaction() as tx:
        tx.execute(
            "UPDATE users SET verified = 1, confirm_code = NULL, updatedAt = ? WHERE id = ?",
            (now, user_id),
        )


#: A name prefix as a range of the name index (the ``LIKE`` alone read every user: issue 36),
#: then the match itself (``%`` and ``_`` literal).
_PREFIXED = (
    "lower(u.username) >= lower(?) AND lower(u.username) < lower(?) "
    "AND lower(u.username) LIKE lower(?) ESCAPE '\\' AND u.deletedAt IS NULL"
)


#: Above every text that starts with a given prefix (in UTF-8, above any character).
_PAST = "\U0010ffff"


def _prefixed(prefix: str) -> tuple[str, str, str]:
    """The parameters of :data:`_PREFIXED` for ``prefix``."""
    escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return prefix, prefix + _PAST, f"{escaped}%"


def named_like(
    db: Store, prefix: str, listed: str, limit: int, offset: int
) -> tuple[list[tuple[Any, ...]], int]:
    """One page of the :data:`FIELDS` rows of the undeleted users whose name starts with
    ``prefix`` (any case) and who meet ``listed`` (:func:`listed`), by name, and how many
    there are in all."""
    match = f"{_PREFIXED} AND {listed}"
    matching = _prefixed(prefix)
    rows = db.all(
        f"SELECT {USER_COLUMNS} FROM users u WHERE {match} "
        "ORDER BY lower(u.username), u.id LIMIT ? OFFSET ?",
        (*matching, limit, offset),
    )
    total: int = db.scalar(f"SELECT COUNT(*) FROM users u WHERE {match}", matching)
    return rows, total


#: The profile fields a user may change (:func:`update_profile`).
PROFILE = frozenset({"bio", "social"})


def update_profile(db: Store, user_id: int, changes: dict[str, Any], now: str) -> None:
    """Set the :data:`PROFILE` fields in ``changes`` (``social`` as JSON text) of ``user_id``."""
    assert changes and set(changes) <= PROFILE
    sets = ", ".join(f"{name} = ?" for name in changes)
    with db.transaction() as tx:
        tx.execute(
            f"UPDATE users SET {sets}, updatedAt = ? WHERE id = ?",
            (*changes.values(), now, user_id),
        )


def accounts_named(db: Store, usernames: Sequence[str]) -> list[tuple[int, str]]:
    """``(id, username)`` of the accounts named exactly ``usernames`` that exist, by id."""
    found = ids_by_name(db, usernames)
    return sorted((user_id, name) for name, user_id in found.items())


def id_named(db: Store | Transaction, username: str) -> int | None:
    """The id of the account named exactly ``username``, or None."""
    return ids_by_name(db, [username]).get(username)


def first_others(db: Store, user_id: int, count: int) -> list[tuple[int, str]]:
    """``(id, username)`` of the first ``count`` accounts by id, ``user_id``'s left out."""
    rows = db.all(
        "SELECT id, username FROM users WHERE id != ? ORDER BY id LIMIT ?", (user_id, count)
    )
    return [(row[0], row[1]) for row in rows]


def charge_sparks(tx: Transaction, user_id: int, sparks: int) -> bool:
    """Move ``user_id``'s balance by ``sparks`` unless it would fall below zero; whether it
    moved."""
    moved = tx.execute(
        "UPDATE users SET sparks = sparks + ? WHERE id = ? AND sparks + ? >= 0",
        (sparks, user_id, sparks),
    ).rowcount
    return bool(moved)


def exists(db: Store, user_id: int) -> bool:
    """Whether a user of id ``user_id`` exists."""
    return db.one("SELECT 1 FROM users WHERE id = ?", (user_id,)) is not None


def usernames(db: Store, user_ids: Sequence[int]) -> list[tuple[int, str]]:
    """``(id, username)`` of each of ``user_ids`` that exists, in no order."""
    if not user_ids:
        return []
    return db.all(
        f"SELECT id, username FROM users WHERE id IN ({', '.join('?' * len(user_ids))})",
        user_ids,
    )


def user_id(db: Store, ref: int | str) -> int | None:
    """The id of the user of id ``ref`` (an int) or of name ``ref`` (a str, any case), or
    None."""
    if isinstance(ref, int):
        row = db.one("SELECT id FROM users WHERE id = ?", (ref,))
    else:
        row = db.one("SELECT id FROM users WHERE lower(username) = lower(?)", (ref,))
    return None if row is None else int(row[0])


def highest_id(db: Store) -> int:
    """The highest user id (there are users whenever there are channels)."""
    value: int = db.scalar("SELECT MAX(id) FROM users")
    return value


def chat_profiles(db: Store, user_ids: Sequence[int]) -> list[tuple[int, str, int, str | None]]:
    """``(id, username, level, avatarUrl)`` of each of ``user_ids`` that exists, what chat
    shows of a sender (:func:`chat_profile`), in no order."""
    if not user_ids:  # ``IN ()``: SQLite reads it as no match, PostgreSQL refuses it
        return []
    rows = db.all(
        "SELECT id, username, level, avatarUrl FROM users "
        f"WHERE id IN ({', '.join('?' * len(user_ids))})",
        user_ids,
    )
    return [(row[0], row[1], row[2], row[3]) for row in rows]
