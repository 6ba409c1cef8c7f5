"""The toolkit's shortcode sign-in: api.authorize(scopes, flow="shortcode")."""

from __future__ import annotations

import asyncio
from contextlib import closing

import httpx
import pytest

import explorer
from explorer.emulator import Platform
from explorer.errors import Forbidden, SignInTimeout
from explorer.rest.auth import Grant, RefreshingAuth
from explorer.rest.shortcode import Shortcode, show
from tests.conftest import sign_in


def test_shortcode_sign_in_then_requests_carry_the_token(platform: Platform) -> None:
    """A person approves the shown code (from another client); the client then reads
    users/current with the new token and no session."""
    seen: list[Shortcode] = []

    def approve(pending: Shortcode) -> None:
        seen.append(pending)
        with closing(sign_in(platform.base_url, "viewer")) as person:
            person.post("/oauth/shortcode/approve", json={"code": pending.code})

    with explorer.connect(platform.base_url) as client:
        grant = client.authorize(["chat:connect", "chat:chat"], flow="shortcode", show=approve)
        me = client.me.info()
    assert seen[0].url == f"{platform.root_url}/go?code={seen[0].code}"
    assert set(grant.scopes) == {"chat:connect", "chat:chat"} and grant.refresh_token
    assert me["username"].tolist() == ["viewer"] and me["email"].isna().all()


def test_a_signed_in_client_approves_a_code(platform: Platform) -> None:
    """approve_code grants a pending code as the client's signed-in user."""
    with httpx.Client(base_url=platform.base_url) as app:
        pending = app.post(
            "/oauth/shortcode", json={"client_id": "explorer-toolkit", "scope": "chat:connect"}
        ).json()
        with explorer.connect(platform.base_url, username="viewer", password="explorer") as person:
            person.approve_code(pending["code"])
        assert app.get(f"/oauth/shortcode/check/{pending['handle']}").status_code == 200


def test_a_refused_shortcode_raises_forbidden(platform: Platform) -> None:
    """A person refusing the code ends the wait with Forbidden."""

    def deny(pending: Shortcode) -> None:
        with closing(sign_in(platform.base_url, "viewer")) as person:
            assert person.post("/oauth/shortcode/deny", json={"code": pending.code}).is_success

    with explorer.connect(platform.base_url) as client, pytest.raises(Forbidden, match="denied"):
        client.authorize(["chat:connect"], flow="shortcode", show=deny)


def test_an_unapproved_shortcode_times_out(platform: Platform) -> None:
    """Nobody approving within the timeout raises SignInTimeout without waiting longer."""
    with explorer.connect(platform.base_url) as client, pytest.raises(SignInTimeout):
        client.authorize(["chat:connect"], flow="shortcode", timeout=0, show=lambda _: None)


def test_a_token_near_expiry_is_refreshed_before_the_next_request(platform: Platform) -> None:
    """RefreshingAuth trades the refresh token for a new pair once expiry is within margin."""
    now = [1000.0]
    with closing(sign_in(platform.base_url, "viewer")) as person:
        pending = person.post(
            "/oauth/shortcode", json={"client_id": "explorer-toolkit", "scope": "chat:connect"}
        ).json()
        person.post("/oauth/shortcode/approve", json={"code": pending["code"]})
        code = person.get(f"/oauth/shortcode/check/{pending['handle']}").json()["code"]
        body = person.post(
            "/oauth/token",
            json={
                "grant_type": "authorization_code",
                "client_id": "explorer-toolkit",
                "code": code,
            },
        ).json()
    grant = Grant(
        body["access_token"], "Bearer", 120, ("chat:connect",), None, body["refresh_token"]
    )
    auth = RefreshingAuth(
        grant, f"{platform.base_url}/oauth/token", "explorer-toolkit", clock=lambda: now[0]
    )
    with httpx.Client(base_url=platform.base_url, auth=auth) as client:
        assert client.get("/users/current").is_success
        assert auth.grant.access_token == grant.access_token
        now[0] += 61
        assert client.get("/users/current").is_success
    assert auth.grant.access_token != grant.access_token
    assert auth.grant.refresh_token != grant.refresh_token


def test_show_prints_the_code_and_address_outside_jupyter(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Outside a Jupyter kernel the code and where to enter it are one printed line."""
    show(Shortcode("ABC234", "h", 300, "http://127.0.0.1:1/go?code=ABC234"))
    assert capsys.readouterr().out == (
        "Go to http://127.0.0.1:1/go?code=ABC234 and enter ABC234 to sign in (valid for 300 s).\n"
    )


def test_the_async_client_signs_in_with_a_shortcode(platform: Platform) -> None:
    """The async client runs the same flow."""

    async def scenario() -> str:
        def approve(pending: Shortcode) -> None:
            with closing(sign_in(platform.base_url, "viewer2")) as person:
                person.post("/oauth/shortcode/approve", json={"code": pending.code})

        async with explorer.AsyncClient(platform.base_url) as client:
            await client.authorize(["chat:connect"], flow="shortcode", show=approve)
            me = await client.me.info()
        return str(me["username"].iloc[0])

    assert asyncio.run(scenario()) == "viewer2"
