"""The historical docs' REST and web-hook examples, and the official Java client's calls, replayed
against the real platform and compared key by key and type by type.

Sources, as small JSON fixtures under ``tests/fixtures/docs_rest/`` (each names its repository,
path and commit): ``hooks.json`` (mixer/developer-docs, reference/webhooks: the registration,
its answer with ``renewUrl``, a delivery), ``ads.json`` (mixer/developer-docs,
guides/core/AdBreaks: the 2020 ad-break API) and ``java_client.json`` (mixer/beam-client-java
6.0.0: the calls it makes and the emoticon pack it reads). The platform may add fields; every
documented one must be there with the documented type. Bad input to each endpoint is refused
with a clear error and writes nothing.
"""

from __future__ import annotations

import functools
import struct
import uuid
from collections.abc import Iterator
from contextlib import closing
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

import explorer
from explorer.emulator import Platform
from explorer.emulator.context import Config
from tests.clocks import ManualClock
from tests.conftest import sign_in
from tests.databases import start
from tests.test_chat_client import wait_until
from tests.test_hooks import Receiver
from tests.test_live import retitle
from tests.test_platform_oauth import bearer, implicit_token
from tests.test_replay_docs_packets import Shape, conforms

FIXTURES = Path(__file__).parent / "fixtures" / "docs_rest"
HOOKS = orjson.loads((FIXTURES / "hooks.json").read_bytes())
ADS = orjson.loads((FIXTURES / "ads.json").read_bytes())
JAVA = orjson.loads((FIXTURES / "java_client.json").read_bytes())["calls"]
EMOTE_PACK = orjson.loads((FIXTURES / "java_client.json").read_bytes())["EmotePack"]["example"]
#: World seconds per wall second: moving the test's clock by hours moves the world by months.
SPEED = 1000.0
#: How long a cookie session lasts (``Config.session_ttl``), in wall seconds.
SESSION_TTL = Config().session_ttl


def shape_of(example: Any) -> Shape:
    """The documented shape of an example: each value replaced by its type (a list by the
    shape of its first item, null stays null)."""
    if isinstance(example, dict):
        return {key: shape_of(value) for key, value in example.items()}
    if isinstance(example, list):
        return [shape_of(example[0])] if example else []
    return None if example is None else type(example)


def when(stamp: str) -> datetime:
    """A platform timestamp (ISO-8601 UTC) as a datetime."""
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


@pytest.fixture(scope="module")
def clock() -> ManualClock:
    """The platform's wall clock, moved by hand (the world clock follows at :data:`SPEED`)."""
    return ManualClock()


@pytest.fixture(scope="module")
def world(clock: ManualClock) -> Iterator[Platform]:
    """A small frozen world of this module's own (its clock is moved, its records written)."""
    with start(
        channels=200, rate_limits=False, simulate=False, clock=clock, speed=SPEED
    ) as running:
        yield running


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    made = Receiver()
    yield made
    made.server.shutdown()


@pytest.fixture(scope="module")
def hook_client(world: Platform) -> Iterator[httpx.Client]:
    """An httpx client signed as a confidential OAuth client (Client-ID + Secret)."""
    with closing(sign_in(world.base_url, "streamer")) as person:
        made = person.post(
            "/oauth/clients",
            json={"name": "docs", "redirectUris": ["http://127.0.0.1/cb"], "confidential": True},
        ).json()
    headers = {"Client-ID": made["id"], "Authorization": f"Secret {made['secret']}"}
    with httpx.Client(base_url=world.base_url, headers=headers, timeout=10) as client:
        yield client


def channel_of(world: Platform, name: str) -> int:
    channel: int = httpx.get(f"{world.base_url}/channels/{name}").json()["id"]
    return channel


def register(client: httpx.Client, receiver: Receiver, topic: str, path: str) -> dict[str, Any]:
    """The docs' registration body, its URL swapped for the loopback receiver's ``path``."""
    body = {**HOOKS["register"], "events": [topic], "url": receiver.url + path}
    made = client.post("/hooks", json=body)
    assert made.status_code == 201, made.text
    hook: dict[str, Any] = made.json()
    return hook


# -- web hooks ------------------------------------------------------------------------------------


def test_registration_answers_the_docs_example_with_its_renew_url(
    world: Platform, receiver: Receiver, hook_client: httpx.Client
) -> None:
    """POST /hooks as the docs' curl example answers every field of their example, renewUrl
    included: the absolute address of POST /hooks/{id}/renew."""
    topic = f"channel:{channel_of(world, 'streamer')}:broadcast"
    hook = register(hook_client, receiver, topic, "/registered")
    assert conforms(hook, shape_of(HOOKS["registered"])) == []
    assert hook["renewUrl"] == f"{world.base_url}/hooks/{hook['id']}/renew"
    for listed in (
        hook_client.get(f"/hooks/{hook['id']}").json(),
        *hook_client.get("/hooks").json(),
    ):
        assert conforms(listed, shape_of(HOOKS["registered"])) == []


def test_one_clock_for_created_expires_and_sent(
    world: Platform, receiver: Receiver, hook_client: httpx.Client
) -> None:
    """A hook's createdAt, expiresAt (90 days later, as the docs say) and a delivery's sentAt
    are all world time: the delivery falls between the registration and the world's now."""
    channel = channel_of(world, "streamer")
    hook = register(hook_client, receiver, f"channel:{channel}:update", "/clock")
    created = when(hook["createdAt"])
    assert when(hook["expiresAt"]) - created == timedelta(days=HOOKS["lifetimeDays"])
    retitle(world, "one clock")
    _, body = wait_until(lambda: receiver.to("/clock"), timeout=30)[0]
    assert conforms(body, {**shape_of(HOOKS["delivery"]), "payload": {}}) == []
    now = when(httpx.get(f"{world.root_url}/_emulator/clock").json()["now"])
    assert created <= when(body["sentAt"]) <= now


def test_renewing_through_the_renew_url(
    world: Platform, clock: ManualClock, receiver: Receiver, hook_client: httpx.Client
) -> None:
    """POSTing to the renewUrl a hook was registered with gives it 90 days from the world's
    now again, and makes a deactivated hook active."""
    topic = f"channel:{channel_of(world, 'streamer')}:update"
    hook = register(hook_client, receiver, topic, "/renewed")
    hook_client.post(f"/hooks/{hook['id']}/deactivate").raise_for_status()
    clock.advance(86400 / SPEED)  # a world day
    renewed = hook_client.post(hook["renewUrl"])
    assert renewed.status_code == 200, renewed.text
    assert renewed.json()["isActive"] is True
    assert when(renewed.json()["expiresAt"]) - when(hook["expiresAt"]) == timedelta(days=1)
    missing = hook_client.post(hook["renewUrl"].replace(hook["id"], str(uuid.uuid4())))
    assert missing.status_code == 404


def test_a_hook_expires_on_the_world_clock(
    world: Platform, clock: ManualClock, receiver: Receiver, hook_client: httpx.Client
) -> None:
    """Once the world clock passes a hook's expiresAt, it gets nothing; a hook registered after
    gets the same event."""
    topic = f"channel:{channel_of(world, 'streamer')}:update"
    register(hook_client, receiver, topic, "/expired")
    clock.advance((HOOKS["lifetimeDays"] * 86400 + 3600) / SPEED)
    register(hook_client, receiver, topic, "/fresh")
    retitle(world, "after the expiry")
    wait_until(lambda: receiver.to("/fresh"), timeout=30)
    assert receiver.to("/expired") == []


# -- the ad-break API -----------------------------------------------------------------------------


def token_of(world: Platform, name: str, scope: str) -> str:
    """An implicit-grant access token of demo user ``name`` with ``scope`` (one per module:
    each sign-in runs the slow password hash)."""
    return _token(world.base_url, name, scope)


@functools.cache
def _token(base_url: str, name: str, scope: str) -> str:
    with closing(sign_in(base_url, name)) as person:
        return implicit_token(person, scope)["access_token"]


def ad_break(world: Platform, token: str, channel: object, body: Any) -> httpx.Response:
    url = world.root_url + ADS["path"].replace("{channelId}", str(channel))
    content = body if isinstance(body, bytes) else orjson.dumps(body)
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    return httpx.post(url, content=content, headers=headers, timeout=10)


def refused(response: httpx.Response, status: int, code: int) -> str:
    """The errorMessage of a documented refusal, after checking status, code and shape."""
    assert response.status_code == status, response.text
    body = response.json()
    assert conforms(body, shape_of(ADS["bad_request"])) == []
    assert body["errorCode"] == code and body["statusCode"] == status
    message: str = body["errorMessage"]
    return message


def documented(code: int) -> str:
    """The docs' string for 400 ``code``."""
    return next(row["string"] for row in ADS["errors_400"] if row["errorCode"] == code)


def test_an_ad_break_answers_the_docs_example(world: Platform, clock: ManualClock) -> None:
    """The docs' request on one's own live partnered channel answers {"id": <channel id>}; the
    same requestId again is the same request (no second break)."""
    clock.advance(16 * 60)  # past any earlier break's window
    channel = channel_of(world, "streamer")
    token = token_of(world, "streamer", ADS["scope"])
    for _ in range(3):
        answer = ad_break(world, token, channel, ADS["request"])
        assert answer.status_code == 200, answer.text
        assert conforms(answer.json(), shape_of(ADS["ok"])) == []
        assert answer.json() == {"id": channel}


def test_a_token_without_the_scope_gets_the_documented_403(world: Platform) -> None:
    """Without chat:ad_break the answer is the docs' 403 example, errorCode and errorMessage."""
    token = token_of(world, "streamer", "chat:connect")
    answer = ad_break(world, token, channel_of(world, "streamer"), {"requestId": str(uuid.uuid4())})
    assert refused(answer, 403, 42023) == ADS["forbidden"]["errorMessage"]
    anonymous = httpx.post(world.root_url + f"/api/v2/ads/channels/{channel_of(world, 'streamer')}")
    assert anonymous.status_code == 401


def test_each_documented_refusal(world: Platform) -> None:
    """Unknown channel, a path id that is no integer, a body that is not the documented one, a
    channel without the feature, hosting, offline, and another user's channel: each the docs'
    code and string (42012 and 42018 with the string their description names)."""
    token = token_of(world, "streamer", ADS["scope"])
    good = {"requestId": str(uuid.uuid4())}
    streamer = channel_of(world, "streamer")
    assert refused(ad_break(world, token, 99_999_999, good), 400, 42002) == documented(42002)
    assert refused(ad_break(world, token, "streamer", good), 400, 42012) == (
        "[Debug] Invalid channelId in path"
    )
    for body in (b"not json", b"[]", {}, {"requestId": "soon"}, {"requestId": 7}):
        assert refused(ad_break(world, token, streamer, body), 400, 42018) == (
            "[Debug] The request body is invalid."
        )
    viewer = channel_of(world, "viewer")
    viewer_token = token_of(world, "viewer", ADS["scope"])
    assert refused(ad_break(world, viewer_token, viewer, good), 400, 42004) == documented(42004)
    refused(ad_break(world, viewer_token, streamer, good), 403, 42023)
    with closing(sign_in(world.base_url, "viewer")) as person:
        applied = person.post(
            f"/channels/{viewer}/partnership/app", json={"message": "Please partner me, I stream."}
        )
        assert applied.status_code == 201, applied.text
    with closing(sign_in(world.base_url, "staff")) as staff:
        staff.post(f"/channels/{viewer}/partnership/app/accept").raise_for_status()
    assert refused(ad_break(world, viewer_token, viewer, good), 400, 42020) == documented(42020)
    with closing(sign_in(world.base_url, "streamer")) as person:
        person.put(f"/channels/{streamer}/hostee", json={"id": viewer}).raise_for_status()
        try:
            hosting = ad_break(world, token, streamer, good)
        finally:
            person.delete(f"/channels/{streamer}/hostee").raise_for_status()
    assert refused(hosting, 400, 42007) == documented(42007)


def test_two_breaks_every_fifteen_minutes(world: Platform, clock: ManualClock) -> None:
    """Refused requests count for nothing; two breaks then a third is 429 with Retry-After,
    until 15 wall minutes after the first."""
    clock.advance(16 * 60)
    token = token_of(world, "streamer", ADS["scope"])
    streamer = channel_of(world, "streamer")
    for body in (b"{", {"requestId": "x"}):
        assert ad_break(world, token, streamer, body).status_code == 400
    assert ad_break(world, token, "x", {"requestId": str(uuid.uuid4())}).status_code == 400
    first, second = ({"requestId": str(uuid.uuid4())} for _ in range(2))
    assert ad_break(world, token, streamer, first).status_code == 200
    clock.advance(60)
    assert ad_break(world, token, streamer, second).status_code == 200
    third = ad_break(world, token, streamer, {"requestId": str(uuid.uuid4())})
    assert third.status_code == 429 and third.json()["statusCode"] == 429
    assert 0 < int(third.headers["Retry-After"]) <= 14 * 60
    assert ad_break(world, token, streamer, second).status_code == 200  # the same request
    clock.advance(14 * 60)
    assert ad_break(world, token, streamer, {"requestId": str(uuid.uuid4())}).status_code == 200


# -- the official Java client's calls -------------------------------------------------------------


def test_detailed_answers_as_details(world: Platform) -> None:
    """ChannelsService.findOneDetailed's GET /channels/{id}/detailed answers what /details
    does (by id and by token); an unknown channel is 404."""
    call = JAVA["ChannelsService.findOneDetailed"]
    channel = channel_of(world, "streamer")
    for ref in (channel, "streamer"):
        detailed = httpx.get(world.base_url + call["url"].replace("{id}", str(ref)))
        assert detailed.status_code == 200
        assert detailed.json() == httpx.get(f"{world.base_url}/channels/{ref}/details").json()
    assert httpx.get(f"{world.base_url}/channels/nobody_here/detailed").status_code == 404


def test_user_follows_replays_the_java_call(world: Platform, clock: ManualClock) -> None:
    """UsersService.following's GET /users/{id}/follows (page, limit, noCount) lists the
    channels the user follows, the latest first, as Channel records, page by page; bad input
    is a 400 or 404."""
    call = JAVA["UsersService.following"]
    with closing(sign_in(world.base_url, "viewer2")) as person:
        user = person.get("/users/current").json()["id"]
        followed = [channel_of(world, "streamer"), channel_of(world, "moderator")]
        for channel in followed:
            person.put(f"/channels/{channel}/follow").raise_for_status()
            clock.advance(1)
    url = world.base_url + call["url"].replace("{id}", str(user))
    listed = httpx.get(url, params=call["params"])
    assert listed.status_code == 200, listed.text
    assert [c["id"] for c in listed.json()] == followed[::-1]
    one = httpx.get(world.base_url + "/channels/streamer").json()
    assert conforms(listed.json()[1], shape_of(one)) == []
    second = httpx.get(url, params={**call["params"], "page": 1, "limit": 1}).json()
    assert [c["id"] for c in second] == [followed[0]]
    assert httpx.get(url, params={"limit": 0}).status_code == 400
    assert httpx.get(url, params={"where": "nope:eq:1"}).status_code == 400
    assert httpx.get(f"{world.base_url}/users/99999999/follows").status_code == 404
    assert httpx.get(f"{world.base_url}/users/me/follows").status_code == 400


def test_the_toolkit_lists_a_users_follows(world: Platform) -> None:
    """api.user(id).follows() is the user's followed channels, latest first, indexed by id."""
    with closing(sign_in(world.base_url, "moderator")) as person:
        user = person.get("/users/current").json()["id"]
        person.put("/channels/streamer/follow").raise_for_status()
    with explorer.Client(world.base_url, progress=False) as api:
        follows = api.user(user).follows()
    assert list(follows.index) == [channel_of(world, "streamer")]
    assert follows.loc[channel_of(world, "streamer"), "token"] == "streamer"


def test_type_channels_replays_the_java_call(world: Platform) -> None:
    """TypesService.channels' GET /types/{id}/channels with its own parameters (the older
    where spelling included) lists what GET /channels lists for that type; bad input is 4xx."""
    call = JAVA["TypesService.channels"]
    live = httpx.get(f"{world.base_url}/channels", params={"where": "online:eq:1"}).json()
    type_id = next(c["typeId"] for c in live if c["typeId"] is not None)
    url = world.base_url + call["url"].replace("{id}", str(type_id))
    listed = httpx.get(url, params=call["params"])
    assert listed.status_code == 200, listed.text
    assert listed.json() and all(c["typeId"] == type_id and c["online"] for c in listed.json())
    same = httpx.get(
        f"{world.base_url}/channels",
        params={**call["params"], "where": f"online:ne:0,typeId:eq:{type_id}"},
    )
    assert [c["id"] for c in listed.json()] == [c["id"] for c in same.json()]
    assert httpx.get(url, params={"fields": "id,typeId"}).json()[0].keys() == {"id", "typeId"}
    assert httpx.get(url).headers["X-Total-Count"].isdigit()
    assert httpx.get(url, params={"where": "typeid:eq:1"}).status_code == 400
    assert httpx.get(f"{world.base_url}/types/99999999/channels").status_code == 404


def test_refresh_answers_the_current_user(world: Platform, clock: ManualClock) -> None:
    """UsersService.refresh's POST /users/current/refresh answers what GET /users/current does
    and does not extend the session; anonymous is 401, a cookie without its CSRF token 461."""
    call = JAVA["UsersService.refresh"]
    with closing(sign_in(world.base_url, "viewer")) as person:
        refreshed = person.request(call["method"], call["url"])
        assert refreshed.status_code == 200, refreshed.text
        assert refreshed.json() == person.get("/users/current").json()
        clock.advance(SESSION_TTL - 60)
        assert person.request(call["method"], call["url"]).status_code == 200
        clock.advance(120)
        assert person.get("/users/current").status_code == 401
    with closing(sign_in(world.base_url, "viewer")) as person:
        del person.headers["X-CSRF-Token"]
        assert person.post(call["url"]).status_code == 461
    assert httpx.post(world.base_url + call["url"]).status_code == 401


def test_delete_current_signs_out(world: Platform) -> None:
    """UsersService.logout's DELETE /users/current ends the cookie session (204); with a token
    it is a 400 and the token still works."""
    call = JAVA["UsersService.logout"]
    with closing(sign_in(world.base_url, "viewer")) as person:
        assert person.request(call["method"], call["url"]).status_code == 204
        assert person.get("/users/current").status_code == 401
    with closing(bearer(world, token_of(world, "viewer", "user:details:self"))) as client:
        assert client.request(call["method"], call["url"]).status_code == 400
        assert client.get("/users/current").status_code == 200


def test_emoticon_manifest_matches_the_java_model(world: Platform) -> None:
    """EmotesService.defaultEmotes' /_latest/emoticons/manifest.json is a map of packs shaped as
    EmotePack (name, default, authors, emoticons by text with x and y), and every cell lies on
    the pack's sprite sheet at /_latest/emoticons/<pack>.png."""
    call = JAVA["EmotesService.defaultEmotes"]
    manifest = httpx.get(world.root_url + call["url"])
    assert manifest.status_code == 200
    assert manifest.json()
    for name, pack in manifest.json().items():
        assert conforms(pack, shape_of(EMOTE_PACK)) == []
        sheet = httpx.get(f"{world.root_url}/_latest/emoticons/{name}.png").content
        width, height = struct.unpack(">II", sheet[16:24])  # the PNG's IHDR
        for cell in pack["emoticons"].values():
            assert cell["x"] >= 0 and cell["x"] + cell["width"] <= width
            assert cell["y"] >= 0 and cell["y"] + cell["height"] <= height
