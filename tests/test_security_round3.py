"""Security rules of issue 23 (round 3) on the platform, each attacked from several angles over
real sockets: credentials end when their owner says so (rule 1), limits count what they say
(rule 2), scopes guard everything they name (rule 3), consent is informed and cross-site
submissions fail (rule 4). The HTTP front (rule 5), the widgets (rule 6) and the recorder
(rule 7) have modules of their own (``test_security_front.py``, ``test_browser.py``,
``test_recorder_failures.py``). Attempts add to the attack count of :mod:`tests.test_security`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from explorer.emulator import credentials
from explorer.emulator.resources import modules
from tests import databases
from tests.chatkit import World, run
from tests.conftest import sign_in
from tests.test_security import (
    ATTACKS,
    CALLBACK,
    MakePlatform,
    attempt,
    bearer,
    code_grant,
    implicit_token,
)
from tests.test_security_round2 import key_is_dead


@pytest.fixture(scope="module", autouse=True)
def tally() -> Iterator[None]:
    """Print the attack count, this module's attempts included, once the module is done."""
    yield
    print(f"\nattacks tried (with round 3): {sum(ATTACKS.values())}", dict(sorted(ATTACKS.items())))


def mint_jwt(client: httpx.Client) -> str:
    """A JWT minted with ``client``'s credential (``POST /jwt/authorize``)."""
    response = client.post("/jwt/authorize")
    assert response.status_code == 204, response.text
    return response.headers["X-JWT"]


def jwt_client(base_url: str, token: str) -> httpx.Client:
    """A client sending ``Authorization: JWT <token>`` and nothing else."""
    return httpx.Client(base_url=base_url, headers={"Authorization": f"JWT {token}"}, timeout=10)


def alive(base_url: str, jwt: str) -> int:
    """The status ``GET /users/current`` answers a JWT."""
    with jwt_client(base_url, jwt) as client:
        return client.get("/users/current").status_code


def start_shortcode(base_url: str, scope: str = "chat:connect") -> dict[str, str]:
    """A waiting shortcode grant of the toolkit's client: ``{code, handle, expires_in}``."""
    response = httpx.post(
        base_url + "/oauth/shortcode", json={"client_id": "explorer-toolkit", "scope": scope}
    )
    assert response.status_code == 200, response.text
    return dict(response.json())


def pending_code(client: httpx.Client) -> str:
    """An authorization code ``client``'s session grants the toolkit, not yet exchanged."""
    location = client.get(
        "/oauth/authorize",
        params={
            "response_type": "code",
            "client_id": "explorer-toolkit",
            "redirect_uri": CALLBACK,
            "scope": "user:details:self",
        },
    ).headers["location"]
    return parse_qs(urlsplit(location).query)["code"][0]


def exchange(base_url: str, code: str) -> int:
    """The status of exchanging an authorization code of the toolkit's client."""
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "client_id": "explorer-toolkit",
        "redirect_uri": CALLBACK,
    }
    return httpx.post(base_url + "/oauth/token", data=form).status_code


# --- Rule 1: a credential ends when its owner says so ---------------------------------------


def test_logout_ends_the_sessions_jwts_and_their_descendants(make_platform: MakePlatform) -> None:
    """A JWT minted from a session, and one minted from that JWT, are 401 after logout."""
    platform = make_platform(rate_limits=False)
    with closing(sign_in(platform.base_url, "viewer")) as session:
        first = mint_jwt(session)
        with jwt_client(platform.base_url, first) as by_jwt:
            second = mint_jwt(by_jwt)
        assert alive(platform.base_url, first) == alive(platform.base_url, second) == 200
        session.delete("/users/current/session").raise_for_status()
    for token in (first, second):
        attempt("JWT after logout")
        assert alive(platform.base_url, token) == 401
        with jwt_client(platform.base_url, token) as by_jwt:
            attempt("JWT mints a JWT after logout")
            assert by_jwt.post("/jwt/authorize").status_code == 401


def test_revoking_a_token_ends_its_jwts(make_platform: MakePlatform) -> None:
    """JWTs minted from an implicit token and from a code-grant token die with their
    revocation (and the refresh token of the code grant with them)."""
    platform = make_platform(rate_limits=False)
    with closing(sign_in(platform.base_url, "viewer")) as session:
        implicit = implicit_token(session, "chat:connect user:details:self")
        _, tokens = code_grant(platform, session)
    for token in (implicit, tokens["access_token"]):
        with bearer(platform.base_url, token) as api:
            jwt = mint_jwt(api)
        assert alive(platform.base_url, jwt) == 200
        httpx.post(platform.base_url + "/oauth/revoke", data={"token": token}).raise_for_status()
        attempt("JWT after revoking its token")
        assert alive(platform.base_url, jwt) == 401


def test_password_change_ends_jwts_codes_and_shortcodes(make_platform: MakePlatform) -> None:
    """After a password change, another session's JWT, its unexchanged code and its approved
    shortcode are dead, and the JWT cannot fetch a chat authkey."""
    platform = make_platform(rate_limits=False)
    base = platform.base_url
    with (
        closing(sign_in(base, "viewer")) as thief,
        closing(sign_in(base, "viewer")) as owner,
    ):
        jwt = mint_jwt(thief)
        code = pending_code(thief)
        grant = start_shortcode(base)
        thief.post("/oauth/shortcode/approve", json={"code": grant["code"]}).raise_for_status()
        changed = owner.put(
            "/users/current/password", json={"password": "explorer", "newPassword": "n3w-secret"}
        )
        assert changed.status_code == 204, changed.text
        attempt("JWT after a password change")
        assert alive(base, jwt) == 401
        with jwt_client(base, jwt) as by_jwt:
            attempt("authkey through a JWT after a password change")
            assert by_jwt.get("/chats/1").status_code == 401
        attempt("code minted before a password change")
        assert exchange(base, code) == 400
        attempt("approved shortcode after a password change")
        assert httpx.get(f"{base}/oauth/shortcode/check/{grant['handle']}").status_code == 404
        assert owner.get("/users/current").status_code == 200


def test_logout_ends_unexchanged_codes_and_approved_shortcodes(make_platform: MakePlatform) -> None:
    """Signing out kills the session's codes and shortcodes not yet exchanged; another
    session's stay valid."""
    platform = make_platform(rate_limits=False)
    base = platform.base_url
    with (
        closing(sign_in(base, "viewer")) as leaving,
        closing(sign_in(base, "viewer")) as staying,
    ):
        codes = {
            name: pending_code(client)
            for name, client in (("leaving", leaving), ("staying", staying))
        }
        grants = {}
        for name, client in (("leaving", leaving), ("staying", staying)):
            grants[name] = start_shortcode(base)
            client.post("/oauth/shortcode/approve", json={"code": grants[name]["code"]})
        leaving.delete("/users/current/session").raise_for_status()
        attempt("code after logout")
        assert exchange(base, codes["leaving"]) == 400
        attempt("approved shortcode after logout")
        assert (
            httpx.get(f"{base}/oauth/shortcode/check/{grants['leaving']['handle']}").status_code
            == 404
        )
        assert exchange(base, codes["staying"]) == 200
        collected = httpx.get(f"{base}/oauth/shortcode/check/{grants['staying']['handle']}")
        assert collected.status_code == 200


def test_a_collected_shortcode_code_ends_with_the_approving_session(
    make_platform: MakePlatform,
) -> None:
    """The code an app collects for an approved shortcode dies with the session that
    approved it, if the app has not exchanged it yet."""
    platform = make_platform(rate_limits=False)
    base = platform.base_url
    with closing(sign_in(base, "viewer")) as session:
        grant = start_shortcode(base)
        session.post("/oauth/shortcode/approve", json={"code": grant["code"]}).raise_for_status()
        code = httpx.get(f"{base}/oauth/shortcode/check/{grant['handle']}").json()["code"]
        session.delete("/users/current/session").raise_for_status()
    form = {"grant_type": "authorization_code", "code": code, "client_id": "explorer-toolkit"}
    attempt("collected shortcode code after logout")
    assert httpx.post(base + "/oauth/token", data=form).status_code == 400


def test_suspension_ends_every_credential_and_sign_in(make_platform: MakePlatform) -> None:
    """A suspended account's sessions, tokens and JWTs are 401, it cannot sign in (403) or
    fetch an authkey, and signs in again once the suspension is lifted."""
    platform = make_platform(rate_limits=False)
    base = platform.base_url
    world = World(platform)
    with (
        closing(sign_in(base, "viewer2")) as session,
        closing(sign_in(base, "staff")) as staff,
    ):
        token = implicit_token(session, "chat:connect chat:chat")
        jwt = mint_jwt(session)
        channel = world.channel_of("viewer2")
        staff.post(f"/channels/{channel}/suspend").raise_for_status()
        for name, client in (
            ("session", session),
            ("token", bearer(base, token)),
            ("jwt", jwt_client(base, jwt)),
        ):
            attempt(f"suspended account's {name}")
            assert client.get("/users/current").status_code == 401, name
            attempt(f"authkey with a suspended account's {name}")
            assert "authkey" not in client.get(f"/chats/{world.channel}").json(), name
        login = {"username": "viewer2", "password": "explorer"}
        attempt("sign-in of a suspended account")
        assert httpx.post(base + "/users/login", json=login).status_code == 403
        assert httpx.post(base + "/users/login", json={**login, "password": "x"}).status_code == 401
        staff.delete(f"/channels/{channel}/suspend").raise_for_status()
        assert httpx.post(base + "/users/login", json=login).status_code == 200


def test_a_reused_session_row_does_not_revive_a_jwt(
    make_platform: MakePlatform, tmp_path: Path
) -> None:
    """A JWT of an ended session stays dead when the next session gets the same row id."""
    db = tmp_path / "platform.db"
    platform = make_platform(rate_limits=False, db=db)
    base = platform.base_url

    def last_row() -> int:
        with databases.opened(db) as store:
            return int(store.scalar("SELECT MAX(id) FROM sessions"))

    with closing(sign_in(base, "viewer")) as first:
        jwt = mint_jwt(first)
        ended = last_row()
        first.delete("/users/current/session").raise_for_status()
    with closing(sign_in(base, "viewer")):
        assert last_row() == ended  # SQLite handed the freed id to the new session
        attempt("JWT revived by a reused session id")
        assert alive(base, jwt) == 401


def test_forged_and_sourceless_jwts_are_refused(make_platform: MakePlatform) -> None:
    """JWTs without a source, naming another user's session, or with an unknown source are
    401, even when signed with the platform secret."""
    platform = make_platform(rate_limits=False)
    assert platform.services is not None
    secret, now = platform.services.secret, int(platform.services.clock())
    with closing(sign_in(platform.base_url, "viewer")) as session:
        theirs = credentials.jwt_decode(secret, mint_jwt(session))
    assert theirs is not None
    streamer = sign_in(platform.base_url, "streamer").get("/users/current").json()["id"]
    for claims in (
        {"sub": streamer, "exp": now + 60, "scopes": ["user:details:self"]},
        {"sub": streamer, "exp": now + 60, "src": theirs["src"]},
        {"sub": theirs["sub"], "exp": now + 60, "src": "session:0000000000000000"},
        {"sub": theirs["sub"], "exp": now + 60, "src": "grant:nope"},
        {"sub": theirs["sub"], "exp": now + 60, "src": "jwt"},
        {"sub": str(theirs["sub"]), "exp": now + 60, "src": theirs["src"]},
    ):
        attempt("forged JWT source")
        assert alive(platform.base_url, credentials.jwt_encode(secret, claims)) == 401, claims


def test_authkeys_fetched_with_a_jwt_end_with_its_source(make_platform: MakePlatform) -> None:
    """An authkey fetched with a JWT stops working once the JWT's session signs out."""
    platform = make_platform(rate_limits=False)
    world = World(platform)
    viewer = world.user_id("viewer")

    async def scenario() -> None:
        with closing(sign_in(world.base_url, "viewer")) as session:
            with jwt_client(world.base_url, mint_jwt(session)) as by_jwt:
                key = by_jwt.get(f"/chats/{world.channel}").json()["authkey"]
            session.delete("/users/current/session").raise_for_status()
        attempt("JWT's authkey after its session ended")
        await key_is_dead(world, viewer, key)

    run(scenario())


# --- Rule 2: limits count what they say they count ------------------------------------------


def failed_logins(base: str, headers: dict[str, str], count: int) -> list[int]:
    """Statuses of ``count`` wrong logins sent with ``headers``."""
    wrong = {"username": "viewer", "password": "wrong"}
    return [
        httpx.post(base + "/users/login", json=wrong, headers=headers).status_code
        for _ in range(count)
    ]


def test_login_lockout_is_per_address_whatever_credential_is_attached(
    make_platform: MakePlatform,
) -> None:
    """Wrong logins sent with the attacker's own JWT, token or cookie still lock the address:
    the ninth login is 429 with or without a credential attached."""
    platform = make_platform(rate_limits=True)
    base = platform.base_url
    with closing(sign_in(base, "moderator")) as own:
        credential_headers = [
            {"Authorization": f"JWT {mint_jwt(own)}"},
            {"Authorization": f"Bearer {implicit_token(own, 'chat:connect')}"},
            {"Cookie": "; ".join(f"{k}={v}" for k, v in own.cookies.items())},
        ]
    statuses = []
    for index in range(8):
        statuses += failed_logins(base, credential_headers[index % 3], 1)
    attempt("login lockout reset by an attached credential", 8)
    assert statuses == [401] * 8
    right = {"username": "viewer", "password": "explorer"}
    for headers in ({}, *credential_headers):
        attempt("login lockout reset by an attached credential")
        response = httpx.post(base + "/users/login", json=right, headers=headers)
        assert response.status_code == 429, headers


def test_registration_limit_is_per_address_whatever_credential_is_attached(
    make_platform: MakePlatform,
) -> None:
    """Two registrations a minute per address, whether each carries a different JWT or none."""
    platform = make_platform(rate_limits=True)
    base = platform.base_url
    headers = []
    for name in ("viewer", "viewer2", "moderator"):
        with closing(sign_in(base, name)) as own:
            headers.append({"Authorization": f"JWT {mint_jwt(own)}"})
    statuses = []
    for index, sent in enumerate([*headers, {}]):
        body = {"username": f"newcomer{index}", "password": "long-enough", "email": "a@b.cd"}
        statuses.append(httpx.post(base + "/users", json=body, headers=sent).status_code)
        attempt("registration limit reset by an attached credential")
    assert statuses == [201, 201, 429, 429]


def test_a_stolen_credential_cannot_lock_the_owner_out_of_a_password_change(
    make_platform: MakePlatform,
) -> None:
    """A thief's session, token and JWT exhaust their own wrong-password allowance (429);
    the owner's session still changes the password, which ends the thief's credentials."""
    platform = make_platform(rate_limits=True)
    base = platform.base_url
    path = "/users/current/password"
    wrong = {"password": "guess", "newPassword": "whatever-new"}
    with (
        closing(sign_in(base, "viewer")) as thief,
        closing(sign_in(base, "viewer")) as owner,
    ):
        token = implicit_token(thief, "user:update:self")
        for client in (thief, bearer(base, token)):
            statuses = [client.put(path, json=wrong).status_code for _ in range(9)]
            attempt("password-change lockout by a stolen credential", 9)
            assert statuses == [401] * 8 + [429]
        # The same password again: the owner's way to end every other credential at once.
        same = owner.put(path, json={"password": "explorer", "newPassword": "explorer"})
        assert same.status_code == 204, same.text
        assert thief.get("/users/current").status_code == 401
        with bearer(base, token) as api:
            assert api.get("/users/current").status_code == 401
        assert owner.get("/users/current").status_code == 200


def test_guessing_shortcodes_locks_only_the_guessers_credential(
    make_platform: MakePlatform,
) -> None:
    """Wrong shortcode approvals lock the guessing session out (429) but not another
    session of the same account."""
    platform = make_platform(rate_limits=True)
    base = platform.base_url
    with (
        closing(sign_in(base, "viewer")) as guesser,
        closing(sign_in(base, "viewer")) as owner,
    ):
        statuses = [
            guesser.post("/oauth/shortcode/approve", json={"code": f"ZZZZ{n:02d}"}).status_code
            for n in range(9)
        ]
        attempt("shortcode guessing", 9)
        assert statuses == [401] * 8 + [429]
        grant = start_shortcode(base)
        assert (
            owner.post("/oauth/shortcode/approve", json={"code": grant["code"]}).status_code == 200
        )


# --- Rule 3: scopes guard everything they name ----------------------------------------------

#: Routes any valid credential may call with no particular scope, and why: tokens cannot
#: widen themselves through any of them.
SCOPE_FREE = {
    ("GET", "/users/current"): "the chat-bot flow reads its own id with a chat-only token",
    ("POST", "/jwt/authorize"): "the JWT carries the caller's own scopes",
    ("GET", "/oauth/authorize"): "sessions only",
    ("POST", "/oauth/shortcode/approve"): "sessions only",
    ("POST", "/oauth/shortcode/deny"): "sessions only",
    ("GET", "/oauth/shortcode/code/{code}"): "sessions only",
    ("DELETE", "/users/current/session"): "sessions only",
    ("DELETE", "/users/current"): "sessions only (the Java client's spelling of the above)",
    ("POST", "/users/current/refresh"): "answers as GET /users/current and extends nothing",
    ("PATCH", "/channels/{channel}/users/{user}"): "scopes per role change, in the handler",
}


def filled(path: str) -> str:
    """``path`` with every parameter filled with a plausible value."""
    return re.sub(r"\{[^}]+\}", "1", path)


def test_every_scoped_route_refuses_a_token_without_its_scopes(
    make_platform: MakePlatform,
) -> None:
    """Every route that names scopes is 403 to a token, and a JWT, holding none of them, and
    every signed-in route names scopes unless listed in SCOPE_FREE with its reason."""
    platform = make_platform(rate_limits=False)
    base = platform.base_url
    routes = [route for module in modules() for route in module.routes]
    unguarded = {
        (r.method, r.path) for r in routes if r.endpoint.signin == "user" and not r.endpoint.scopes
    } - set(SCOPE_FREE)
    assert not unguarded, f"signed-in routes without scopes: {sorted(unguarded)}"
    with closing(sign_in(base, "streamer")) as session:
        token = implicit_token(session, "interactive:play")
    with bearer(base, token) as by_token, jwt_client(base, mint_jwt(by_token)) as by_jwt:
        for route in routes:
            if not route.endpoint.scopes or "interactive:play" in route.endpoint.scopes:
                continue
            for name, client in (("token", by_token), ("jwt", by_jwt)):
                response = client.request(route.method, filled(route.path), json={})
                attempt("route without its scope")
                assert response.status_code == 403, (name, route.method, route.path)


def test_client_management_needs_oauth_manage(make_platform: MakePlatform) -> None:
    """A chat-only token can neither list, register nor delete the user's OAuth clients
    (and so cannot revoke their tokens); a token with oauth:manage:self can."""
    platform = make_platform(rate_limits=False)
    base = platform.base_url
    with closing(sign_in(base, "viewer")) as session:
        app, tokens = code_grant(platform, session)
        chat_only = implicit_token(session, "chat:connect chat:chat")
        manager = implicit_token(session, "oauth:manage:self")
    body = {"name": "evil", "redirectUris": ["http://127.0.0.1:9/x"]}
    with bearer(base, chat_only) as api:
        for method, path, sent in (
            ("GET", "/oauth/clients", None),
            ("POST", "/oauth/clients", body),
            ("DELETE", f"/oauth/clients/{app['id']}", None),
        ):
            attempt("client management with a chat token")
            assert api.request(method, path, json=sent).status_code == 403, (method, path)
    with bearer(base, tokens["access_token"]) as victim:
        assert victim.get("/users/current").status_code == 200
    with bearer(base, manager) as api:
        assert api.post("/oauth/clients", json=body).status_code == 201
        assert api.delete(f"/oauth/clients/{app['id']}").status_code == 204


# --- Rule 4: consent is informed ------------------------------------------------------------


def test_the_approver_sees_the_client_and_scopes_first(make_platform: MakePlatform) -> None:
    """The code's client and scopes are readable by a signed-in session before approval, the
    /go page shows them (as text) before its buttons; a token cannot read them."""
    platform = make_platform(rate_limits=False)
    base = platform.base_url
    grant = start_shortcode(base, "chat:connect chat:whisper")
    with closing(sign_in(base, "viewer")) as session:
        seen = session.get(f"/oauth/shortcode/code/{grant['code'].lower()}")
        assert seen.status_code == 200, seen.text
        assert seen.json()["client"]["name"] == "explorer toolkit"
        assert seen.json()["scopes"] == ["chat:connect", "chat:whisper"]
        token = implicit_token(session, "chat:connect")
        with bearer(base, token) as api:
            attempt("reading a shortcode grant with a token")
            assert api.get(f"/oauth/shortcode/code/{grant['code']}").status_code == 403
        session.post("/oauth/shortcode/approve", json={"code": grant["code"]}).raise_for_status()
        attempt("reading an approved shortcode")
        assert session.get(f"/oauth/shortcode/code/{grant['code']}").status_code == 401
    page = httpx.get(platform.root_url + "/go").text
    assert '<section id="consent" hidden>' in page and "/oauth/shortcode/code/" in page
    assert "innerHTML" not in page and "textContent = grant.client.name" in page


def test_go_cannot_be_framed(make_platform: MakePlatform) -> None:
    """/go forbids framing by any site (X-Frame-Options and CSP frame-ancestors)."""
    platform = make_platform(rate_limits=False)
    page = httpx.get(platform.root_url + "/go?code=ABC123")
    attempt("framing /go")
    assert page.headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]


CROSS_SITE_ORIGINS = ("http://evil.example", "null", "http://127.0.0.1:1", "https://{host}")


def test_cross_site_submissions_change_nothing(make_platform: MakePlatform) -> None:
    """Sign-in, registration, approval and writes sent with another site's Origin are 403
    and change nothing; the same requests from the platform's own origin work."""
    platform = make_platform(rate_limits=False)
    base = platform.base_url
    host = urlsplit(platform.root_url).netloc
    grant = start_shortcode(base)
    with closing(sign_in(base, "viewer")) as session:
        for origin in CROSS_SITE_ORIGINS:
            sent = {"Origin": origin.format(host=host)}
            for method, path, body, client in (
                ("POST", "/users/login", {"username": "viewer", "password": "explorer"}, None),
                (
                    "POST",
                    "/users",
                    {"username": "csrfed", "password": "long-enough", "email": "a@b.cd"},
                    None,
                ),
                ("POST", "/oauth/shortcode/approve", {"code": grant["code"]}, session),
                ("PATCH", "/users/{me}", {"bio": "pwned"}, session),
                ("POST", "/oauth/token", {"grant_type": "refresh_token", "client_id": "x"}, None),
            ):
                me = session.get("/users/current").json()["id"]
                target = path.format(me=me)
                if client is None:
                    response = httpx.request(method, base + target, json=body, headers=sent)
                else:
                    response = client.request(method, target, json=body, headers=sent)
                attempt("cross-site form submission")
                assert response.status_code == 403, (origin, path)
                assert "set-cookie" not in response.headers
        assert session.get("/users/current").json()["bio"] != "pwned"
        assert httpx.get(f"{base}/oauth/shortcode/check/{grant['handle']}").status_code == 204
        own = {"Origin": platform.root_url}
        assert (
            session.post(
                "/oauth/shortcode/approve", json={"code": grant["code"]}, headers=own
            ).status_code
            == 200
        )
        login = {"username": "viewer", "password": "explorer"}
        assert httpx.post(base + "/users/login", json=login, headers=own).status_code == 200
