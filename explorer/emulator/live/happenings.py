"""The live events handlers write when something happens (besides model updates, which
triggers write): their names and payloads, in the shapes the historical developer docs show
(mixer/developer-docs, pages/02.reference/02.constellation/03.events/02.live).

Each function writes inside the caller's transaction, so the event exists exactly when the
happening does.
"""

from __future__ import annotations

from typing import Any

from explorer.emulator.db.engine import Transaction
from explorer.emulator.live.outbox import publish
from explorer.emulator.shapes import (
    CHANNEL_BOOLS,
    CHANNEL_FIELDS,
    USER_FIELDS,
    render_user,
)
from explorer.wire.topics import checked as name


def _channel(conn: Transaction, channel_id: int) -> dict[str, Any] | None:
    """A channel's own fields (no embedded user or type), or None."""
    row = conn.execute(
        f"SELECT {', '.join(CHANNEL_FIELDS)} FROM channels WHERE id = ?", (channel_id,)
    ).fetchone()
    if row is None:
        return None
    channel = dict(zip(CHANNEL_FIELDS, row, strict=True))
    for key in CHANNEL_BOOLS:
        channel[key] = bool(channel[key])
    return channel


def _user(conn: Transaction, user_id: int) -> dict[str, Any]:
    row = conn.execute(f"SELECT {', '.join(USER_FIELDS)} FROM users WHERE id = ?", (user_id,))
    return render_user(row.fetchone())


def followed(conn: Transaction, channel_id: int, user_id: int, following: bool) -> None:
    """``channel:{id}:followed`` (the user, with their channel) and ``user:{id}:followed``
    (the channel), for a follow or an unfollow."""
    follower = _user(conn, user_id)
    follower["channel"] = _channel(conn, _channel_of(conn, user_id))
    publish(
        conn,
        name("channel", channel_id, "followed"),
        {"following": following, "user": follower},
    )
    publish(
        conn,
        name("user", user_id, "followed"),
        {"following": following, "channel": _channel(conn, channel_id)},
    )


def _channel_of(conn: Transaction, user_id: int) -> int:
    row = conn.execute("SELECT id FROM channels WHERE userId = ?", (user_id,)).fetchone()
    return int(row[0]) if row is not None else 0


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
    row = conn.execute(
        "SELECT slug, name, description, sparks FROM achievements WHERE slug = ?", (slug,)
    ).fetchone()
    achievement = dict(zip(("slug", "name", "description", "sparks"), row, strict=True))
    (earning_id,) = conn.execute(
        "SELECT rowid FROM achievement_earnings WHERE userId = ? AND slug = ?", (user_id, slug)
    ).fetchone()
    earning = {
        "id": earning_id,
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
