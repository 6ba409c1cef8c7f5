"""Frontend versions: the released builds of each client app, newest first.

Clients poll ``GET /frontendVersions`` to learn whether a newer build exists. The releases are
stored rows (seeded from :data:`RELEASES`); ``current`` marks the newest release of each app,
computed from the stored dates rather than stored, so adding a release moves it.
"""

from __future__ import annotations

from typing import Any

from explorer.emulator.context import Context
from explorer.emulator.db import frontend
from explorer.emulator.db.engine import Store
from explorer.emulator.policy import Param, Route
from explorer.emulator.responses import bad_request
from explorer.wire import routes as wire
from explorer.wire.models import FRONTEND_APPS

#: Seeded releases: app, version, commit, release time.
RELEASES: tuple[tuple[str, str, str, str], ...] = (
    ("web", "2020.06.30-1", "8c1f2a7", "2020-06-30T17:05:00.000Z"),
    ("web", "2020.07.14-2", "d93be40", "2020-07-14T16:40:00.000Z"),
    ("web", "2020.07.21-1", "41a7c9e", "2020-07-21T18:20:00.000Z"),
    ("xbox", "4.12.0", "77e0d15", "2020-06-16T09:00:00.000Z"),
    ("xbox", "4.13.1", "b2c4f60", "2020-07-09T09:00:00.000Z"),
    ("ios", "3.8.0", "5fd91ab", "2020-06-23T12:00:00.000Z"),
    ("android", "3.8.2", "c06a3d8", "2020-07-02T12:00:00.000Z"),
)
APPS = FRONTEND_APPS


def seed(store: Store, world_seed: int) -> None:
    """Store the seeded releases (those already stored are left as they are)."""
    frontend.add_releases(store, RELEASES)


async def list_versions(ctx: Context) -> list[dict[str, Any]]:
    """GET /frontendVersions: releases by app, newest first; ``app`` narrows to one app."""
    app = ctx.params.get("app")
    if app is not None and app not in APPS:
        raise bad_request(f"app must be one of {', '.join(APPS)}.", "app")
    rows = frontend.releases(ctx.store, app)
    fields = ("id", "app", "version", "commit", "releasedAt", "current")
    return [{**dict(zip(fields, row, strict=True)), "current": bool(row[5])} for row in rows]


routes = [
    Route(
        wire.FRONTEND_VERSIONS,
        list_versions,
        summary="Released builds of each client app, newest first",
        params=(Param("app", {"type": "string", "enum": list(APPS)}, "only this app"),),
        errors=(400,),
    ),
]
