"""Security rules, each proven by an attack that must fail.

One test per attack of issue 9. Several rules also have a narrower test elsewhere (named in
the docstrings); these are the hostile versions: many payloads, and a check afterwards that
the attempt changed nothing. Every attempt is counted; the totals are printed when the module
ends (the figures for the closing note).
"""

from __future__ import annotations

import http.client
import statistics
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import httpx
import pytest

from explorer.emulator import Platform
from explorer.emulator.policy import SCOPES
from tests import databases
from tests.chatkit import Chat, World, run
from tests.clocks import ManualClock
from tests.conftest import sign_in
from tests.test_uploads import png

CALLBACK = "http://127.0.0.1/oauth/callback"
ATTACKS: Counter[str] = Counter()
MakePlatform = Callable[..., Platform]


@pytest.fixture(scope="module", autouse=True)
def tally() -> Iterator[None]:
    """Print the attempts of every attack once the module is done."""
    yield
    print(f"\nattacks tried: {sum(ATTACKS.values())}", dict(sorted(ATTACKS.items())))


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    """A platform of this module's own (rate limits off) with signed-in demo clients."""
    running = World.start()
    yield running
    running.stop()


def attempt(attack: str, count: int = 1) -> None:
    """Count ``count`` attempts of ``attack``."""
    ATTACKS[attack] += count


def implicit_token(client: httpx.Client, scope: str) -> str:
    """An implicit-grant access token of the signed-in ``client`` with ``scope``."""
    response = client.get(
        "/oauth/authorize",
        params={
            "response_type": "token",
            "client_id": "explorer-toolkit",
            "redirect_uri": CALLBACK,
            "scope": scope,
        },
    )
    assert response.status_code == 302, response.text
    return parse_qs(urlsplit(response.headers["location"]).fragment)["access_token"][0]


def bearer(base_url: str, token: str) -> httpx.Client:
    """A client sending ``Authorization: Bearer <token>`` and nothing else."""
    return httpx.Client(base_url=base_url, headers={"Authorization": f"Bearer {token}"})


def code_grant(
    platform: Platform, client: httpx.Client, scope: str = "user:details:self"
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Register a confidential client, authorize it for ``scope``, exchange the code:
    (app, tokens)."""
    redirect = "http://127.0.0.1:9/cb"
    app = client.post(
        "/oauth/clients",
        json={"name": "attacker app", "redirectUris": [redirect], "confidential": True},
    ).json()
    location = client.get(
        "/oauth/authorize",
        params={
            "response_type": "code",
            "client_id": app["id"],
            "redirect_uri": redirect,
            "scope": scope,
        },
    ).headers["location"]
    form = {
        "grant_type": "authorization_code",
        "code": parse_qs(urlsplit(location).query)["code"][0],
        "client_id": app["id"],
        "client_secret": app["secret"],
        "redirect_uri": redirect,
    }
    tokens = httpx.post(platform.base_url + "/oauth/token", data=form)
    assert tokens.status_code == 200, tokens.text
    return app, tokens.json()


def cookie_of(client: httpx.Client) -> dict[str, str]:
    """The session cookie of a signed-in client, as a Cookie header."""
    return {"Cookie": "; ".join(f"{k}={v}" for k, v in client.cookies.items())}


# --- CSRF -------------------------------------------------------------------------------

#: Routes that rely on the session, with a harmless body: (method, path, json).
CSRF_TARGETS: tuple[tuple[str, str, Any], ...] = (
    ("GET", "/users/current", None),
    ("PATCH", "/users/{me}", {"bio": "pwned"}),
    ("POST", "/oauth/clients", {"name": "evil", "redirectUris": ["http://127.0.0.1:9/x"]}),
    ("PUT", "/channels/{channel}/follow", None),
    ("POST", "/jwt/authorize", None),
    ("DELETE", "/users/current/session", None),
)


def test_csrf_token_of_another_session_is_refused(world: World) -> None:
    """A CSRF token from another session (same or other user) gets 461 and changes nothing.

    (Narrower: test_platform_accounts.test_csrf_token_of_another_session_is_refused.)
    """
    victim = sign_in(world.base_url, "viewer")
    attackers = [sign_in(world.base_url, "viewer"), sign_in(world.base_url, "viewer2")]
    me, channel = world.user_id("viewer"), world.channel
    try:
        for attacker in attackers:
            token = attacker.headers["X-CSRF-Token"]
            assert token != victim.headers["X-CSRF-Token"]
            for method, path, body in CSRF_TARGETS:
                url = path.format(me=me, channel=channel)
                headers = {**cookie_of(victim), "X-CSRF-Token": token}
                response = httpx.request(method, world.base_url + url, json=body, headers=headers)
                attempt("CSRF token from another session")
                assert response.status_code == 461, (method, url, response.text)
                assert response.json() == {
                    "error": "Invalid or missing CSRF header",
                    "statusCode": 461,
                }
        assert victim.get("/users/current").json()["bio"] != "pwned"
        assert victim.get(f"/channels/{channel}/relationship").json()["status"]["follows"] is None
    finally:
        for client in (victim, *attackers):
            client.close()


def test_csrf_token_replayed_after_logout_is_refused(world: World) -> None:
    """After logout, the old cookie and token never act again, nor does the old token on the
    sessions opened next (SQLite reuses the freed session row id), whoever opens them."""
    old = sign_in(world.base_url, "viewer2")
    replay = {**cookie_of(old), "X-CSRF-Token": old.headers["X-CSRF-Token"]}
    assert old.delete("/users/current/session").status_code == 204
    for method, path, body in CSRF_TARGETS:
        url = world.base_url + path.format(me=world.user_id("viewer2"), channel=world.channel)
        response = httpx.request(method, url, json=body, headers=replay)
        attempt("CSRF token replayed after logout")
        assert response.status_code == 401, (method, path, response.text)
    for next_user in ("staff", "viewer2"):
        with closing(sign_in(world.base_url, next_user)) as fresh:
            stale = {**cookie_of(fresh), "X-CSRF-Token": replay["X-CSRF-Token"]}
            response = httpx.get(world.base_url + "/users/current", headers=stale)
            attempt("CSRF token replayed after logout")
            assert response.status_code == 461, next_user
            assert fresh.delete("/users/current/session").status_code == 204
    old.close()


# --- OAuth tokens -----------------------------------------------------------------------

#: Routes and the scope each needs: a token holding every scope but that one is refused.
SCOPED: tuple[tuple[str, str, str, Any], ...] = (
    ("PATCH", "/users/{me}", "user:update:self", {"bio": "scoped out"}),
    ("PATCH", "/channels/{mine}", "channel:update:self", {"name": "scoped out"}),
    ("DELETE", "/channels/{mine}/streamKey", "channel:streamKey:self", None),
    ("PUT", "/channels/{other}/follow", "channel:follow:self", None),
    ("GET", "/channels/{mine}/analytics/tsdb/viewers", "channel:analytics:self", None),
    ("GET", "/invoices", "invoice:view:self", None),
    ("GET", "/notifications", "notification:view:self", None),
    ("GET", "/interactive/games/owned", "interactive:manage:self", None),
)


def test_bearer_token_missing_a_scope_is_403(world: World) -> None:
    """A token holding every scope but the route's own is refused with 403, and nothing
    changes. (Narrower: test_platform_oauth.test_missing_scope_is_403, test_channels_scopes.)
    """
    mine, other = world.channel_of("streamer"), world.channel_of("viewer")
    key_before = world.rest("streamer").get(f"/channels/{mine}").json()["streamKey"]
    for method, path, scope, body in SCOPED:
        token = implicit_token(world.rest("streamer"), " ".join(sorted(SCOPES - {scope})))
        url = path.format(me=world.user_id("streamer"), mine=mine, other=other)
        with bearer(world.base_url, token) as api:
            response = api.request(method, url, json=body)
        attempt("bearer token with a missing scope")
        assert response.status_code == 403, (method, url, response.text)
        assert scope in response.json()["message"]
    after = world.rest("streamer").get(f"/channels/{mine}").json()
    assert after["streamKey"] == key_before and after["name"] != "scoped out"


def test_expired_implicit_token_is_401(make_platform: MakePlatform) -> None:
    """An implicit-grant token past implicit_token_ttl answers 401."""
    clock = ManualClock()
    platform = make_platform(rate_limits=False, implicit_token_ttl=60, clock=clock)
    with closing(sign_in(platform.base_url, "viewer")) as client:
        token = implicit_token(client, "user:details:self")
    with bearer(platform.base_url, token) as api:
        assert api.get("/users/current").status_code == 200
        clock.advance(61)
        response = api.get("/users/current")
    attempt("expired token")
    assert response.status_code == 401 and "expired" in response.json()["message"]


def test_expired_code_grant_access_token_is_401(make_platform: MakePlatform) -> None:
    """An access token from the code grant past access_token_ttl answers 401."""
    clock = ManualClock()
    platform = make_platform(rate_limits=False, access_token_ttl=60, clock=clock)
    with closing(sign_in(platform.base_url, "streamer")) as client:
        _, tokens = code_grant(platform, client)
    with bearer(platform.base_url, tokens["access_token"]) as api:
        assert api.get("/users/current").status_code == 200
        clock.advance(61)
        attempt("expired token")
        assert api.get("/users/current").status_code == 401


def test_expired_jwt_is_401(make_platform: MakePlatform) -> None:
    """A JWT past jwt_ttl answers 401."""
    clock = ManualClock()
    platform = make_platform(rate_limits=False, jwt_ttl=60, clock=clock)
    with closing(sign_in(platform.base_url, "viewer")) as client:
        jwt = client.post("/jwt/authorize").headers["X-JWT"]
    headers = {"Authorization": f"JWT {jwt}"}
    assert httpx.get(platform.base_url + "/users/current", headers=headers).status_code == 200
    clock.advance(61)
    attempt("expired token")
    assert httpx.get(platform.base_url + "/users/current", headers=headers).status_code == 401


def test_revoked_tokens_are_401(make_platform: MakePlatform) -> None:
    """Revoking a refresh token kills its access token too (the whole grant), and revoking
    an access token kills it. (Narrower: test_platform_oauth.test_revoked_token_is_refused.)
    """
    platform = make_platform(rate_limits=False)
    with closing(sign_in(platform.base_url, "streamer")) as client:
        _, tokens = code_grant(platform, client)
        implicit = implicit_token(client, "user:details:self")
    revoke = platform.base_url + "/oauth/revoke"
    assert httpx.post(revoke, data={"token": tokens["refresh_token"]}).status_code == 200
    assert httpx.post(revoke, data={"token": implicit}).status_code == 200
    for token in (tokens["access_token"], implicit):
        with bearer(platform.base_url, token) as api:
            attempt("revoked token")
            assert api.get("/users/current").status_code == 401
    refresh = {
        "grant_type": "refresh_token",
        "refresh_token": tokens["refresh_token"],
        "client_id": "x",
    }
    attempt("revoked token")
    assert httpx.post(platform.base_url + "/oauth/token", data=refresh).status_code in (400, 401)


def test_refresh_token_reuse_revokes_the_whole_family(make_platform: MakePlatform) -> None:
    """Replaying a used refresh token revokes every token of the grant, newest included.

    (Narrower: test_platform_oauth.test_refresh_rotates_and_reuse_revokes_family.)
    """
    platform = make_platform(rate_limits=False)
    with closing(sign_in(platform.base_url, "streamer")) as client:
        app, first = code_grant(platform, client)
    token_url = platform.base_url + "/oauth/token"
    rotate = {"grant_type": "refresh_token", "client_id": app["id"], "client_secret": app["secret"]}
    chain = [first]
    for _ in range(3):
        chain.append(
            httpx.post(token_url, data={**rotate, "refresh_token": chain[-1]["refresh_token"]})
            .raise_for_status()
            .json()
        )
    stolen = chain[1]["refresh_token"]  # used once already, then replayed by a thief
    replay = httpx.post(token_url, data={**rotate, "refresh_token": stolen})
    attempt("refresh token reuse")
    assert replay.status_code == 400 and replay.json()["error"] == "invalid_grant"
    for tokens in chain:
        with bearer(platform.base_url, tokens["access_token"]) as api:
            attempt("refresh token reuse")
            assert api.get("/users/current").status_code == 401
    newest = httpx.post(token_url, data={**rotate, "refresh_token": chain[-1]["refresh_token"]})
    attempt("refresh token reuse")
    assert newest.status_code == 400


# --- chat authkeys ----------------------------------------------------------------------


async def refused_auth(world: World, channel: int, user: int, key: str) -> None:
    """auth with these arguments answers UNOTFOUND and the connection cannot chat."""
    chat = await world.connect()
    error = await chat.error("auth", channel, user, key)
    assert error["code"] == 1 and error["message"] == "UNOTFOUND"
    assert (await chat.error("msg", "let me in"))["code"] == 4003
    await chat.close()


def test_authkey_for_one_channel_fails_on_another(world: World) -> None:
    """A key issued for channel A answers UNOTFOUND on channel B, over a real websocket."""
    channels = [world.channel_of(name) for name in ("streamer", "moderator", "viewer2")]
    viewer = world.user_id("viewer")

    async def scenario() -> None:
        for issued in channels:
            key = world.details("viewer", issued)["authkey"]
            for used in channels:
                if used != issued:
                    attempt("authkey of channel A on channel B")
                    await refused_auth(world, used, viewer, key)

    run(scenario())


def test_authkey_of_one_user_fails_as_another(world: World) -> None:
    """A key issued to user X answers UNOTFOUND when presented as user Y (any Y)."""
    key = world.details("viewer")["authkey"]

    async def scenario() -> None:
        for name in ("streamer", "moderator", "viewer2", "staff"):
            attempt("authkey of user X as user Y")
            await refused_auth(world, world.channel, world.user_id(name), key)

    run(scenario())


def test_expired_authkey_fails(make_platform: MakePlatform) -> None:
    """A key past authkey_ttl answers UNOTFOUND, even for its own channel and user.

    (Narrower: test_chat_auth.test_expired_key_is_unotfound.)
    """
    clock = ManualClock()
    short = World(make_platform(rate_limits=False, authkey_ttl=60, clock=clock))
    key = short.details("viewer")["authkey"]
    clock.advance(61)

    async def scenario() -> None:
        attempt("expired authkey")
        await refused_auth(short, short.channel, short.user_id("viewer"), key)

    try:
        run(scenario())
    finally:
        for client in short.clients.values():
            client.close()


# --- chat permissions -------------------------------------------------------------------


def test_whisper_is_not_read_by_a_third_party(world: World) -> None:
    """Nobody but sender and target sees a whisper: not the owner, a mod, a reader, on any
    node, nor later through history."""

    async def scenario() -> None:
        sender = await world.join("viewer", node=0)
        target = await world.join("viewer2", node=1)
        others = [
            await world.join("streamer", node=1),
            await world.join("moderator", node=0),
            await world.join(None, node=1),
        ]
        await sender.ok("whisper", "viewer2", "the secret is xyzzy")
        assert (await target.event("ChatMessage"))["message"]["meta"]["whisper"] is True
        await sender.ok("msg", "end of test marker")
        for third in others:
            attempt("whisper read by a third party")
            seen = await third.event("ChatMessage")
            assert seen["message"]["meta"] == {}, seen  # the marker, not the whisper
            history = await third.ok("history", 100)
            assert all("xyzzy" not in str(item) for item in history)
        await asyncio_close(sender, target, *others)

    run(scenario())


async def asyncio_close(*chats: Chat) -> None:
    """Close every chat."""
    for chat in chats:
        await chat.close()


def test_viewer_cannot_call_moderator_methods(world: World) -> None:
    """A viewer's timeout, purge, deleteMessage (of another's), clearMessages and vote:start
    are refused (4002) and change nothing. (Narrower: test_chat_moderation.)"""

    async def scenario() -> None:
        viewer = await world.join("viewer")
        victim = await world.join("viewer2", node=1)
        message = await victim.ok("msg", "do not delete me")
        attacks: list[tuple[Any, ...]] = [
            ("timeout", "viewer2", "1h"),
            ("timeout", "moderator", "30s"),
            ("purge", "viewer2"),
            ("deleteMessage", message["id"]),
            ("clearMessages",),
            ("vote:start", "Am I a mod now?", ["yes", "no"], 30),
            ("giveaway:start",),
        ]
        for method, *args in attacks:
            attempt("viewer calling moderator methods")
            error = await viewer.error(method, *args)
            assert error["code"] == 4002, (method, error)
        assert await victim.ok("msg", "still allowed to speak")
        history = await viewer.ok("history", 100)
        assert message["id"] in {item["id"] for item in history}
        for event in ("UserTimeout", "PurgeMessage", "DeleteMessage", "ClearMessages"):
            await victim.no_event(event)
        await victim.no_event("PollStart")
        await asyncio_close(viewer, victim)

    run(scenario())


def test_moderator_has_no_power_in_another_channel(world: World) -> None:
    """A Mod of one channel is a plain viewer in another: chat moderation and REST role
    changes there are refused."""
    elsewhere = world.channel_of("viewer")

    async def scenario() -> None:
        mod = await world.join("moderator", channel=elsewhere)
        victim = await world.join("viewer2", channel=elsewhere, node=1)
        message = await victim.ok("msg", "mine")
        for method, *args in (
            ("timeout", "viewer2", "1h"),
            ("purge", "viewer2"),
            ("deleteMessage", message["id"]),
            ("clearMessages",),
            ("vote:start", "Q?", ["a", "b"], 30),
        ):
            attempt("mod acting in a channel where they are not mod")
            assert (await mod.error(method, *args))["code"] == 4002, method
        assert message["id"] in {item["id"] for item in await mod.ok("history", 100)}
        await asyncio_close(mod, victim)

    run(scenario())
    rest = world.rest("moderator")
    for change in ({"add": ["Banned"]}, {"add": ["Mod"]}, {"remove": ["Owner"]}):
        for target in ("viewer2", "viewer"):
            url = f"/channels/{elsewhere}/users/{world.user_id(target)}"
            attempt("mod acting in a channel where they are not mod")
            assert rest.patch(url, json=change).status_code == 403
    roles = world.rest("viewer").get(f"/chats/{elsewhere}").json()["permissions"]
    assert "change_role" in roles  # the owner kept every power


# --- passwords and accounts -------------------------------------------------------------


def test_password_brute_force_is_stopped(make_platform: MakePlatform) -> None:
    """After 8 failed logins from an address, every login is refused with 429, whichever
    account and even with the right password. (Narrower: test_platform_ratelimit.)"""
    platform = make_platform(rate_limits=True)
    login = platform.base_url + "/users/login"
    for guess in range(8):
        user = ("viewer", "streamer")[guess % 2]
        response = httpx.post(login, json={"username": user, "password": f"guess{guess}"})
        attempt("password brute force")
        assert response.status_code == 401
    for user, password in (("viewer", "explorer"), ("streamer", "explorer"), ("staff", "nope")):
        response = httpx.post(login, json={"username": user, "password": password})
        attempt("password brute force")
        assert response.status_code == 429, (user, response.text)
        assert "set-cookie" not in response.headers


def test_login_errors_do_not_tell_accounts_apart(make_platform: MakePlatform) -> None:
    """Unknown user and wrong password get the same status, body and (roughly) time."""
    platform = make_platform(rate_limits=False)
    login = platform.base_url + "/users/login"
    cases = {"known": "viewer", "unknown": "nobody_here_at_all"}
    times: dict[str, list[float]] = {name: [] for name in cases}
    bodies: dict[str, set[tuple[int, str]]] = {name: set() for name in cases}
    with httpx.Client() as client:
        for _ in range(7):
            for name, username in cases.items():
                started = time.perf_counter()
                response = client.post(login, json={"username": username, "password": "wrong1"})
                times[name].append(time.perf_counter() - started)
                bodies[name].add((response.status_code, response.text))
                attempt("account enumeration through login errors")
    assert bodies["known"] == bodies["unknown"] and len(bodies["known"]) == 1
    known, unknown = (statistics.median(times[name]) for name in cases)
    assert 0.5 < known / unknown < 2.0, (known, unknown)


# --- SQL injection ----------------------------------------------------------------------

WHERE_PAYLOADS = (
    "viewersTotal:gt:0) OR 1=1--",
    "viewersTotal:gt:0 OR 1=1",
    "id:eq:1;DROP TABLE users",
    "id:in:1;2) OR (1=1",
    "token:eq:' OR '1'='1",
    "token:eq:x' UNION SELECT password_hash FROM users--",
    'name":eq:1',
    "'id':eq:1",
    "id`:eq:1",
    "id) OR 1=1--:eq:1",
    "online.eq.1 OR 1=1",
)
ORDER_PAYLOADS = (
    "viewersTotal:DESC;DROP TABLE users",
    "viewersTotal DESC, (SELECT 1)",
    "id:asc--",
    "(CASE WHEN 1=1 THEN id ELSE token END)",
    '"id":asc',
    "id' :desc",
    "viewersTotal:desc) UNION SELECT * FROM users--",
)
FIELDS_PAYLOADS = (
    "id,token FROM users--",
    "*",
    "id;DROP TABLE channels",
    '"password_hash"',
    "password_hash",
    "email",
    "id, (SELECT password_hash FROM users)",
    "id'",
)
Q_PAYLOADS = (
    "' OR 1=1--",
    "%' OR '1'='1",
    '"; DROP TABLE users; --',
    "' UNION SELECT password_hash, email FROM users--",
    "\\' OR 1=1 ESCAPE '\\'",
    "x%' AND 1=1 AND '%'='",
)


def secrets_in(path: Path) -> list[str]:
    """Password hashes and e-mail addresses stored in the database of a platform on ``path``."""
    with databases.opened(path) as store:
        rows = store.all("SELECT password_hash, email FROM users")
    return [value for row in rows for value in row if value]


#: Each engine's check of the database ("ok": on PostgreSQL, whose server checks pages as it
#: reads them, that no index is left invalid), and its list of tables.
INTEGRITY = {
    "sqlite": "PRAGMA integrity_check",
    "postgresql": "SELECT CASE WHEN COUNT(*) = 0 THEN 'ok' ELSE 'an index is invalid' END "
    "FROM pg_index WHERE NOT indisvalid",
}
TABLES = {
    "sqlite": "SELECT name FROM sqlite_master ORDER BY 1",
    "postgresql": "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY 1",
}


def database_state(path: Path) -> tuple[str, list[str], int, int]:
    """(integrity, table names, users, channels) read through a connection of our own."""
    with databases.opened(path) as store:
        check = store.scalar(INTEGRITY[store.engine])
        tables = [row[0] for row in store.all(TABLES[store.engine])]
        users = store.scalar("SELECT COUNT(*) FROM users")
        channels = store.scalar("SELECT COUNT(*) FROM channels")
    return check, tables, users, channels


def test_sql_injection_through_list_parameters_fails(
    make_platform: MakePlatform, tmp_path: Path
) -> None:
    """Injection through where, order, fields and q answers 400 or matches literally, leaks
    no secret, and leaves every table intact."""
    db = tmp_path / "platform.db"
    platform = make_platform(rate_limits=False, db=db)
    assert platform.indexes is not None and platform.indexes.wait(60)  # built after the start
    before = database_state(db)
    secrets = secrets_in(db)
    owner = sign_in(platform.base_url, "streamer")
    tried = [("where", p) for p in WHERE_PAYLOADS] + [("order", p) for p in ORDER_PAYLOADS]
    tried += [("fields", p) for p in FIELDS_PAYLOADS]
    tried += [("q", p) for p in Q_PAYLOADS]
    for name, payload in tried:
        for client in (httpx.Client(base_url=platform.base_url), owner):
            response = client.get("/channels", params={name: payload, "scope": "all"})
            attempt(f"SQL injection through {name}")
            assert response.status_code in (200, 400), (name, payload, response.text)
            assert not any(secret in response.text for secret in secrets), (name, payload)
            if response.status_code == 400:
                assert response.json()["details"][0]["path"].split(".")[0] in (name, "scope")
            elif name == "q":
                assert response.json() == [], (payload, "matched as a pattern")
            else:
                assert name == "where" and response.json() == [], (payload, response.text)
    for path, params in (
        ("/channels/streamer/recordings", {"order": ORDER_PAYLOADS[0]}),
        ("/interactive/games", {"q": Q_PAYLOADS[1]}),
        ("/types", {"online": "1 OR 1=1"}),
    ):
        attempt("SQL injection through other lists")
        response = owner.get(path, params=params)
        assert response.status_code in (200, 400), (path, response.text)
        if response.status_code == 200 and "q" in params:
            assert response.json() == []
    owner.close()
    after = database_state(db)
    assert after == before and after[0] == "ok"


# --- path traversal ---------------------------------------------------------------------

PNG = png()
HOSTILE_NAMES = (
    "../../etc/passwd",
    "..\\..\\windows\\win.ini",
    "/etc/passwd",
    "%2e%2e%2f%2e%2e%2fescape.png",
    "....//....//escape.png",
    "escape.png\x00.txt",
    "~/.ssh/authorized_keys",
    "../" * 20 + "tmp/escape.png",
)
RAW_PATHS = (
    "/api/v1/resources/../../../../etc/passwd",
    "/api/v1/resources/..%2F..%2F..%2Fetc%2Fpasswd",
    "/api/v1/resources/%2e%2e%2f%2e%2e%2fetc%2fpasswd",
    "/api/v1/resources/%252e%252e%252fetc%252fpasswd",
    "/api/v1/resources/....//....//etc/passwd",
    "/api/v1/resources/1/../../../etc/passwd",
    "/api/v1/resources/..;/..;/etc/passwd",
    "/api/v1/resources/%00../../etc/passwd",
    "/api/v1/resources/" + quote("/etc/passwd", safe=""),
    "/api/v1/../../../../etc/passwd",
)


def tree(root: Path) -> dict[str, int]:
    """Every file under ``root`` and its size."""
    return {str(p.relative_to(root)): p.stat().st_size for p in root.rglob("*") if p.is_file()}


def raw_get(base_url: str, path: str) -> tuple[int, bytes]:
    """GET ``path`` exactly as written (no client-side normalisation of ``..``)."""
    parts = urlsplit(base_url)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=10)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def test_path_traversal_through_uploads_touches_no_file(
    make_platform: MakePlatform, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hostile upload file names are ignored (bytes go to the database) and hostile resource
    paths answer 400/404: no file is written or read outside the database."""
    home = tmp_path / "a" / "b" / "c" / "cwd"
    home.mkdir(parents=True)
    monkeypatch.chdir(home)  # so a relative "../.." would land inside tmp_path
    platform = make_platform(rate_limits=False, db=tmp_path / "platform.db")
    files_before = tree(tmp_path)
    passwd = Path("/etc/passwd").stat().st_mtime_ns if Path("/etc/passwd").exists() else 0
    channel = platform.base_url + "/channels/streamer"
    with closing(sign_in(platform.base_url, "streamer")) as owner:
        for name in HOSTILE_NAMES:
            response = owner.post(f"{channel}/thumbnail", files={"file": (name, PNG, "image/png")})
            attempt("path traversal through uploads")
            assert response.status_code == 201, response.text
            resource = response.json()
            assert resource["url"] == f"/api/v1/resources/{resource['id']}"
            assert name not in response.text
            served = httpx.get(platform.root_url + resource["url"])
            assert served.content == PNG
        with_traversal_field = owner.post(
            f"{channel}/badge", files={"../../file": ("x.png", PNG, "image/png")}
        )
        attempt("path traversal through uploads")
        assert with_traversal_field.status_code == 400
    for path in RAW_PATHS:
        status, body = raw_get(platform.base_url, path)
        attempt("path traversal through resource paths")
        assert status in (400, 404), (path, status)
        assert b"root:" not in body
    changed = {
        name
        for name, size in tree(tmp_path).items()
        if files_before.get(name) != size and not name.startswith("platform.db")
    }
    assert changed == set() and list(home.iterdir()) == []
    if passwd:
        assert Path("/etc/passwd").stat().st_mtime_ns == passwd
