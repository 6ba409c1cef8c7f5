"""The shortcode grant on the wire, the /go page, token introspection, the broadcast endpoint,
OAuth bodies and the historical scope vocabulary."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import closing

import httpx
import pytest

from explorer.emulator import Platform
from tests.clocks import ManualClock
from tests.conftest import sign_in
from tests.databases import start
from tests.test_platform_oauth import implicit_token


@pytest.fixture(scope="module")
def clock() -> ManualClock:
    """The platform's clock: codes expire once a test moves it past their lifetime."""
    return ManualClock()


@pytest.fixture(scope="module")
def live(clock: ManualClock) -> Iterator[Platform]:
    """A platform on ``clock`` for this module."""
    with start(channels=300, rate_limits=True, clock=clock) as running:
        yield running


@pytest.fixture
def api(live: Platform) -> Iterator[httpx.Client]:
    """An anonymous client of the platform."""
    with httpx.Client(base_url=live.base_url, timeout=10) as client:
        yield client


@pytest.fixture
def person(live: Platform) -> Iterator[httpx.Client]:
    """The streamer signed in with a cookie session."""
    with closing(sign_in(live.base_url, "streamer")) as client:
        yield client


def _start(api: httpx.Client, scope: str = "chat:connect") -> dict[str, str]:
    response = api.post("/oauth/shortcode", json={"client_id": "explorer-toolkit", "scope": scope})
    assert response.status_code == 200, response.text
    return dict(response.json())


def test_shortcode_waits_then_hands_out_a_code_once(
    api: httpx.Client, person: httpx.Client
) -> None:
    """check answers 204 while waiting, 200 {code} once approved, then 404 (single use)."""
    started = _start(api)
    assert len(started["code"]) == 6 and started["expires_in"] == 300
    check = f"/oauth/shortcode/check/{started['handle']}"
    assert api.get(check).status_code == 204
    assert person.post("/oauth/shortcode/approve", json={"code": started["code"]}).json() == {
        "code": started["code"],
        "state": "approved",
    }
    first = api.get(check)
    assert first.status_code == 200 and set(first.json()) == {"code"}
    assert api.get(check).status_code == 404
    token = api.post(
        "/oauth/token",
        data={"grant_type": "authorization_code", "client_id": "explorer-toolkit", **first.json()},
    )
    assert token.status_code == 200 and token.json()["scope"] == "chat:connect"


def test_a_denied_shortcode_answers_403(api: httpx.Client, person: httpx.Client) -> None:
    """A refused code makes check answer 403, and it cannot be approved afterwards."""
    started = _start(api)
    assert person.post("/oauth/shortcode/deny", json={"code": started["code"]}).status_code == 200
    assert api.get(f"/oauth/shortcode/check/{started['handle']}").status_code == 403
    again = person.post("/oauth/shortcode/approve", json={"code": started["code"]})
    assert again.status_code == 401


def test_a_shortcode_expires(api: httpx.Client, person: httpx.Client, clock: ManualClock) -> None:
    """Past expires_in the handle answers 404 and the code can no longer be approved."""
    started = _start(api)
    clock.advance(301)
    assert api.get(f"/oauth/shortcode/check/{started['handle']}").status_code == 404
    late = person.post("/oauth/shortcode/approve", json={"code": started["code"]})
    assert late.status_code == 401


def test_guessing_codes_runs_into_the_failed_login_bucket(live: Platform) -> None:
    """Wrong codes count against user-login-failed: after 8 the account gets 429."""
    with closing(sign_in(live.base_url, "viewer2")) as guesser:
        answers = [
            guesser.post("/oauth/shortcode/approve", json={"code": f"ZZZZZ{n}"}).status_code
            for n in range(9)
        ]
    assert answers == [401] * 8 + [429]


def test_a_token_cannot_approve_a_shortcode(api: httpx.Client, person: httpx.Client) -> None:
    """Only a cookie session approves: a bearer token is refused with 403."""
    token = implicit_token(person, "chat:connect")["access_token"]
    started = _start(api)
    refused = api.post(
        "/oauth/shortcode/approve",
        json={"code": started["code"]},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert refused.status_code == 403


def test_the_go_page_is_served_at_the_web_root(live: Platform) -> None:
    """GET /go answers the HTML page that approves or denies a code."""
    page = httpx.get(f"{live.root_url}/go?code=ABC123")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "/oauth/shortcode/" in page.text and "/users/login" in page.text


def test_introspection_describes_live_tokens_only(api: httpx.Client, person: httpx.Client) -> None:
    """introspect answers owner, scopes and expiry for a live token, active false otherwise."""
    token = implicit_token(person, "chat:connect chat:chat")["access_token"]
    info = api.post("/oauth/token/introspect", data={"token": token}).json()
    assert info["active"] is True and info["username"] == "streamer"
    assert info["scope"] == "chat:chat chat:connect" and info["token_type"] == "access_token"
    assert api.post("/oauth/token/introspect", json={"token": "nope"}).json() == {"active": False}


@pytest.mark.parametrize(
    ("body", "kind"),
    [(b"{not json", "application/json"), (b"\xff\xfe", "application/x-www-form-urlencoded")],
)
def test_an_unreadable_token_body_is_a_400(api: httpx.Client, body: bytes, kind: str) -> None:
    """A token request body that is neither readable JSON nor form text is a 400 saying so."""
    response = api.post("/oauth/token", content=body, headers={"Content-Type": kind})
    assert response.status_code == 400 and response.json()["error"] == "invalid_request"


def test_a_token_request_without_client_id_is_a_400(api: httpx.Client) -> None:
    """No client_id (e.g. an empty body) is invalid_request, not a misleading 401."""
    response = api.post("/oauth/token", json={"grant_type": "authorization_code"})
    assert response.status_code == 400 and "client_id" in response.json()["message"]


def test_historical_scopes_are_granted_and_unknown_ones_refused(person: httpx.Client) -> None:
    """Scopes of the historical vocabulary are granted; a made-up one is invalid_scope."""
    granted = implicit_token(person, "chat:bypass_catbot channel:clip:create:self")
    assert granted["scope"] == "channel:clip:create:self chat:bypass_catbot"
    response = person.get(
        "/oauth/authorize",
        params={
            "response_type": "token",
            "client_id": "explorer-toolkit",
            "scope": "chat:fly",
        },
    )
    assert "error=invalid_scope" in response.headers["location"]


def test_chat_scopes_set_chat_permissions(live: Platform, person: httpx.Client) -> None:
    """chat:bypass_links and chat:bypass_slowchat unlock those permissions for a token."""
    channel = person.get("/channels/streamer").json()["id"]

    def permissions(scope: str) -> set[str]:
        token = implicit_token(person, scope)["access_token"]
        headers = {"Authorization": f"OAuth {token}"}
        return set(
            httpx.get(f"{live.base_url}/chats/{channel}", headers=headers).json()["permissions"]
        )

    assert {"bypass_links", "bypass_slowchat"} <= permissions(
        "chat:connect chat:bypass_links chat:bypass_slowchat"
    )
    assert not {"bypass_links", "bypass_slowchat"} & permissions("chat:connect")


def test_the_broadcast_of_a_live_channel_and_404_offline(api: httpx.Client) -> None:
    """GET /channels/{id}/broadcast answers a live channel's broadcast, 404 when offline."""
    live_channel = api.get("/channels", params={"where": "online:eq:1", "limit": 1}).json()[0]
    broadcast = api.get(f"/channels/{live_channel['id']}/broadcast").json()
    assert broadcast["channelId"] == live_channel["id"] and broadcast["online"] is True
    assert broadcast["isTestStream"] is False and broadcast["startedAt"]
    offline = api.get("/channels", params={"where": "online:eq:0", "limit": 1}).json()[0]
    assert api.get(f"/channels/{offline['id']}/broadcast").status_code == 404
