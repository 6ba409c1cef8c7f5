"""Web hooks (``/hooks``): an OAuth client registers, lists, renews and deactivates hooks; live
events reach an allowed loopback receiver as signed POSTs (mixer/developer-docs,
reference/webhooks); nothing is registered for an address the operator did not allow."""

from __future__ import annotations

import hashlib
import hmac
import threading
from collections.abc import Iterator
from contextlib import closing
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import orjson
import pytest

from explorer.emulator import Platform
from tests.conftest import sign_in
from tests.databases import start
from tests.test_chat_client import wait_until
from tests.test_live import retitle


class Receiver:
    """A loopback HTTP server that keeps every POST; a path answers the statuses planned in
    ``answers[path]`` in turn (the last one from then on), else 200."""

    def __init__(self) -> None:
        self.posts: list[tuple[str, dict[str, str], bytes]] = []
        self.answers: dict[str, list[int]] = {}
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.posts.append((self.path, dict(self.headers.items()), body))
                planned = receiver.answers.get(self.path) or [200]
                self.send_response(planned.pop(0) if len(planned) > 1 else planned[0])
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def to(self, path: str) -> list[tuple[dict[str, str], dict[str, Any]]]:
        """Headers and JSON bodies of the POSTs to ``path``."""
        return [(h, orjson.loads(b)) for p, h, b in list(self.posts) if p == path]


@pytest.fixture(scope="module")
def hooked() -> Iterator[Platform]:
    with start(channels=100, rate_limits=False) as running:
        yield running


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    made = Receiver()
    yield made
    made.server.shutdown()


@pytest.fixture(scope="module")
def client(hooked: Platform) -> httpx.Client:
    """An httpx client authenticated as a confidential OAuth client (Client-ID + Secret)."""
    with closing(sign_in(hooked.base_url, "streamer")) as person:
        made = person.post(
            "/oauth/clients",
            json={"name": "hooks", "redirectUris": ["http://127.0.0.1/cb"], "confidential": True},
        ).json()
    headers = {"Client-ID": made["id"], "Authorization": f"Secret {made['secret']}"}
    return httpx.Client(base_url=hooked.base_url, headers=headers, timeout=10)


def streamer_channel(platform: Platform) -> int:
    channel: int = httpx.get(f"{platform.base_url}/channels/streamer").json()["id"]
    return channel


def test_a_change_reaches_the_hook_signed(
    hooked: Platform, receiver: Receiver, client: httpx.Client
) -> None:
    """A registered hook gets channel:{id}:update as {event, id, payload, sentAt}, with
    Poker-Hook-Id, Poker-Nth-Retry 0 and Poker-Signature sha384=HMAC(secret, body)."""
    channel = streamer_channel(hooked)
    topic = f"channel:{channel}:update"
    made = client.post(
        "/hooks",
        json={"kind": "web", "events": [topic], "url": receiver.url + "/a", "secret": "s3"},
    )
    assert made.status_code == 201, made.text
    hook = made.json()
    assert hook["isActive"] is True and hook["events"] == [topic] and "secret" not in hook
    retitle(hooked, "hooked")
    headers, body = wait_until(lambda: receiver.to("/a"))[0]
    assert body["event"] == topic and body["payload"] == {"name": "hooked"}
    assert set(body) == {"event", "id", "payload", "sentAt"}
    assert headers["Poker-Hook-Id"] == hook["id"] and headers["Poker-Nth-Retry"] == "0"
    raw = next(b for p, _, b in receiver.posts if p == "/a")
    expected = hmac.new(b"s3", raw, hashlib.sha384).hexdigest().upper()
    assert headers["Poker-Signature"] == f"sha384={expected}"


def test_failed_deliveries_are_retried(
    hooked: Platform, receiver: Receiver, client: httpx.Client
) -> None:
    """A delivery answered 500 is sent again, counting Poker-Nth-Retry."""
    channel = streamer_channel(hooked)
    receiver.answers["/r"] = [500, 200]
    client.post(
        "/hooks",
        json={"kind": "web", "events": [f"channel:{channel}:update"], "url": receiver.url + "/r"},
    ).raise_for_status()
    retitle(hooked, "retried")
    posts = wait_until(lambda: len(receiver.to("/r")) >= 2 and receiver.to("/r"))
    assert [h["Poker-Nth-Retry"] for h, _ in posts[:2]] == ["0", "1"]
    assert "Poker-Signature" not in posts[0][0]


def test_list_renew_and_deactivate(
    hooked: Platform, receiver: Receiver, client: httpx.Client
) -> None:
    """GET /hooks lists the client's hooks; deactivate stops deliveries (a hook registered after
    it on the same event still gets them), renew makes it active again."""
    channel = streamer_channel(hooked)
    topic = f"channel:{channel}:update"
    first = client.post(
        "/hooks", json={"kind": "web", "events": [topic], "url": receiver.url + "/off"}
    ).json()
    assert first["id"] in [h["id"] for h in client.get("/hooks").json()]
    ended = client.post(f"/hooks/{first['id']}/deactivate").json()
    assert (ended["isActive"], ended["deactivationReason"]) == (False, "deactivated")
    client.post(
        "/hooks", json={"kind": "web", "events": [topic], "url": receiver.url + "/on"}
    ).raise_for_status()
    retitle(hooked, "only the active one")
    wait_until(lambda: receiver.to("/on"))
    assert receiver.to("/off") == []
    renewed = client.post(f"/hooks/{first['id']}/renew").json()
    assert renewed["isActive"] is True and renewed["expiresAt"] >= first["expiresAt"]
    assert client.get(f"/hooks/{first['id']}").json()["isActive"] is True


@pytest.mark.parametrize(
    ("url", "status"),
    [
        ("http://10.0.0.1/x", 400),
        ("http://169.254.169.254/latest", 400),
        ("http://example.com/x", 400),
        ("ftp://127.0.0.1/x", 400),
    ],
)
def test_only_allowed_addresses_can_be_registered(
    client: httpx.Client, url: str, status: int
) -> None:
    """Addresses outside the operator's allow-list (loopback by default), names that would
    need resolving and other schemes are refused with a 400."""
    response = client.post(
        "/hooks", json={"kind": "web", "events": ["channel:1:update"], "url": url}
    )
    assert response.status_code == status and response.json()["statusCode"] == status


def test_client_credentials_and_events_are_checked(
    hooked: Platform, receiver: Receiver, client: httpx.Client
) -> None:
    """Without the client secret 401; a private event 403; an unknown event 400."""
    body = {"kind": "web", "events": ["channel:1:update"], "url": receiver.url + "/x"}
    wrong = {"Client-ID": client.headers["Client-ID"], "Authorization": "Secret nope"}
    assert httpx.post(f"{hooked.base_url}/hooks", json=body, headers=wrong).status_code == 401
    assert httpx.get(f"{hooked.base_url}/hooks").status_code == 401
    private = client.post("/hooks", json={**body, "events": ["user:1:notify"]})
    assert private.status_code == 403
    assert client.post("/hooks", json={**body, "events": ["nope"]}).status_code == 400
