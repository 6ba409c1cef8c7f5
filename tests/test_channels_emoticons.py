"""Channel emoticon packs: merge-patch edits by the owner of a partnered channel."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from explorer.emulator import Platform

SignIn = Callable[..., httpx.Client]
HYPE = {"x": 0, "y": 0, "width": 24, "height": 24}


def test_owner_adds_moves_and_removes_emoticons(
    make_platform: Callable[..., Platform], signed_in: SignIn
) -> None:
    """PATCH adds codes, null removes one, and GET shows what is left."""
    platform = make_platform()
    owner = signed_in(platform.base_url, "streamer")
    owner.patch("/channels/streamer/emoticons", json={"emoticons": {"hype": HYPE, "gg": HYPE}})
    moved = {**HYPE, "x": 24}
    pack = owner.patch(
        "/channels/streamer/emoticons", json={"emoticons": {"hype": None, "gg": moved}}
    ).json()
    assert pack["emoticons"] == {"gg": moved}
    public = httpx.get(f"{platform.base_url}/channels/streamer/emoticons").json()
    assert public == pack and public["name"] == "streamer"


def test_a_channel_that_is_not_partnered_has_no_pack_to_edit(
    platform: Platform, signed_in: SignIn
) -> None:
    """Editing the pack of a channel that is not partnered answers 403."""
    viewer = signed_in(platform.base_url, "viewer")
    response = viewer.patch("/channels/viewer/emoticons", json={"emoticons": {"hi": HYPE}})
    assert response.status_code == 403


@pytest.mark.parametrize(
    "emoticons",
    [
        {"1bad": HYPE},
        {"wide": {**HYPE, "width": 500}},
        {"off": {**HYPE, "x": 4090}},
        {"short": {"x": 0, "y": 0}},
        {"odd": {**HYPE, "x": "0"}},
        {},
    ],
)
def test_bad_emoticons_are_400(
    platform: Platform, signed_in: SignIn, emoticons: dict[str, object]
) -> None:
    """Bad codes, sizes, positions or shapes answer 400."""
    owner = signed_in(platform.base_url, "streamer")
    response = owner.patch("/channels/streamer/emoticons", json={"emoticons": emoticons})
    assert response.status_code == 400


def test_editing_another_channels_pack_is_403(platform: Platform, signed_in: SignIn) -> None:
    """Only the owner edits a channel's pack."""
    viewer = signed_in(platform.base_url, "viewer")
    response = viewer.patch("/channels/streamer/emoticons", json={"emoticons": {"x1": HYPE}})
    assert response.status_code == 403
