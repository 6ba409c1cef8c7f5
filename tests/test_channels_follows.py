"""Following channels: the followers list, numFollowers, idempotency and refusals."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from explorer.emulator import Platform

SignIn = Callable[..., httpx.Client]


def followers(platform: Platform, token: str = "streamer", **params: object) -> httpx.Response:
    return httpx.get(f"{platform.base_url}/channels/{token}/follow", params=params)  # type: ignore[arg-type]


def listed(platform: Platform, token: str = "streamer") -> int:
    """How many followers the channel lists (its stream history brought some)."""
    return int(followers(platform, token, limit=1).headers["X-Total-Count"])


def num_followers(platform: Platform, token: str = "streamer") -> int:
    count: int = httpx.get(f"{platform.base_url}/channels/{token}").json()["numFollowers"]
    return count


def test_follow_shows_in_followers_and_numfollowers(
    make_platform: Callable[..., Platform], signed_in: SignIn
) -> None:
    """A follow appears in GET .../follow and raises numFollowers by one."""
    platform = make_platform()
    before, history = num_followers(platform), listed(platform)
    state = signed_in(platform.base_url, "viewer").put("/channels/streamer/follow").json()
    assert state["following"] is True and state["numFollowers"] == before + 1
    latest = followers(platform).json()[0]
    assert latest["username"] == "viewer" and latest["followedAt"] == state["followedAt"]
    assert listed(platform) == history + 1
    assert num_followers(platform) == before + 1


def test_put_and_post_are_idempotent(
    make_platform: Callable[..., Platform], signed_in: SignIn
) -> None:
    """Following by PUT, then POST, then PUT again counts one follow."""
    platform = make_platform()
    before, history = num_followers(platform), listed(platform)
    viewer = signed_in(platform.base_url, "viewer")
    for send in (viewer.put, viewer.post, viewer.put):
        assert send("/channels/streamer/follow").status_code == 200
    assert num_followers(platform) == before + 1
    assert listed(platform) == history + 1


def test_unfollow_removes_the_follow(
    make_platform: Callable[..., Platform], signed_in: SignIn
) -> None:
    """DELETE unfollows: the list empties and numFollowers returns to where it was."""
    platform = make_platform()
    before, history = num_followers(platform), listed(platform)
    viewer = signed_in(platform.base_url, "viewer")
    viewer.put("/channels/streamer/follow")
    state = viewer.delete("/channels/streamer/follow").json()
    assert state == {**state, "following": False, "followedAt": None, "numFollowers": before}
    assert listed(platform) == history
    assert "viewer" not in {u["username"] for u in followers(platform, limit=100).json()}


def test_unfollowing_when_not_following_changes_nothing(
    make_platform: Callable[..., Platform], signed_in: SignIn
) -> None:
    """DELETE without a follow answers 200 and leaves numFollowers alone."""
    platform = make_platform()
    before = num_followers(platform)
    response = signed_in(platform.base_url, "viewer").delete("/channels/streamer/follow")
    assert response.status_code == 200 and response.json()["numFollowers"] == before


def test_followers_are_paged(make_platform: Callable[..., Platform], signed_in: SignIn) -> None:
    """limit/page slice the followers, most recent first, with the total in X-Total-Count."""
    platform = make_platform()
    history = listed(platform)
    for name in ("viewer", "viewer2"):
        signed_in(platform.base_url, name).post("/channels/streamer/follow")
    first, second = followers(platform, limit=1), followers(platform, limit=1, page=1)
    assert first.headers["X-Total-Count"] == str(history + 2)
    assert [first.json()[0]["username"], second.json()[0]["username"]] == ["viewer2", "viewer"]


def test_the_demo_channel_lists_the_followers_its_streams_brought(platform: Platform) -> None:
    """streamer's past 30 days of sessions brought followers, listed newest first, all
    followed in the world's history (before its instant) and fewer than numFollowers."""
    page = followers(platform, limit=100).json()
    assert page and 0 < listed(platform) <= num_followers(platform)
    times = [user["followedAt"] for user in page]
    assert times == sorted(times, reverse=True)
    assert all("2020-06-22" <= moment < "2020-07-22" for moment in times)


def test_following_needs_sign_in(platform: Platform) -> None:
    """Following without credentials answers 401."""
    assert httpx.put(f"{platform.base_url}/channels/streamer/follow").status_code == 401


def test_following_ones_own_channel_is_400(platform: Platform, signed_in: SignIn) -> None:
    """An owner cannot follow their own channel."""
    owner = signed_in(platform.base_url, "streamer")
    assert owner.put("/channels/streamer/follow").status_code == 400


def test_following_as_someone_else_is_403(platform: Platform, signed_in: SignIn) -> None:
    """The historical body {"user": id} must name the caller."""
    viewer = signed_in(platform.base_url, "viewer")
    assert viewer.put("/channels/streamer/follow", json={"user": 1}).status_code == 403


@pytest.mark.parametrize("params", [{"page": "-1"}, {"limit": "500"}, {"where": "id:eq:1"}])
def test_bad_paging_is_400(platform: Platform, params: dict[str, str]) -> None:
    """Malformed paging (or an unsupported filter) answers 400."""
    assert followers(platform, **params).status_code == 400


def test_unknown_channel_is_404(platform: Platform) -> None:
    """Listing the followers of a channel that does not exist answers 404."""
    assert followers(platform, "99").status_code == 404
