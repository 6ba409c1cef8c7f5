"""The live events handlers write when something happens (besides model updates, which
triggers write): their names and payloads, in the shapes the historical developer docs show
(mixer/developer-docs, pages/02.reference/02.constellation/03.events/02.live).

Each function writes inside the caller's transaction, so the event exists exactly when the
happening does.
"""

from __future__ import annotations

from typing import Any

from explorer.emulator.db import achievements, channels, users
from explorer.emulator.db.engine import Transaction
from explorer.emulator.db.live_events import publish
from explorer.emulator.shapes import CHANNEL_BOOLS, CHANNEL_FIELDS, render_user
from explorer.wire.topics import checked as name


def _channel(conn: Transaction, channel_id: int) -> dict[str, Any] | None:
    """A channel's own fields (no embedded user or type), or None."""
    return _rendered(channels.fields(conn, channel_id, *CHANNEL_FIELDS))


def _rendered(row: tuple[Any, ...] | None) -> dict[str, Any] | None:
    """A channel's own fields from their row (None: no channel)."""
    if row is None:
        return None
    channel = dict(zip(CHANNEL_FIELDS, row, strict=True))
    for key in CHANNEL_BOOLS:
        channel[key] = bool(channel[key])
    return channel


def followed(conn: Transaction, channel_id: int, user_id: int, following: bool) -> dict[str, Any]:
    """``channel:{id}:followed`` (the user, with their channel) and ``user:{id}:followed``
    (the channel), for a follow or an unfollow; the follower's User object (read here, so a
    notification of the follow need not read it again)."""
    row = users.row_with_channel(conn, user_id, CHANNEL_FIELDS)
    assert row is not None, f"follower {user_id} exists"
    width = len(row) - len(CHANNEL_FIELDS)
    user = render_user(row[:width])
    own = _rendered(row[width:] if row[width] is not None else None)
    publish(
        conn,
        name("channel", channel_id, "followed"),
        {"following": following, "user": {**user, "channel": own}},
    )
    publish(
        conn,
        name("user", user_id, "followed"),
        {"following": following, "channel": _channel(conn, channel_id)},
    )
    return user


def hosted(conn: Transaction, host_id: int, hostee_id: int, hosting: bool) -> None:
    """``channel:{hostee}:hosted`` (``{hosterId, hoster, auto}``) or ``:unhosted``."""
    payload: dict[str, Any] = {"hosterId": host_id, "hoster": _channel(conn, host_id)}
    if hosting:
        payload["auto"] = False
    publish(conn, name("channel", hostee_id, "hosted" if hosting else "unhosted"), payload)


def notified(conn: Transaction, user_id: int, notification: dict[str, Any]) -> None:
    """``user:{id}:notify`` with the new Notification (private to that user)."""
    publish(conn, name("user", user_id, "notify"), notification)


def achieved(conn: Transaction, user_id: int, slug: str, when: str) -> None:
    """``user:{id}:achievement`` with the AchievementEarning, as the docs show it."""
    row = achievements.catalogued(conn, slug)
    achievement = dict(zip(("slug", "name", "description", "sparks"), row, strict=True))
    earning = {
        "id": achievements.earning_id(conn, user_id, slug),
        "earned": True,
        "progress": 1.0,
        "createdAt": when,
        "updatedAt": when,
        "achievement": slug,
        "user": user_id,
        "Achievement": achievement,
    }
    publish(conn, name("user", user_id, "achievement"), earning)


def announced(conn: Transaction, announcement: dict[str, Any]) -> None:
    """``announcement:announce`` with the announcement."""
    publish(conn, "announcement:announce", announcement)
