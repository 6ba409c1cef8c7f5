"""Hosting: hostee and hosters stay consistent, and the hosted channel's preferences rule."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from explorer.emulator import Platform

SignIn = Callable[..., httpx.Client]


def channel_id(platform: Platform, token: str) -> int:
    value: int = httpx.get(f"{platform.base_url}/channels/{token}").json()["id"]
    return value


def hoster_tokens(platform: Platform, token: str = "streamer") -> list[str]:
    listed = httpx.get(f"{platform.base_url}/channels/{token}/hosters").json()
    return [c["token"] for c in listed]


def test_a_hostee_shows_in_the_hosted_channels_hosters(
    make_platform: Callable[..., Platform], signed_in: SignIn
) -> None:
    """Hosting a channel sets hosteeId and lists the host among the hosted channel's hosters."""
    platform = make_platform()
    target = channel_id(platform, "streamer")
    hosting = signed_in(platform.base_url, "viewer").put(
        "/channels/viewer/hostee", json={"id": target}
    )
    assert hosting.json()["hosteeId"] == target and hosting.json()["hostee"]["token"] == "streamer"
    assert httpx.get(f"{platform.base_url}/channels/viewer").json()["hosteeId"] == target
    assert hoster_tokens(platform) == ["viewer"]


def test_a_hostee_id_sent_as_a_numeric_string_is_taken(
    make_platform: Callable[..., Platform], signed_in: SignIn
) -> None:
    """{"id": "123"} hosts like {"id": 123}, as the historical API took ids; a word is a 400."""
    platform = make_platform()
    viewer = signed_in(platform.base_url, "viewer")
    target = channel_id(platform, "streamer")
    hosting = viewer.put("/channels/viewer/hostee", json={"id": str(target)})
    assert hosting.status_code == 200 and hosting.json()["hosteeId"] == target
    assert viewer.put("/channels/viewer/hostee", json={"id": "streamer"}).status_code == 400


def test_ending_a_host_removes_it_from_the_hosters(
    make_platform: Callable[..., Platform], signed_in: SignIn
) -> None:
    """DELETE hostee answers 204, clears hosteeId and the hosters list."""
    platform = make_platform()
    viewer = signed_in(platform.base_url, "viewer")
    viewer.put("/channels/viewer/hostee", json={"id": channel_id(platform, "streamer")})
    assert viewer.delete("/channels/viewer/hostee").status_code == 204
    assert viewer.get("/channels/viewer/hostee").json()["hostee"] is None
    assert hoster_tokens(platform) == []


def test_a_channel_may_refuse_hosts(
    make_platform: Callable[..., Platform], signed_in: SignIn
) -> None:
    """With hosting:allow off, hosting the channel answers 403."""
    platform = make_platform()
    owner = signed_in(platform.base_url, "streamer")
    owner.post("/channels/streamer/preferences", json={"hosting:allow": False})
    response = signed_in(platform.base_url, "viewer").put(
        "/channels/viewer/hostee", json={"id": channel_id(platform, "streamer")}
    )
    assert response.status_code == 403


def test_a_live_channel_may_not_host_when_refused(
    make_platform: Callable[..., Platform], signed_in: SignIn
) -> None:
    """With hosting:allowlive off, a live channel (streamer) cannot host the channel."""
    platform = make_platform()
    signed_in(platform.base_url, "viewer").post(
        "/channels/viewer/preferences", json={"hosting:allowlive": False}
    )
    response = signed_in(platform.base_url, "streamer").put(
        "/channels/streamer/hostee", json={"id": channel_id(platform, "viewer")}
    )
    assert response.status_code == 403


def test_a_channel_cannot_host_itself(platform: Platform, signed_in: SignIn) -> None:
    """Hosting one's own channel answers 400."""
    viewer = signed_in(platform.base_url, "viewer")
    response = viewer.put("/channels/viewer/hostee", json={"id": channel_id(platform, "viewer")})
    assert response.status_code == 400


@pytest.mark.parametrize("hostee", [7, 2**70, "streamer", "-5", None])
def test_hosting_needs_an_existing_channel_id(
    platform: Platform, signed_in: SignIn, hostee: object
) -> None:
    """A hostee id that is not an existing channel's answers 400 naming ``id``."""
    viewer = signed_in(platform.base_url, "viewer")
    response = viewer.put("/channels/viewer/hostee", json={"id": hostee})
    assert response.status_code == 400 and response.json()["details"][0]["path"] == "id"


def test_setting_another_channels_hostee_is_403(platform: Platform, signed_in: SignIn) -> None:
    """Only the owner chooses what a channel hosts."""
    response = signed_in(platform.base_url, "viewer2").put(
        "/channels/viewer/hostee", json={"id": channel_id(platform, "streamer")}
    )
    assert response.status_code == 403


def test_hosting_needs_sign_in(platform: Platform) -> None:
    """Setting a hostee without credentials answers 401."""
    response = httpx.put(f"{platform.base_url}/channels/viewer/hostee", json={"id": 1})
    assert response.status_code == 401
