"""Notifications: what the platform told each user, subscription shares, and e-mail opt-outs.

A notification has the historical docs' shape (mixer/developer-docs, ``pages/02.reference/
02.constellation/03.events/02.live/20.User Notify/doc.md``, whose payload is the REST
Notification): ``{id (a UUID), userId, trigger: "", type, sentAt, payload}``, the ``type``
(what happened: :data:`TYPES`) repeated in ``payload.type`` beside who did it, where. The same
object is the ``user:{id}:notify`` live event and the REST answer. A follow through REST
tells the channel's owner (:func:`followed`; the world's simulated follows, written in bulk,
send no live events): ``payload`` is ``{type: "follow", channelOwnerId,
triggeringUser}``, ``channelOwnerId`` the followed channel's id as the docs' example has it
and ``triggeringUser`` the follower's User. Each user reads only their own
(``notification:view:self``); staff announcements arrive here for every user
(:func:`deliver_to_all`). Subscription notifications (``subscribe``, ``resubscribe``) can be
shared to the channel's chat: ``POST .../shareSub`` marks one shared (``payload.shared``) and
``DELETE`` takes the share back. E-mail opt-outs are recorded per category (one per type);
``all`` covers every category.

``GET /notifications`` (the caller's list, newest first) is our addition: the spec lists only
single reads, and a notification nobody can find by id would be unreadable.
"""

from __future__ import annotations

import random
import uuid
from datetime import timedelta
from typing import Any

import orjson
from starlette.responses import Response

from explorer.emulator.context import Context
from explorer.emulator.db.engine import Store, Transaction, dumps
from explorer.emulator.live import happenings
from explorer.emulator.policy import Param, Route
from explorer.emulator.responses import ApiError, JSONResponse, bad_request, not_found
from explorer.emulator.shapes import USER_FIELDS, render_user
from explorer.emulator.world import WORLD_NOW, iso
from explorer.wire import routes as wire
from explorer.wire.models import NOTIFICATION_TYPES
from explorer.wire.query import MAX_PAGE, parse_list_query

SCHEMA = """
CREATE TABLE IF NOT EXISTS notifications (
    id INTEGER PRIMARY KEY, uuid TEXT NOT NULL UNIQUE, userId INTEGER NOT NULL,
    type TEXT NOT NULL, payload TEXT NOT NULL, sentAt TEXT NOT NULL,
    shared INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS notifications_user ON notifications (userId, id);

CREATE TABLE IF NOT EXISTS email_unsubscribes (
    userId INTEGER NOT NULL, category TEXT NOT NULL, createdAt TEXT NOT NULL,
    PRIMARY KEY (userId, category)
);
"""

#: What a notification tells of (its ``type``; the wire's enumeration).
TYPES = NOTIFICATION_TYPES
SHAREABLE: frozenset[str] = frozenset({"subscribe", "resubscribe"})
#: E-mail categories a user may opt out of: one per type, plus ``all``.
EMAIL_CATEGORIES: tuple[str, ...] = ("all", *TYPES)

_COLUMNS = "uuid, userId, type, payload, sentAt, shared"
#: A random (version 4) UUID made by SQLite, for notifications inserted by one statement.
_SQL_UUID4 = (
    "lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || "
    "substr(hex(randomblob(2)), 2) || '-' || substr('89ab', 1 + abs(random()) % 4, 1) || "
    "substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))"
)


def render(row: tuple[Any, ...]) -> dict[str, Any]:
    """A Notification object from a row of ``_COLUMNS``."""
    kind = row[2]
    payload = {"type": kind, **orjson.loads(row[3])}
    if kind in SHAREABLE:
        payload["shared"] = bool(row[5])
    return {
        "id": row[0],
        "userId": row[1],
        "trigger": "",
        "type": kind,
        "sentAt": row[4],
        "payload": payload,
    }


def notify(
    conn: Transaction, user_id: int, kind: str, payload: dict[str, Any], sent_at: str
) -> None:
    """Add one notification of type ``kind`` for ``user_id`` (inside the caller's
    transaction) and send it as ``user:{id}:notify``."""
    row = (str(uuid.uuid4()), user_id, kind, dumps(payload), sent_at, 0)
    conn.execute(
        "INSERT INTO notifications (uuid, userId, type, payload, sentAt) VALUES (?, ?, ?, ?, ?)",
        row[:5],
    )
    happenings.notified(conn, user_id, render(row))


def followed(
    conn: Transaction, channel_id: int, owner_id: int, follower_id: int, sent_at: str
) -> None:
    """Tell a channel's owner that ``follower_id`` followed it (the docs' ``follow``
    notification; inside the caller's transaction)."""
    row = conn.execute(
        f"SELECT {', '.join(USER_FIELDS)} FROM users WHERE id = ?", (follower_id,)
    ).fetchone()
    payload = {"channelOwnerId": channel_id, "triggeringUser": render_user(row)}
    notify(conn, owner_id, "follow", payload, sent_at)


def deliver_to_all(conn: Transaction, kind: str, payload: dict[str, Any], sent_at: str) -> int:
    """Add one notification of type ``kind`` for every current user (inside the caller's
    transaction). Returns how many users it reached."""
    cursor = conn.execute(
        "INSERT INTO notifications (uuid, userId, type, payload, sentAt) "
        f"SELECT {_SQL_UUID4}, id, ?, ?, ? FROM users WHERE deletedAt IS NULL",
        (kind, dumps(payload), sent_at),
    )
    return int(cursor.rowcount)


#: The types a database made before notifications had UUIDs called by other names.
_RENAMED = {
    "followed": "follow",
    "subscribed": "subscribe",
    "resubscribed": "resubscribe",
    "hosted": "host",
}


def _upgrade(store: Store) -> None:
    """Bring a database made before notifications had UUIDs and types to this shape: each
    notification gets a UUID, ``trigger`` becomes ``type`` with this version's names."""
    columns = {row[1] for row in store.all("PRAGMA table_info(notifications)")}
    if "uuid" in columns:
        return
    with store.transaction() as conn:
        conn.execute("ALTER TABLE notifications RENAME COLUMN trigger TO type")
        conn.execute("ALTER TABLE notifications ADD COLUMN uuid TEXT")
        conn.execute(f"UPDATE notifications SET uuid = {_SQL_UUID4}")
        conn.execute("CREATE UNIQUE INDEX notifications_uuid ON notifications (uuid)")
        for old, new in _RENAMED.items():
            conn.execute("UPDATE notifications SET type = ? WHERE type = ?", (new, old))
        for old, new in _RENAMED.items():
            conn.execute(
                "UPDATE email_unsubscribes SET category = ? WHERE category = ?", (new, old)
            )


def seed(store: Store, world_seed: int) -> None:
    """Give each demo account a few notifications, once per database (upgrading one made by
    an older version first).

    Followers and hosts are picked from the world with ``world_seed``, so the same world
    always tells the same story.
    """
    _upgrade(store)
    if store.scalar("SELECT COUNT(*) FROM notifications"):
        return
    users = dict(
        store.all(
            "SELECT username, id FROM users WHERE username IN "
            "('streamer', 'moderator', 'viewer', 'viewer2', 'staff')"
        )
    )
    channel = store.scalar("SELECT id FROM channels WHERE userId = ?", (users["streamer"],))
    rng = random.Random(world_seed)
    others = store.all(
        "SELECT id, username FROM users WHERE id != ? ORDER BY id LIMIT 50", (users["streamer"],)
    )
    follower, hoster = rng.sample(others, 2)

    def actor(user_id: int, username: str) -> dict[str, Any]:
        return {"user": {"id": user_id, "username": username}, "channelId": channel}

    stories: list[tuple[str, str, dict[str, Any] | int]] = [
        ("streamer", "follow", follower[0]),
        ("streamer", "host", actor(*hoster)),
        ("streamer", "subscribe", {**actor(users["viewer"], "viewer"), "months": 1}),
        ("streamer", "resubscribe", {**actor(users["moderator"], "moderator"), "months": 7}),
        ("viewer", "achievement", {"slug": "welcome"}),
        ("viewer2", "achievement", {"slug": "welcome"}),
        ("moderator", "follow", users["viewer2"]),
    ]
    with store.transaction() as conn:
        for index, (owner, kind, payload) in enumerate(stories):
            sent_at = iso(WORLD_NOW - timedelta(hours=len(stories) - index))
            if isinstance(payload, int):
                owned = conn.execute(
                    "SELECT id FROM channels WHERE userId = ?", (users[owner],)
                ).fetchone()[0]
                followed(conn, owned, users[owner], payload, sent_at)
            else:
                notify(conn, users[owner], kind, payload, sent_at)


def _own(ctx: Context) -> tuple[Any, ...]:
    """The row of path parameter ``notification`` (its UUID): 404 unknown, 403 someone
    else's."""
    row = ctx.store.one(
        f"SELECT {_COLUMNS} FROM notifications WHERE uuid = ?",
        (ctx.request.path_params["notification"].lower(),),
    )
    if row is None:
        raise not_found("Notification")
    if row[1] != ctx.user_id():
        raise ApiError(403, "This notification belongs to another user.")
    return row


async def list_notifications(ctx: Context) -> Response:
    """GET /notifications: the caller's notifications, newest first, one page."""
    query = parse_list_query(ctx.params, {}, ())
    user_id = ctx.user_id()
    rows = ctx.store.all(
        f"SELECT {_COLUMNS} FROM notifications WHERE userId = ? ORDER BY id DESC LIMIT ? OFFSET ?",
        (user_id, query.limit, query.page * query.limit),
    )
    headers = {}
    if query.count:
        total = ctx.store.scalar("SELECT COUNT(*) FROM notifications WHERE userId = ?", (user_id,))
        headers["X-Total-Count"] = str(total)
    return JSONResponse([render(row) for row in rows], headers=headers)


async def get_notification(ctx: Context) -> dict[str, Any]:
    """GET /notifications/{id}: one of the caller's notifications."""
    return render(_own(ctx))


def _set_shared(ctx: Context, shared: bool) -> dict[str, Any]:
    row = _own(ctx)
    if row[2] not in SHAREABLE:
        raise bad_request(
            f"Only {' and '.join(sorted(SHAREABLE))} notifications can be shared.",
            "notification",
        )
    with ctx.store.transaction() as conn:
        conn.execute("UPDATE notifications SET shared = ? WHERE uuid = ?", (int(shared), row[0]))
    return render((*row[:5], shared))


async def share_sub(ctx: Context) -> dict[str, Any]:
    """POST /notifications/{id}/shareSub: share a subscription notification (idempotent)."""
    return _set_shared(ctx, True)


async def unshare_sub(ctx: Context) -> dict[str, Any]:
    """DELETE /notifications/{id}/shareSub: take a subscription share back (idempotent)."""
    return _set_shared(ctx, False)


async def email_unsubscribe(ctx: Context) -> dict[str, Any]:
    """POST /notifications/emailUnsubscribe: record an opt-out; answer every opt-out held."""
    body = await ctx.json_object()
    category = body.get("category")
    if category not in EMAIL_CATEGORIES:
        raise bad_request(f"category must be one of {', '.join(EMAIL_CATEGORIES)}.", "category")
    user_id = ctx.user_id()
    with ctx.store.transaction() as conn:
        conn.execute(
            "INSERT OR IGNORE INTO email_unsubscribes (userId, category, createdAt) "
            "VALUES (?, ?, ?)",
            (user_id, category, ctx.iso_now()),
        )
    held = ctx.store.all(
        "SELECT category, createdAt FROM email_unsubscribes WHERE userId = ? ORDER BY category",
        (user_id,),
    )
    return {"userId": user_id, "unsubscribed": [{"category": c, "since": t} for c, t in held]}


_WRITE = ("notification:update:self",)

SCHEMAS: dict[str, Any] = {
    "EmailUnsubscribeRequest": {
        "type": "object",
        "required": ["category"],
        "properties": {"category": {"type": "string", "enum": list(EMAIL_CATEGORIES)}},
    },
    "EmailSubscriptions": {
        "type": "object",
        "required": ["userId", "unsubscribed"],
        "properties": {
            "userId": {"type": "integer"},
            "unsubscribed": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "category": {"type": "string"},
                        "since": {"type": "string", "format": "date-time"},
                    },
                },
            },
        },
    },
}

routes = [
    Route(
        wire.ACCOUNT_NOTIFICATIONS,
        list_notifications,
        summary="The caller's notifications, newest first",
        params=(
            Param(
                "page",
                {"type": "integer", "minimum": 0, "maximum": MAX_PAGE},
                "0-based page number",
            ),
            Param("limit", {"type": "integer", "minimum": 1, "maximum": 100}, "page size"),
        ),
        errors=(400, 401, 403, 461),
    ),
    Route(
        wire.ACCOUNT_UNSUBSCRIBE_EMAIL,
        email_unsubscribe,
        summary="Opt out of one category of notification e-mail",
        body={"$ref": "#/components/schemas/EmailUnsubscribeRequest"},
        errors=(400, 401, 403, 413, 461),
    ),
    Route(
        wire.ACCOUNT_NOTIFICATION,
        get_notification,
        summary="One of the caller's notifications",
        errors=(400, 401, 403, 404, 461),
    ),
    Route(
        wire.ACCOUNT_SHARE_SUBSCRIPTION,
        share_sub,
        summary="Share a subscription notification to chat",
        errors=(400, 401, 403, 404, 461),
    ),
    Route(
        wire.ACCOUNT_UNSHARE_SUBSCRIPTION,
        unshare_sub,
        summary="Take a subscription share back",
        errors=(400, 401, 403, 404, 461),
    ),
]
