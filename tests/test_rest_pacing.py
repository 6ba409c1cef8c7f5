"""Pacing by the rate-limit buckets, against platforms with tiny buckets and limits on."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import httpx
import pytest

import explorer
from explorer.emulator import Platform
from explorer.errors import RateLimited
from explorer.rest.pacing import Pacer
from explorer.rest.transport import MAX_ATTEMPTS
from explorer.wire.ratelimit import LIMIT_HEADER, REMAINING_HEADER, RESET_HEADER

TINY_READ = {"channel-read": (5, 2.0)}


class Recording(httpx.AsyncBaseTransport):
    """The real network, remembering every answer's status."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.statuses: list[int] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        self.statuses.append(response.status_code)
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


def total_channels(base_url: str) -> int:
    """The listing's size as the platform reports it (one request)."""
    return int(httpx.get(f"{base_url}/channels", params={"limit": 1}).headers["X-Total-Count"])


def rank(base_url: str, transport: httpx.AsyncBaseTransport) -> tuple[int, float]:
    """Rank every channel 50 per page; the row count and the seconds it took."""

    async def run() -> int:
        async with explorer.AsyncClient(base_url, progress=False, transport=transport) as client:
            return len(await client.channels(order="viewersTotal:desc", limit=50))

    start = time.monotonic()
    rows = asyncio.run(run())
    return rows, time.monotonic() - start


def test_a_full_ranking_waits_for_the_bucket_and_draws_no_429(
    make_platform: Callable[..., Platform],
) -> None:
    """Seven pages through a 5-per-2 s bucket: the client waits for the reset, never a 429."""
    platform = make_platform(rate_limits=True, buckets=TINY_READ)
    total = total_channels(platform.base_url)
    transport = Recording()
    rows, took = rank(platform.base_url, transport)
    assert rows == total
    assert 429 not in transport.statuses
    assert took >= 1.0


def test_a_platform_without_limits_is_not_waited_for(
    make_platform: Callable[..., Platform],
) -> None:
    """Limits off and a 2-per-minute bucket: a seven-page ranking goes through without waiting."""
    platform = make_platform(rate_limits=False, buckets={"channel-read": (2, 60.0)})
    rows, took = rank(platform.base_url, Recording())
    assert rows == total_channels(platform.base_url)
    assert took < 30.0


def test_a_429_from_a_shared_identity_is_waited_out_and_retried(
    make_platform: Callable[..., Platform],
) -> None:
    """When someone else on the same address emptied the bucket, the GET waits and retries."""
    platform = make_platform(rate_limits=True, buckets=TINY_READ)
    total = total_channels(platform.base_url)
    with httpx.Client(base_url=platform.base_url) as other:
        for _ in range(4):
            other.get("/channels", params={"limit": 1}).raise_for_status()
    transport = Recording()
    rows, _ = rank(platform.base_url, transport)
    assert rows == total
    assert transport.statuses[0] == 429
    assert transport.statuses.count(200) == -(-total // 50)


def test_waits_show_in_the_progress_bar(
    make_platform: Callable[..., Platform], capsys: pytest.CaptureFixture[str]
) -> None:
    """While the client waits for a bucket, the progress bar says so."""
    platform = make_platform(rate_limits=True, buckets=TINY_READ)
    with explorer.connect(platform.base_url) as client:
        client.channels(limit=50)
    assert "waiting" in capsys.readouterr().err


def test_a_429_on_a_write_is_raised_not_retried(make_platform: Callable[..., Platform]) -> None:
    """Only GETs are retried: a refused registration raises RateLimited with its reset time."""
    platform = make_platform(rate_limits=True, buckets={"user-register": (1, 30.0)})
    body = {"username": "first_one", "password": "long enough", "email": "a@example.org"}
    httpx.post(f"{platform.base_url}/users", json=body).raise_for_status()
    transport = Recording()

    async def register() -> None:
        async with explorer.AsyncClient(platform.base_url, transport=transport) as client:
            await client.register("second_one", "long enough", "b@example.org")

    with pytest.raises(RateLimited) as info:
        asyncio.run(register())
    assert transport.statuses == [429]
    assert info.value.reset_at is not None and info.value.reset_at > time.time()


def test_retries_after_429_are_bounded() -> None:
    """A platform that always answers 429 gets MAX_ATTEMPTS tries, then RateLimited."""
    calls: list[httpx.Request] = []

    def always_busy(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        reset_ms = int((time.time() + 0.01) * 1000)
        return httpx.Response(
            429,
            json={"statusCode": 429, "error": "Too Many Requests", "message": "Too Many Requests"},
            headers={"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(reset_ms)},
        )

    async def fetch() -> None:
        async with explorer.AsyncClient(
            "http://platform.invalid/api/v1", transport=httpx.MockTransport(always_busy)
        ) as client:
            await client.channels()

    with pytest.raises(RateLimited, match="429 Too Many Requests"):
        asyncio.run(fetch())
    assert len(calls) == MAX_ATTEMPTS


def test_a_wait_counts_down_in_the_status() -> None:
    """A request held for its bucket says its wait again every second, one less each time,
    down to 1 s, rather than one number for the whole wait."""

    async def held() -> list[str | None]:
        pacer, said = Pacer(), []
        await pacer.acquire("channel-read", None)
        reset = int((time.time() + 2.6) * 1000)
        window = {LIMIT_HEADER: "1", REMAINING_HEADER: "0", RESET_HEADER: str(reset)}
        pacer.settle("channel-read", 200, window, 1)
        await pacer.acquire("channel-read", said.append)
        return said

    said = asyncio.run(held())
    assert said[-1] is None  # the label is back once the request goes
    counts = [int(text.split()[1]) for text in said if text]
    assert counts == list(range(counts[0], 0, -1)) and counts[0] >= 3


def test_each_client_of_a_per_client_platform_has_its_own_buckets(
    make_platform: Callable[..., Platform], capsys: pytest.CaptureFixture[str]
) -> None:
    """On a platform counting anonymous limits per client (a lab's), a new client's ranking
    does not wait for the bucket an earlier one used up: a re-run is as fast as the first."""
    platform = make_platform(
        rate_limits=True, limits_per_client=True, buckets={"channel-read": (5, 4.0)}
    )
    for _ in range(2):
        with explorer.connect(platform.base_url) as client:
            assert len(client.channels(limit=50, max_rows=250)) == 250
    assert "waiting" not in capsys.readouterr().err
