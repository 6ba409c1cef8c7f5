"""Per-channel chat: the rules of every room method, presence, timeouts, polls and history.

A :class:`Room` runs the methods a member calls once joined (``msg``, ``whisper``,
``vote:start``, ``vote:choose``/``vote``, ``timeout``, ``purge``, ``deleteMessage``,
``clearMessages``, ``history``, ``giveaway:start``) and publishes their events through the
broker; chat nodes and the simulator's bots call the very same methods, so what clients see
is identical whoever acts. Connection-level methods (``auth``, ``ping``, ``attachEmotes``)
belong to :mod:`chatnode`.

Permissions come from :func:`roles.roles_of` / :func:`roles.permissions_of` (one table for
REST and chat). A method returns its reply data (or :data:`NO_DATA`) or raises
:class:`~explorer.packets.ChatError`; the codes follow ``packets.ChatErrorCode``:

=================  ===========================  ===============================================
method             needs                        refusals
=================  ===========================  ===============================================
msg, whisper       ``chat``, not timed out      4003 anonymous, 4002 banned/muted, 4007 timed
                                                out, 4005 whisper target unknown or absent
vote:start         ``poll_start``               4006 a poll is already running
vote:choose, vote  ``poll_vote``                4006 no poll, no such option
timeout            ``timeout``                  4005 unknown user, 4002 target ranks as high
purge              ``change_ban`` (chat:purge)  4005 unknown user, 4002 target ranks as high
deleteMessage      own message, or              4005 no such message, 4002 someone else's
                   ``remove_message``
clearMessages      ``clear_messages``
giveaway:start     ``giveaway_start``           4005 nobody present chatted in 10 minutes
history            joined (anonymous too)
=================  ===========================  ===============================================

Wrong argument counts or types answer 4000. Units (reference.md): ``vote:start`` takes
seconds; ``timeout`` takes ``"30s"``, ``"5m"``, ``"1m15s"``, ``"1h"``, ``"2d"``, a number of
seconds, or ``"clear"``; ``UserTimeout.duration`` is milliseconds; a poll's ``duration`` is
milliseconds remaining and ``endsAt`` epoch milliseconds.

Timing out a user also purges their messages (``PurgeMessage`` with ``cause``), as the
platform did. ``history`` returns the channel's latest messages at the time of the call
(oldest first, at most 100), skipping deleted, purged and cleared ones; whispers are never
stored. Every accepted message is committed to SQLite before anyone sees it.

Room state lives in SQLite, which every process of a platform shares, so chat nodes spread
over processes (:mod:`redisbroker`) agree on it: presence (``chat_presence``, one row per user
and process holding that user's connections), timeouts (``chat_timeouts``), polls
(``chat_polls``, one row per voter in ``chat_poll_votes``) and history (``chat_messages``).
Each decision is made by one transaction, and SQLite runs write transactions one at a time, so
no two nodes make the same decision: the transaction that takes a user's connections from 0
to 1 (or back to 0) sends ``UserJoin`` (``UserLeave``); one poll runs per channel; a vote
replaces the voter's earlier one, so a vote counts once whichever node takes it. A poll's timer
(progress ``PollStart`` every ``POLL_PROGRESS_INTERVAL`` while counts change, then
``PollEnd``) runs in the process that started the poll, its ``owner``. When a process dies,
the living release what it held (:meth:`Rooms.release`): its presence rows go (``UserLeave``
where they held a user's last connection) and its polls get a new owner; the transaction that
changes those rows does it, so exactly one process does.
"""

from __future__ import annotations

import asyncio
import math
import random
import re
import sqlite3
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

import orjson

from explorer.emulator.broker import Broker, Delivery
from explorer.emulator.context import Config
from explorer.emulator.messages import (
    MAX_LENGTH,
    compose,
    has_emoticons,
    message_data,
    tag_component,
    text_component,
    with_emoticons,
)
from explorer.emulator.roles import permissions_of, roles_of
from explorer.emulator.store import Store
from explorer.packets import UACCESS, ChatError, ChatErrorCode, encode_event


class _NoData:
    """The reply of a method that answers without a ``data`` field."""

    def __repr__(self) -> str:
        return "NO_DATA"


NO_DATA: Final = _NoData()

#: Most messages one ``history`` call returns (platform.md, "Limits").
HISTORY_LIMIT = 100
#: How often a running poll re-sends ``PollStart`` while votes arrive, in seconds.
POLL_PROGRESS_INTERVAL = 0.5
#: How far back ``giveaway:start`` looks for active chatters, in seconds.
GIVEAWAY_WINDOW = 600.0
MAX_POLL_SECONDS = 3600.0
MAX_TIMEOUT_SECONDS = 7 * 86400.0
MAX_ANSWERS = 10
MAX_QUESTION = 200
#: Moderation rank: a member may time out or purge only members of a lower rank.
_RANKS = {"Owner": 3, "Staff": 3, "Founder": 3, "GlobalMod": 2, "Mod": 2}
_DURATION = re.compile(r"(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?")
_UNITS = (("d", 86400), ("h", 3600), ("m", 60), ("s", 1))
_PRUNE_EVERY = 200
#: Polls that ended this long ago without their owner ending them are dropped, not adopted.
_STALE_POLL = 10.0

SCHEMA = """
CREATE TABLE IF NOT EXISTS chat_presence (
    channelId INTEGER NOT NULL, userId INTEGER NOT NULL, origin TEXT NOT NULL,
    connections INTEGER NOT NULL, joinedAt REAL NOT NULL,
    PRIMARY KEY (channelId, userId, origin)
);
CREATE INDEX IF NOT EXISTS chat_presence_origin ON chat_presence (origin);
CREATE TABLE IF NOT EXISTS chat_timeouts (
    channelId INTEGER NOT NULL, userId INTEGER NOT NULL, until REAL NOT NULL,
    PRIMARY KEY (channelId, userId)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS chat_polls (
    id INTEGER PRIMARY KEY AUTOINCREMENT, channelId INTEGER NOT NULL, owner TEXT NOT NULL,
    data TEXT NOT NULL, startedAt REAL NOT NULL, endsAt REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS chat_polls_channel ON chat_polls (channelId, endsAt);
CREATE TABLE IF NOT EXISTS chat_poll_votes (
    pollId INTEGER NOT NULL REFERENCES chat_polls (id) ON DELETE CASCADE,
    userId INTEGER NOT NULL, choice INTEGER NOT NULL,
    PRIMARY KEY (pollId, userId)
) WITHOUT ROWID;
"""


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


@dataclass(frozen=True, slots=True)
class Poll:
    """A poll as stored in ``chat_polls`` (its votes are rows of ``chat_poll_votes``)."""

    id: int
    question: str
    answers: list[str]
    author: dict[str, Any]
    duration: float
    ends_at: float

    @classmethod
    def from_row(cls, poll_id: int, data: str, ends_at: float) -> Poll:
        """The poll of a ``chat_polls`` row."""
        fields = orjson.loads(data)
        return cls(
            poll_id, fields["q"], fields["answers"], fields["author"], fields["duration"], ends_at
        )


def new_message_id() -> str:
    """A fresh UUID-shaped message id."""
    return str(uuid.uuid4())


def message_delivery(data: dict[str, Any], **fields: Any) -> Delivery:
    """The ``ChatMessage`` delivery of message ``data``, with its emoticon-image variant when
    it has emoticons; ``fields`` are further :class:`Delivery` fields."""
    extra = encode_event("ChatMessage", with_emoticons(data)) if has_emoticons(data) else None
    return Delivery(
        "ChatMessage", encode_event("ChatMessage", data), emotes_payload=extra, **fields
    )


def latest_seq(store: Store) -> int:
    """The position of the newest stored message of any channel (0 when there is none)."""
    return int(store.scalar("SELECT MAX(seq) FROM chat_messages") or 0)


def latest_seqs(store: Store, after: int) -> dict[int, int]:
    """The newest position of each channel with messages stored after position ``after``."""
    return dict(
        store.all(
            "SELECT channelId, MAX(seq) FROM chat_messages WHERE seq > ? GROUP BY channelId",
            (after,),
        )
    )


def stored_messages(store: Store, channel_id: int, after: int, through: int) -> list[Delivery]:
    """Deliveries of ``channel_id``'s messages stored at positions ``after < seq <= through``
    and not deleted, in history order (for brokers that missed them)."""
    return [
        message_delivery(orjson.loads(data), seq=seq)
        for seq, data in store.all(
            "SELECT seq, data FROM chat_messages WHERE channelId = ? AND seq > ? AND seq <= ? "
            "AND deleted = 0 ORDER BY seq",
            (channel_id, after, through),
        )
    ]


def parse_duration(value: Any) -> float | None:
    """Seconds of a ``timeout`` duration, or None for ``"clear"``; 4000 when malformed."""
    if type(value) in (int, float):
        seconds = float(value)
    elif isinstance(value, str) and value.strip().lower() == "clear":
        return None
    elif isinstance(value, str) and value.strip().isdigit():
        seconds = float(value.strip())
    else:
        match = _DURATION.fullmatch(value.strip().lower()) if isinstance(value, str) else None
        if match is None or not any(match.groups()):
            raise ChatError(
                ChatErrorCode.BAD_REQUEST,
                'A duration is a number of seconds or text like "30s", "5m", "1m15s", "1h".',
            )
        seconds = float(
            sum(int(n) * unit for n, (_, unit) in zip(match.groups(), _UNITS, strict=True) if n)
        )
    if not (math.isfinite(seconds) and 1 <= seconds <= MAX_TIMEOUT_SECONDS):
        raise ChatError(ChatErrorCode.BAD_REQUEST, "A timeout lasts from 1 second to 7 days.")
    return seconds


def format_duration(seconds: float) -> str:
    """``seconds`` written the way durations are typed: ``"1m15s"``, ``"2h"``."""
    rest = round(seconds)
    parts = []
    for suffix, unit in _UNITS:
        count, rest = divmod(rest, unit)
        if count:
            parts.append(f"{count}{suffix}")
    return "".join(parts) or "0s"


def _rank(roles: list[str]) -> int:
    return max((_RANKS.get(role, 0) for role in roles), default=0)


def _arity(args: list[Any], method: str, *names: str) -> None:
    if len(args) != len(names):
        wanted = f"{len(names)} argument{'s' if len(names) != 1 else ''}"
        listed = f" ({', '.join(names)})" if names else ""
        raise ChatError(ChatErrorCode.BAD_REQUEST, f"{method} takes {wanted}{listed}.")


def _string(value: Any, what: str, limit: int = MAX_LENGTH) -> str:
    if type(value) is not str or not value.strip():
        raise ChatError(ChatErrorCode.BAD_REQUEST, f"The {what} must be a non-empty string.")
    if len(value) > limit:
        raise ChatError(ChatErrorCode.BAD_REQUEST, f"The {what} is longer than {limit} characters.")
    return value


def _integer(value: Any, what: str) -> int:
    if type(value) is not int or value < 0:
        raise ChatError(ChatErrorCode.BAD_REQUEST, f"The {what} must be a non-negative integer.")
    return value


class Rooms:
    """Every room of one platform, and what room logic needs: store, broker, clock, config."""

    def __init__(
        self,
        store: Store,
        broker: Broker,
        config: Config,
        clock: Callable[[], float],
    ) -> None:
        self.store = store
        self.broker = broker
        self.config = config
        self.clock = clock
        self.rng = random.Random(f"{config.seed}:giveaway")
        #: This process's connections per (channel, user), as its presence rows should say.
        self.local: Counter[tuple[int, int]] = Counter()
        self._rooms: dict[int, Room] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        broker.watch(self.release)

    def get(self, channel_id: int) -> Room | None:
        """The room of a channel that exists and is not suspended, else None."""
        owner = self.store.scalar(
            "SELECT userId FROM channels WHERE id = ? AND suspended = 0", (channel_id,)
        )
        if owner is None:
            return None
        room = self._rooms.get(channel_id)
        if room is None:
            room = self._rooms[channel_id] = Room(self, channel_id, owner)
        return room

    def member(self, channel_id: int, user_id: int, scopes: frozenset[str] | None) -> Member:
        """The member ``user_id`` is in ``channel_id``: name, level, roles, permissions."""
        row = self.store.one(
            "SELECT username, level, avatarUrl FROM users WHERE id = ?", (user_id,)
        )
        username, level, avatar = row if row is not None else (f"user{user_id}", 0, None)
        member = Member(user_id, username, level, avatar, scopes=scopes)
        self.refresh(member, channel_id)
        return member

    def refresh(self, member: Member, channel_id: int) -> None:
        """Re-read ``member``'s roles in ``channel_id`` (after ``UserUpdate``)."""
        if member.user_id is None:
            return
        member.roles = roles_of(self.store, channel_id, member.user_id)
        member.permissions = frozenset(permissions_of(member.roles, member.scopes))

    def present(self, channel_id: int) -> list[int]:
        """Ids of the signed-in users in ``channel_id``'s chat, on any node, in join order."""
        return [
            row[0]
            for row in self.store.all(
                "SELECT userId FROM chat_presence WHERE channelId = ? GROUP BY userId "
                "ORDER BY MIN(rowid)",
                (channel_id,),
            )
        ]

    def release(self, alive: frozenset[str], before: float) -> None:
        """Release what processes not in ``alive`` held before ``before`` (a broker's
        watcher): their presence rows go, with ``UserLeave`` where they held a user's last
        connection, and their polls are adopted (those long over are dropped). Then restore
        this process's own rows if another released them while this one was silent."""
        origin = self.broker.origin
        keep = orjson.dumps(sorted(alive | {origin})).decode()
        gone = "NOT IN (SELECT value FROM json_each(?))"
        held = self.store.one(
            f"SELECT 1 FROM chat_presence WHERE origin {gone} AND joinedAt < ? UNION ALL "
            f"SELECT 1 FROM chat_polls WHERE owner {gone} AND startedAt < ? LIMIT 1",
            (keep, before, keep, before),
        )
        if held is not None:
            with self.store.transaction() as conn:
                dropped = conn.execute(
                    f"DELETE FROM chat_presence WHERE origin {gone} AND joinedAt < ? "
                    "RETURNING channelId, userId",
                    (keep, before),
                ).fetchall()
                left = sorted(
                    (channel_id, user_id)
                    for channel_id, user_id in set(dropped)
                    if not _connections(conn, channel_id, user_id)
                )
                conn.execute(
                    f"DELETE FROM chat_polls WHERE owner {gone} AND endsAt < ?",
                    (keep, self.clock() - _STALE_POLL),
                )
                adopted = conn.execute(
                    f"UPDATE chat_polls SET owner = ? WHERE owner {gone} AND startedAt < ? "
                    "RETURNING id, channelId, data, endsAt",
                    (origin, keep, before),
                ).fetchall()
            for channel_id, user_id in left:
                room = self.get(channel_id)
                name = self.store.scalar("SELECT username FROM users WHERE id = ?", (user_id,))
                if room is not None and name is not None:
                    room.announce_leave(user_id, name)
            for poll_id, channel_id, data, ends_at in adopted:
                room = self.get(channel_id)
                if room is not None:
                    self.spawn(room.run_poll(Poll.from_row(poll_id, data, ends_at)))
        self._restore()

    def _restore(self) -> None:
        """Rewrite this process's presence rows from :attr:`local` when they differ."""
        origin = self.broker.origin
        held = self.store.scalar(
            "SELECT COALESCE(SUM(connections), 0) FROM chat_presence WHERE origin = ?", (origin,)
        )
        if held == self.local.total():
            return
        now = self.clock()
        with self.store.transaction() as conn:
            conn.execute("DELETE FROM chat_presence WHERE origin = ?", (origin,))
            conn.executemany(
                "INSERT INTO chat_presence (channelId, userId, origin, connections, joinedAt) "
                "VALUES (?, ?, ?, ?, ?)",
                [(c, u, origin, n, now) for (c, u), n in self.local.items()],
            )

    def lookup_user(self, name: str) -> tuple[int, str] | None:
        """``(id, username)`` of the user called ``name`` (any case), or None."""
        row = self.store.one(
            "SELECT id, username FROM users WHERE username = ? COLLATE NOCASE", (name,)
        )
        return None if row is None else (row[0], row[1])

    def spawn(self, work: Any) -> None:
        """Run a room's background coroutine (a poll), cancelled by :meth:`close`."""
        task: asyncio.Task[None] = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def close(self) -> None:
        """Cancel running polls."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


class Room:
    """One channel's chat: the methods members call and the events they cause."""

    def __init__(self, rooms: Rooms, channel_id: int, owner_id: int) -> None:
        self.rooms = rooms
        self.channel_id = channel_id
        self.owner_id = owner_id
        self._writes = 0

    def publish(self, event: str, data: Any, **delivery: Any) -> None:
        """Send event ``event`` to the room's members on every node."""
        self.rooms.broker.publish(
            self.channel_id, Delivery(event, encode_event(event, data), **delivery)
        )

    # --- presence ---------------------------------------------------------------------

    def join(self, member: Member, key: str) -> None:
        """Count ``member``'s connection in; the user's first connection on any node sends
        ``UserJoin`` to the others (anonymous connections are not counted)."""
        user_id = member.user_id
        if user_id is None:
            return
        rooms = self.rooms
        with rooms.store.transaction() as conn:
            conn.execute(
                "INSERT INTO chat_presence (channelId, userId, origin, connections, joinedAt) "
                "VALUES (?, ?, ?, 1, ?) ON CONFLICT (channelId, userId, origin) "
                "DO UPDATE SET connections = connections + 1",
                (self.channel_id, user_id, rooms.broker.origin, rooms.clock()),
            )
            first = _connections(conn, self.channel_id, user_id) == 1
        rooms.local[(self.channel_id, user_id)] += 1
        if first:
            data = {
                "originatingChannel": self.channel_id,
                "username": member.username,
                "roles": member.roles,
                "id": user_id,
            }
            self.publish("UserJoin", data, skip=key)

    def leave(self, member: Member) -> None:
        """Count ``member``'s connection out; the user's last connection on any node sends
        ``UserLeave``."""
        user_id = member.user_id
        if user_id is None:
            return
        rooms = self.rooms
        place = (self.channel_id, user_id)
        rooms.local[place] -= 1
        if rooms.local[place] <= 0:
            del rooms.local[place]
        where = (self.channel_id, user_id, rooms.broker.origin)
        with rooms.store.transaction() as conn:
            held = conn.execute(
                "UPDATE chat_presence SET connections = connections - 1 "
                "WHERE channelId = ? AND userId = ? AND origin = ? RETURNING connections",
                where,
            ).fetchone()
            if held is None:
                return  # released by another process, which sent UserLeave
            if held[0] <= 0:
                conn.execute(
                    "DELETE FROM chat_presence WHERE channelId = ? AND userId = ? AND origin = ?",
                    where,
                )
            last = _connections(conn, self.channel_id, user_id) == 0
        if last:
            self.announce_leave(user_id, member.username)

    def announce_leave(self, user_id: int, username: str) -> None:
        """Send ``UserLeave`` for a user whose last connection went."""
        data = {"originatingChannel": self.channel_id, "username": username, "id": user_id}
        self.publish("UserLeave", data)

    def is_present(self, user_id: int) -> bool:
        """Whether ``user_id`` is signed in to this chat on any node."""
        return (
            self.rooms.store.one(
                "SELECT 1 FROM chat_presence WHERE channelId = ? AND userId = ?",
                (self.channel_id, user_id),
            )
            is not None
        )

    def user_updated(self, user_id: int) -> None:
        """Send ``UserUpdate`` for ``user_id``; every node re-reads that user's roles first."""
        found = self.rooms.store.one("SELECT username FROM users WHERE id = ?", (user_id,))
        if found is None:
            return
        roles = roles_of(self.rooms.store, self.channel_id, user_id)
        data = {
            "user": user_id,
            "roles": roles,
            "permissions": permissions_of(roles),
            "username": found[0],
        }
        self.publish("UserUpdate", data, refresh_user=user_id)

    # --- dispatch ---------------------------------------------------------------------

    def call(self, member: Member, method: str, args: list[Any]) -> Any:
        """Run room method ``method`` for ``member``; its reply data, or ChatError."""
        handler = METHODS.get(method)
        if handler is None:
            raise ChatError(ChatErrorCode.UNKNOWN_METHOD, f"Unknown method {method!r}.")
        return handler(self, member, args)

    def _require(self, member: Member, permission: str, action: str) -> int:
        """The member's user id, or the refusal when they may not ``action``."""
        if member.user_id is None:
            raise ChatError(ChatErrorCode.NOT_AUTHENTICATED, f"You must be signed in to {action}.")
        if "Banned" in member.roles:
            raise ChatError(ChatErrorCode.ACCESS_DENIED, UACCESS)
        if permission not in member.permissions:
            raise ChatError(
                ChatErrorCode.ACCESS_DENIED,
                f"You need the {permission} permission to {action}.",
            )
        return member.user_id

    def _require_voice(self, member: Member, action: str) -> int:
        """Like ``_require("chat")``, and refused while the member is timed out."""
        user_id = self._require(member, "chat", action)
        until = self.rooms.store.scalar(
            "SELECT until FROM chat_timeouts WHERE channelId = ? AND userId = ?",
            (self.channel_id, user_id),
        )
        left = 0.0 if until is None else until - self.rooms.clock()
        if left > 0:
            seconds = math.ceil(left)
            unit = "second" if seconds == 1 else "seconds"
            raise ChatError(
                ChatErrorCode.TIMED_OUT, f"You are timed out for {seconds} more {unit}."
            )
        return user_id

    def _target(self, name: str, member: Member, action: str) -> tuple[int, str]:
        """The user named ``name`` whom ``member`` outranks, for timeout and purge."""
        found = self.rooms.lookup_user(name)
        if found is None:
            raise ChatError(ChatErrorCode.NOT_FOUND, f"No user named {name}.")
        target_roles = roles_of(self.rooms.store, self.channel_id, found[0])
        if _rank(target_roles) >= _rank(member.roles):
            raise ChatError(ChatErrorCode.ACCESS_DENIED, f"You cannot {action} {found[1]}.")
        return found

    # --- messages ---------------------------------------------------------------------

    def shown_to(self, member: Member, data: dict[str, Any]) -> dict[str, Any]:
        """Message ``data`` as ``member`` receives it (with emoticon images if attached)."""
        return with_emoticons(data) if member.emotes else data

    def post(self, data: dict[str, Any]) -> None:
        """Store a chat message, then send ``ChatMessage`` to everyone in the room."""
        with self.rooms.store.transaction() as conn:
            prev = conn.execute(
                "SELECT MAX(seq) FROM chat_messages WHERE channelId = ?", (self.channel_id,)
            ).fetchone()[0]
            seq = conn.execute(
                "INSERT INTO chat_messages (id, channelId, userId, createdAt, data) "
                "VALUES (?, ?, ?, ?, ?)",
                (
                    data["id"],
                    self.channel_id,
                    data["user_id"],
                    self.rooms.clock(),
                    orjson.dumps(data).decode(),
                ),
            ).lastrowid
            self._writes += 1
            if self._writes % _PRUNE_EVERY == 0:
                self._prune(conn)
        self.rooms.broker.publish(
            self.channel_id, message_delivery(data, seq=seq or 0, prev=prev or 0)
        )

    def _prune(self, conn: Any) -> None:
        """Keep only the newest ``Config.history_keep`` stored messages of this channel."""
        conn.execute(
            "DELETE FROM chat_messages WHERE channelId = ? AND seq <= ("
            "SELECT seq FROM chat_messages WHERE channelId = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)",
            (self.channel_id, self.channel_id, self.rooms.config.history_keep),
        )

    def msg(self, member: Member, args: list[Any]) -> Any:
        """``msg [text]``: a ChatMessage to everyone; replies with the message data."""
        _arity(args, "msg", "text")
        text = _string(args[0], "message")
        self._require_voice(member, "send messages")
        components, meta = compose(text, self.rooms.lookup_user)
        data = message_data(self.channel_id, new_message_id(), member.identity(), components, meta)
        self.post(data)
        return self.shown_to(member, data)

    def whisper(self, member: Member, args: list[Any]) -> Any:
        """``whisper [user name, text]``: a ChatMessage only the sender and target receive."""
        _arity(args, "whisper", "user name", "text")
        name = _string(args[0], "user name", 64)
        text = _string(args[1], "message")
        user_id = self._require_voice(member, "whisper")
        target = self.rooms.lookup_user(name)
        if target is None:
            raise ChatError(ChatErrorCode.NOT_FOUND, f"No user named {name}.")
        if not self.is_present(target[0]):
            raise ChatError(ChatErrorCode.NOT_FOUND, f"{target[1]} is not in this chat.")
        components, meta = compose(text, self.rooms.lookup_user)
        meta["whisper"] = True
        data = message_data(
            self.channel_id, new_message_id(), member.identity(), components, meta, target[1]
        )
        self.rooms.broker.publish(
            self.channel_id, message_delivery(data, users=frozenset((user_id, target[0])))
        )
        return self.shown_to(member, data)

    def history(self, member: Member, args: list[Any]) -> Any:
        """``history [count]``: up to 100 of the latest stored messages, oldest first."""
        _arity(args, "history", "count")
        count = min(_integer(args[0], "count"), HISTORY_LIMIT)
        rows = self.rooms.store.all(
            "SELECT seq, data FROM chat_messages WHERE channelId = ? AND deleted = 0 "
            "ORDER BY seq DESC LIMIT ?",
            (self.channel_id, count),
        )
        if rows:
            self.rooms.broker.catch_up(self.channel_id, rows[0][0])
        rows.reverse()
        if member.emotes:
            return [with_emoticons(orjson.loads(data)) for _, data in rows]
        return [orjson.Fragment(data) for _, data in rows]

    # --- moderation -------------------------------------------------------------------

    def delete_message(self, member: Member, args: list[Any]) -> Any:
        """``deleteMessage [id]``: own messages, or anyone's with ``remove_message``."""
        _arity(args, "deleteMessage", "message id")
        message_id = _string(args[0], "message id", 64)
        user_id = self._require(member, "connect", "delete messages")
        store = self.rooms.store
        author = store.scalar(
            "SELECT userId FROM chat_messages WHERE id = ? AND channelId = ? AND deleted = 0",
            (message_id, self.channel_id),
        )
        if author is None:
            raise ChatError(ChatErrorCode.NOT_FOUND, "No such message.")
        if author != user_id and "remove_message" not in member.permissions:
            raise ChatError(ChatErrorCode.ACCESS_DENIED, "You may delete only your own messages.")
        with store.transaction() as conn:
            conn.execute("UPDATE chat_messages SET deleted = 1 WHERE id = ?", (message_id,))
        data = {
            "originatingChannel": self.channel_id,
            "id": message_id,
            "moderator": member.moderator(),
        }
        self.publish("DeleteMessage", data)
        return "Message deleted."

    def _purge(self, user_id: int, member: Member, cause: dict[str, str] | None) -> None:
        with self.rooms.store.transaction() as conn:
            conn.execute(
                "UPDATE chat_messages SET deleted = 1 "
                "WHERE channelId = ? AND userId = ? AND deleted = 0",
                (self.channel_id, user_id),
            )
        data: dict[str, Any] = {
            "originatingChannel": self.channel_id,
            "user_id": user_id,
            "moderator": member.moderator(),
        }
        if cause is not None:
            data["cause"] = cause
        self.publish("PurgeMessage", data)

    def purge(self, member: Member, args: list[Any]) -> Any:
        """``purge [user name]``: remove a user's messages without timing them out."""
        _arity(args, "purge", "user name")
        name = _string(args[0], "user name", 64)
        self._require(member, "change_ban", "purge messages")
        user_id, _ = self._target(name, member, "purge")
        self._purge(user_id, member, None)
        return NO_DATA

    def timeout(self, member: Member, args: list[Any]) -> Any:
        """``timeout [user name, duration]``: silence a user for a while (``"clear"`` lifts)."""
        _arity(args, "timeout", "user name", "duration")
        name = _string(args[0], "user name", 64)
        seconds = parse_duration(args[1])
        self._require(member, "timeout", "time out users")
        user_id, username = self._target(name, member, "time out")
        now = self.rooms.clock()
        with self.rooms.store.transaction() as conn:
            conn.execute(
                "DELETE FROM chat_timeouts WHERE channelId = ? AND (userId = ? OR until <= ?)",
                (self.channel_id, user_id, now),
            )
            if seconds is not None:
                conn.execute(
                    "INSERT INTO chat_timeouts (channelId, userId, until) VALUES (?, ?, ?)",
                    (self.channel_id, user_id, now + seconds),
                )
        if seconds is None:
            return f"{username} is no longer timed out."
        spelled = format_duration(seconds)
        roles = roles_of(self.rooms.store, self.channel_id, user_id)
        data = {
            "user": {"user_name": username, "user_id": user_id, "user_roles": roles},
            "duration": int(seconds * 1000),
        }
        self.publish("UserTimeout", data, users=frozenset((user_id,)))
        self._purge(user_id, member, {"type": "timeout", "durationString": spelled})
        return f"{username} has been timed out for {spelled}."

    def clear_messages(self, member: Member, args: list[Any]) -> Any:
        """``clearMessages []``: remove every message of the channel (``clear_messages``)."""
        _arity(args, "clearMessages")
        self._require(member, "clear_messages", "clear the chat")
        with self.rooms.store.transaction() as conn:
            conn.execute(
                "UPDATE chat_messages SET deleted = 1 WHERE channelId = ? AND deleted = 0",
                (self.channel_id,),
            )
        self.publish(
            "ClearMessages", {"originatingChannel": self.channel_id, "clearer": member.moderator()}
        )
        return "Messages cleared."

    # --- polls and giveaways ----------------------------------------------------------

    def poll_data(self, poll: Poll, counts: list[int]) -> dict[str, Any]:
        """The ``PollStart``/``PollEnd`` data of ``poll`` now, given its vote ``counts``."""
        remaining = max(poll.ends_at - self.rooms.clock(), 0.0)
        return {
            "originatingChannel": self.channel_id,
            "q": poll.question,
            "answers": poll.answers,
            "author": poll.author,
            "duration": int(remaining * 1000),
            "endsAt": int(poll.ends_at * 1000),
            "voters": sum(counts),
            "responses": dict(zip(poll.answers, counts, strict=True)),
            "responsesByIndex": counts,
        }

    def _counts(self, poll: Poll) -> list[int]:
        """Votes per answer of ``poll`` (one per voter)."""
        counts = [0] * len(poll.answers)
        for choice, votes in self.rooms.store.all(
            "SELECT choice, COUNT(*) FROM chat_poll_votes WHERE pollId = ? GROUP BY choice",
            (poll.id,),
        ):
            counts[choice] = votes
        return counts

    def start_poll(self, member: Member, args: list[Any]) -> Any:
        """``vote:start [question, answers, seconds]``: PollStart now, progress, PollEnd."""
        _arity(args, "vote:start", "question", "answers", "duration")
        question = _string(args[0], "question", MAX_QUESTION)
        answers = args[1]
        if (
            type(answers) is not list
            or not 2 <= len(answers) <= MAX_ANSWERS
            or any(type(a) is not str or not a.strip() or len(a) > MAX_QUESTION for a in answers)
            or len(set(answers)) != len(answers)
        ):
            raise ChatError(
                ChatErrorCode.BAD_REQUEST,
                f"The answers must be 2 to {MAX_ANSWERS} different non-empty strings.",
            )
        duration = args[2]
        if type(duration) not in (int, float) or not 1 <= duration <= MAX_POLL_SECONDS:
            raise ChatError(
                ChatErrorCode.BAD_REQUEST,
                f"The duration is a number of seconds from 1 to {MAX_POLL_SECONDS:.0f}.",
            )
        self._require(member, "poll_start", "start a poll")
        rooms = self.rooms
        now = rooms.clock()
        fields = {
            "q": question,
            "answers": answers,
            "author": member.author(),
            "duration": duration,
        }
        with rooms.store.transaction() as conn:
            running = conn.execute(
                "SELECT 1 FROM chat_polls WHERE channelId = ? AND endsAt > ?",
                (self.channel_id, now),
            ).fetchone()
            if running is not None:
                raise ChatError(ChatErrorCode.POLL_ERROR, "A poll is already running.")
            poll_id = conn.execute(
                "INSERT INTO chat_polls (channelId, owner, data, startedAt, endsAt) "
                "VALUES (?, ?, ?, ?, ?)",
                (
                    self.channel_id,
                    rooms.broker.origin,
                    orjson.dumps(fields).decode(),
                    now,
                    now + duration,
                ),
            ).lastrowid
        poll = Poll(
            poll_id or 0, question, list(answers), member.author(), duration, now + duration
        )
        self.publish("PollStart", self.poll_data(poll, [0] * len(answers)))
        rooms.spawn(self.run_poll(poll))
        return "Poll started."

    async def run_poll(self, poll: Poll) -> None:
        """The poll's timer, run by its owner: re-send ``PollStart`` while the counts change,
        then remove the poll and send ``PollEnd``."""
        clock = self.rooms.clock
        shown = [0] * len(poll.answers)
        while (left := poll.ends_at - clock()) > 0:
            await asyncio.sleep(min(POLL_PROGRESS_INTERVAL, left))
            counts = self._counts(poll)
            if counts != shown and poll.ends_at > clock():
                shown = counts
                self.publish("PollStart", self.poll_data(poll, counts))
        counts = self._counts(poll)
        with self.rooms.store.transaction() as conn:
            conn.execute("DELETE FROM chat_polls WHERE id = ?", (poll.id,))
        self.publish("PollEnd", self.poll_data(poll, counts))

    def vote(self, member: Member, args: list[Any]) -> Any:
        """``vote:choose [index]`` (wire name ``vote``): one vote per user; re-voting moves it."""
        _arity(args, "vote:choose", "option index")
        choice = _integer(args[0], "option index")
        user_id = self._require(member, "poll_vote", "vote")
        with self.rooms.store.transaction() as conn:
            running = conn.execute(
                "SELECT id, data FROM chat_polls WHERE channelId = ? AND endsAt > ? "
                "ORDER BY id DESC LIMIT 1",
                (self.channel_id, self.rooms.clock()),
            ).fetchone()
            if running is None:
                raise ChatError(ChatErrorCode.POLL_ERROR, "There is no poll running.")
            options = len(orjson.loads(running[1])["answers"])
            if choice >= options:
                raise ChatError(
                    ChatErrorCode.POLL_ERROR,
                    f"There is no option {choice}; choose 0 to {options - 1}.",
                )
            conn.execute(
                "INSERT INTO chat_poll_votes (pollId, userId, choice) VALUES (?, ?, ?) "
                "ON CONFLICT (pollId, userId) DO UPDATE SET choice = excluded.choice",
                (running[0], user_id, choice),
            )
        return True

    def start_giveaway(self, member: Member, args: list[Any]) -> Any:
        """``giveaway:start []``: pick a present, recently active chatter; announce in chat."""
        _arity(args, "giveaway:start")
        self._require(member, "giveaway_start", "start a giveaway")
        present = set(self.rooms.present(self.channel_id))
        candidates = [
            (user_id, username)
            for user_id, username in self.rooms.store.all(
                "SELECT DISTINCT m.userId, u.username FROM chat_messages m "
                "JOIN users u ON u.id = m.userId WHERE m.channelId = ? AND m.createdAt >= ? "
                "AND m.userId != ? ORDER BY m.userId",
                (self.channel_id, self.rooms.clock() - GIVEAWAY_WINDOW, self.owner_id),
            )
            if user_id in present
        ]
        if not candidates:
            raise ChatError(
                ChatErrorCode.NOT_FOUND,
                "Nobody here has chatted recently; there is no one to pick.",
            )
        winner_id, winner = self.rooms.rng.choice(candidates)
        host = self.rooms.member(self.channel_id, self.owner_id, None)
        components = [
            text_component("The giveaway winner is "),
            tag_component(winner_id, winner),
            text_component("! Congratulations!"),
        ]
        self.post(message_data(self.channel_id, new_message_id(), host.identity(), components, {}))
        return "Giveaway started."


def _connections(conn: sqlite3.Connection, channel_id: int, user_id: int) -> int:
    """A user's connections to a channel's chat over every process."""
    count: int = conn.execute(
        "SELECT COALESCE(SUM(connections), 0) FROM chat_presence "
        "WHERE channelId = ? AND userId = ?",
        (channel_id, user_id),
    ).fetchone()[0]
    return count


#: Room methods by wire name.
METHODS: dict[str, Callable[[Room, Member, list[Any]], Any]] = {
    "msg": Room.msg,
    "whisper": Room.whisper,
    "vote:start": Room.start_poll,
    "vote:choose": Room.vote,
    "vote": Room.vote,
    "timeout": Room.timeout,
    "purge": Room.purge,
    "deleteMessage": Room.delete_message,
    "clearMessages": Room.clear_messages,
    "history": Room.history,
    "giveaway:start": Room.start_giveaway,
}
