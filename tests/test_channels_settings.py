"""Owner edits to channels (PUT/PATCH), preferences, stream keys and suspension."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from explorer.emulator import Platform

SignIn = Callable[..., httpx.Client]


def test_patch_changes_the_editable_fields(
    make_platform: Callable[..., Platform], signed_in: SignIn
) -> None:
    """PATCH stores every editable field sent and GET shows them."""
    platform = make_platform()
    owner = signed_in(platform.base_url, "streamer")
    change = {"name": "Late show", "audience": "18+", "typeId": 3, "languageId": "de"}
    assert owner.patch("/channels/streamer", json=change).status_code == 200
    channel = httpx.get(f"{platform.base_url}/channels/streamer").json()
    assert {key: channel[key] for key in change} == change
    assert channel["type"]["id"] == 3


def test_put_takes_back_a_channel_it_read(
    make_platform: Callable[..., Platform], signed_in: SignIn
) -> None:
    """PUT accepts a whole channel object as read, ignoring its read-only fields."""
    platform = make_platform()
    owner = signed_in(platform.base_url, "streamer")
    channel = owner.get("/channels/streamer").json()
    response = owner.put("/channels/streamer", json={**channel, "name": "Renamed", "id": 1})
    assert response.status_code == 200
    assert response.json()["name"] == "Renamed"
    assert response.json()["id"] == channel["id"]


def test_patch_refuses_read_only_fields(platform: Platform, signed_in: SignIn) -> None:
    """PATCH answers 400 naming a read-only field instead of ignoring it."""
    owner = signed_in(platform.base_url, "streamer")
    response = owner.patch("/channels/streamer", json={"partnered": False})
    assert response.status_code == 400
    assert response.json()["details"][0]["path"] == "partnered"


@pytest.mark.parametrize(
    "change",
    [
        {"name": "  "},
        {"audience": "adults"},
        {"typeId": 9999},
        {"typeId": "3"},
        {"typeId": 2**70},
        {"languageId": "EN"},
        {"vodsEnabled": "yes"},
        {},
    ],
)
def test_bad_values_are_400(platform: Platform, signed_in: SignIn, change: dict) -> None:
    """Each invalid editable value (or an empty change) answers 400 with details."""
    owner = signed_in(platform.base_url, "streamer")
    response = owner.patch("/channels/streamer", json=change)
    assert response.status_code == 400
    assert response.json()["details"]


def test_editing_needs_sign_in(platform: Platform) -> None:
    """Editing a channel without credentials answers 401."""
    response = httpx.patch(f"{platform.base_url}/channels/streamer", json={"name": "x"})
    assert response.status_code == 401


def test_editing_someone_elses_channel_is_403(platform: Platform, signed_in: SignIn) -> None:
    """Another user editing the channel gets 403."""
    viewer = signed_in(platform.base_url, "viewer")
    assert viewer.patch("/channels/streamer", json={"name": "mine"}).status_code == 403


def test_editing_an_unknown_channel_is_404(platform: Platform, signed_in: SignIn) -> None:
    """Editing a channel that does not exist answers 404."""
    viewer = signed_in(platform.base_url, "viewer")
    assert viewer.patch("/channels/99", json={"name": "x"}).status_code == 404


def test_deleting_the_stream_key_issues_a_new_one(
    make_platform: Callable[..., Platform], signed_in: SignIn
) -> None:
    """DELETE streamKey answers 204 and the owner's view shows a different key."""
    platform = make_platform()
    owner = signed_in(platform.base_url, "streamer")
    before = owner.get("/channels/streamer").json()
    assert owner.delete(f"/channels/{before['id']}/streamKey").status_code == 204
    after = owner.get("/channels/streamer").json()["streamKey"]
    assert after != before["streamKey"] and after.startswith(f"{before['id']}-")


def test_only_the_owner_resets_the_stream_key(platform: Platform, signed_in: SignIn) -> None:
    """Not even staff may reset another channel's stream key (403)."""
    staff = signed_in(platform.base_url, "staff")
    assert staff.delete("/channels/streamer/streamKey").status_code == 403


def test_preferences_merge_and_reset(
    make_platform: Callable[..., Platform], signed_in: SignIn
) -> None:
    """POST stores the sent keys, GET reads them back, and null restores the default."""
    platform = make_platform()
    owner = signed_in(platform.base_url, "streamer")
    default = owner.get("/channels/streamer/preferences").json()["channel:slowchat"]
    stored = owner.post("/channels/streamer/preferences", json={"channel:slowchat": 5000})
    assert stored.json()["channel:slowchat"] == 5000
    assert owner.get("/channels/streamer/preferences").json()["channel:slowchat"] == 5000
    reset = owner.post("/channels/streamer/preferences", json={"channel:slowchat": None})
    assert reset.json()["channel:slowchat"] == default


@pytest.mark.parametrize(
    "change", [{"no:such:key": True}, {"hosting:allow": 1}, {"costream:allow": "friends"}]
)
def test_bad_preferences_are_400(platform: Platform, signed_in: SignIn, change: dict) -> None:
    """An unknown key or a value of the wrong kind answers 400 naming the key."""
    owner = signed_in(platform.base_url, "streamer")
    response = owner.post("/channels/streamer/preferences", json=change)
    assert response.status_code == 400
    assert response.json()["details"][0]["path"] == next(iter(change))


def test_preferences_are_the_owners(platform: Platform, signed_in: SignIn) -> None:
    """Another user reading a channel's preferences gets 403."""
    viewer = signed_in(platform.base_url, "viewer")
    assert viewer.get("/channels/streamer/preferences").status_code == 403


def test_suspended_channel_drops_out_of_listings(
    make_platform: Callable[..., Platform], signed_in: SignIn
) -> None:
    """After staff suspend a channel, GET /channels no longer lists or counts it."""
    platform = make_platform()
    staff = signed_in(platform.base_url, "staff")
    listed = httpx.get(f"{platform.base_url}/channels", params={"where": "token:eq:viewer"})
    assert len(listed.json()) == 1
    assert staff.post("/channels/viewer/suspend").json()["suspended"] is True
    listed = httpx.get(f"{platform.base_url}/channels", params={"where": "token:eq:viewer"})
    assert listed.json() == [] and listed.headers["X-Total-Count"] == "0"


def test_suspended_channel_is_hidden_from_all_but_owner_and_staff(
    make_platform: Callable[..., Platform], signed_in: SignIn
) -> None:
    """A suspended channel is 404 to others and still readable by staff; its owner, suspended
    with it, cannot sign in to read it (issue 23: a suspended account cannot sign in)."""
    platform = make_platform()
    staff = signed_in(platform.base_url, "staff")
    staff.post("/channels/viewer/suspend")
    assert signed_in(platform.base_url, "viewer2").get("/channels/viewer").status_code == 404
    login = {"username": "viewer", "password": "explorer"}
    assert httpx.post(f"{platform.base_url}/users/login", json=login).status_code == 403
    assert staff.get("/channels/viewer/details").status_code == 200


def test_lifting_a_suspension_lists_the_channel_again(
    make_platform: Callable[..., Platform], signed_in: SignIn
) -> None:
    """DELETE suspend makes the channel visible again."""
    platform = make_platform()
    staff = signed_in(platform.base_url, "staff")
    staff.post("/channels/viewer/suspend")
    assert staff.delete("/channels/viewer/suspend").json()["suspended"] is False
    assert httpx.get(f"{platform.base_url}/channels/viewer").status_code == 200


def test_suspension_is_for_staff(platform: Platform, signed_in: SignIn) -> None:
    """A channel owner cannot suspend (403), not even their own channel."""
    owner = signed_in(platform.base_url, "streamer")
    assert owner.post("/channels/streamer/suspend").status_code == 403
