"""Achievements: the catalogue of what a user can earn, and who earned what.

Each entry has reference.md's shape ``{slug, name, description, sparks}``. A signed-in caller
whose credential carries ``achievement:view:self`` (a cookie session holds every scope) also
sees their own progress on each entry: ``earned`` and ``earnedAt``. The list stays public, so
a token without that scope gets the bare catalogue rather than a refusal.

Other groups record earnings with :func:`award`, inside the transaction of the action that
earned it (creating an interactive game earns ``game-creator``); an award credits the
achievement's sparks to the user exactly once and notifies them.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from explorer.emulator.context import Context
from explorer.emulator.db import achievements, users
from explorer.emulator.db.engine import Store, Transaction
from explorer.emulator.live import happenings
from explorer.emulator.policy import Route
from explorer.emulator.resources.notifications import notify
from explorer.emulator.world import WORLD_NOW, iso
from explorer.wire import routes as wire

#: The catalogue, in display order: slug, name, description, sparks.
CATALOGUE: tuple[tuple[str, str, str, int], ...] = (
    ("welcome", "Welcome aboard", "Sign in for the first time.", 100),
    ("first-follow", "Follower", "Follow a channel.", 100),
    ("chatterbox", "Chatterbox", "Send 100 chat messages.", 250),
    ("first-stream", "On the air", "Go live for the first time.", 500),
    ("partner", "Partnered", "Become a partner.", 5000),
    ("game-creator", "Game maker", "Create an interactive game.", 1000),
)
#: What each demo account has earned in the seeded world (the streamer and the viewer own
#: seeded interactive games, hence ``game-creator``).
DEMO_EARNINGS: dict[str, tuple[str, ...]] = {
    "streamer": ("welcome", "chatterbox", "first-stream", "partner", "game-creator"),
    "moderator": ("welcome", "first-follow", "chatterbox"),
    "viewer": ("welcome", "first-follow", "game-creator"),
    "viewer2": ("welcome",),
    "staff": ("welcome",),
}


def seed(store: Store, world_seed: int) -> None:
    """Store the catalogue (kept current on every start) and the demo accounts' earnings."""
    with store.transaction() as tx:
        achievements.set_catalogue(
            tx, [(*entry, position) for position, entry in enumerate(CATALOGUE)]
        )
        if achievements.any_earned(tx):
            return
        for username, slugs in DEMO_EARNINGS.items():
            user_id = users.id_named(tx, username)
            achievements.add_earnings(
                tx,
                [
                    (user_id, slug, iso(WORLD_NOW - timedelta(days=30 * (len(slugs) - i))))
                    for i, slug in enumerate(slugs)
                ],
            )


def award(conn: Transaction, user_id: int, slug: str, when: str) -> bool:
    """Record that ``user_id`` earned ``slug``, credit its sparks and notify them; False if
    already held.

    Runs inside the caller's transaction, so the earning and the action stand or fall together.
    """
    if not achievements.earn(conn, user_id, slug, when):
        return False
    notify(conn, user_id, "achievement", {"slug": slug}, when)
    happenings.achieved(conn, user_id, slug, when)
    return True


async def list_achievements(ctx: Context) -> list[dict[str, Any]]:
    """GET /achievements: the catalogue, with the caller's earned state when allowed."""
    items: list[dict[str, Any]] = [
        {"slug": slug, "name": name, "description": description, "sparks": sparks}
        for slug, name, description, sparks in achievements.catalogue(ctx.store)
    ]
    caller = ctx.caller
    if caller is None or "achievement:view:self" not in caller.scopes:
        return items
    earned = achievements.earned_by(ctx.store, caller.user_id)
    for item in items:
        item["earned"] = item["slug"] in earned
        item["earnedAt"] = earned.get(item["slug"])
    return items


routes = [
    Route(
        wire.ACHIEVEMENTS,
        list_achievements,
        summary="Every achievement; signed in, also whether the caller earned it",
        errors=(401, 461),
    ),
]
