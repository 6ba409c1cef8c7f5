"""Every endpoint of platform.md's "Endpoints by group", walked against the OpenAPI description.

The table is transcribed by hand from the spec (108 method/path pairs, in its order) plus the
users endpoints it names, never generated from the server, so an endpoint the platform lacks
fails here instead of dropping out. Three walks over a platform of this module's own (walk 1
writes):

1. with the right credential (the owner ``streamer``, ``staff``, or any signed-in ``viewer``):
   the documented success status, its media type, and a body valid against the operation's
   response schema;
2. without credentials: 401 where the operation's ``security`` has no anonymous alternative,
   the success status where it has one (or none at all);
3. with another user's credential (``viewer2`` on the streamer's things, on staff actions):
   the documented refusal of every owner- and staff-only operation.

A row's path is its spec path with the placeholders filled from the walk's values (the
streamer's channel, a game published in setup, ...). A row that needs state (a pending
application, a banner to read) builds it in its ``setup``, and destructive calls act on fresh
records, so rows and walks do not depend on each other's order.
"""

from __future__ import annotations

import itertools
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import orjson
import pytest
from jsonschema import Draft202012Validator
from websockets.sync.client import connect

from explorer.emulator import Platform
from tests.conftest import SMALL_WORLD, sign_in
from tests.databases import start

Values = dict[str, Any]
PNG = b"\x89PNG\r\n\x1a\n" + bytes(64)
DEMO_USERS = ("streamer", "moderator", "viewer", "viewer2", "staff")


@dataclass(frozen=True, slots=True)
class Pair:
    """One method/path pair of the spec and how to call it successfully.

    ``path`` defaults to the spec path; both are filled with the walk's values. ``who`` is
    walk 1's credential, ``other`` the status walk 3 expects from ``viewer2`` (None where any
    signed-in user may call it), ``setup`` builds the state walk 1 needs and returns values
    that override the walk's own (fresh ids).
    """

    method: str
    spec: str
    who: str | None = None
    status: int = 200
    body: Callable[[Values], Any] | None = None
    upload: bool = False
    other: int | None = None
    setup: Callable[[World], Values] | None = None
    path: str | None = None

    def __str__(self) -> str:
        return f"{self.method} {self.spec}"


class World:
    """The walk's platform, its signed-in demo users and the ids the table's paths name."""

    def __init__(self, platform: Platform) -> None:
        self.platform = platform
        self.clients = {name: sign_in(platform.base_url, name) for name in DEMO_USERS}
        self.anonymous = httpx.Client(base_url=platform.base_url, timeout=10)
        self.document: dict[str, Any] = self.anonymous.get("/openapi.json").json()
        self.components = openapi_to_json_schema(self.document["components"])
        #: Path items by template without parameter names (the spec names them differently).
        self.paths = {normalise(path): item for path, item in self.document["paths"].items()}
        self.serial = itertools.count(1)
        self.values: Values = {}

    def client(self, who: str | None) -> httpx.Client:
        """The signed-in client of demo user ``who`` (the anonymous one for None)."""
        return self.anonymous if who is None else self.clients[who]

    def expect(self, response: httpx.Response, *statuses: int) -> Any:
        """The JSON of a setup call's ``response``, after checking its status."""
        request = response.request
        assert response.status_code in statuses, (
            f"setup {request.method} {request.url}: {response.status_code} {response.text}"
        )
        return response.json() if response.content else None

    def register(self) -> tuple[int, int, str]:
        """A fresh account: its user id, its channel id and its name (password ``explorer``)."""
        name = f"walker{next(self.serial)}"
        body = {"username": name, "password": "explorer", "email": f"{name}@example.com"}
        user = self.expect(self.anonymous.post("/users", json=body), 201)
        channel = self.expect(self.anonymous.get(f"/channels/{name}"), 200)
        return user["id"], channel["id"], name

    def operation(self, pair: Pair) -> dict[str, Any]:
        """The OpenAPI operation describing ``pair`` (found by normalised path template)."""
        item = self.paths.get(normalise(pair.spec), {})
        assert pair.method.lower() in item, f"{pair} is not in /openapi.json"
        operation: dict[str, Any] = item[pair.method.lower()]
        return operation

    def call(self, pair: Pair, who: str | None, values: Values) -> httpx.Response:
        """Call ``pair`` as ``who`` with its path and body filled from ``values``."""
        values = {**values, "n": next(self.serial)}
        try:
            path = (pair.path or pair.spec).format(**values)
            body = pair.body(values) if pair.body is not None else None
        except KeyError as missing:
            pytest.fail(f"the walk's world has no {missing} for {pair} (seeded data missing?)")
        files = {"file": ("walk.png", PNG, "image/png")} if pair.upload else None
        return self.client(who).request(pair.method, path, json=body, files=files)

    def prepared(self, pair: Pair) -> Values:
        """The walk's values with what ``pair``'s setup built over them."""
        return {**self.values, **(pair.setup(self) if pair.setup else {})}

    def close(self) -> None:
        """Close the walk's HTTP clients (the platform is stopped by its fixture)."""
        for client in (*self.clients.values(), self.anonymous):
            client.close()


def normalise(template: str) -> str:
    """A path template with its parameter names dropped: ``/a/{id}/b`` -> ``/a/{}/b``."""
    return re.sub(r"{[^}]*}", "{}", template)


def openapi_to_json_schema(node: Any) -> Any:
    """An OpenAPI 3.0 schema as JSON Schema: ``nullable: true`` becomes a ``null`` type."""
    if isinstance(node, list):
        return [openapi_to_json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    nullable = node.get("nullable") is True
    converted = {
        k: openapi_to_json_schema(v)
        for k, v in node.items()
        if not (k == "nullable" and isinstance(v, bool))
    }
    if not nullable:
        return converted
    if "$ref" in converted or "type" not in converted:
        return {"anyOf": [converted, {"type": "null"}]}
    converted["type"] = [converted["type"], "null"]
    if "enum" in converted:
        converted["enum"] = [*converted["enum"], None]
    return converted


def validate(components: dict[str, Any], schema: dict[str, Any], value: Any) -> None:
    """Check ``value`` against an OpenAPI ``schema`` whose ``$ref`` s point into
    ``components`` (already converted to JSON Schema)."""
    root = {**openapi_to_json_schema(schema), "components": components}
    errors = sorted(Draft202012Validator(root).iter_errors(value), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:5])


def media_type(response: httpx.Response) -> str:
    """The response's media type without parameters (``; charset=...``)."""
    return response.headers.get("content-type", "").split(";")[0].strip()


# --- setups: state a row needs, built through the API; each returns values for the call ----


def banner_uploaded(world: World) -> Values:
    """The streamer's channel has a banner to read."""
    streamer = world.client("streamer")
    files = {"file": ("banner.png", PNG, "image/png")}
    world.expect(streamer.post(f"/channels/{world.values['channelId']}/banner", files=files), 201)
    return {}


def fresh_channel(world: World) -> Values:
    """A channel nobody else uses (to suspend)."""
    return {"channelId": world.register()[1]}


def suspended_channel(world: World) -> Values:
    """A fresh channel, suspended by staff (to lift the suspension)."""
    channel = world.register()[1]
    world.expect(world.client("staff").post(f"/channels/{channel}/suspend"), 200)
    return {"channelId": channel}


def viewer_applied(world: World) -> Values:
    """The viewer's channel has a partnership application (pending, or decided before)."""
    channel = world.values["viewer_channel"]
    path = f"/channels/{channel}/partnership/app"
    world.expect(world.client("viewer").post(path, json={"message": APPLICATION}), 201, 409)
    return {"channelId": channel}


def viewer_may_apply(world: World) -> Values:
    """The viewer's channel has no pending application (staff deny one that is)."""
    channel = world.values["viewer_channel"]
    path = f"/channels/{channel}/partnership/app/deny"
    world.expect(world.client("staff").post(path, json={"reason": "walk"}), 200, 404, 409)
    return {"channelId": channel}


def viewer_pending(world: World) -> Values:
    """The viewer's channel has a pending application (for staff to deny)."""
    viewer_may_apply(world)
    return viewer_applied(world)


def fresh_pending(world: World) -> Values:
    """A fresh channel with a pending application (accepting it makes it partnered)."""
    _, channel, name = world.register()
    owner = sign_in(world.platform.base_url, name)
    try:
        path = f"/channels/{channel}/partnership/app"
        world.expect(owner.post(path, json={"message": APPLICATION}), 201)
    finally:
        owner.close()
    return {"channelId": channel}


def invites_open(world: World) -> Values:
    """The streamer's Discord bot hands invites to everyone."""
    streamer = world.client("streamer")
    path = f"/channels/{world.values['channelId']}/discord"
    guild = world.expect(streamer.get(f"{path}/channels"), 200)
    text = next(c["id"] for c in guild if c["type"] == "text")
    settings = {"inviteSettings": "everyone", "inviteChannel": text}
    world.expect(streamer.put(path, json=settings), 200)
    return {}


def fresh_confetti(world: World) -> Values:
    """A confetti of the streamer's that nothing else uses (to delete)."""
    confetti = world.expect(world.client("streamer").put("/confetti", json=CONFETTI), 201)
    return {"confettiId": confetti["id"]}


def fresh_game(world: World) -> Values:
    """A game of the streamer's that nothing else uses (to delete)."""
    game = world.expect(world.client("streamer").post("/interactive/games", json=GAME), 201)
    return {"game": game["id"]}


def moderator_not_editor(world: World) -> Values:
    """The moderator does not edit the walk's game (so adding them succeeds)."""
    path = f"/interactive/games/{world.values['game']}/editors/{world.values['moderator']}"
    world.expect(world.client("streamer").delete(path), 204, 404)
    return {}


def viewer_editor(world: World) -> Values:
    """The viewer edits the walk's game (so removing them succeeds)."""
    path = f"/interactive/games/{world.values['game']}/editors"
    body = {"userId": world.values["viewer"]}
    world.expect(world.client("streamer").post(path, json=body), 201, 409)
    return {}


def draft_version(world: World) -> Values:
    """A fresh draft version of the walk's game."""
    body = {"gameId": world.values["game"], "version": f"5.0.{next(world.serial)}"}
    version = world.expect(world.client("streamer").post("/interactive/versions", json=body), 201)
    return {"version": version["id"]}


def confirmable(world: World) -> Values:
    """A fresh, unverified account and the code mailed to it."""
    user_id = world.register()[0]
    mail = world.expect(httpx.get(f"{world.platform.root_url}/_emulator/mail"), 200)
    code = next(m["code"] for m in reversed(mail) if m["userId"] == user_id)
    return {"id": user_id, "code": code}


# --- the table --------------------------------------------------------------------------------

APPLICATION = "Partnership, please: the walk streams every single day."
CONFETTI = {"name": "Walk burst", "particles": [{"type": "color", "value": "#ff8800"}]}
GAME = {"name": "Walk game", "description": "Made by the endpoint walk."}
OWNER, STAFF, VIEWER = "streamer", "staff", "viewer"
ANALYTICS = (
    "viewers",
    "tsdb/viewers",
    "tsdb/viewersMetrics",
    "tsdb/streamSessions",
    "tsdb/streamHosts",
    "tsdb/subscriptions",
    "tsdb/followers",
    "tsdb/sparkSpent",
    "tsdb/emojiUsageRanks",
    "tsdb/emojiUsage",
    "tsdb/gameRanks",
    "tsdb/gameRanksGlobal",
    "tsdb/subRevenue",
    "tsdb/cpm",
)
MANIFESTS = ("light", "light2", "smil", "m3u8", "ftl")

SPEC_PAIRS: tuple[Pair, ...] = (
    # achievements
    Pair("GET", "/achievements", OWNER),
    # announcements
    Pair("POST", "/announcements", STAFF, 201, lambda v: {"message": "Walk notice"}, other=403),
    # channels
    Pair("GET", "/channels"),
    Pair("GET", "/channels/{channelIdOrToken}", OWNER),
    Pair("GET", "/channels/{channelIdOrToken}/details", OWNER),
    Pair("PUT", "/channels/{channelId}", OWNER, body=lambda v: {"name": "Walk"}, other=403),
    Pair("PATCH", "/channels/{channelId}", OWNER, body=lambda v: {"audience": "teen"}, other=403),
    *(Pair("GET", f"/channels/{{channelId}}/analytics/{s}", OWNER, other=403) for s in ANALYTICS),
    Pair("POST", "/channels/{channelId}/badge", OWNER, 201, upload=True, other=403),
    Pair("GET", "/channels/{channelId}/follow", VIEWER),
    Pair("PUT", "/channels/{channelId}/follow", VIEWER),
    Pair("POST", "/channels/{channelId}/follow", VIEWER),
    Pair("DELETE", "/channels/{channelId}/follow", VIEWER),
    Pair("GET", "/channels/{channelId}/emoticons", VIEWER),
    Pair(
        "PATCH",
        "/channels/{channelId}/emoticons",
        OWNER,
        body=lambda v: {"emoticons": {"walkWave": {"x": 0, "y": 0, "width": 28, "height": 28}}},
        other=403,
    ),
    Pair("GET", "/channels/{channelId}/hostee", VIEWER),
    Pair(
        "PUT",
        "/channels/{channelId}/hostee",
        OWNER,
        body=lambda v: {"id": v["viewer_channel"]},
        other=403,
    ),
    Pair("DELETE", "/channels/{channelId}/hostee", OWNER, 204, other=403),
    Pair("GET", "/channels/{channelId}/hosters", VIEWER),
    *(Pair("GET", f"/channels/{{channelId}}/manifest.{kind}", VIEWER) for kind in MANIFESTS),
    Pair("GET", "/channels/{channelId}/partnership/app", VIEWER, other=403, setup=viewer_applied),
    Pair(
        "POST",
        "/channels/{channelId}/partnership/app",
        VIEWER,
        201,
        lambda v: {"message": APPLICATION},
        other=403,
        setup=viewer_may_apply,
    ),
    Pair(
        "POST",
        "/channels/{channelId}/partnership/app/deny",
        STAFF,
        body=lambda v: {"reason": "Not yet."},
        other=403,
        setup=viewer_pending,
    ),
    Pair(
        "POST",
        "/channels/{channelId}/partnership/app/accept",
        STAFF,
        other=403,
        setup=fresh_pending,
    ),
    Pair("GET", "/channels/{channelId}/partnership/codes", OWNER, other=403),
    Pair("GET", "/channels/{channelId}/preferences", OWNER, other=403),
    Pair(
        "POST",
        "/channels/{channelId}/preferences",
        OWNER,
        body=lambda v: {"channel:slowchat": 1000},
        other=403,
    ),
    Pair("GET", "/channels/{channelId}/related", VIEWER),
    Pair("DELETE", "/channels/{channelId}/streamKey", OWNER, 204, other=403),
    Pair(
        "GET",
        "/channels/{channelId}/relationship",
        VIEWER,
        path="/channels/{channelId}/relationship?user={viewer}",
    ),
    Pair("POST", "/channels/{channelId}/suspend", STAFF, other=403, setup=fresh_channel),
    Pair("DELETE", "/channels/{channelId}/suspend", STAFF, other=403, setup=suspended_channel),
    Pair("POST", "/channels/{channelId}/thumbnail", OWNER, 201, upload=True, other=403),
    Pair("GET", "/channels/{channelId}/users", VIEWER),
    Pair(
        "PATCH",
        "/channels/{channelId}/users/{userId}",
        OWNER,
        body=lambda v: {"add": ["Subscriber"]},
        other=403,
    ),
    Pair("GET", "/channels/{channelId}/discord", OWNER, other=403),
    Pair(
        "PUT",
        "/channels/{channelId}/discord",
        OWNER,
        body=lambda v: {"inviteSettings": "none"},
        other=403,
    ),
    Pair("GET", "/channels/{channelId}/discord/channels", OWNER, other=403),
    Pair("GET", "/channels/{channelId}/discord/roles", OWNER, other=403),
    Pair("GET", "/channels/{channelId}/discord/invite", VIEWER),
    Pair("POST", "/channels/{channelId}/discord/invite", VIEWER, 201, setup=invites_open),
    Pair("GET", "/channels/{channelId}/recordings", VIEWER),
    Pair("POST", "/channels/{channelId}/transcodes/unlock", OWNER, other=403),
    Pair("GET", "/channels/{channelId}/confetti", VIEWER),
    Pair("GET", "/channels/{channelId}/banner", VIEWER, setup=banner_uploaded),
    Pair("POST", "/channels/{channelId}/banner", OWNER, 201, upload=True, other=403),
    Pair("DELETE", "/channels/{channelId}/banner", OWNER, 204, other=403),
    # chats
    Pair("GET", "/chats/endpoints"),
    Pair("GET", "/chats/{channelId}", VIEWER),
    Pair("GET", "/chats/{channelId}/friends", VIEWER),
    Pair("GET", "/chats/{channelId}/users", VIEWER),
    Pair("GET", "/chats/{channelId}/users/{user}", VIEWER),
    Pair(
        "GET",
        "/chats/{channelId}/users/search",
        VIEWER,
        path="/chats/{channelId}/users/search?username=view",
    ),
    # confetti
    Pair(
        "PUT",
        "/confetti",
        OWNER,
        201,
        lambda v: {**CONFETTI, "channelId": v["channelId"]},
        other=403,
    ),
    Pair("GET", "/confetti/{confettiId}", VIEWER),
    Pair("PATCH", "/confetti/{confettiId}", OWNER, body=lambda v: {"count": 120}, other=403),
    Pair("DELETE", "/confetti/{confettiId}", OWNER, 204, other=403, setup=fresh_confetti),
    # frontendVersions
    Pair("GET", "/frontendVersions"),
    # ingests
    Pair("GET", "/ingests"),
    Pair("GET", "/ingests/best"),
    # interactive
    Pair("GET", "/interactive/{channel}", VIEWER),
    Pair("GET", "/interactive/{channel}/robot", OWNER, other=403),
    Pair("GET", "/interactive/hosts"),
    Pair("GET", "/interactive/games"),
    Pair("POST", "/interactive/games", OWNER, 201, lambda v: GAME),
    Pair("GET", "/interactive/games/{game}", VIEWER),
    Pair(
        "PUT",
        "/interactive/games/{game}",
        OWNER,
        body=lambda v: {"description": "Walked."},
        other=403,
    ),
    Pair("DELETE", "/interactive/games/{game}", OWNER, 204, other=403, setup=fresh_game),
    Pair("GET", "/interactive/games/{game}/versions", VIEWER),
    Pair("POST", "/interactive/games/{game}/cover", OWNER, 201, upload=True, other=403),
    Pair("GET", "/interactive/games/{game}/editors", VIEWER),
    Pair(
        "POST",
        "/interactive/games/{game}/editors",
        OWNER,
        201,
        lambda v: {"userId": v["moderator"]},
        other=403,
        setup=moderator_not_editor,
    ),
    Pair(
        "DELETE",
        "/interactive/games/{game}/editors/{user}",
        OWNER,
        204,
        other=403,
        setup=viewer_editor,
    ),
    Pair("GET", "/interactive/games/owned", OWNER),
    Pair("GET", "/interactive/games/shared", OWNER),
    Pair("GET", "/interactive/games/reviewing", STAFF, other=403),
    Pair("GET", "/interactive/games/editor", OWNER),
    Pair(
        "POST",
        "/interactive/versions",
        OWNER,
        201,
        lambda v: {"gameId": v["game"], "version": f"3.0.{v['n']}"},
        other=403,
    ),
    Pair("GET", "/interactive/versions/{version}", VIEWER),
    Pair(
        "PUT",
        "/interactive/versions/{version}",
        OWNER,
        body=lambda v: {"changelog": "Walked."},
        other=403,
        setup=draft_version,
    ),
    Pair("DELETE", "/interactive/versions/{version}", OWNER, 204, other=403, setup=draft_version),
    # invoices
    Pair("GET", "/invoices/{invoice}", OWNER, other=403),
    Pair("POST", "/invoices/{invoice}/capture", OWNER, other=403),
    # jwt
    Pair("POST", "/jwt/authorize", OWNER, 204),
    # language
    Pair("GET", "/language/channels"),
    Pair("GET", "/language/channels/active"),
    Pair("GET", "/language/channels/available"),
    # notifications
    Pair("GET", "/notifications/{notificationId}", OWNER, other=403),
    Pair("POST", "/notifications/{notificationId}/shareSub", OWNER, other=403),
    Pair("DELETE", "/notifications/{notificationId}/shareSub", OWNER, other=403),
    Pair("POST", "/notifications/emailUnsubscribe", OWNER, body=lambda v: {"category": "host"}),
)
USER_PAIRS: tuple[Pair, ...] = (
    Pair(
        "POST",
        "/users",
        status=201,
        body=lambda v: {
            "username": f"joiner{v['n']}",
            "password": "explorer",
            "email": f"joiner{v['n']}@example.com",
        },
    ),
    Pair("GET", "/users/{id}", VIEWER),
    Pair("PUT", "/users/{id}/confirm", body=lambda v: {"code": v["code"]}, setup=confirmable),
    Pair("GET", "/users/current", OWNER),
)
TABLE = SPEC_PAIRS + USER_PAIRS
GUARDED = tuple(pair for pair in TABLE if pair.other is not None)


# --- the walk's world -------------------------------------------------------------------------


@contextmanager
def viewer_in_chat(world: World, channel: int) -> Iterator[None]:
    """The viewer, authenticated in ``channel``'s chat (so the chat user endpoints list them)."""
    details = world.expect(world.client("viewer").get(f"/chats/{channel}"), 200)
    with connect(details["endpoints"][0]) as ws:
        auth = {
            "type": "method",
            "method": "auth",
            "arguments": [channel, world.values["viewer"], details["authkey"]],
            "id": 1,
        }
        ws.send(orjson.dumps(auth).decode())
        while (packet := orjson.loads(ws.recv(timeout=5))).get("id") != 1:
            pass
        assert packet["data"]["authenticated"], packet
        deadline = time.monotonic() + 5
        listed = f"/chats/{channel}/users/{world.values['viewer']}"
        while world.anonymous.get(listed).status_code != 200 and time.monotonic() < deadline:
            time.sleep(0.02)
        yield


def published_game(world: World) -> Values:
    """A game of the streamer's with a published version (so anyone may read it)."""
    streamer, staff = world.client("streamer"), world.client("staff")
    game = fresh_game(world)["game"]
    body = {"gameId": game, "version": "1.0.0"}
    version = world.expect(streamer.post("/interactive/versions", json=body), 201)["id"]
    path = f"/interactive/versions/{version}"
    world.expect(streamer.put(path, json={"state": "pending"}), 200)
    world.expect(staff.put(path, json={"state": "published"}), 200)
    return {"game": game, "version": version}


def seeded_records(world: World) -> Values:
    """The streamer's seeded records the table needs (absent ones make their rows fail)."""
    streamer = world.client("streamer")
    found: Values = {}
    invoices = world.expect(streamer.get("/invoices"), 200)
    payable = [i["id"] for i in invoices if i["status"] == "pending" and i["sparks"] >= 0]
    if payable:
        found["invoice"] = payable[0]
    notifications = world.expect(streamer.get("/notifications"), 200)
    shareable = [n["id"] for n in notifications if n["type"] in ("subscribe", "resubscribe")]
    if shareable:
        found["notificationId"] = shareable[0]
    return found


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    """A platform of this module's own (walk 1 writes), with the ids the table names."""
    with start(channels=SMALL_WORLD, rate_limits=False) as platform:
        world = World(platform)
        ids = {
            name: world.expect(world.anonymous.get(f"/channels/{name}"), 200)
            for name in ("streamer", "viewer")
        }
        users = {
            name: world.expect(client.get("/users/current"), 200)["id"]
            for name, client in world.clients.items()
        }
        channel = ids["streamer"]["id"]
        world.values = {
            "channelIdOrToken": "streamer",
            "channelId": channel,
            "channel": channel,
            "viewer_channel": ids["viewer"]["id"],
            "id": users["streamer"],
            "userId": users["viewer"],
            "user": users["viewer"],
            "viewer": users["viewer"],
            "moderator": users["moderator"],
        }
        world.values.update(published_game(world))
        world.values["confettiId"] = fresh_confetti(world)["confettiId"]
        world.values.update(seeded_records(world))
        try:
            with viewer_in_chat(world, channel):
                yield world
        finally:
            world.close()


# --- the walks --------------------------------------------------------------------------------


def test_table_holds_the_spec_pairs() -> None:
    """The table transcribes 108 distinct spec pairs plus the 4 users endpoints."""
    assert len({str(pair) for pair in SPEC_PAIRS}) == len(SPEC_PAIRS) == 108
    assert len({str(pair) for pair in TABLE}) == len(TABLE) == 112


@pytest.mark.parametrize("pair", SPEC_PAIRS, ids=str)
def test_openapi_describes_the_spec_pair(world: World, pair: Pair) -> None:
    """/openapi.json holds the pair (path templates compared without parameter names)."""
    assert pair.method.lower() in world.paths.get(normalise(pair.spec), {})


@pytest.mark.parametrize("pair", TABLE, ids=str)
def test_right_credentials_get_the_documented_success(world: World, pair: Pair) -> None:
    """With the right credential the pair answers its documented status, media type and shape."""
    operation = world.operation(pair)
    response = world.call(pair, pair.who, world.prepared(pair))
    assert response.status_code == pair.status, response.text
    success = operation["responses"].get(str(pair.status))
    assert success is not None, f"{pair.status} is not documented"
    content = success.get("content")
    if content is None:
        assert response.content == b""
        return
    [(media, described)] = content.items()
    assert media_type(response) == media
    body = response.json() if media == "application/json" else response.text
    validate(world.components, described["schema"], body)


@pytest.mark.parametrize("pair", TABLE, ids=str)
def test_without_credentials_only_public_pairs_answer(world: World, pair: Pair) -> None:
    """Without credentials the pair answers 401 unless its security allows anonymous callers."""
    operation = world.operation(pair)
    security = operation.get("security")
    if security is None or {} in security:
        response = world.call(pair, None, world.prepared(pair))
        assert response.status_code == pair.status, response.text
        return
    response = world.call(pair, None, world.values)
    assert response.status_code == 401, response.text
    assert "401" in operation["responses"]
    validate(world.components, {"$ref": "#/components/schemas/Error"}, response.json())


@pytest.mark.parametrize("pair", GUARDED, ids=str)
def test_another_users_credentials_are_refused(world: World, pair: Pair) -> None:
    """viewer2 calling an owner- or staff-only pair on the streamer's things gets its refusal."""
    operation = world.operation(pair)
    response = world.call(pair, "viewer2", world.values)
    assert response.status_code == pair.other, response.text
    assert str(pair.other) in operation["responses"]
    validate(world.components, {"$ref": "#/components/schemas/Error"}, response.json())
