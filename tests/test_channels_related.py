"""Related channels: same type and/or language, ranked."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from typing import Any

import httpx
import pytest

from explorer.emulator import Platform
from explorer.emulator.app import build_app
from explorer.emulator.context import Config
from tests.databases import open_services


def test_related_channels_are_ranked_by_likeness(platform: Platform) -> None:
    """Every related channel shares the type or language; both-shared ones come first."""
    channel = httpx.get(f"{platform.base_url}/channels/streamer").json()
    related = httpx.get(
        f"{platform.base_url}/channels/streamer/related", params={"limit": 100}
    ).json()
    scores = [
        2 * (c["typeId"] == channel["typeId"]) + (c["languageId"] == channel["languageId"])
        for c in related
    ]
    assert related and all(scores)
    assert scores == sorted(scores, reverse=True)
    assert channel["id"] not in {c["id"] for c in related}


def test_related_channels_are_paged(platform: Platform) -> None:
    """limit caps the page and X-Total-Count gives the whole count."""
    response = httpx.get(f"{platform.base_url}/channels/streamer/related", params={"limit": 2})
    assert len(response.json()) == 2 and int(response.headers["X-Total-Count"]) >= 2


def _listed(platform: Platform) -> list[dict[str, Any]]:
    """Every listed channel, page by page."""
    channels: list[dict[str, Any]] = []
    for page in range(100):
        got = httpx.get(f"{platform.base_url}/channels", params={"limit": 100, "page": page})
        channels += got.json()
        if len(got.json()) < 100:
            break
    return channels


def _ranked(platform: Platform, channel: dict[str, Any]) -> list[int]:
    """Every related channel's id in the documented order, from every channel at once."""
    channels = _listed(platform)

    def key(other: dict[str, Any]) -> tuple[int, ...]:
        likeness = 2 * (other["typeId"] == channel["typeId"] is not None) + (
            other["languageId"] == channel["languageId"] is not None
        )
        live = (other["online"], other["viewersCurrent"], other["viewersTotal"])
        return (-likeness, *(-value for value in live), other["id"])

    alike = [
        other
        for other in channels
        if other["id"] != channel["id"]
        and (
            (other["typeId"] == channel["typeId"] is not None)
            or (other["languageId"] == channel["languageId"] is not None)
        )
    ]
    return [other["id"] for other in sorted(alike, key=key)]


def _pages_of(platform: Platform, channel: dict[str, Any]) -> None:
    """Assert pages of 37 (crossing from tier to tier) list exactly the ranking of every
    channel, and X-Total-Count is its length."""
    ranked = _ranked(platform, channel)
    pages: list[int] = []
    for page in range(len(ranked) // 37 + 2):
        response = httpx.get(
            f"{platform.base_url}/channels/{channel['id']}/related",
            params={"limit": 37, "page": page},
        )
        assert int(response.headers["X-Total-Count"]) == len(ranked)
        pages += [other["id"] for other in response.json()]
    assert pages == ranked, channel["id"]


def test_related_pages_follow_the_ranking_across_tiers(platform: Platform) -> None:
    """Pages of 37 (crossing from tier to tier) list exactly the ranking of every channel, and
    X-Total-Count is its length, for channels of several likenesses."""
    frozen = httpx.get(f"{platform.base_url}/channels", params={"limit": 100}).json()
    for channel in frozen[::25]:
        _pages_of(platform, channel)


def test_related_pages_follow_the_ranking_in_either_range(platform: Platform) -> None:
    """The ranking holds for a channel whose language has fewer channels than its type and
    for one whose type has fewer than its language (the first tier is read in the smaller
    range)."""
    listed = _listed(platform)
    types = Counter(c["typeId"] for c in listed)
    languages = Counter(c["languageId"] for c in listed)
    both = [c for c in listed if c["typeId"] is not None and c["languageId"] is not None]
    rarer_language = max(both, key=lambda c: types[c["typeId"]] - languages[c["languageId"]])
    rarer_type = max(both, key=lambda c: languages[c["languageId"]] - types[c["typeId"]])
    assert languages[rarer_language["languageId"]] < types[rarer_language["typeId"]]
    assert types[rarer_type["typeId"]] < languages[rarer_type["languageId"]]
    for channel in (rarer_language, rarer_type):
        _pages_of(platform, channel)


@pytest.mark.sqlite_only("traces the statements of the platform's own SQLite connection")
def test_a_language_is_counted_once_for_its_types() -> None:
    """Once one channel's related channels are listed, listing those of another channel of
    the same language and another type counts only that type's channels: the language's
    count is kept (the statements traced on the platform's own connection, the app called in
    process)."""
    services = open_services(":memory:", Config(channels=5000, rate_limits=False), time.time)
    app = build_app(services)
    counts: list[str] = []

    async def related(channel: int) -> None:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            response = await client.get(f"/api/v1/channels/{channel}/related")
        assert response.status_code == 200, response.text

    try:
        store = services.store
        one, other = store.all(
            "SELECT MIN(id) FROM channels WHERE languageId = 'en' AND typeId IS NOT NULL "
            "GROUP BY typeId ORDER BY COUNT(*) DESC LIMIT 2"
        )
        asyncio.run(related(one[0]))
        store.conn.set_trace_callback(lambda sql: counts.append(sql) if "COUNT(" in sql else None)
        asyncio.run(related(other[0]))
        store.conn.set_trace_callback(None)
    finally:
        services.store.close()
    assert len(counts) == 1 and "languageId =" not in counts[0], counts
