"""Replays of what published clients of the historical platform send, byte for byte where it
matters (paths, params, headers, bodies, scopes, packets), checking the fields they read back.

Only the base address, client id and token differ from the clients' own code. Each test names
its source (repository and file path on GitHub).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import closing
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from websockets.sync.client import ClientConnection, connect

from explorer.emulator import Platform
from tests.conftest import sign_in
from tests.test_platform_oauth import implicit_token

#: crowbartools/Firebot backend/auth/mixer-auth.js: the streamer and bot account scopes.
FIREBOT_STREAMER = (
    "user:details:self interactive:robot:self chat:connect chat:chat chat:whisper "
    "chat:bypass_links chat:bypass_slowchat chat:bypass_catbot chat:bypass_filter "
    "chat:clear_messages chat:giveaway_start chat:poll_start chat:remove_message chat:timeout "
    "chat:view_deleted chat:purge channel:details:self channel:update:self "
    "channel:clip:create:self channel:follow:self"
)
FIREBOT_BOT = "chat:connect chat:chat chat:whisper chat:bypass_links chat:bypass_slowchat"
#: Firebot's redirect (backend/auth/auth-manager.js, its local web server on port 7472).
FIREBOT_REDIRECT = "http://localhost:7472/api/v1/auth/callback"
#: ooojustin/mixer.py examples/chatbot_ping.py: every chat scope, for the shortcode grant.
MIXER_PY_SCOPES = [
    "chat:bypass_catbot", "chat:bypass_filter", "chat:bypass_links",
    "chat:bypass_slowchat", "chat:cancel_skill", "chat:change_ban",
    "chat:change_role", "chat:chat", "chat:clear_messages",
    "chat:connect", "chat:edit_options", "chat:giveaway_start",
    "chat:poll_start", "chat:poll_vote", "chat:purge",
    "chat:remove_message", "chat:timeout", "chat:view_deleted",
    "chat:whisper",
]  # fmt: skip
#: jbdk/MixerLib README.md: the scopes its implicit-grant token needs.
MIXERLIB_SCOPES = (
    "channel:update:self chat:bypass_links chat:bypass_slowchat chat:change_ban chat:chat "
    "chat:connect chat:timeout chat:whisper"
)


@pytest.fixture
def person(platform: Platform) -> Iterator[httpx.Client]:
    """The streamer, signed in with a browser session (who approves grants)."""
    with closing(sign_in(platform.base_url, "streamer")) as client:
        yield client


def _client(person: httpx.Client, redirect: str, confidential: bool = False) -> dict[str, Any]:
    response = person.post(
        "/oauth/clients",
        json={"name": "replayed", "redirectUris": [redirect], "confidential": confidential},
    )
    assert response.status_code == 201, response.text
    return dict(response.json())


def _code_grant(
    platform: Platform, person: httpx.Client, client_id: str, scope: str, **extra: str
) -> str:
    """The authorization code the web-root consent address hands a signed-in person."""
    response = httpx.get(
        f"{platform.root_url}/oauth/authorize",
        params={
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": FIREBOT_REDIRECT,
            "scope": scope,
            **extra,
        },
        cookies=person.cookies,
        headers={"X-CSRF-Token": person.headers["X-CSRF-Token"]},
    )
    assert response.status_code == 302, response.text
    query = parse_qs(urlsplit(response.headers["location"]).query)
    assert "error" not in query, query
    return query["code"][0]


def _shortcode_approve(person: httpx.Client, code: str) -> None:
    response = person.post("/oauth/shortcode/approve", json={"code": code})
    assert response.status_code == 200, response.text


def test_firebot_streamer_and_bot_logins(platform: Platform, person: httpx.Client) -> None:
    """Firebot (crowbartools/Firebot backend/auth/mixer-auth.js, auth-manager.js): the code
    grant at /oauth/authorize with its streamer and bot scopes, the form-encoded token exchange
    (simple-oauth2, credentials in the body), then users/current's username, id, channel.id,
    avatarUrl, channel.partnered and groups[].name."""
    client = _client(person, FIREBOT_REDIRECT)
    for scope, state in (
        (FIREBOT_STREAMER, "mixer:streamer-account"),
        (FIREBOT_BOT, "mixer:bot-account"),
    ):
        code = _code_grant(platform, person, client["id"], scope, state=state)
        token = httpx.post(
            f"{platform.base_url}/oauth/token",
            data={
                "grant_type": "authorization_code",
                "code": code,
                "redirect_uri": FIREBOT_REDIRECT,
                "client_id": client["id"],
            },
        )
        assert token.status_code == 200, token.text
        assert set(token.json()["scope"].split()) == set(scope.split())
        me = httpx.get(
            f"{platform.base_url}/users/current",
            headers={"Authorization": f"Bearer {token.json()['access_token']}"},
        ).json()
        assert me["username"] == "streamer" and isinstance(me["id"], int)
        assert isinstance(me["channel"]["id"], int) and "avatarUrl" in me
        assert isinstance(me["channel"]["partnered"], bool)
        assert all(isinstance(group["name"], str) for group in me["groups"])


def test_passport_mixer_profile(platform: Platform, person: httpx.Client) -> None:
    """passport-mixer (mixercommunity/passport-mixer lib/passport-mixer/oauth2.js): the code
    grant with approval_prompt=force, then users/current with ``Authorization: OAuth`` for
    id, username and email."""
    client = _client(person, FIREBOT_REDIRECT, confidential=True)
    code = _code_grant(platform, person, client["id"], "user:details:self", approval_prompt="force")
    token = httpx.post(
        f"{platform.base_url}/oauth/token",
        data={
            "client_id": client["id"],
            "client_secret": client["secret"],
            "code": code,
            "grant_type": "authorization_code",
            "redirect_uri": FIREBOT_REDIRECT,
        },
    ).json()
    profile = httpx.get(
        f"{platform.base_url}/users/current",
        headers={"Authorization": f"OAuth {token['access_token']}"},
    ).json()
    assert profile["username"] == "streamer" and isinstance(profile["id"], int)
    assert "@" in profile["email"]


def test_mixer_py_shortcode_introspect_broadcast(platform: Platform, person: httpx.Client) -> None:
    """mixer.py (ooojustin/mixer.py mixer/api.py, mixer/oauth.py, examples/chatbot_ping.py):
    JSON bodies with a Client-ID header for get_shortcode, check_shortcode, get_token (code,
    then refresh) and check_token (introspect: active, exp, sub, username), then get_channel
    and get_broadcast (online, startedAt for the uptime)."""
    client = _client(person, FIREBOT_REDIRECT, confidential=True)
    api = httpx.Client(base_url=platform.base_url, headers={"Client-ID": client["id"]})
    with closing(api):
        shortcode = api.post(
            "/oauth/shortcode",
            json={
                "client_id": client["id"],
                "client_secret": client["secret"],
                "scope": " ".join(MIXER_PY_SCOPES),
            },
        ).json()
        assert set(shortcode) == {"code", "handle", "expires_in"}
        assert api.get(f"/oauth/shortcode/check/{shortcode['handle']}").status_code == 204
        _shortcode_approve(person, shortcode["code"])
        checked = api.get(f"/oauth/shortcode/check/{shortcode['handle']}")
        assert checked.status_code == 200
        body = {"client_id": client["id"], "client_secret": client["secret"]}
        tokens = api.post(
            "/oauth/token",
            json={**body, "grant_type": "authorization_code", "code": checked.json()["code"]},
        ).json()
        info = api.post("/oauth/token/introspect", json={"token": tokens["access_token"]}).json()
        assert info["active"] is True and info["username"] == "streamer"
        assert isinstance(info["exp"], int) and isinstance(info["sub"], int)
        refreshed = api.post(
            "/oauth/token",
            json={**body, "grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]},
        )
        assert refreshed.status_code == 200 and refreshed.json()["refresh_token"]
        channel = api.get("/channels/streamer").json()
        broadcast = api.get(f"/channels/{channel['id']}/broadcast").json()
        assert broadcast["online"] is True and broadcast["startedAt"].endswith("Z")


class _Chat:
    """A chat connection that speaks raw frames, as each replayed client writes them."""

    def __init__(self, url: str, headers: dict[str, str] | None = None) -> None:
        self._connect = connect(url, additional_headers=headers, open_timeout=5)
        self.seen: list[dict[str, Any]] = []

    def __enter__(self) -> _Chat:
        self.ws: ClientConnection = self._connect.__enter__()
        self.welcome = self.next()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._connect.__exit__(*exc)

    def next(self) -> dict[str, Any]:
        return dict(json.loads(self.ws.recv(timeout=5)))

    def send(self, packet: dict[str, Any]) -> dict[str, Any]:
        """Send one frame; the reply to its id (events before it are kept in ``seen``)."""
        self.ws.send(json.dumps(packet))
        while True:
            frame = self.next()
            if frame["type"] == "reply" and frame["id"] == packet["id"]:
                return frame
            self.seen.append(frame)

    def event(self, name: str) -> dict[str, Any]:
        """The first ``name`` event, already seen or next to come."""
        for frame in self.seen:
            if frame.get("event") == name:
                return frame
        while True:
            frame = self.next()
            if frame.get("event") == name:
                return frame


def test_jsmixer_bot_shortcode_and_Chat(platform: Platform, person: httpx.Client) -> None:
    """jsMixer (guicaulada/jsMixer lib/jsMixer.js, lib/jsMixerBot.js, example/bot.js): the
    shortcode grant with JSON bodies sent as XMLHttpRequest's text/plain, the Authorization
    header built from token_type, getCurrentUser, getChat, auth [channel, user, authkey], msg,
    and the bot reading message[0].text of what it hears."""
    client = _client(person, FIREBOT_REDIRECT, confidential=True)
    xhr = {"Client-ID": client["id"], "Content-Type": "text/plain;charset=UTF-8"}
    api = f"{platform.base_url.removesuffix('/v1')}/"
    secret = {"client_id": client["id"], "client_secret": client["secret"]}
    sc = httpx.post(
        f"{api}v1/oauth/shortcode",
        content=json.dumps({**secret, "scope": "chat:connect chat:chat"}),
        headers=xhr,
    ).json()
    _shortcode_approve(person, sc["code"])
    code = httpx.get(f"{api}v1/oauth/shortcode/check/{sc['handle']}", headers=xhr).json()["code"]
    oauth = httpx.post(
        f"{api}v1/oauth/token",
        content=json.dumps({"code": code, **secret, "grant_type": "authorization_code"}),
        headers=xhr,
    ).json()
    headers = {
        "Client-ID": client["id"],
        "Authorization": f"{oauth['token_type']} {oauth['access_token']}",
    }
    user = httpx.get(f"{api}v1/users/current", headers=headers).json()
    chat = httpx.get(f"{api}v1/chats/{user['channel']['id']}", headers=headers).json()
    with _Chat(chat["endpoints"][0]) as ws:
        auth = ws.send(
            {
                "type": "method",
                "method": "auth",
                "arguments": [user["channel"]["id"], user["id"], chat["authkey"]],
                "id": 0,
            }
        )
        assert auth["data"]["authenticated"] is True
        ws.send(
            {"type": "method", "method": "msg", "arguments": ["@streamer Hello World!"], "id": 1}
        )
        heard = ws.event("ChatMessage")["data"]
        assert heard["message"]["message"][0]["text"] == ""
        assert heard["message"]["message"][1]["type"] == "tag"


def test_mixerlib_chat_packets_without_arguments(platform: Platform) -> None:
    """MixerLib (jbdk/MixerLib MixerLib/JsonRpcWebSocket.cs BuildRequestString, README.md):
    an implicit-grant token with its README scopes, the x-is-bot and Bearer headers on the
    socket, auth, and packets that omit ``arguments`` when there are none."""
    with closing(sign_in(platform.base_url, "streamer")) as browser:
        token = implicit_token(browser, MIXERLIB_SCOPES)["access_token"]
    rest = httpx.Client(base_url=platform.base_url, headers={"Authorization": f"Bearer {token}"})
    with closing(rest):
        me = rest.get("/users/current").json()
        chat = rest.get(f"/chats/{me['channel']['id']}").json()
    headers = {"x-is-bot": "true", "Authorization": f"Bearer {token}"}
    with _Chat(chat["endpoints"][0], headers) as ws:
        assert ws.welcome["event"] == "WelcomeEvent"
        auth = ws.send(
            {
                "type": "method",
                "method": "auth",
                "arguments": [me["channel"]["id"], me["id"], chat["authkey"]],
                "id": 1,
            }
        )
        assert auth["error"] is None and auth["data"]["roles"] == ["Owner", "User"]
        assert ws.send({"type": "method", "method": "ping", "id": 2})["error"] is None
        # Read and dispatched (not a malformed 4000): refused by the token's scopes instead.
        cleared = ws.send({"type": "method", "method": "clearMessages", "id": 3})
        assert cleared["error"]["code"] == 4002


def test_beam_client_python_chatty(platform: Platform) -> None:
    """beam-client-python (mixer/beam-client-python chatty/connection.py, example.py): GET
    chats/{cid} and users/current with a Bearer token and a Media-Type header, reading
    endpoints, authkey and id, then auth [cid, userid, authkey] and msg."""
    with closing(sign_in(platform.base_url, "viewer")) as browser:
        token = implicit_token(browser, "chat:connect chat:chat")["access_token"]
        cid = browser.get("/channels/streamer").json()["id"]
    header = {"Media-Type": "application/json", "Authorization": "Bearer " + token}
    details = httpx.get(f"{platform.base_url}/chats/{cid}", headers=header).json()
    userid = httpx.get(f"{platform.base_url}/users/current", headers=header).json()["id"]
    with _Chat(details["endpoints"][0]) as ws:
        auth = ws.send(
            {
                "type": "method",
                "method": "auth",
                "arguments": [cid, userid, details["authkey"]],
                "id": 0,
            }
        )
        assert auth["data"] == {"authenticated": True, "roles": ["User"]}
        said = ws.send({"type": "method", "method": "msg", "arguments": ["!ping"], "id": 1})
        assert said["data"]["user_id"] == userid


def test_tutorial_opt_out_events(platform: Platform) -> None:
    """The chat client behind the official tutorial (@mixer/chat-client-websocket
    Socket.optOutEvents, mixer/developer-docs 03.methods/14.optOutEvents): optOutEvents
    answers ``{}`` and that connection stops receiving those events."""
    with closing(sign_in(platform.base_url, "viewer")) as browser:
        cid = browser.get("/channels/streamer").json()["id"]
        endpoint = browser.get(f"/chats/{cid}").json()["endpoints"][0]
    with _Chat(endpoint) as quiet, _Chat(endpoint) as control, _Chat(endpoint) as joiner:
        quiet.send({"type": "method", "method": "auth", "arguments": [cid], "id": 0})
        control.send({"type": "method", "method": "auth", "arguments": [cid], "id": 0})
        reply = quiet.send(
            {"type": "method", "method": "optOutEvents", "arguments": ["UserJoin"], "id": 1}
        )
        assert reply["error"] is None and reply["data"] == {}
        with closing(sign_in(platform.base_url, "viewer2")) as browser:
            key = browser.get(f"/chats/{cid}").json()["authkey"]
            me = browser.get("/users/current").json()["id"]
        joined = {"type": "method", "method": "auth", "arguments": [cid, me, key], "id": 0}
        assert joiner.send(joined)["data"]["authenticated"] is True
        assert control.event("UserJoin")["data"]["id"] == me
        # Frames arrive in order: the reply to a later ping follows any UserJoin sent before.
        quiet.send({"type": "method", "method": "ping", "arguments": [], "id": 2})
        assert not [f for f in quiet.seen if f.get("event") == "UserJoin"]


def test_opt_out_events_refuses_what_is_not_a_short_list_of_names(platform: Platform) -> None:
    """optOutEvents answers 4000 for non-string names or more names than events exist."""
    with closing(sign_in(platform.base_url, "viewer")) as browser:
        endpoint = browser.get(f"/chats/{browser.get('/channels/streamer').json()['id']}").json()
    with _Chat(endpoint["endpoints"][0]) as ws:
        for args in ([["UserJoin"]], [f"Event{n}" for n in range(33)]):
            packet = {"type": "method", "method": "optOutEvents", "arguments": args, "id": 1}
            assert ws.send(packet)["error"]["code"] == 4000
