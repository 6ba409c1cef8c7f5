"""Security of web hooks (issue 36, round 4): a hook cannot turn the platform's deliveries
against the platform itself, every URL gets a clear answer, one user's hooks are bounded, and
hooks end with the OAuth client that made them. Real platforms, real loopback receivers.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import httpx
import pytest

from explorer.emulator import Platform
from explorer.emulator.db import live_events
from explorer.emulator.live import webhooks
from explorer.emulator.resources import hooks
from tests import databases
from tests.conftest import sign_in
from tests.databases import start
from tests.test_chat_client import wait_until
from tests.test_hooks import Receiver, streamer_channel
from tests.test_live import retitle
from tests.test_security import MakePlatform


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    made = Receiver()
    yield made
    made.server.shutdown()


def hook_client(platform: Platform, owner: str = "streamer") -> tuple[httpx.Client, str]:
    """A client authenticated as a new confidential OAuth client of ``owner``, and its id."""
    with closing(sign_in(platform.base_url, owner)) as person:
        made = person.post(
            "/oauth/clients",
            json={"name": "hooks", "redirectUris": ["http://127.0.0.1/cb"], "confidential": True},
        ).json()
    headers = {"Client-ID": made["id"], "Authorization": f"Secret {made['secret']}"}
    return httpx.Client(base_url=platform.base_url, headers=headers, timeout=10), made["id"]


def register(client: httpx.Client, events: list[str], url: str) -> httpx.Response:
    return client.post("/hooks", json={"kind": "web", "events": events, "url": url})


def test_a_hook_cannot_reach_the_platform_itself(
    make_platform: MakePlatform, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hooks aimed at the control namespace (stopping a chat node, which answers loopback
    callers) under every spelling of the platform's loopback address, and at a REST write,
    are refused by the platform: no node stops, each delivery fails and the hook ends as
    failing."""
    monkeypatch.setattr(webhooks, "RETRY_DELAYS", (0.0, 0.0, 0.0))
    monkeypatch.setattr(webhooks, "MAX_FAILURES", 1)
    platform = make_platform(chat_nodes=2, rate_limits=False)
    port = platform.root_url.rsplit(":", 1)[1]
    client, _ = hook_client(platform)
    topic = f"channel:{streamer_channel(platform)}:update"
    targets = [
        f"http://127.0.0.1:{port}/_emulator/chat/nodes/0/stop",
        f"http://localhost:{port}/_emulator/chat/nodes/1/stop",
        f"http://[::ffff:127.0.0.1]:{port}/_emulator/chat/nodes/0/stop",
        f"http://127.0.0.1:{port}/api/v1/users/current/session",
    ]
    made = [register(client, [topic], url) for url in targets]
    assert [r.status_code for r in made] == [201] * len(targets), [r.text for r in made]
    ids = [r.json()["id"] for r in made]
    nodes_url = f"{platform.root_url}/_emulator/chat/nodes"

    def settled() -> bool:
        stopped = not all(n["running"] for n in httpx.get(nodes_url).json())
        ended = all(not client.get(f"/hooks/{i}").json()["isActive"] for i in ids)
        return stopped or ended

    retitle(platform, "aimed at itself")
    wait_until(settled, timeout=15)
    assert [n["running"] for n in httpx.get(nodes_url).json()] == [True, True]
    reasons = {client.get(f"/hooks/{i}").json()["deactivationReason"] for i in ids}
    assert reasons == {"failing"}
    marked = httpx.get(f"{platform.base_url}/channels", headers={webhooks.HOOK_HEADER: "x"})
    assert marked.status_code == 403 and marked.json()["statusCode"] == 403


@pytest.mark.parametrize(
    "url",
    [
        "http://[127.0.0.1]/",
        "http://127.0.0.1:99999/",
        "http://127.0.0.1:0/",
        "http://0.0.0.0/",
        "http://[::]/",
        "http://224.0.0.1/",
        "http://[::ffff:10.0.0.1]/",
        "http://127.0.0.1:80\\@10.0.0.1/",
        "http://2130706433/",
        "http://127.1/",
        "http://\x00/",
        "http:///x",
    ],
)
def test_no_hook_url_gives_a_5xx(url_client: httpx.Client, url: str) -> None:
    """Malformed URLs, ports out of range, unspecified and multicast addresses, IPv4 written
    as IPv6 outside the allow-list, parser-confusing userinfo and numeric host spellings all
    answer 400 with a JSON body; nothing is registered."""
    before = len(url_client.get("/hooks").json())
    answer = register(url_client, ["channel:1:update"], url)
    assert answer.status_code == 400 and answer.json()["statusCode"] == 400, answer.text
    assert len(url_client.get("/hooks").json()) == before


@pytest.fixture(scope="module")
def url_client() -> Iterator[httpx.Client]:
    """A hook client of a platform of its own, for the URL cases."""
    with start(channels=20, rate_limits=False) as running:
        client, _ = hook_client(running)
        yield client
        client.close()


def test_one_users_hooks_are_bounded(make_platform: MakePlatform, receiver: Receiver) -> None:
    """A user's clients hold at most MAX_HOOKS active hooks together (a second client shares
    the allowance): one more is a 400, at registration and at renewal; deactivating one makes
    room; another user is not affected."""
    platform = make_platform(rate_limits=False)
    first, _ = hook_client(platform)
    second, _ = hook_client(platform)
    stranger, _ = hook_client(platform, "viewer")
    made = [
        register(first if n % 2 else second, ["channel:1:update"], f"{receiver.url}/{n}")
        for n in range(hooks.MAX_HOOKS)
    ]
    assert {r.status_code for r in made} == {201}
    over = register(first, ["channel:1:update"], receiver.url)
    assert over.status_code == 400 and over.json()["statusCode"] == 400
    assert register(stranger, ["channel:1:update"], receiver.url).status_code == 201
    ended = made[1].json()["id"]
    assert first.post(f"/hooks/{ended}/deactivate").status_code == 200
    assert register(second, ["channel:1:update"], receiver.url).status_code == 201
    assert first.post(f"/hooks/{ended}/renew").status_code == 400


def test_hooks_end_with_their_client(make_platform: MakePlatform, receiver: Receiver) -> None:
    """Deleting an OAuth client (its owner's way to end every hook of it, whoever holds its
    secret) stops its hooks: the next events reach another client's hook and not the
    deleted client's."""
    platform = make_platform(rate_limits=False)
    doomed, doomed_id = hook_client(platform)
    kept, _ = hook_client(platform)
    topic = f"channel:{streamer_channel(platform)}:update"
    assert register(doomed, [topic], receiver.url + "/gone").status_code == 201
    assert register(kept, [topic], receiver.url + "/kept").status_code == 201
    with closing(sign_in(platform.base_url, "streamer")) as owner:
        assert owner.delete(f"/oauth/clients/{doomed_id}").status_code == 204
        changed = owner.put(
            "/users/current/password", json={"password": "explorer", "newPassword": "n3w-secret"}
        )
        assert changed.status_code == 204
    for title in ("after the client", "and once more"):
        _retitle(platform, title)
    got: list[Any] = wait_until(lambda: len(receiver.to("/kept")) >= 2 and receiver.to("/kept"))
    # Deliveries go out concurrently, so they may arrive in either order.
    names = sorted(body["payload"]["name"] for _, body in got)
    assert names == ["after the client", "and once more"]
    assert receiver.to("/gone") == []


def _retitle(platform: Platform, title: str) -> None:
    """The streamer (with the changed password) retitles their channel."""
    with closing(sign_in(platform.base_url, "streamer", "n3w-secret")) as streamer:
        channel = streamer.get("/users/current").json()["channel"]["id"]
        assert streamer.patch(f"/channels/{channel}", json={"name": title}).is_success


def test_one_users_deliveries_are_paced(
    make_platform: MakePlatform,
    receiver: Receiver,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """A user's hooks start at most MAX_RATE deliveries a second: of 30 events written at once
    (here at most 5 per poll), 5 are delivered and the rest skipped, not queued; the next
    event is delivered as usual."""
    monkeypatch.setattr(webhooks, "MAX_RATE", 5)
    monkeypatch.setattr(webhooks, "POLL", 1.0)
    db = tmp_path / "platform.db"
    platform = make_platform(db=str(db), rate_limits=False)
    client, _ = hook_client(platform)
    topic = f"channel:{streamer_channel(platform)}:update"
    assert register(client, [topic], receiver.url + "/paced").status_code == 201
    with databases.opened(db) as other, other.transaction() as tx:
        # Another writer of the same database, as another process of the platform would be.
        for n in range(30):
            live_events.publish(tx, topic, {"n": n})
    wait_until(lambda: receiver.to("/paced"))
    with databases.opened(db) as other, other.transaction() as tx:
        live_events.publish(tx, topic, {"n": "after"})
    got = wait_until(lambda: [b for _, b in receiver.to("/paced") if b["payload"]["n"] == "after"])
    assert len(got) == 1 and len(receiver.to("/paced")) == 6
