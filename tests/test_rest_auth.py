"""Signing in against a real platform: cookie session + CSRF, OAuth bearer, JWT, scopes."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import httpx
import pytest

import explorer
from explorer.emulator import Platform
from explorer.errors import Forbidden, Unauthorized
from explorer.rest.transport import API_PATH

PASSWORD = "explorer"


class Recording(httpx.AsyncBaseTransport):
    """The real network, remembering each request's Authorization header and answer status."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.seen: list[tuple[str, str | None, int]] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        self.seen.append(
            (request.url.path, request.headers.get("authorization"), response.status_code)
        )
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


@pytest.fixture
def streamer(platform: Platform) -> Iterator[explorer.Client]:
    """A sync client signed in as the demo streamer."""
    with explorer.connect(platform.base_url, username="streamer", password=PASSWORD) as client:
        yield client


def test_login_opens_a_cookie_session(streamer: explorer.Client) -> None:
    """With username and password the client signs in; current_user is that user."""
    me = streamer.me.info()
    assert me["username"].tolist() == ["streamer"]
    assert me["channel.token"].tolist() == ["streamer"]
    assert me["email"].notna().all()


@pytest.mark.parametrize("credentials", [True, False], ids=["credentials", "anonymous"])
def test_blocking_client_signs_in_at_construction_only_with_credentials(
    platform: Platform, credentials: bool
) -> None:
    """A blocking client signs in as it is built when given credentials, else sends nothing."""
    transport = Recording()
    login = {"username": "streamer", "password": PASSWORD} if credentials else {}
    with explorer.Client(platform.base_url, transport=transport, **login):
        sent = [path for path, _, _ in transport.seen]
    assert sent == ([f"{API_PATH}/users/login"] if credentials else [])


def test_login_returns_the_signed_in_user(platform: Platform) -> None:
    """login() answers with the user it signed in as."""
    with explorer.connect(platform.base_url) as client:
        assert client.login("viewer", PASSWORD)["username"].tolist() == ["viewer"]


@pytest.mark.parametrize("token", ["not-the-token", None], ids=["invalid", "missing"])
def test_csrf_refusal_is_retried_with_the_fresh_token(
    platform: Platform, token: str | None
) -> None:
    """A 461 (bad or missing CSRF token) is retried once with the token it brought."""

    async def scenario() -> list[int]:
        transport = Recording()
        async with explorer.AsyncClient(
            platform.base_url, username="streamer", password=PASSWORD, transport=transport
        ) as client:
            client._transport._csrf.token = token
            me = await client.me.info()
            assert me["username"].tolist() == ["streamer"]
        return [status for path, _, status in transport.seen if path.endswith("/users/current")]

    assert asyncio.run(scenario()) == [461, 200]


def test_wrong_password_raises_unauthorized(platform: Platform) -> None:
    """Bad credentials fail at connect() with the platform's message."""
    with pytest.raises(Unauthorized, match="Invalid username or password"):
        explorer.connect(platform.base_url, username="streamer", password="wrong")


def test_implicit_grant_switches_to_a_bearer_token(platform: Platform) -> None:
    """authorize() runs the implicit grant; later requests carry the bearer token."""

    async def scenario() -> None:
        transport = Recording()
        async with explorer.AsyncClient(
            platform.base_url, username="streamer", password=PASSWORD, transport=transport
        ) as client:
            grant = await client.authorize(["user:details:self", "chat:connect"])
            me = await client.me.info()
        assert grant.token_type == "Bearer"
        assert set(grant.scopes) == {"user:details:self", "chat:connect"}
        assert me["username"].tolist() == ["streamer"]
        assert transport.seen[-1][1] == f"Bearer {grant.access_token}"
        assert "explorer_session" not in client._transport._http.cookies

    asyncio.run(scenario())


def test_a_bearer_token_can_be_given_at_connect(
    streamer: explorer.Client, platform: Platform
) -> None:
    """connect(token=...) signs every request with that token."""
    grant = streamer.authorize(["user:details:self"])
    with explorer.connect(platform.base_url, token=grant.access_token) as client:
        assert client.me.info()["username"].tolist() == ["streamer"]


def test_a_missing_scope_raises_forbidden(streamer: explorer.Client) -> None:
    """A token without the endpoint's scope is refused with a typed 403."""
    streamer.authorize(["chat:connect"])
    with pytest.raises(Forbidden, match="Missing scope invoice:view:self") as info:
        streamer.me.invoices()
    assert (info.value.status, info.value.error) == (403, "Forbidden")


def test_an_unknown_token_raises_unauthorized(platform: Platform) -> None:
    """A token the platform never issued gives a typed 401."""
    with (
        explorer.connect(platform.base_url, token="made-up") as client,
        pytest.raises(Unauthorized),
    ):
        client.me.info()


def test_authorize_requires_a_session(platform: Platform) -> None:
    """The implicit grant needs a signed-in session."""
    with explorer.connect(platform.base_url) as client, pytest.raises(Unauthorized):
        client.authorize(["chat:connect"])


def test_jwt_replaces_the_session(platform: Platform) -> None:
    """authorize_jwt() trades the session for a JWT that signs later requests."""

    async def scenario() -> None:
        transport = Recording()
        async with explorer.AsyncClient(
            platform.base_url, username="viewer", password=PASSWORD, transport=transport
        ) as client:
            token = await client.authorize_jwt()
            me = await client.me.info()
        assert token.count(".") == 2
        assert me["username"].tolist() == ["viewer"]
        assert transport.seen[-1][1] == f"JWT {token}"

    asyncio.run(scenario())


def test_logout_ends_the_session(streamer: explorer.Client) -> None:
    """After logout() the client is anonymous again."""
    streamer.logout()
    with pytest.raises(Unauthorized):
        streamer.me.info()


def test_chat_details_carry_an_authkey_only_when_signed_in(
    streamer: explorer.Client, platform: Platform
) -> None:
    """Signed in: an authkey and the owner's permissions; anonymous: neither."""
    channel_id = int(streamer.channel("streamer").info().index[0])
    mine = streamer.channel(channel_id).chat_details()
    with explorer.connect(platform.base_url) as anonymous:
        theirs = anonymous.channel(channel_id).chat_details()
    assert mine.channel_id == channel_id and isinstance(mine.authkey, str)
    assert "clear_messages" in mine.permissions
    assert theirs.authkey is None and theirs.permissions == ()


def test_register_then_confirm_with_the_mailed_code(platform: Platform) -> None:
    """A new account is created unverified and confirmed with the code from its mail."""
    with explorer.connect(platform.base_url) as client:
        user = client.register("toolkit_newcomer", "correct horse", "newcomer@example.org")
        user_id = int(user.index[0])
        mail = httpx.get(f"{platform.root_url}/_emulator/mail").json()
        code = next(m["code"] for m in mail if m["userId"] == user_id)
        confirmed = client.user(user_id).confirm(code)
    assert user["verified"].tolist() == [False]
    assert confirmed["verified"].tolist() == [True]
    assert confirmed["username"].tolist() == ["toolkit_newcomer"]
