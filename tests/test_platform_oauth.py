"""OAuth 2.0 (implicit and code grants, refresh rotation, revocation), JWT, chat details."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import closing
from urllib.parse import parse_qs, urlsplit

import httpx

from explorer.emulator import Platform
from tests.conftest import sign_in

CALLBACK = "http://127.0.0.1/oauth/callback"


def implicit_token(client: httpx.Client, scope: str, state: str = "s1") -> dict[str, str]:
    response = client.get(
        "/oauth/authorize",
        params={
            "response_type": "token",
            "client_id": "explorer-toolkit",
            "redirect_uri": CALLBACK,
            "scope": scope,
            "state": state,
        },
    )
    assert response.status_code == 302, response.text
    location = urlsplit(response.headers["location"])
    assert f"{location.scheme}://{location.netloc}{location.path}" == CALLBACK
    return {k: v[0] for k, v in parse_qs(location.fragment).items()}


def bearer(platform: Platform, token: str) -> httpx.Client:
    return httpx.Client(
        base_url=platform.base_url, headers={"Authorization": f"Bearer {token}"}, timeout=10
    )


def test_implicit_grant_redirects_with_a_token(platform: Platform) -> None:
    """The implicit grant 302s to redirect_uri with access_token, token_type, scope and state."""
    with closing(sign_in(platform.base_url, "viewer")) as client:
        fragment = implicit_token(client, "user:details:self chat:connect", state="xyz")
    assert fragment["token_type"] == "Bearer" and fragment["state"] == "xyz"
    assert fragment["scope"] == "chat:connect user:details:self"
    assert int(fragment["expires_in"]) > 6 * 3600


def test_bearer_token_needs_no_cookie_or_csrf(platform: Platform) -> None:
    """A bearer token authenticates on its own, without cookie or CSRF header."""
    with closing(sign_in(platform.base_url, "viewer")) as client:
        token = implicit_token(client, "user:details:self")["access_token"]
    with bearer(platform, token) as api:
        assert api.get("/users/current").json()["username"] == "viewer"


def test_missing_scope_is_403(platform: Platform) -> None:
    """A token without the endpoint's scope is refused with 403 naming the scope."""
    with closing(sign_in(platform.base_url, "viewer")) as client:
        token = implicit_token(client, "chat:connect")["access_token"]
    with bearer(platform, token) as api:
        response = api.get("/notifications")
    assert response.status_code == 403
    assert response.json()["message"] == "Missing scope notification:view:self."


def test_current_user_private_fields_need_details_scope(platform: Platform) -> None:
    """users/current answers any token; email and preferences only with user:details:self."""
    with closing(sign_in(platform.base_url, "viewer")) as client:
        chat_only = implicit_token(client, "chat:connect chat:chat")["access_token"]
        detailed = implicit_token(client, "user:details:self")["access_token"]
    with bearer(platform, chat_only) as api:
        public = api.get("/users/current").json()
    with bearer(platform, detailed) as api:
        private = api.get("/users/current").json()
    assert public["username"] == "viewer" and "channel" in public
    assert "email" not in public and "preferences" not in public
    assert "@" in private["email"] and isinstance(private["preferences"], dict)


def test_unknown_token_is_401(platform: Platform) -> None:
    """An unknown bearer token answers 401."""
    with bearer(platform, "f" * 64) as api:
        assert api.get("/users/current").status_code == 401


def test_authorize_needs_a_session(platform: Platform) -> None:
    """Authorizing without signing in is 401; with a bearer token it is 403."""
    params = {"response_type": "token", "client_id": "explorer-toolkit", "scope": "chat:chat"}
    assert httpx.get(platform.base_url + "/oauth/authorize", params=params).status_code == 401
    with closing(sign_in(platform.base_url, "viewer")) as client:
        token = implicit_token(client, "user:details:self")["access_token"]
    with bearer(platform, token) as api:
        assert api.get("/oauth/authorize", params=params).status_code == 403


def test_unregistered_redirect_is_refused(platform: Platform) -> None:
    """A redirect_uri the client did not register answers 400 instead of redirecting."""
    with closing(sign_in(platform.base_url, "viewer")) as client:
        response = client.get(
            "/oauth/authorize",
            params={
                "response_type": "token",
                "client_id": "explorer-toolkit",
                "redirect_uri": "http://evil.invalid/",
                "scope": "chat:chat",
            },
        )
    assert response.status_code == 400


def test_unknown_scope_redirects_with_error(platform: Platform) -> None:
    """An unknown scope redirects back with error=invalid_scope and no token."""
    with closing(sign_in(platform.base_url, "viewer")) as client:
        fragment = implicit_token(client, "everything:please")
    assert fragment["error"] == "invalid_scope" and "access_token" not in fragment


def _code_flow(platform: Platform, client: httpx.Client) -> tuple[dict[str, str], dict[str, str]]:
    registered = client.post(
        "/oauth/clients",
        json={"name": "my app", "redirectUris": ["http://127.0.0.1:9/cb"], "confidential": True},
    )
    assert registered.status_code == 201
    app = registered.json()
    response = client.get(
        "/oauth/authorize",
        params={
            "response_type": "code",
            "client_id": app["id"],
            "redirect_uri": "http://127.0.0.1:9/cb",
            "scope": "user:details:self",
            "state": "q",
        },
    )
    query = parse_qs(urlsplit(response.headers["location"]).query)
    assert query["state"] == ["q"]
    form = {
        "grant_type": "authorization_code",
        "code": query["code"][0],
        "client_id": app["id"],
        "client_secret": app["secret"],
        "redirect_uri": "http://127.0.0.1:9/cb",
    }
    return app, form


def test_code_grant_exchanges_form_encoded(make_platform: Callable[..., Platform]) -> None:
    """The code grant exchanges a code (form-encoded) for access and refresh tokens, once."""
    platform = make_platform(rate_limits=False)
    with closing(sign_in(platform.base_url, "streamer")) as client:
        _, form = _code_flow(platform, client)
    tokens = httpx.post(platform.base_url + "/oauth/token", data=form)
    assert tokens.status_code == 200, tokens.text
    body = tokens.json()
    assert body["token_type"] == "Bearer" and body["expires_in"] == 6 * 3600
    with bearer(platform, body["access_token"]) as api:
        assert api.get("/users/current").json()["username"] == "streamer"
    again = httpx.post(platform.base_url + "/oauth/token", data=form)
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"


def test_wrong_client_secret_is_401(make_platform: Callable[..., Platform]) -> None:
    """A confidential client presenting a wrong secret is refused."""
    platform = make_platform(rate_limits=False)
    with closing(sign_in(platform.base_url, "streamer")) as client:
        _, form = _code_flow(platform, client)
    response = httpx.post(
        platform.base_url + "/oauth/token", data={**form, "client_secret": "wrong"}
    )
    assert response.status_code == 401 and response.json()["error"] == "invalid_client"


def test_refresh_rotates_and_reuse_revokes_family(make_platform: Callable[..., Platform]) -> None:
    """A refresh token works once; presenting it again revokes every token of the grant."""
    platform = make_platform(rate_limits=False)
    with closing(sign_in(platform.base_url, "streamer")) as client:
        app, form = _code_flow(platform, client)
    first = httpx.post(platform.base_url + "/oauth/token", data=form).json()
    refresh = {
        "grant_type": "refresh_token",
        "refresh_token": first["refresh_token"],
        "client_id": app["id"],
        "client_secret": app["secret"],
    }
    second = httpx.post(platform.base_url + "/oauth/token", data=refresh).json()
    assert second["refresh_token"] != first["refresh_token"]
    with bearer(platform, second["access_token"]) as api:
        assert api.get("/users/current").status_code == 200
        reuse = httpx.post(platform.base_url + "/oauth/token", data=refresh)
        assert reuse.status_code == 400 and reuse.json()["error"] == "invalid_grant"
        assert api.get("/users/current").status_code == 401
    newer = {**refresh, "refresh_token": second["refresh_token"]}
    assert httpx.post(platform.base_url + "/oauth/token", data=newer).status_code == 400


def test_revoked_token_is_refused(make_platform: Callable[..., Platform]) -> None:
    """After POST /oauth/revoke the token answers 401."""
    platform = make_platform(rate_limits=False)
    with closing(sign_in(platform.base_url, "viewer")) as client:
        token = implicit_token(client, "user:details:self")["access_token"]
    with bearer(platform, token) as api:
        assert api.get("/users/current").status_code == 200
        assert httpx.post(platform.base_url + "/oauth/revoke", data={"token": token}).is_success
        assert api.get("/users/current").status_code == 401


def test_jwt_authorizes_later_requests(platform: Platform) -> None:
    """POST /jwt/authorize returns X-JWT; Authorization: JWT authenticates; a forgery is 401."""
    with closing(sign_in(platform.base_url, "viewer")) as client:
        response = client.post("/jwt/authorize")
    assert response.status_code == 204
    jwt = response.headers["X-JWT"]
    me = httpx.get(platform.base_url + "/users/current", headers={"Authorization": f"JWT {jwt}"})
    assert me.json()["username"] == "viewer"
    head, payload, signature = jwt.split(".")
    forged = f"{head}.{payload}.{signature[:-2]}AA"
    assert (
        httpx.get(
            platform.base_url + "/users/current", headers={"Authorization": f"JWT {forged}"}
        ).status_code
        == 401
    )


def test_chat_details_anonymous_has_no_authkey(platform: Platform) -> None:
    """GET /chats/{id} without credentials lists endpoints but no authkey or permissions."""
    channel = httpx.get(platform.base_url + "/channels/streamer").json()["id"]
    body = httpx.get(f"{platform.base_url}/chats/{channel}").json()
    assert "authkey" not in body and body["permissions"] == []
    assert isinstance(body["endpoints"], list)


def test_chat_details_signed_in_viewer(platform: Platform) -> None:
    """A signed-in viewer gets an authkey (reused on the next call) and chat, connect, poll_vote."""
    channel = httpx.get(platform.base_url + "/channels/streamer").json()["id"]
    with closing(sign_in(platform.base_url, "viewer")) as client:
        first = client.get(f"/chats/{channel}").json()
        second = client.get(f"/chats/{channel}").json()
    assert first["permissions"] == ["chat", "connect", "poll_vote"]
    assert first["authkey"] and first["authkey"] == second["authkey"]


def test_chat_details_owner_and_mod_permissions(platform: Platform) -> None:
    """The owner holds every permission; the moderator holds timeout but not change_role."""
    channel = httpx.get(platform.base_url + "/channels/streamer").json()["id"]
    with closing(sign_in(platform.base_url, "streamer")) as owner:
        assert len(owner.get(f"/chats/{channel}").json()["permissions"]) == 13
    with closing(sign_in(platform.base_url, "moderator")) as mod:
        permissions = mod.get(f"/chats/{channel}").json()["permissions"]
    assert "timeout" in permissions and "change_role" not in permissions


def test_chat_details_bearer_limited_by_scopes(platform: Platform) -> None:
    """A bearer token's chat permissions are limited to its chat scopes."""
    channel = httpx.get(platform.base_url + "/channels/streamer").json()["id"]
    with closing(sign_in(platform.base_url, "viewer")) as client:
        token = implicit_token(client, "chat:connect")["access_token"]
    with bearer(platform, token) as api:
        body = api.get(f"/chats/{channel}").json()
    assert body["permissions"] == ["connect"] and body["authkey"]


def test_chat_details_v2_alias(platform: Platform) -> None:
    """/api/v2/chats/{id} answers like /api/v1/chats/{id}."""
    channel = httpx.get(platform.base_url + "/channels/streamer").json()["id"]
    v1 = httpx.get(f"{platform.base_url}/chats/{channel}").json()
    v2 = httpx.get(f"{platform.root_url}/api/v2/chats/{channel}").json()
    assert v1 == v2
