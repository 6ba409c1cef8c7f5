"""Playback manifests of live channels, and unlocking transcodes (which adds renditions)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable

import httpx
import pytest

from explorer.emulator import Platform

MANIFESTS = ("m3u8", "smil", "ftl", "light", "light2")
SignIn = Callable[..., httpx.Client]
ATTRIBUTE = re.compile(r'([A-Z0-9-]+)=("[^"]*"|[^,]*)')


def manifest(platform: Platform, channel: int | str, extension: str) -> httpx.Response:
    """GET one manifest of ``channel`` without credentials."""
    return httpx.get(f"{platform.base_url}/channels/{channel}/manifest.{extension}")


def channel_id(platform: Platform, token: str) -> int:
    """The id of the channel named ``token``."""
    return int(httpx.get(f"{platform.base_url}/channels/{token}").json()["id"])


def variants(playlist: str) -> list[tuple[dict[str, str], str]]:
    """The (STREAM-INF attributes, URI) pairs of an HLS master playlist, checking its form."""
    lines = playlist.splitlines()
    assert lines[0] == "#EXTM3U"
    assert any(re.fullmatch(r"#EXT-X-VERSION:\d+", line) for line in lines)
    found = []
    for index, line in enumerate(lines):
        if line.startswith("#EXT-X-STREAM-INF:"):
            attributes = dict(ATTRIBUTE.findall(line.split(":", 1)[1]))
            uri = lines[index + 1]
            assert uri and not uri.startswith("#")
            found.append((attributes, uri))
    return found


def test_m3u8_is_an_hls_master_playlist(platform: Platform) -> None:
    """The m3u8 manifest is a master playlist whose variants carry bandwidth, size and codecs."""
    response = manifest(platform, "streamer", "m3u8")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/vnd.apple.mpegurl"
    found = variants(response.text)
    assert found
    for attributes, uri in found:
        assert int(attributes["BANDWIDTH"]) > 0
        assert re.fullmatch(r"\d+x\d+", attributes["RESOLUTION"])
        assert attributes["CODECS"].startswith('"avc1.')
        assert uri.startswith("https://")


def test_smil_is_xml_with_one_video_per_rendition(platform: Platform) -> None:
    """The SMIL manifest parses as XML and lists the same renditions as the playlist."""
    response = manifest(platform, "streamer", "smil")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/smil+xml"
    root = ET.fromstring(response.content)
    assert root.tag == "smil"
    videos = root.findall("./body/switch/video")
    bitrates = {int(video.get("system-bitrate", "0")) for video in videos}
    playlist = variants(manifest(platform, "streamer", "m3u8").text)
    assert bitrates == {int(attributes["BANDWIDTH"]) for attributes, _ in playlist}


def test_smil_videos_carry_a_title(platform: Platform) -> None:
    """Each SMIL video names its rendition in ``title`` (video tools label qualities by it)."""
    root = ET.fromstring(manifest(platform, "streamer", "smil").content)
    titles = [video.get("title") for video in root.findall("./body/switch/video")]
    assert titles and titles[0] == "source" and all(titles)


def test_ftl_manifest_numbers_tracks_by_channel(platform: Platform) -> None:
    """The FTL manifest is JSON whose audio SSRC is the channel id and video SSRC the next."""
    channel = channel_id(platform, "streamer")
    response = manifest(platform, channel, "ftl")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert body["channelId"] == channel
    assert (body["audio"]["ssrc"], body["video"]["ssrc"]) == (channel, channel + 1)
    assert body["ingestProtocol"] in ("ftl", "rtmp")


def test_light_manifest_lists_renditions_with_urls(platform: Platform) -> None:
    """The light manifest is JSON with the live-since time and one URL per rendition."""
    response = manifest(platform, "streamer", "light")
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert body["since"] <= body["now"]
    assert body["resolutions"]
    assert all(r["url"].startswith("https://") and r["height"] > 0 for r in body["resolutions"])


def test_light2_points_at_the_served_playlist(platform: Platform) -> None:
    """light2's hlsSrc is a path on the platform's host that serves the m3u8."""
    body = manifest(platform, "streamer", "light2").json()
    assert body["isTestStream"] is False
    assert body["accessKey"]
    playlist = httpx.get(f"{platform.root_url}{body['hlsSrc']}")
    assert playlist.status_code == 200
    assert playlist.text.startswith("#EXTM3U")


def test_broadcast_start_is_stable(platform: Platform) -> None:
    """Reading the manifests again reports the same start of the broadcast."""
    first = manifest(platform, "streamer", "light2").json()
    second = manifest(platform, "streamer", "light").json()
    assert first["startedAt"] == second["since"]
    assert first["startedAt"] < first["now"]


@pytest.mark.parametrize("extension", MANIFESTS)
def test_offline_channel_has_no_manifest(platform: Platform, extension: str) -> None:
    """An offline channel answers 404 for every manifest."""
    offline = httpx.get(f"{platform.base_url}/channels/viewer").json()
    assert offline["online"] is False
    assert manifest(platform, offline["id"], extension).status_code == 404


@pytest.mark.parametrize("extension", MANIFESTS)
def test_unknown_channel_has_no_manifest(platform: Platform, extension: str) -> None:
    """A channel that does not exist answers 404."""
    assert manifest(platform, 999_999_999, extension).status_code == 404


def test_unlocking_transcodes_adds_renditions(
    make_platform: Callable[..., Platform], signed_in: SignIn
) -> None:
    """After the owner unlocks transcodes the playlist offers the lower qualities too."""
    running = make_platform(rate_limits=False)
    owner = signed_in(running.base_url, "streamer")
    channel = owner.get("/users/current").json()["channel"]
    assert channel["hasTranscodes"] is False
    before = variants(manifest(running, channel["id"], "m3u8").text)
    assert owner.post(f"/channels/{channel['id']}/transcodes/unlock").status_code == 200
    after = variants(manifest(running, channel["id"], "m3u8").text)
    assert len(before) == 1
    assert len(after) > 1
    heights = [int(a["RESOLUTION"].split("x")[1]) for a, _ in after]
    assert heights == sorted(heights, reverse=True)


def test_unlocking_charges_the_owners_sparks_once(
    make_platform: Callable[..., Platform], signed_in: SignIn
) -> None:
    """Unlocking spends the owner's sparks and sets hasTranscodes; a second unlock is 409."""
    running = make_platform(rate_limits=False)
    owner = signed_in(running.base_url, "streamer")
    user = owner.get("/users/current").json()
    response = owner.post(f"/channels/{user['channel']['id']}/transcodes/unlock")
    body = response.json()
    assert body["hasTranscodes"] is True
    assert body["sparks"] == user["sparks"] - body["sparksSpent"]
    after = owner.get("/users/current").json()
    assert after["sparks"] == body["sparks"]
    assert after["channel"]["hasTranscodes"] is True
    again = owner.post(f"/channels/{user['channel']['id']}/transcodes/unlock")
    assert again.status_code == 409
    assert owner.get("/users/current").json()["sparks"] == body["sparks"]


def test_unlocking_without_enough_sparks_is_402(
    make_platform: Callable[..., Platform], signed_in: SignIn
) -> None:
    """A new account (no sparks) is refused with 402 and its channel stays without transcodes."""
    running = make_platform(rate_limits=False)
    account = {"username": "newcomer", "password": "long enough pw", "email": "n@example.com"}
    assert httpx.post(f"{running.base_url}/users", json=account).status_code == 201
    newcomer = signed_in(running.base_url, "newcomer", account["password"])
    channel = newcomer.get("/users/current").json()["channel"]["id"]
    assert newcomer.post(f"/channels/{channel}/transcodes/unlock").status_code == 402
    assert newcomer.get(f"/channels/{channel}").json()["hasTranscodes"] is False


def test_only_the_owner_unlocks(make_platform: Callable[..., Platform], signed_in: SignIn) -> None:
    """Another user (even staff, whose sparks are not the owner's) gets 403; anonymous 401."""
    running = make_platform(rate_limits=False)
    channel = channel_id(running, "streamer")
    url = f"/channels/{channel}/transcodes/unlock"
    for name in ("viewer", "staff"):
        assert signed_in(running.base_url, name).post(url).status_code == 403
    assert httpx.post(f"{running.base_url}{url}").status_code == 401
