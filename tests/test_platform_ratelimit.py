"""Rate-limit buckets as the platform enforces them: counts, windows, identities, headers."""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import closing
from dataclasses import replace

import httpx
import pytest

from explorer.emulator import Platform
from explorer.emulator.context import Config
from explorer.emulator.server import PlatformOptions
from explorer.wire.ratelimit import BUCKETS
from tests.clocks import ManualClock
from tests.conftest import sign_in


def test_every_route_belongs_to_a_known_bucket(platform: Platform) -> None:
    """Every documented operation names one of the spec's buckets."""
    document = httpx.get(platform.base_url + "/openapi.json").json()
    buckets = {op["x-bucket"] for ops in document["paths"].values() for op in ops.values()}
    assert buckets <= set(BUCKETS)


def test_headers_describe_the_route_bucket(make_platform: Callable[..., Platform]) -> None:
    """Responses carry X-Rate-Limit, X-RateLimit-Remaining and an epoch-ms X-RateLimit-Reset."""
    platform = make_platform(rate_limits=True)
    response = httpx.get(platform.base_url + "/channels", params={"limit": 1})
    assert response.headers["X-Rate-Limit"] == "1000"
    assert 0 <= int(response.headers["X-RateLimit-Remaining"]) < 1000
    reset_ms = int(response.headers["X-RateLimit-Reset"])
    assert time.time() * 1000 < reset_ms <= (time.time() + 300) * 1000


def test_exceeding_a_bucket_is_429(make_platform: Callable[..., Platform]) -> None:
    """The request after a bucket's count is refused with 429 and the reference body."""
    platform = make_platform(rate_limits=True, buckets={"channel-read": (3, 60)})
    remaining = [
        httpx.get(platform.base_url + "/channels/streamer").headers["X-RateLimit-Remaining"]
        for _ in range(3)
    ]
    assert remaining == ["2", "1", "0"]
    refused = httpx.get(platform.base_url + "/channels/streamer")
    assert refused.status_code == 429
    assert refused.json() == {
        "statusCode": 429,
        "error": "Too Many Requests",
        "message": "Too Many Requests",
    }
    assert refused.headers["X-RateLimit-Remaining"] == "0"


def test_signed_in_users_count_apart_from_the_address(
    make_platform: Callable[..., Platform],
) -> None:
    """A signed-in user has their own window, separate from anonymous calls from the address."""
    platform = make_platform(rate_limits=True, buckets={"channel-read": (2, 60)})
    for _ in range(2):
        httpx.get(platform.base_url + "/channels/streamer")
    assert httpx.get(platform.base_url + "/channels/streamer").status_code == 429
    with closing(sign_in(platform.base_url, "viewer")) as client:
        assert client.get("/channels/streamer").status_code == 200


def test_window_resets_after_its_interval(make_platform: Callable[..., Platform]) -> None:
    """Once the window's interval has passed, requests are allowed again."""
    clock = ManualClock()
    platform = make_platform(rate_limits=True, buckets={"channel-read": (1, 60)}, clock=clock)
    assert httpx.get(platform.base_url + "/channels/streamer").status_code == 200
    assert httpx.get(platform.base_url + "/channels/streamer").status_code == 429
    clock.advance(60)
    assert httpx.get(platform.base_url + "/channels/streamer").status_code == 200


def test_failed_requests_do_not_use_up_a_bucket(make_platform: Callable[..., Platform]) -> None:
    """Errors (here 404s) are not charged to the route's own bucket."""
    platform = make_platform(rate_limits=True, buckets={"channel-read": (2, 60)})
    for _ in range(5):
        assert httpx.get(platform.base_url + "/channels/no_such_one").status_code == 404
    assert httpx.get(platform.base_url + "/channels/streamer").status_code == 200


def test_global_counts_every_response(make_platform: Callable[..., Platform]) -> None:
    """The global bucket counts errors too, and then refuses everything."""
    platform = make_platform(rate_limits=True, buckets={"global": (3, 60)})
    for _ in range(3):
        assert httpx.get(platform.base_url + "/channels/no_such_one").status_code == 404
    assert httpx.get(platform.base_url + "/channels/streamer").status_code == 429


def test_login_failures_stop_brute_force(make_platform: Callable[..., Platform]) -> None:
    """After 8 failed logins even the right password is refused with 429."""
    platform = make_platform(rate_limits=True)
    url = platform.base_url + "/users/login"
    statuses = [
        httpx.post(url, json={"username": "viewer", "password": f"guess{i}"}).status_code
        for i in range(8)
    ]
    assert statuses == [401] * 8
    right = httpx.post(url, json={"username": "viewer", "password": "explorer"})
    assert right.status_code == 429
    assert right.headers["X-Rate-Limit"] == "8"


def test_successful_logins_do_not_count_as_failures(
    make_platform: Callable[..., Platform],
) -> None:
    """Successful logins are not charged to user-login-failed."""
    platform = make_platform(rate_limits=True, buckets={"user-login-failed": (2, 900)})
    url = platform.base_url + "/users/login"
    for _ in range(4):
        ok = httpx.post(url, json={"username": "viewer", "password": "explorer"})
        assert ok.status_code == 200
    assert httpx.post(url, json={"username": "viewer", "password": "wrong-1"}).status_code == 401


def test_registration_bucket_allows_two_a_minute(make_platform: Callable[..., Platform]) -> None:
    """user-register allows 2 registrations per minute, then 429."""
    platform = make_platform(rate_limits=True)
    statuses = [
        httpx.post(
            platform.base_url + "/users",
            json={"username": f"user_{i}", "password": "long enough", "email": f"u{i}@example.org"},
        ).status_code
        for i in range(3)
    ]
    assert statuses == [201, 201, 429]


def test_no_rate_limits_says_nothing_is_enforced(make_platform: Callable[..., Platform]) -> None:
    """With enforcement off, nothing is refused and no header counts down to zero."""
    platform = make_platform(rate_limits=False, buckets={"channel-read": (2, 60)})
    responses = [httpx.get(platform.base_url + "/channels/streamer") for _ in range(4)]
    assert [r.status_code for r in responses] == [200] * 4
    assert responses[-1].headers["X-RateLimit-Enforced"] == "false"
    assert "X-RateLimit-Remaining" not in responses[-1].headers


def test_searches_are_charged_to_channel_search(make_platform: Callable[..., Platform]) -> None:
    """A listing with q uses the channel-search bucket; a plain listing keeps channel-read."""
    platform = make_platform(rate_limits=True, buckets={"channel-search": (1, 60)})
    search = httpx.get(platform.base_url + "/channels", params={"q": "stream"})
    assert search.headers["X-Rate-Limit"] == "1"
    assert httpx.get(platform.base_url + "/channels", params={"q": "x"}).status_code == 429
    assert httpx.get(platform.base_url + "/channels").headers["X-Rate-Limit"] == "1000"


def as_client(client_id: str) -> dict[str, str]:
    """The headers of an anonymous request from the application ``client_id``."""
    return {"Client-ID": client_id}


def test_a_429_names_the_full_bucket(make_platform: Callable[..., Platform]) -> None:
    """The refusal says which bucket is full in X-RateLimit-Bucket."""
    platform = make_platform(rate_limits=True, buckets={"channel-read": (1, 60)})
    httpx.get(platform.base_url + "/channels/streamer")
    refused = httpx.get(platform.base_url + "/channels/streamer")
    assert refused.status_code == 429
    assert refused.headers["X-RateLimit-Bucket"] == "channel-read"


def test_per_client_limits_count_each_client_apart(
    make_platform: Callable[..., Platform],
) -> None:
    """With per-client limits, two Client-IDs of one address have a bucket each: one used up
    does not hold the other back (cached listing pages included)."""
    platform = make_platform(
        rate_limits=True, limits_per_client=True, buckets={"channel-read": (2, 60)}
    )
    for path in ("/channels/streamer", "/channels?limit=1"):
        url = platform.base_url + path
        first = [httpx.get(url, headers=as_client(f"a{path}")).status_code for _ in range(3)]
        assert first == [200, 200, 429]
        assert httpx.get(url, headers=as_client(f"b{path}")).status_code == 200


def test_without_per_client_limits_client_ids_share_the_address(
    make_platform: Callable[..., Platform],
) -> None:
    """By default a Client-ID changes nothing: the address's anonymous bucket is shared."""
    platform = make_platform(rate_limits=True, buckets={"channel-read": (2, 60)})
    url = platform.base_url + "/channels/streamer"
    assert [httpx.get(url, headers=as_client("a")).status_code for _ in range(2)] == [200, 200]
    assert httpx.get(url, headers=as_client("b")).status_code == 429


def test_per_client_limits_keep_the_lockout_per_address(
    make_platform: Callable[..., Platform],
) -> None:
    """Failed sign-ins still count per address: a new Client-ID does not escape the lockout."""
    platform = make_platform(
        rate_limits=True, limits_per_client=True, buckets={"user-login-failed": (2, 900)}
    )
    url = platform.base_url + "/users/login"
    for guess in ("a-guess-1", "a-guess-2"):
        wrong = {"username": "viewer", "password": guess}
        assert httpx.post(url, json=wrong, headers=as_client("a")).status_code == 401
    right = {"username": "viewer", "password": "explorer"}
    refused = httpx.post(url, json=right, headers=as_client("b"))
    assert refused.status_code == 429
    assert refused.headers["X-RateLimit-Bucket"] == "user-login-failed"


def test_per_client_limits_are_refused_beyond_loopback() -> None:
    """Per-client limits let callers choose their identity: refused on a public address or
    behind a trusted proxy."""
    per_client = Config(limits_per_client=True)
    for options in (
        {"host": "0.0.0.0", "config": per_client},
        {"config": replace(per_client, forwarded_allow_ips=("10.0.0.0/8",))},
    ):
        with pytest.raises(ValueError, match="only for a platform on loopback"):
            PlatformOptions(**options)  # type: ignore[arg-type]
    assert PlatformOptions(config=per_client).host == "127.0.0.1"
