"""Channels (the ``channels`` table, declared with the core records in :mod:`.engine`): the
lookups and updates many families share, a new account's channel, and related channels.
Column names passed to these functions come from the platform's code, never from a request."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from explorer.emulator.db.engine import Store, Transaction
from explorer.wire.numbers import identifier
from explorer.wire.records import CHANNEL, USER

#: SELECT list for a channel joined with its owner: the channel's wire fields in their order,
#: its stream key, then its owner's (``shapes.render_channel`` renders such rows).
WITH_OWNER = ", ".join(
    [f"c.{f.name}" for f in CHANNEL] + ["c.streamKey"] + [f"u.{f.name}" for f in USER]
)
#: The channels (``c``) joined with their owners (``u``).
JOINED = "channels c JOIN users u ON u.id = c.userId"


def find(db: Store, id_or_token: str | int) -> tuple[Any, ...] | None:
    """The :data:`WITH_OWNER` row of a channel given by numeric id or token, or None."""
    text = str(id_or_token)
    number = identifier(text)
    if number is not None:
        return db.one(f"SELECT {WITH_OWNER} FROM {JOINED} WHERE c.id = ?", (number,))
    return db.one(f"SELECT {WITH_OWNER} FROM {JOINED} WHERE lower(c.token) = lower(?)", (text,))


def with_owner(db: Store, ids: Sequence[int]) -> list[tuple[Any, ...]]:
    """The :data:`WITH_OWNER` rows of the channels ``ids`` (one or more), in no order."""
    return db.all(
        f"SELECT {WITH_OWNER} FROM {JOINED} WHERE c.id IN ({', '.join('?' * len(ids))})", ids
    )


def listed_page(
    db: Store, where: str, args: Sequence[Any], order: str, limit: int, offset: int
) -> list[tuple[Any, ...]]:
    """The :data:`WITH_OWNER` rows of one page (``limit`` at ``offset``) of the unsuspended
    channels matching ``where``, sorted by ``order`` then id; ``args`` bind the placeholders of
    both clauses, in that order."""
    return db.all(
        f"SELECT {WITH_OWNER} FROM {JOINED} WHERE c.suspended = 0 AND {where} "
        f"ORDER BY {order}, c.id LIMIT ? OFFSET ?",
        [*args, limit, offset],
    )


def listed_count(db: Store, where: str, args: Sequence[Any]) -> int:
    """How many unsuspended channels match ``where`` (with ``args``)."""
    value: int = db.scalar(
        f"SELECT COUNT(*) FROM channels c WHERE c.suspended = 0 AND {where}", args
    )
    return value


def fields(db: Store | Transaction, channel_id: int, *names: str) -> tuple[Any, ...] | None:
    """The columns ``names`` of channel ``channel_id``, in that order; None when there is none."""
    return db.one(f"SELECT {', '.join(names)} FROM channels WHERE id = ?", (channel_id,))


def field(db: Store | Transaction, channel_id: int, name: str) -> Any:
    """Column ``name`` of channel ``channel_id``; None when there is no such channel."""
    return db.scalar(f"SELECT {name} FROM channels WHERE id = ?", (channel_id,))


def update(tx: Transaction, channel_id: int, values: dict[str, Any], updated_at: str) -> None:
    """Set the columns of ``values`` (named by the platform's code, never by a request) on
    channel ``channel_id`` and stamp ``updatedAt``."""
    sets = "".join(f"{column} = ?, " for column in values)
    tx.execute(
        f"UPDATE channels SET {sets}updatedAt = ? WHERE id = ?",
        (*values.values(), updated_at, channel_id),
    )


#: The order within a tier of related channels: that of the tier's index
#: (``channels_related_type`` and ``channels_related_language`` in :mod:`.engine`).
TIER_ORDER = "c.online DESC, c.viewersCurrent DESC, c.viewersTotal DESC, c.id"


#: The first tier's condition (type and language shared), by the index it is read in: the
#: other field's term is written so that no index can serve it (an SQLite idiom PostgreSQL
#: reads the same way), which leaves the planner the one range.
_BOTH = {
    "type": "c.typeId = ? AND c.languageId || '' = ?",
    "language": "c.typeId + 0 = ? AND c.languageId = ?",
}


def _tiers(
    type_id: int | None, language: str | None, by: str = "type"
) -> list[tuple[str, tuple[Any, ...]]]:
    """The conditions of the tiers of listed (unsuspended) channels related to one of
    ``type_id`` and ``language``, best first, each with its arguments: both shared (read in
    the index of field ``by``), then the type only, then the language only."""
    found: list[tuple[str, tuple[Any, ...]]] = []
    if type_id is not None and language is not None:
        found.append((_BOTH[by], (type_id, language)))
    if type_id is not None:
        other = " AND c.languageId IS DISTINCT FROM ?" if language is not None else ""
        found.append((f"c.typeId = ?{other}", (type_id, language)[: 1 + bool(other)]))
    if language is not None:
        other = " AND c.typeId IS DISTINCT FROM ?" if type_id is not None else ""
        found.append((f"c.languageId = ?{other}", (language, type_id)[: 1 + bool(other)]))
    return [(f"c.suspended = 0 AND {where}", args) for where, args in found]


def related_tier_sizes(
    type_id: int | None, language: str | None, count: Callable[[int | None, str | None], int]
) -> list[int]:
    """How many listed channels each tier related to ``type_id`` and ``language`` holds (a
    channel of that likeness is in its own first tier; no tiers when both are None), from
    ``count(type_id, language)``, the listed channels of a type, a language (the other None)
    or both: each tier of :func:`_tiers` is one such count less the first tier's."""
    both = type_id is not None and language is not None
    first = count(type_id, language) if both else 0
    sizes = [first] if both else []
    if type_id is not None:
        sizes.append(count(type_id, None) - first)
    if language is not None:
        sizes.append(count(None, language) - first)
    return sizes


def languages_of_type(db: Store, type_id: int) -> dict[str | None, int]:
    """How many listed channels of type ``type_id`` each language has: one read of the type's
    range of its related index, where counting one language of a type alone would read the
    whole language's range (the planner's choice)."""
    rows = db.all(
        "SELECT c.languageId, COUNT(*) FROM channels c WHERE c.suspended = 0 AND c.typeId = ? "
        "GROUP BY c.languageId",
        (type_id,),
    )
    return {language: int(count) for language, count in rows}


def language_count(db: Store, language: str) -> int:
    """How many listed channels have language ``language``."""
    return listed_count(db, "c.languageId = ?", [language])


def related_ids(
    db: Store,
    type_id: int | None,
    language: str | None,
    sizes: Sequence[int],
    channel_id: int,
    offset: int,
    limit: int,
) -> list[int]:
    """The ids of one page (``offset``, ``limit``) of the channels related to ``type_id`` and
    ``language``, channel ``channel_id`` left out, tier after tier; ``sizes`` are the tiers'
    sizes without that channel, so a page reads only the tiers it overlaps, in their index's
    order. The first tier is read in the smaller of the type's and the language's ranges
    (the second and third tiers' sizes tell which): the planner, left to choose, walked a
    large language for a few channels of a small type, up to a millisecond a page."""
    skip, wanted = offset, limit
    ids: list[int] = []
    by = "type" if len(sizes) < 3 or sizes[1] <= sizes[2] else "language"
    for (where, args), count in zip(_tiers(type_id, language, by), sizes, strict=True):
        if wanted and skip < count:
            found = db.all(
                f"SELECT c.id FROM channels c WHERE {where} AND c.id != ? "
                f"ORDER BY {TIER_ORDER} LIMIT ? OFFSET ?",
                (*args, channel_id, wanted, skip),
            )
            ids += [row[0] for row in found]
            wanted -= len(found)
        skip = max(0, skip - count)
    return ids


def owner(db: Store, channel_id: int | None) -> int | None:
    """The id of the user owning ``channel_id``, or None."""
    value: int | None = db.scalar("SELECT userId FROM channels WHERE id = ?", (channel_id,))
    return value


def unsuspended_owner(db: Store, channel_id: int) -> int | None:
    """The id of the user owning ``channel_id`` when it exists and is not suspended, else
    None."""
    value: int | None = db.scalar(
        "SELECT userId FROM channels WHERE id = ? AND suspended = 0", (channel_id,)
    )
    return value


def id_of_owner(db: Store | Transaction, user_id: int) -> int | None:
    """The id of the channel ``user_id`` owns, or None."""
    value: int | None = db.scalar("SELECT id FROM channels WHERE userId = ?", (user_id,))
    return value


#: The facts access checks need: id, userId, token, online, suspended.
Ref = tuple[int, int, str, int, int]


_REF = "id, userId, token, online, suspended"


def ref(db: Store, channel_id: int) -> Ref | None:
    """The :data:`Ref` of channel ``channel_id``, or None."""
    return _ref(db.one(f"SELECT {_REF} FROM channels WHERE id = ?", (channel_id,)))


def ref_by_token(db: Store, token: str) -> Ref | None:
    """The :data:`Ref` of the channel named ``token`` (any case), or None."""
    return _ref(db.one(f"SELECT {_REF} FROM channels WHERE lower(token) = lower(?)", (token,)))


def _ref(row: tuple[Any, ...] | None) -> Ref | None:
    return None if row is None else (row[0], row[1], row[2], row[3], row[4])


def of_owner(db: Store, user_id: int, columns: str, joined: str) -> tuple[Any, ...] | None:
    """The ``columns`` row, read from ``joined`` (the channels as ``c`` with what is joined to
    them), of the channel ``user_id`` owns, or None."""
    return db.one(f"SELECT {columns} FROM {joined} WHERE c.userId = ?", (user_id,))


#: The id of the first channel of a database without one.
FIRST_ID = 100_000


def add_for(tx: Transaction, user_id: int, token: str, name: str, now: str, key: str) -> int:
    """Add a channel for the new account ``user_id``, with the next free id; that id. Its
    stream key is the id, a dash and ``key``."""
    channel_id = (tx.scalar("SELECT MAX(id) FROM channels") or FIRST_ID - 1) + 1
    tx.execute(
        "INSERT INTO channels (id, userId, token, name, createdAt, updatedAt, streamKey) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (channel_id, user_id, token, name, now, now, f"{channel_id}-{key}"),
    )
    return channel_id


# --- the channel's resources -----------------------------------------------------------------

#: For ``paging.channel_page``: the channels hosting a channel (the argument), and the order
#: of most live viewers first.
HOSTING = "c.hosteeId = ?"
MOST_WATCHED = "c.viewersCurrent DESC"


def count(db: Store) -> int:
    """How many channels there are (suspended ones too)."""
    value: int = db.scalar("SELECT COUNT(*) FROM channels")
    return value


def is_listed(db: Store, channel_id: int) -> bool:
    """Whether ``channel_id`` names an unsuspended channel."""
    return (
        db.one("SELECT 1 FROM channels WHERE id = ? AND suspended = 0", (channel_id,)) is not None
    )


def is_suspended(db: Store, channel_id: int) -> bool | None:
    """Whether ``channel_id`` is suspended, or None when there is no such channel."""
    row = db.one("SELECT suspended FROM channels WHERE id = ?", (channel_id,))
    return None if row is None else bool(row[0])


def is_partnered(db: Store, channel_id: int) -> bool:
    """Whether ``channel_id`` is partnered."""
    return bool(db.scalar("SELECT partnered FROM channels WHERE id = ?", (channel_id,)))


def standing(db: Store, channel_id: int) -> tuple[bool, int, int] | None:
    """Whether ``channel_id`` is partnered, its followers and all-time viewers; None when there
    is no such channel."""
    row = db.one(
        "SELECT partnered, numFollowers, viewersTotal FROM channels WHERE id = ?", (channel_id,)
    )
    return None if row is None else (bool(row[0]), row[1], row[2])


def live_state(db: Store, ref: int | str) -> tuple[int, int, int] | None:
    """``(id, online, viewersCurrent)`` of the channel of id ``ref`` (an int) or of token
    ``ref`` (a str, any case), or None."""
    if isinstance(ref, int):
        row = db.one("SELECT id, online, viewersCurrent FROM channels WHERE id = ?", (ref,))
    else:
        row = db.one(
            "SELECT id, online, viewersCurrent FROM channels WHERE lower(token) = lower(?)",
            (ref,),
        )
    return None if row is None else (int(row[0]), int(row[1]), int(row[2]))


def hostee_of(db: Store | Transaction, channel_id: int) -> int | None:
    """The channel ``channel_id`` hosts, or None."""
    value: int | None = db.scalar("SELECT hosteeId FROM channels WHERE id = ?", (channel_id,))
    return value


def host(tx: Transaction, host_id: int, hostee_id: int, now: str) -> tuple[int | None, bool]:
    """Make ``host_id`` host ``hostee_id``: the channel it hosted before, and whether that
    changed anything."""
    before = hostee_of(tx, host_id)
    changed = tx.execute(
        "UPDATE channels SET hosteeId = ?, updatedAt = ? "
        "WHERE id = ? AND hosteeId IS DISTINCT FROM ?",
        (hostee_id, now, host_id, hostee_id),
    ).rowcount
    return before, bool(changed)


def end_host(tx: Transaction, host_id: int, now: str) -> int | None:
    """Stop ``host_id`` hosting: the channel it hosted, or None (nothing changes)."""
    before = hostee_of(tx, host_id)
    if before is not None:
        tx.execute(
            "UPDATE channels SET hosteeId = NULL, updatedAt = ? WHERE id = ?", (now, host_id)
        )
    return before


def raid(tx: Transaction, raider: int, target: int, viewers: int, now: str) -> int | None:
    """``raider`` goes offline hosting ``target``, whose audience gains ``viewers``: the
    channel the raider hosted before, or None."""
    before = hostee_of(tx, raider)
    tx.execute(
        "UPDATE channels SET online = 0, viewersCurrent = 0, hosteeId = ?, updatedAt = ? "
        "WHERE id = ?",
        (target, now, raider),
    )
    tx.execute(
        "UPDATE channels SET viewersCurrent = viewersCurrent + ?, updatedAt = ? WHERE id = ?",
        (viewers, now, target),
    )
    return before


def suspend(db: Store, channel_id: int, now: str) -> None:
    """Suspend ``channel_id`` (offline, no viewers) and end every host of it (idempotent)."""
    with db.transaction() as tx:
        tx.execute(
            "UPDATE channels SET suspended = 1, online = 0, viewersCurrent = 0, updatedAt = ? "
            "WHERE id = ? AND suspended = 0",
            (now, channel_id),
        )
        tx.execute("UPDATE channels SET hosteeId = NULL WHERE hosteeId = ?", (channel_id,))


def unsuspend(db: Store, channel_id: int, now: str) -> None:
    """Lift the suspension of ``channel_id`` (idempotent)."""
    with db.transaction() as tx:
        tx.execute(
            "UPDATE channels SET suspended = 0, updatedAt = ? WHERE id = ? AND suspended = 1",
            (now, channel_id),
        )


def set_stream_key(db: Store, channel_id: int, key: str, now: str) -> None:
    """Replace the stream key of ``channel_id``."""
    with db.transaction() as tx:
        tx.execute(
            "UPDATE channels SET streamKey = ?, updatedAt = ? WHERE id = ?",
            (key, now, channel_id),
        )


def partner(tx: Transaction, channel_id: int, now: str) -> None:
    """Mark ``channel_id`` partnered."""
    tx.execute("UPDATE channels SET partnered = 1, updatedAt = ? WHERE id = ?", (now, channel_id))


# --- the simulated world (streams.py, simulate.py, backfill.py) ---------------------------------


def busiest_listed(db: Store, limit: int) -> list[tuple[int, int, int, str | None]]:
    """``(id, userId, viewersCurrent, languageId)`` of the ``limit`` busiest unsuspended
    channels: most viewers now, then most views, then by id."""
    rows = db.all(
        "SELECT id, userId, viewersCurrent, languageId FROM channels WHERE suspended = 0 "
        "ORDER BY viewersCurrent DESC, viewersTotal DESC, id LIMIT ?",
        (limit,),
    )
    return [(row[0], row[1], row[2], row[3]) for row in rows]


def listed_owners(db: Store, channel_ids: Sequence[int]) -> list[tuple[int, int, str | None]]:
    """``(id, userId, languageId)`` of the unsuspended channels among ``channel_ids`` (a batch
    small enough for one statement's parameters), in no order."""
    marks = ",".join("?" * len(channel_ids))
    # ``+suspended``: looked up by id. The sampled statistics (``seed_store``) guess that few
    # rows are unsuspended, and a ranking index led by ``suspended`` then looked cheaper than
    # the ids: a scan of every channel per batch, seconds per tick at a million channels.
    rows = db.all(
        f"SELECT id, userId, languageId FROM channels WHERE +suspended = 0 AND id IN ({marks})",
        channel_ids,
    )
    return [(row[0], row[1], row[2]) for row in rows]


def set_live(tx: Transaction, audiences: Iterable[tuple[int, int]]) -> None:
    """Mark live, with their ``(viewersCurrent, id)``, the channels of ``audiences``."""
    tx.executemany("UPDATE channels SET online = 1, viewersCurrent = ? WHERE id = ?", audiences)


def set_offline(tx: Transaction, views: Iterable[tuple[int, int]]) -> None:
    """Mark offline, with no viewers, the channels of ``views``, each ``(views, id)`` adding
    its ended session's views to ``viewersTotal``."""
    tx.executemany(
        "UPDATE channels SET online = 0, viewersCurrent = 0, "
        "viewersTotal = viewersTotal + ? WHERE id = ?",
        views,
    )


def set_types(tx: Transaction, types: Iterable[tuple[int | None, int]]) -> None:
    """Set the ``(typeId, id)`` of each channel of ``types``."""
    tx.executemany("UPDATE channels SET typeId = ? WHERE id = ?", types)


def clear_hostee(tx: Transaction, channel_id: int, hostee_id: int) -> bool:
    """End channel ``channel_id``'s host of ``hostee_id``; whether it was hosting that one."""
    cleared = tx.execute(
        "UPDATE channels SET hosteeId = NULL WHERE id = ? AND hosteeId = ?",
        (channel_id, hostee_id),
    ).rowcount
    return bool(cleared)


def set_hostee(tx: Transaction, channel_id: int, hostee_id: int) -> bool:
    """Make channel ``channel_id`` host ``hostee_id``; whether that changed its host."""
    set_now = tx.execute(
        "UPDATE channels SET hosteeId = ? WHERE id = ? AND hosteeId IS DISTINCT FROM ?",
        (hostee_id, channel_id, hostee_id),
    ).rowcount
    return bool(set_now)
