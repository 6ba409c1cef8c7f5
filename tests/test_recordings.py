"""Recordings of a channel's past broadcasts: shape, paging, ordering, determinism."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from explorer.emulator import Platform

RECORDING_KEYS = {
    "id",
    "name",
    "typeId",
    "state",
    "viewsTotal",
    "duration",
    "expiresAt",
    "createdAt",
    "updatedAt",
    "channelId",
    "vods",
}
VOD_KEYS = {"id", "baseUrl", "format", "recordingId", "createdAt", "updatedAt"}


@pytest.fixture(scope="module")
def vod_channel(platform: Platform) -> int:
    """A channel with hasVod, the one with the most viewers (so it has several recordings)."""
    params: dict[str, str | int] = {
        "where": "hasVod:eq:1",
        "order": "viewersTotal:desc",
        "limit": 1,
    }
    return int(httpx.get(f"{platform.base_url}/channels", params=params).json()[0]["id"])


def recordings(platform: Platform, channel: int, **params: str | int) -> httpx.Response:
    """GET a channel's recordings without credentials."""
    return httpx.get(f"{platform.base_url}/channels/{channel}/recordings", params=params)


def test_recordings_have_the_reference_shape(platform: Platform, vod_channel: int) -> None:
    """Each recording carries the reference fields and VODs that point back at it."""
    response = recordings(platform, vod_channel)
    assert response.status_code == 200
    found = response.json()
    assert found
    for recording in found:
        assert set(recording) >= RECORDING_KEYS
        assert recording["channelId"] == vod_channel
        assert isinstance(recording["duration"], float)
        assert recording["createdAt"] < recording["expiresAt"]
        assert {vod["format"] for vod in recording["vods"]} >= {"hls", "thumbnail"}
        for vod in recording["vods"]:
            assert set(vod) >= VOD_KEYS
            assert vod["recordingId"] == recording["id"]


def test_newest_first_by_default(platform: Platform, vod_channel: int) -> None:
    """Without order the newest recording comes first."""
    created = [r["createdAt"] for r in recordings(platform, vod_channel).json()]
    assert created == sorted(created, reverse=True)


def test_order_parameter_sorts(platform: Platform, vod_channel: int) -> None:
    """order=viewsTotal:asc sorts by views, fewest first."""
    views = [
        r["viewsTotal"] for r in recordings(platform, vod_channel, order="viewsTotal:asc").json()
    ]
    assert views == sorted(views)


def test_pages_are_successive_slices(platform: Platform, vod_channel: int) -> None:
    """page/limit slice the list and X-Total-Count gives its length."""
    whole = recordings(platform, vod_channel)
    total = int(whole.headers["X-Total-Count"])
    assert total == len(whole.json()) >= 2
    pages = [recordings(platform, vod_channel, page=page, limit=1).json() for page in range(total)]
    assert [page[0] for page in pages] == whole.json()
    assert recordings(platform, vod_channel, page=total, limit=1).json() == []


def test_channel_without_vods_has_none(platform: Platform) -> None:
    """A channel with hasVod off lists no recordings."""
    params: dict[str, str | int] = {"where": "hasVod:eq:0", "limit": 1}
    channel = httpx.get(f"{platform.base_url}/channels", params=params).json()[0]["id"]
    response = recordings(platform, channel)
    assert response.json() == []
    assert response.headers["X-Total-Count"] == "0"


def test_same_seed_same_recordings(
    platform: Platform, make_platform: Callable[..., Platform], vod_channel: int
) -> None:
    """Another platform with the same seed lists byte-identical recordings."""
    other = make_platform(rate_limits=False)
    assert recordings(other, vod_channel).content == recordings(platform, vod_channel).content


@pytest.mark.parametrize(
    "params",
    [{"where": "id:eq:1"}, {"q": "chill"}, {"fields": "id"}, {"limit": 0}, {"order": "name:asc"}],
)
def test_unsupported_parameters_are_400(
    platform: Platform, vod_channel: int, params: dict[str, str]
) -> None:
    """where, q, fields, a bad limit or an unknown order field answer 400."""
    assert recordings(platform, vod_channel, **params).status_code == 400


def test_unknown_channel_is_404(platform: Platform) -> None:
    """A channel that does not exist answers 404."""
    assert recordings(platform, 999_999_999).status_code == 404


def test_one_recording_by_id_has_its_vods_with_video_attributes(
    platform: Platform, vod_channel: int
) -> None:
    """GET /recordings/{id} answers the listed recording, whose video VODs carry Width,
    Height, Fps and Bitrate (the historical keys video tools read)."""
    listed = recordings(platform, vod_channel).json()[0]
    response = httpx.get(f"{platform.base_url}/recordings/{listed['id']}")
    assert response.status_code == 200
    assert response.json() == listed
    hls = next(vod for vod in listed["vods"] if vod["format"] == "hls")
    assert set(hls["data"]) == {"Width", "Height", "Fps", "Bitrate"}


@pytest.mark.parametrize("ident", ["999999999", "5", "abc"])
def test_unknown_recording_is_404_or_400(platform: Platform, ident: str) -> None:
    """An id naming no recording is 404; one that is no number is 400."""
    response = httpx.get(f"{platform.base_url}/recordings/{ident}")
    assert response.status_code == (400 if ident == "abc" else 404)
    assert response.json()["statusCode"] == response.status_code
