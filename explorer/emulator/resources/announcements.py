"""Announcements: platform-wide messages from staff, delivered as notifications.

Only staff may announce (and a bearer token needs ``announcement:create``). An announcement is
stored, and in the same transaction every current user receives an ``announcement``
notification carrying it, so it is read through ``GET /notifications``. Levels say how loudly
a client should show it.
"""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from explorer.emulator.access import require_staff
from explorer.emulator.context import Context
from explorer.emulator.db import announcements
from explorer.emulator.live import happenings
from explorer.emulator.policy import Route
from explorer.emulator.resources.notifications import deliver_to_all
from explorer.emulator.responses import JSONResponse, bad_request
from explorer.wire import routes as wire
from explorer.wire.models import ANNOUNCEMENT_LEVELS

LEVELS = ANNOUNCEMENT_LEVELS
MAX_MESSAGE = 1000


async def announce(ctx: Context) -> Response:
    """POST /announcements: store a staff announcement and notify every user of it."""
    require_staff(ctx)
    body = await ctx.json_object()
    message = body.get("message")
    if not isinstance(message, str) or not message.strip() or len(message) > MAX_MESSAGE:
        raise bad_request(f"message must be 1-{MAX_MESSAGE} characters.", "message")
    level = body.get("level", "info")
    if level not in LEVELS:
        raise bad_request(f"level must be one of {', '.join(LEVELS)}.", "level")
    author, now = ctx.user_id(), ctx.iso_now()
    with ctx.store.transaction() as tx:
        announcement_id = announcements.add(tx, author, message, level, now)
        payload = {"announcementId": announcement_id, "message": message, "level": level}
        recipients = deliver_to_all(tx, "announcement", payload, now)
        announcements.delivered(tx, announcement_id, recipients)
        happenings.announced(tx, {"id": announcement_id, **payload})
    item = {
        "id": announcement_id,
        "authorId": author,
        "message": message,
        "level": level,
        "createdAt": now,
        "recipients": recipients,
    }
    return JSONResponse(item, status_code=201)


SCHEMAS: dict[str, Any] = {
    "AnnouncementRequest": {
        "type": "object",
        "required": ["message"],
        "properties": {
            "message": {"type": "string", "minLength": 1, "maxLength": MAX_MESSAGE},
            "level": {"type": "string", "enum": list(LEVELS), "default": "info"},
        },
    },
}

routes = [
    Route(
        wire.ANNOUNCE,
        announce,
        summary="Announce to every user (staff only); delivered as notifications",
        body={"$ref": "#/components/schemas/AnnouncementRequest"},
        status=201,
        errors=(400, 401, 403, 413, 461),
    ),
]
