"""Channel roles (who may change what, and chat permissions following at once), the users
list, and a user's relationship with a channel."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from explorer.emulator import Platform

SignIn = Callable[..., httpx.Client]
#: User ids of the demo accounts (they are seeded first, in world.DEMO_ACCOUNTS order).
VIEWER, VIEWER2, MODERATOR = 3, 4, 2


def channel_id(platform: Platform, token: str = "streamer") -> int:
    value: int = httpx.get(f"{platform.base_url}/channels/{token}").json()["id"]
    return value


def permissions(client: httpx.Client, channel: int) -> list[str]:
    value: list[str] = client.get(f"/chats/{channel}").json()["permissions"]
    return value


def usernames(response: httpx.Response) -> list[str]:
    return [u["username"] for u in response.json()]


def test_modding_a_user_grants_chat_permissions_at_once(
    make_platform: Callable[..., Platform], signed_in: SignIn
) -> None:
    """The owner adding Mod gives the user moderator permissions in GET /chats right away."""
    platform = make_platform()
    channel = channel_id(platform)
    viewer = signed_in(platform.base_url, "viewer")
    assert "timeout" not in permissions(viewer, channel)
    owner = signed_in(platform.base_url, "streamer")
    changed = owner.patch(f"/channels/{channel}/users/{VIEWER}", json={"add": ["Mod"]})
    assert "Mod" in changed.json()["roles"]
    assert "timeout" in permissions(viewer, channel)


def test_a_ban_takes_chat_away_at_once(
    make_platform: Callable[..., Platform], signed_in: SignIn
) -> None:
    """A moderator banning a user leaves them only the connect permission."""
    platform = make_platform()
    channel = channel_id(platform)
    moderator = signed_in(platform.base_url, "moderator")
    banned = moderator.patch(f"/channels/{channel}/users/{VIEWER}", json={"add": ["Banned"]})
    assert banned.json()["roles"] == ["Banned"]
    assert permissions(signed_in(platform.base_url, "viewer"), channel) == ["connect"]


def test_unbanning_restores_chat(make_platform: Callable[..., Platform], signed_in: SignIn) -> None:
    """Removing Banned gives the user back the plain user permissions."""
    platform = make_platform()
    channel = channel_id(platform)
    moderator = signed_in(platform.base_url, "moderator")
    moderator.patch(f"/channels/{channel}/users/{VIEWER}", json={"add": ["Banned"]})
    moderator.patch(f"/channels/{channel}/users/{VIEWER}", json={"remove": ["Banned"]})
    viewer = signed_in(platform.base_url, "viewer")
    assert permissions(viewer, channel) == ["chat", "connect", "poll_vote"]


def test_moderators_cannot_grant_mod(platform: Platform, signed_in: SignIn) -> None:
    """A moderator adding Mod answers 403."""
    moderator = signed_in(platform.base_url, "moderator")
    response = moderator.patch(f"/channels/streamer/users/{VIEWER}", json={"add": ["Mod"]})
    assert response.status_code == 403


def test_moderators_cannot_ban_moderators(platform: Platform, signed_in: SignIn) -> None:
    """A moderator banning a moderator answers 403."""
    moderator = signed_in(platform.base_url, "moderator")
    response = moderator.patch(f"/channels/streamer/users/{MODERATOR}", json={"add": ["Banned"]})
    assert response.status_code == 403


def test_viewers_cannot_change_roles(platform: Platform, signed_in: SignIn) -> None:
    """A user without a moderating role changing roles answers 403."""
    viewer = signed_in(platform.base_url, "viewer")
    response = viewer.patch(f"/channels/streamer/users/{VIEWER2}", json={"add": ["Banned"]})
    assert response.status_code == 403


def test_the_owners_roles_are_fixed(platform: Platform, signed_in: SignIn) -> None:
    """Changing the channel owner's roles answers 403."""
    owner = signed_in(platform.base_url, "streamer")
    assert owner.patch("/channels/streamer/users/1", json={"add": ["Muted"]}).status_code == 403


def test_changing_roles_needs_sign_in(platform: Platform) -> None:
    """Changing roles without credentials answers 401."""
    response = httpx.patch(
        f"{platform.base_url}/channels/streamer/users/{VIEWER}", json={"add": ["Banned"]}
    )
    assert response.status_code == 401


@pytest.mark.parametrize(
    "change",
    [{"add": ["Owner"]}, {"add": "Mod"}, {}, {"add": ["Mod"], "remove": ["Mod"]}],
)
def test_bad_role_changes_are_400(
    platform: Platform, signed_in: SignIn, change: dict[str, object]
) -> None:
    """Unassignable roles, malformed lists, empty and contradictory changes answer 400."""
    owner = signed_in(platform.base_url, "streamer")
    assert owner.patch(f"/channels/streamer/users/{VIEWER}", json=change).status_code == 400


def test_changing_an_unknown_users_roles_is_404(platform: Platform, signed_in: SignIn) -> None:
    """Naming a user who does not exist answers 404."""
    owner = signed_in(platform.base_url, "streamer")
    response = owner.patch("/channels/streamer/users/999999", json={"add": ["Mod"]})
    assert response.status_code == 404


def test_users_lists_the_owner_and_role_holders(platform: Platform) -> None:
    """GET users lists the owner and the seeded moderator with their roles, by name."""
    listed = httpx.get(f"{platform.base_url}/channels/streamer/users").json()
    roles = {u["username"]: u["roles"] for u in listed}
    assert "Owner" in roles["streamer"] and "Mod" in roles["moderator"]


def test_users_filter_by_role(platform: Platform) -> None:
    """role=Mod lists only the moderators."""
    response = httpx.get(f"{platform.base_url}/channels/streamer/users", params={"role": "Mod"})
    assert usernames(response) == ["moderator"] and response.headers["X-Total-Count"] == "1"


def test_banned_users_are_listed_only_to_moderators(
    make_platform: Callable[..., Platform], signed_in: SignIn
) -> None:
    """Banned users are missing from the public list but listed to the channel's moderators."""
    platform = make_platform()
    moderator = signed_in(platform.base_url, "moderator")
    moderator.patch(f"/channels/streamer/users/{VIEWER2}", json={"add": ["Banned"]})
    public = httpx.get(f"{platform.base_url}/channels/streamer/users")
    assert "viewer2" not in usernames(public)
    assert usernames(moderator.get("/channels/streamer/users", params={"role": "Banned"})) == [
        "viewer2"
    ]


def test_listing_bans_is_for_moderators(platform: Platform) -> None:
    """role=Banned without moderating the channel answers 403."""
    url = f"{platform.base_url}/channels/streamer/users"
    assert httpx.get(url, params={"role": "Banned"}).status_code == 403


def test_unknown_role_filter_is_400(platform: Platform) -> None:
    """role must name a listed role."""
    url = f"{platform.base_url}/channels/streamer/users"
    assert httpx.get(url, params={"role": "Wizard"}).status_code == 400


def test_relationship_shows_follow_and_roles(
    make_platform: Callable[..., Platform], signed_in: SignIn
) -> None:
    """The caller's relationship carries their roles and, once they follow, the follow."""
    platform = make_platform()
    viewer = signed_in(platform.base_url, "viewer")
    assert viewer.get("/channels/streamer/relationship").json()["status"]["follows"] is None
    followed = viewer.put("/channels/streamer/follow").json()["followedAt"]
    status = viewer.get("/channels/streamer/relationship").json()["status"]
    assert status["roles"] == ["User"]
    assert status["follows"] == {
        "user": VIEWER,
        "channel": channel_id(platform),
        "createdAt": followed,
    }


def test_relationship_of_a_named_user(platform: Platform) -> None:
    """?user= describes another user without credentials."""
    url = f"{platform.base_url}/channels/streamer/relationship"
    body = httpx.get(url, params={"user": MODERATOR}).json()
    assert body["userId"] == MODERATOR and "Mod" in body["status"]["roles"]


def test_relationship_needs_a_user(platform: Platform) -> None:
    """Without credentials or ?user= the relationship answers 401."""
    assert httpx.get(f"{platform.base_url}/channels/streamer/relationship").status_code == 401
