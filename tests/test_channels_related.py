"""Related channels: same type and/or language, ranked."""

from __future__ import annotations

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
