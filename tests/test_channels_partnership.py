"""Partnership applications, staff decisions, and the codes partners receive."""

from __future__ import annotations

from collections.abc import Callable

import httpx

from explorer.emulator import Platform

SignIn = Callable[..., httpx.Client]
APPLICATION = {"message": "I stream every evening and my chat is lovely."}


def test_accepting_partners_the_channel_and_issues_codes(
    make_platform: Callable[..., Platform], signed_in: SignIn
) -> None:
    """Staff accepting a pending application sets partnered and issues redeemable codes."""
    platform = make_platform()
    owner = signed_in(platform.base_url, "viewer")
    assert owner.post("/channels/viewer/partnership/app", json=APPLICATION).status_code == 201
    decided = signed_in(platform.base_url, "staff").post("/channels/viewer/partnership/app/accept")
    assert decided.json()["status"] == "accepted"
    assert httpx.get(f"{platform.base_url}/channels/viewer").json()["partnered"] is True
    codes = owner.get("/channels/viewer/partnership/codes").json()
    assert codes and all(c["state"] == "unredeemed" for c in codes)


def test_a_denied_channel_may_apply_again(
    make_platform: Callable[..., Platform], signed_in: SignIn
) -> None:
    """A denial records its reason, and a new application replaces the denied one."""
    platform = make_platform()
    owner = signed_in(platform.base_url, "viewer")
    owner.post("/channels/viewer/partnership/app", json=APPLICATION)
    denied = signed_in(platform.base_url, "staff").post(
        "/channels/viewer/partnership/app/deny", json={"reason": "Too few followers."}
    )
    assert denied.json()["status"] == "denied"
    assert owner.get("/channels/viewer/partnership/app").json()["reason"] == "Too few followers."
    again = owner.post("/channels/viewer/partnership/app", json=APPLICATION)
    assert again.status_code == 201 and again.json()["status"] == "pending"


def test_a_second_pending_application_is_409(
    make_platform: Callable[..., Platform], signed_in: SignIn
) -> None:
    """Applying while an application is pending answers 409."""
    platform = make_platform()
    owner = signed_in(platform.base_url, "viewer")
    owner.post("/channels/viewer/partnership/app", json=APPLICATION)
    assert owner.post("/channels/viewer/partnership/app", json=APPLICATION).status_code == 409


def test_a_partnered_channel_cannot_apply(platform: Platform, signed_in: SignIn) -> None:
    """The partnered streamer applying answers 409."""
    owner = signed_in(platform.base_url, "streamer")
    assert owner.post("/channels/streamer/partnership/app", json=APPLICATION).status_code == 409


def test_only_staff_decide(platform: Platform, signed_in: SignIn) -> None:
    """An owner accepting their own application answers 403."""
    owner = signed_in(platform.base_url, "viewer")
    assert owner.post("/channels/viewer/partnership/app/accept").status_code == 403


def test_a_short_message_is_400(platform: Platform, signed_in: SignIn) -> None:
    """An application message under 20 characters answers 400 naming message."""
    response = signed_in(platform.base_url, "viewer").post(
        "/channels/viewer/partnership/app", json={"message": "pls"}
    )
    assert response.status_code == 400 and response.json()["details"][0]["path"] == "message"


def test_no_application_is_404(platform: Platform, signed_in: SignIn) -> None:
    """Reading an application that was never made answers 404."""
    owner = signed_in(platform.base_url, "viewer2")
    assert owner.get("/channels/viewer2/partnership/app").status_code == 404


def test_codes_are_the_owners(platform: Platform, signed_in: SignIn) -> None:
    """Another user reading a partner's codes gets 403."""
    viewer = signed_in(platform.base_url, "viewer")
    assert viewer.get("/channels/streamer/partnership/codes").status_code == 403


def test_codes_need_sign_in(platform: Platform) -> None:
    """Reading a partner's codes without credentials answers 401."""
    assert httpx.get(f"{platform.base_url}/channels/streamer/partnership/codes").status_code == 401
