"""Related channels: same type and/or language, ranked."""

from __future__ import annotations

from typing import Any

import httpx

from explorer.emulator import Platform


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


def _ranked(platform: Platform, channel: dict[str, Any]) -> list[int]:
    """Every related channel's id in the documented order, from every channel at once."""
    channels: list[dict[str, Any]] = []
    for page in range(100):
        got = httpx.get(f"{platform.base_url}/channels", params={"limit": 100, "page": page})
        channels += got.json()
        if len(got.json()) < 100:
            break

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


def test_related_pages_follow_the_ranking_across_tiers(platform: Platform) -> None:
    """Pages of 37 (crossing from tier to tier) list exactly the ranking of every channel, and
    X-Total-Count is its length, for channels of several likenesses."""
    frozen = httpx.get(f"{platform.base_url}/channels", params={"limit": 100}).json()
    for channel in frozen[::25]:
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
