"""The emulator's control namespace (``/_emulator/...``), apart from the platform's own API.

Tests and notebooks use it to read the mail the platform "sent" (confirmation codes) and to
check health. Chat fault drills (stopping and restarting a node) are added by the chat side.
"""

from __future__ import annotations

from typing import Any

from explorer.emulator.context import Context
from explorer.emulator.policy import Route


async def health(ctx: Context) -> dict[str, Any]:
    """GET /_emulator/health: liveness plus the seed and size of the world."""
    return {
        "ok": True,
        "seed": int(ctx.store.meta("seed") or 0),
        "channels": ctx.store.scalar("SELECT COUNT(*) FROM channels"),
        "chatEndpoints": ctx.services.chat.endpoints() if ctx.services.chat else [],
    }


async def mail(ctx: Context) -> list[dict[str, Any]]:
    """GET /_emulator/mail: every message the platform has sent, oldest first."""
    return ctx.services.mailbox


routes = [
    Route("GET", "/health", health, "global", summary="Emulator health"),
    Route("GET", "/mail", mail, "global", summary="Mail sent by the emulator"),
]
