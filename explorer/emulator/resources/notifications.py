"""Notifications: what the platform told each user, subscription shares, and e-mail opt-outs.

A notification belongs to one user and has a ``trigger`` (what happened) and a ``payload``
(who did it, where). Each user reads only their own (``notification:view:self``); staff
announcements arrive here for every user (:func:`deliver_to_all`). Subscription
notifications (``subscribed``, ``resubscribed``) can be shared to the channel's chat:
``POST .../shareSub`` marks one shared and ``DELETE`` takes the share back. E-mail opt-outs
are recorded per category; ``all`` covers every category.

``GET /notifications`` (the caller's list, newest first) is our addition: the spec lists only
single reads, and a notification nobody can find by id would be unreadable.
"""

from __future__ import annotations

import random
import sqlite3
from datetime import timedelta
from typing import Any

import orjson
from starlette.responses import Response

from explorer.emulator.context import Context
from explorer.emulator.live import happenings
from explorer.emulator.policy import Param, Route
from explorer.emulator.responses import ApiError, JSONResponse, bad_request, not_found
from explorer.emulator.store import Store, dumps
from explorer.emulator.world import WORLD_NOW, iso
from explorer.wire import routes as wire
from explorer.wire.models import TRIGGERS
from explorer.wire.query import MAX_PAGE, parse_list_query

SCHEMA = """
CREATE TABLE IF NOT EXISTS notifications (
    id INTEGER PRIMARY KEY, userId INTEGER NOT NULL, trigger TEXT NOT NULL,
    payload TEXT NOT NULL, sentAt TEXT NOT NULL, shared INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS notifications_user ON notifications (userId, id);

CREATE TABLE IF NOT EXISTS email_unsubscribes (
    userId INTEGER NOT NULL, category TEXT NOT NULL, createdAt TEXT NOT NULL,
    PRIMARY KEY (userId, category)
);
"""

SHAREABLE: frozenset[str] = frozenset({"subscribed", "resubscribed"})
#: E-mail categories a user may opt out of: one per trigger, plus ``all``.
EMAIL_CATEGORIES: tuple[str, ...] = ("all", *TRIGGERS)

_COLUMNS = "id, userId, trigger, payload, sentAt, shared"


def render(row: tuple[Any, ...]) -> dict[str, Any]:
    """A Notification object from a row of ``_COLUMNS``."""
    return {
        "id": row[0],
        "userId": row[1],
        "trigger": row[2],
        "payload": orjson.loads(row[3]),
        "sentAt": row[4],
        "shared": bool(row[5]),
    }


def notify(
    conn: sqlite3.Connection, user_id: int, trigger: str, payload: dict[str, Any], sent_at: str
) -> None:
    """Add one notification for ``user_id`` (inside the caller's transaction)."""
    cursor = conn.execute(
        "INSERT INTO notifications (userId, trigger, payload, sentAt) VALUES (?, ?, ?, ?)",
        (user_id, trigger, dumps(payload), sent_at),
    )
    row = (cursor.lastrowid, user_id, trigger, dumps(payload), sent_at, 0)
    happenings.notified(conn, user_id, render(row))


def deliver_to_all(
    conn: sqlite3.Connection, trigger: str, payload: dict[str, Any], sent_at: str
) -> int:
    """Add one notification for every current user (inside the caller's transaction).

    Returns how many users it reached.
    """
    cursor = conn.execute(
        "INSERT INTO notifications (userId, trigger, payload, sentAt) "
        "SELECT id, ?, ?, ? FROM users WHERE deletedAt IS NULL",
        (trigger, dumps(payload), sent_at),
    )
    return int(cursor.rowcount)


def seed(store: Store, world_seed: int) -> None:
    """Give each demo account a few notifications, once per database.

    Followers and hosts are picked from the world with ``world_seed``, so the same world
    always tells the same story.
    """
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

    stories: list[tuple[str, str, dict[str, Any]]] = [
        ("streamer", "followed", actor(*follower)),
        ("streamer", "hosted", actor(*hoster)),
        ("streamer", "subscribed", {**actor(users["viewer"], "viewer"), "months": 1}),
        ("streamer", "resubscribed", {**actor(users["moderator"], "moderator"), "months": 7}),
        ("viewer", "achievement", {"slug": "welcome"}),
        ("viewer2", "achievement", {"slug": "welcome"}),
        ("moderator", "followed", actor(users["viewer2"], "viewer2")),
    ]
    with store.transaction() as conn:
        for index, (owner, trigger, payload) in enumerate(stories):
            sent_at = iso(WORLD_NOW - timedelta(hours=len(stories) - index))
            notify(conn, users[owner], trigger, payload, sent_at)


def _own(ctx: Context) -> tuple[Any, ...]:
    """The row of path parameter ``notification``: 404 unknown, 403 someone else's."""
    row = ctx.store.one(
        f"SELECT {_COLUMNS} FROM notifications WHERE id = ?", (ctx.path_int("notification"),)
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
        conn.execute("UPDATE notifications SET shared = ? WHERE id = ?", (int(shared), row[0]))
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
