"""The simulated Discord integration: the seeded guild, bot settings and invites."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from explorer.emulator import Platform

SignIn = Callable[..., httpx.Client]


def text_channel(owner: httpx.Client) -> str:
    channels = owner.get("/channels/streamer/discord/channels").json()
    return str(next(c["id"] for c in channels if c["type"] == "text"))


def test_the_guild_is_seeded_and_stable(platform: Platform, signed_in: SignIn) -> None:
    """The guild's channels and roles are the same on every read, with general and @everyone."""
    owner = signed_in(platform.base_url, "streamer")
    channels = owner.get("/channels/streamer/discord/channels").json()
    roles = owner.get("/channels/streamer/discord/roles").json()
    assert channels == owner.get("/channels/streamer/discord/channels").json()
    assert channels[0]["name"] == "general" and roles[0]["name"] == "@everyone"
    assert owner.get("/channels/streamer/discord").json()["inviteSettings"] == "none"


def test_settings_are_stored(make_platform: Callable[..., Platform], signed_in: SignIn) -> None:
    """PUT settings answers them and GET reads them back."""
    platform = make_platform()
    owner = signed_in(platform.base_url, "streamer")
    role = owner.get("/channels/streamer/discord/roles").json()[1]["id"]
    settings = {
        "inviteSettings": "followers",
        "inviteChannel": text_channel(owner),
        "syncEmoteRoles": [role],
        "roles": [{"roleId": role, "type": "subscriber", "gracePeriod": 3}],
    }
    stored = owner.put("/channels/streamer/discord", json=settings).json()
    assert {key: stored[key] for key in settings} == settings
    assert owner.get("/channels/streamer/discord").json() == stored


@pytest.mark.parametrize(
    "settings",
    [
        {"inviteSettings": "friends"},
        {"inviteSettings": "everyone"},
        {"inviteChannel": "123"},
        {"inviteChannel": ["123"]},
        {"syncEmoteRoles": [{"id": 1}]},
        {"syncEmoteRoles": ["123"]},
        {"roles": [{"roleId": "1", "type": "follower"}]},
        {"webhook": "https://example.invalid"},
    ],
)
def test_bad_settings_are_400(
    platform: Platform, signed_in: SignIn, settings: dict[str, object]
) -> None:
    """Unknown modes, foreign channel/role ids, missing invite channel, unknown keys: 400."""
    owner = signed_in(platform.base_url, "streamer")
    assert owner.put("/channels/streamer/discord", json=settings).status_code == 400


def test_discord_settings_are_the_owners(platform: Platform, signed_in: SignIn) -> None:
    """Another user reading the bot settings gets 403."""
    viewer = signed_in(platform.base_url, "viewer")
    assert viewer.get("/channels/streamer/discord").status_code == 403


def test_invites_follow_the_settings(
    make_platform: Callable[..., Platform], signed_in: SignIn
) -> None:
    """With invites for followers, a viewer is refused until they follow, then gets one."""
    platform = make_platform()
    owner = signed_in(platform.base_url, "streamer")
    owner.put(
        "/channels/streamer/discord",
        json={"inviteSettings": "followers", "inviteChannel": text_channel(owner)},
    )
    viewer = signed_in(platform.base_url, "viewer")
    assert viewer.post("/channels/streamer/discord/invite").status_code == 403
    viewer.put("/channels/streamer/follow")
    invite = viewer.post("/channels/streamer/discord/invite")
    assert invite.status_code == 201 and invite.json()["url"].endswith(invite.json()["code"])
    status = viewer.get("/channels/streamer/discord/invite").json()
    assert status["eligible"] is True and status["invite"] == invite.json()


def test_no_invites_by_default(platform: Platform, signed_in: SignIn) -> None:
    """A channel that never enabled invites refuses them with 403 and says so on GET."""
    viewer = signed_in(platform.base_url, "viewer")
    assert viewer.post("/channels/streamer/discord/invite").status_code == 403
    status = viewer.get("/channels/streamer/discord/invite").json()
    assert status["eligible"] is False and status["reason"]


def test_invites_need_sign_in(platform: Platform) -> None:
    """Asking for an invite without credentials answers 401."""
    url = f"{platform.base_url}/channels/streamer/discord/invite"
    assert httpx.post(url).status_code == 401
