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
from explorer.emulator.db import channels, notifications, users
from explorer.emulator.db.engine import Store, Transaction, dumps
from explorer.emulator.live import happenings
from explorer.emulator.policy import Param, Route
from explorer.emulator.responses import ApiError, JSONResponse, bad_request, not_found
from explorer.emulator.shapes import render_user
from explorer.emulator.world import DEMO_NAMES, WORLD_NOW, iso
from explorer.wire import routes as wire
from explorer.wire.models import NOTIFICATION_TYPES
from explorer.wire.query import MAX_PAGE, parse_list_query

#: What a notification tells of (its ``type``; the wire's enumeration).
TYPES = NOTIFICATION_TYPES
SHAREABLE: frozenset[str] = frozenset({"subscribe", "resubscribe"})
#: E-mail categories a user may opt out of: one per type, plus ``all``.
EMAIL_CATEGORIES: tuple[str, ...] = ("all", *TYPES)


def render(row: notifications.Row) -> dict[str, Any]:
    """A Notification object from its row."""
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
    notifications.add(conn, *row[:5])
    happenings.notified(conn, user_id, render(row))


def followed(
    conn: Transaction, channel_id: int, owner_id: int, follower: dict[str, Any], sent_at: str
) -> None:
    """Tell a channel's owner that ``follower`` (a User object) followed it (the docs'
    ``follow`` notification; inside the caller's transaction)."""
    payload = {"channelOwnerId": channel_id, "triggeringUser": follower}
    notify(conn, owner_id, "follow", payload, sent_at)


def deliver_to_all(conn: Transaction, kind: str, payload: dict[str, Any], sent_at: str) -> int:
    """Add one notification of type ``kind`` for every current user (inside the caller's
    transaction). Returns how many users it reached."""
    return notifications.add_for_everyone(conn, kind, dumps(payload), sent_at)


def seed(store: Store, world_seed: int) -> None:
    """Give each demo account a few notifications, once per database (upgrading one made by
    an older version first).

    Followers and hosts are picked from the world with ``world_seed``, so the same world
    always tells the same story.
    """
    notifications.upgrade(store)
    if notifications.count(store):
        return
    demo = {username: user_id for user_id, username in users.accounts_named(store, DEMO_NAMES)}
    channel = channels.id_of_owner(store, demo["streamer"])
    rng = random.Random(world_seed)
    others = users.first_others(store, demo["streamer"], 50)
    follower, hoster = rng.sample(others, 2)

    def actor(user_id: int, username: str) -> dict[str, Any]:
        return {"user": {"id": user_id, "username": username}, "channelId": channel}

    stories: list[tuple[str, str, dict[str, Any] | int]] = [
        ("streamer", "follow", follower[0]),
        ("streamer", "host", actor(*hoster)),
        ("streamer", "subscribe", {**actor(demo["viewer"], "viewer"), "months": 1}),
        ("streamer", "resubscribe", {**actor(demo["moderator"], "moderator"), "months": 7}),
        ("viewer", "achievement", {"slug": "welcome"}),
        ("viewer2", "achievement", {"slug": "welcome"}),
        ("moderator", "follow", demo["viewer2"]),
    ]
    with store.transaction() as conn:
        for index, (owner, kind, payload) in enumerate(stories):
            sent_at = iso(WORLD_NOW - timedelta(hours=len(stories) - index))
            if isinstance(payload, int):
                owned = channels.id_of_owner(conn, demo[owner])
                row = users.row(conn, payload)
                assert owned is not None and row is not None
                followed(conn, owned, demo[owner], render_user(row), sent_at)
            else:
                notify(conn, demo[owner], kind, payload, sent_at)


def _own(ctx: Context) -> notifications.Row:
    """The row of path parameter ``notification`` (its UUID): 404 unknown, 403 someone
    else's."""
    row = notifications.by_uuid(ctx.store, ctx.request.path_params["notification"].lower())
    if row is None:
        raise not_found("Notification")
    if row[1] != ctx.user_id():
        raise ApiError(403, "This notification belongs to another user.")
    return row


async def list_notifications(ctx: Context) -> Response:
    """GET /notifications: the caller's notifications, newest first, one page."""
    query = parse_list_query(ctx.params, {}, ())
    user_id = ctx.user_id()
    rows = notifications.page_of(ctx.store, user_id, query.limit, query.page * query.limit)
    headers = {}
    if query.count:
        headers["X-Total-Count"] = str(notifications.count_of(ctx.store, user_id))
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
    notifications.set_shared(ctx.store, row[0], shared)
    return render((*row[:5], int(shared)))


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
    notifications.unsubscribe(ctx.store, user_id, category, ctx.iso_now())
    held = notifications.unsubscribed(ctx.store, user_id)
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
