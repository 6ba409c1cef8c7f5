"""Security rules of issue 36 (round 4) on REST, the front and the command line, each tried
across every surface it reaches over real sockets: integers are read one way (rule 13),
names are whole matches without look-alikes (rule 7), hosts are named (rule 8), listings hide
suspended channels alike (rule 14), refusals are answered (the 431 penalty). Attempts add to
the attack count of :mod:`tests.test_security`.
"""

from __future__ import annotations

import asyncio
import io
import re
import threading
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

import explorer
from explorer.cli.guide import Tour
from explorer.cli.record import Display
from explorer.core.durations import seconds
from explorer.core.jupyterhub import served_hosts
from explorer.emulator.app import build_app
from explorer.emulator.context import Config
from explorer.emulator.resources import ads, chatters, control, modules
from explorer.views.rendering import sprite_url
from tests.chatkit import World, run
from tests.conftest import sign_in
from tests.databases import open_services
from tests.test_channels_emoticons import HYPE
from tests.test_security import ATTACKS, MakePlatform, attempt
from tests.test_security_front import answer, answer_head, raw, turned_away


@pytest.fixture(scope="module", autouse=True)
def tally() -> Iterator[None]:
    """Print the attack count, this module's attempts included, once the module is done."""
    yield
    print(f"\nattacks tried (with round 4): {sum(ATTACKS.values())}", dict(sorted(ATTACKS.items())))


# --- Rule 13: one reader of integers ---------------------------------------------------------

#: Texts ``str.isdigit`` or ``int`` take for numbers that no id or limit is: superscripts,
#: circled digits, other scripts' digits, spaces, underscores, signs, past 64 bits.
ODD_NUMBERS = ("²", "①", "1²", "٣", " 1", "1_0", "+1", "-1", "9" * 20, "١٢٣")


def test_odd_digits_in_every_id_and_integer_are_a_4xx(make_platform: MakePlatform) -> None:
    """Every route (v1, v2, control), signed in, with each odd number in every path parameter
    and in ``limit``, ``page``, ``user`` and ``where``, answers a JSON 4xx or a success."""
    platform = make_platform(rate_limits=False)
    routes = [
        *(("/api/v1", r) for module in modules() for r in module.routes),
        *(("/api/v2", r) for r in (*chatters.V2_ROUTES, *ads.V2_ROUTES)),
        *(("/_emulator", r) for r in control.routes),
    ]
    with closing(sign_in(platform.base_url, "streamer")) as session:
        for value in ODD_NUMBERS:
            for prefix, route in routes:
                path = prefix + re.sub(r"\{[^}]+\}", value, route.path)
                params = {"limit": value, "page": value, "user": value, "where": f"id:eq:{value}"}
                response = session.request(
                    route.method, platform.root_url + path, params=params, json={}
                )
                attempt("odd digits in an id or integer")
                assert response.status_code < 500, (route.method, path, value, response.text)
                if response.status_code >= 400:
                    assert response.json()["statusCode"] == response.status_code, path


def test_odd_digits_in_a_chat_duration_are_a_4000() -> None:
    """``timeout`` with each odd number as its duration answers 4000 and times nobody out."""
    world = World.start()

    async def scenario() -> list[int]:
        owner = await world.join("streamer")
        codes = [
            int((await owner.error("timeout", "viewer", value))["code"])
            for value in ODD_NUMBERS
            if value.strip(" +") != "1"
        ]
        attempt("odd digits in a chat duration", len(codes))
        await owner.ok("msg", "still answering")
        await owner.close()
        return codes

    try:
        assert set(run(scenario())) == {4000}
    finally:
        world.stop()


# --- Rule 7: whole matches, visible names ----------------------------------------------------

#: Names that are not the name they show: a final newline, a look-alike of another script
#: (Cyrillic ``ѕ``, fullwidth letters), a control sequence, a zero-width space.
NOT_A_USERNAME = ("fresh\n", "ѕtreamer", "ｆresh", "fresh\x1b[2J", "fre\u200bsh", "fresh\r")


def test_a_username_is_matched_whole(make_platform: MakePlatform) -> None:
    """Registering a name with a final newline, a look-alike letter or a hidden character is
    400 and creates no account; so is an e-mail address with a final newline."""
    platform = make_platform(rate_limits=False)
    base = platform.base_url
    for name in NOT_A_USERNAME:
        body = {"username": name, "password": "long enough", "email": "a@example.com"}
        attempt("hidden character in a username")
        response = httpx.post(base + "/users", json=body)
        assert response.status_code == 400, (name, response.text)
        assert response.json()["details"][0]["path"] == "username"
    body = {"username": "fresh", "password": "long enough", "email": "a@example.com\n"}
    attempt("final newline in an e-mail address")
    assert httpx.post(base + "/users", json=body).status_code == 400
    found = httpx.get(base + "/users/search", params={"query": "fresh"}).json()
    assert not [user for user in found if "fresh" in user["username"]]


#: Names that hide or rearrange what they show: a right-to-left override, a newline, a
#: terminal's window-title sequence, a zero-width space, a line separator.
HIDDEN_IN_NAMES = ("evil\u202etxt.exe", "two\nlines", "\x1b]0;owned\x07", "a\u200bb", "a\u2028b")


def test_names_people_are_shown_hold_no_hidden_characters(make_platform: MakePlatform) -> None:
    """A channel title, an OAuth client's name, a game's and a confetti's name with a control
    or invisible character are 400 and change nothing; an emoji sequence (zero-width joiner)
    stays welcome; whole matches hold for emoticon codes, colours and versions."""
    platform = make_platform(rate_limits=False)
    with closing(sign_in(platform.base_url, "streamer")) as owner:
        title = owner.get("/channels/streamer").json()["name"]
        game = owner.post("/interactive/games", json={"name": "Quiz"}).json()["id"]
        writes = (
            ("PATCH", "/channels/streamer", "name", {}),
            ("POST", "/oauth/clients", "name", {"redirectUris": ["http://127.0.0.1:9/x"]}),
            ("POST", "/interactive/games", "name", {}),
            ("PUT", f"/interactive/games/{game}", "name", {}),
            ("PUT", "/confetti", "name", {"particles": [{"type": "color", "value": "#ff8800"}]}),
        )
        for method, path, field, rest in writes:
            for name in HIDDEN_IN_NAMES:
                attempt("hidden character in a shown name")
                response = owner.request(method, path, json={**rest, field: name})
                assert response.status_code == 400, (path, name, response.text)
            family = owner.request(
                method, path, json={**rest, field: "team \U0001f468\u200d\U0001f469"}
            )
            assert family.status_code < 300, (path, family.text)
        owner.patch("/channels/streamer", json={"name": title}).raise_for_status()
        whole = (
            ("PATCH", "/channels/streamer/emoticons", {"emoticons": {"hype\n": HYPE}}),
            (
                "PUT",
                "/confetti",
                {"name": "x", "particles": [{"type": "color", "value": "#ff8800\n"}]},
            ),
            ("POST", "/interactive/versions", {"gameId": game, "version": "1.2.3\n"}),
            ("POST", "/interactive/versions", {"gameId": game, "version": "١.٢.٣"}),
        )
        for method, path, body in whole:
            attempt("final newline in a pattern")
            response = owner.request(method, path, json=body)
            assert response.status_code == 400, (path, body, response.text)


def test_the_toolkits_patterns_match_whole() -> None:
    """The toolkit's pack names and durations are whole matches of ASCII: a final newline or
    another script's digits are no pack and no duration."""
    base = "http://127.0.0.1:1/api/v1"
    assert sprite_url(base, "faces") is not None
    attempt("final newline in a pattern", 3)
    assert sprite_url(base, "faces\n") is None
    for text in ("٣s", "3s\n5"):
        with pytest.raises(ValueError):
            seconds(text)


# --- Rule 14: a suspended account is hidden from every listing ------------------------------


def test_suspended_accounts_are_hidden_from_every_listing(make_platform: MakePlatform) -> None:
    """Once viewer2's channel is suspended, anonymous callers and other users no longer find
    viewer2 in the user search, the followers and users (roles) of a channel or
    ``/users/{id}``; staff still do (the channel listings filter suspended channels already,
    and a suspension ends the hosts of the channel)."""
    platform = make_platform(rate_limits=False)
    base = platform.base_url
    world = World(platform)
    hidden, channel = world.user_id("viewer2"), world.channel_of("viewer2")
    with (
        closing(sign_in(base, "viewer2")) as suspended,
        closing(sign_in(base, "streamer")) as owner,
        closing(sign_in(base, "viewer")) as other,
        closing(sign_in(base, "staff")) as staff,
    ):
        suspended.put("/channels/streamer/follow").raise_for_status()
        owner.patch(f"/channels/streamer/users/{hidden}", json={"add": ["Mod"]}).raise_for_status()
        listings = {
            "search": "/users/search?query=viewer2",
            "followers": "/channels/streamer/follow?limit=100",
            "roles": "/channels/streamer/users",
            "user": f"/users/{hidden}",
        }

        def shown(client: httpx.Client, path: str) -> bool:
            response = client.get(path)
            return response.status_code == 200 and '"viewer2"' in response.text

        assert all(shown(staff, path) for path in listings.values())
        staff.post(f"/channels/{channel}/suspend").raise_for_status()
        for name, client in (("anonymous", httpx.Client(base_url=base)), ("user", other)):
            for listing, path in listings.items():
                attempt("suspended account in a listing")
                assert not shown(client, path), (name, listing)
        assert all(shown(staff, path) for path in listings.values())


# --- Refusals are answered: a held connection ends with a 429 -------------------------------


def test_a_client_sharing_a_refused_address_reads_a_refusal_then_data(
    make_platform: MakePlatform,
) -> None:
    """Right after a 431 from its address (a neighbour behind the same proxy), a raw client's
    next request is answered 429 with a JSON body and ``Retry-After`` (not closed unanswered),
    and the toolkit's listing waits it out and reads its rows."""
    platform = make_platform(rate_limits=False, header_penalty=0.5)
    head = b"GET /api/v1/channels?limit=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    with closing(raw(platform)) as neighbour:
        neighbour.sendall(head + b"X-Big: " + b"a" * 20_000)
        assert answer(neighbour).startswith(b"HTTP/1.1 431 ")
    with closing(raw(platform)) as notebook:
        notebook.sendall(head + b"\r\n")
        attempt("a request right after a neighbour's 431")
        assert turned_away(answer(notebook))
    with closing(raw(platform)) as neighbour:
        neighbour.sendall(head + b"X-Big: " + b"a" * 20_000)
        assert answer(neighbour).startswith(b"HTTP/1.1 431 ")
    with explorer.connect(platform.base_url) as api:
        assert len(api.channels(max_rows=3, progress=False)) == 3


# --- Rule 8: the platform answers only the host names it serves -----------------------------


def _names(host: str, port: int) -> dict[str, str]:
    """Request headers of a page at ``host`` that rebound its name to the platform."""
    return {"Host": f"{host}:{port}", "Origin": f"http://{host}:{port}"}


def test_a_rebound_page_reaches_nothing(make_platform: MakePlatform) -> None:
    """Requests naming another host (a page whose name was rebound to loopback) get a JSON 421
    from the control namespace's mail box, a cached page, sign-in (which its Origin would
    pass), the consent page and the live-events socket, and sign no one in; loopback names
    and addresses are served; a malformed Host is 400."""
    platform = make_platform(rate_limits=False)
    root, port = platform.root_url, urlsplit(platform.root_url).port or 80
    login = {"username": "viewer", "password": "explorer"}
    httpx.get(root + "/api/v1/channels?limit=1").raise_for_status()  # cached from now on
    tries = (
        ("GET", "/_emulator/mail", None),
        ("GET", "/_emulator/health", None),
        ("GET", "/api/v1/channels?limit=1", None),
        ("POST", "/api/v1/users/login", login),
        ("GET", "/go", None),
    )
    for method, path, body in tries:
        attempt("request naming a rebound host")
        response = httpx.request(
            method, root + path, json=body, headers=_names("rebound.example", port)
        )
        assert response.status_code == 421, (path, response.text)
        assert response.json()["statusCode"] == 421 and "set-cookie" not in response.headers
        for host in ("localhost", "127.0.0.1", "[::1]", "app.localhost"):
            served = httpx.request(method, root + path, json=body, headers=_names(host, port))
            assert served.status_code < 400, (host, path, served.text)
    attempt("request with a malformed host")
    malformed = httpx.get(root + "/api/v1/channels?limit=1", headers={"Host": "a b"})
    assert malformed.status_code == 400 and malformed.json()["statusCode"] == 400

    for host, served in (("rebound.example", False), ("localhost", True)):
        with closing(raw(platform)) as sock:
            sock.sendall(
                b"GET / HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\n"
                b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                b"Sec-WebSocket-Version: 13\r\n\r\n" % (host.encode(), port)
            )
            attempt("live events from a rebound host")
            status = answer_head(sock).split(b" ", 2)[1]
            assert (status == b"101") is served, (host, status)


def test_named_hosts_and_trusted_proxies_are_served(make_platform: MakePlatform) -> None:
    """A host the operator names (``allowed_hosts``) is served and another still 421; behind
    a trusted proxy, whatever public name the proxy forwards is served."""
    named = make_platform(rate_limits=False, allowed_hosts=("explorer.example",))
    proxied = make_platform(rate_limits=False, forwarded_allow_ips=("127.0.0.1",))
    for platform, host, status in (
        (named, "explorer.example", 200),
        (named, "rebound.example", 421),
        (proxied, "hub.binder.example", 200),
    ):
        url = platform.base_url + "/channels?limit=1"
        attempt("request naming a host")
        assert httpx.get(url, headers={"Host": host}).status_code == status, (host, status)


# --- Rule 6: what one request costs is bounded, not only how many -----------------------------


@pytest.mark.sqlite_only("counts the steps of SQLite's virtual machine (its progress handler)")
def test_related_and_hosts_pages_cost_no_scan_of_the_world() -> None:
    """In a world of 5,000 channels, a page of a popular channel's relatives (deep pages too),
    once its tiers are counted, a channel's hosts and a user search cost SQLite fewer than four
    steps per channel of the world (a sort of the language's channels took 25): none sorts or
    scans the world per request (counted by SQLite's progress handler on the platform's own
    connection, the app called in process)."""
    services = open_services(":memory:", Config(channels=5000, rate_limits=False), time.time)
    app = build_app(services)
    steps = [0]

    def step() -> int:
        steps[0] += 1
        return 0

    busiest = services.store.scalar(
        "SELECT id FROM channels WHERE languageId = 'en' AND typeId IS NOT NULL "
        "ORDER BY viewersTotal DESC LIMIT 1"
    )

    async def cost(path: str) -> int:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            services.store.conn.set_progress_handler(step, 100)
            steps[0] = 0
            response = await client.get("/api/v1" + path)
            services.store.conn.set_progress_handler(None, 100)
        assert response.status_code == 200, response.text
        return steps[0] * 100

    try:
        asyncio.run(cost(f"/channels/{busiest}/related"))  # counts its tiers
        for path in (
            f"/channels/{busiest}/related",
            f"/channels/{busiest}/related?page=30",
            f"/channels/{busiest}/hosters",
            "/users/search?query=ab",
        ):
            attempt("expensive page")
            assert asyncio.run(cost(path)) < 4 * 5000, path
    finally:
        services.store.close()


# --- Rule 12: the commands print what chatters write, never what it would make a terminal do --

#: What a chatter might send a terminal: clear the screen, set the window title, write the
#: clipboard (OSC 52), an 8-bit CSI, a right-to-left override, a carriage return.
ESCAPES = "\x1b[2J\x1b]0;owned\x07\x1b]52;c;aGk=\x07\x9b2J\u202e\r"


def test_the_tour_prints_chatters_escape_sequences_inert(
    make_platform: MakePlatform, tmp_path: Path
) -> None:
    """While ``explorer tour`` watches the busiest chat, a chatter's message full of terminal
    control sequences is printed with every control character escaped; so is a progress line
    of ``explorer record``."""
    platform = make_platform(rate_limits=False)
    busiest = httpx.get(
        platform.base_url + "/channels",
        params={"where": "online:eq:1", "order": "viewersCurrent:desc", "limit": 1},
    ).json()[0]["token"]
    lines: list[str] = []
    stop = threading.Event()

    def chatter() -> None:
        with (
            explorer.connect(platform.base_url, username="viewer", password="explorer") as api,
            api.chat(busiest) as chat,
        ):
            deadline = time.monotonic() + 15
            while not stop.is_set() and time.monotonic() < deadline:
                chat.send(f"hi {ESCAPES} there")
                stop.wait(0.3)

    sender = threading.Thread(target=chatter)
    sender.start()
    try:
        with explorer.connect(platform.base_url, progress=False) as api:
            Tour(out=tmp_path, watch=3.0, write=lines.append).watch_busiest(api)
    finally:
        stop.set()
        sender.join(20)
    printed = "\n".join(lines)
    attempt("terminal escapes in a chat message", printed.count("hi "))
    assert "hi \\x1b[2J\\x1b]0;owned\\x07" in printed
    assert not any(char in printed for char in "\x1b\x07\x9b\u202e\r")
    shown = io.StringIO()
    Display(shown).show(f"channel {ESCAPES}: 3 events")
    assert "\\x1b]52;c;aGk=\\x07" in shown.getvalue() and "\x1b" not in shown.getvalue()


def test_on_a_hub_the_proxys_host_is_served(make_platform: MakePlatform) -> None:
    """On a JupyterHub (Binder), where jupyter-server-proxy forwards the hub's own name and no
    browser shares the container's loopback, a platform started there serves any name; on a
    laptop, none beyond loopback."""
    assert served_hosts({}) == ()
    hub = served_hosts({"JUPYTERHUB_SERVICE_PREFIX": "/user/ada/"})
    platform = make_platform(rate_limits=False, allowed_hosts=hub)
    proxied = {"Host": "hub.binder.example", "X-Forwarded-Context": "/user/ada/proxy/8000"}
    assert httpx.get(platform.root_url + "/go", headers=proxied).status_code == 200
