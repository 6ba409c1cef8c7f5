"""A request's tally of rate-limit buckets: places held while it is served, charged or given
back when it ends; the same in this process and in Redis (a real redis-server)."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from explorer.emulator.context import Config, Services
from explorer.emulator.fleet import RedisServer
from explorer.emulator.limits import Admission, Limits, Refusal, Standing
from explorer.emulator.policy import Tally
from tests.clocks import ManualClock
from tests.databases import open_services

BUCKETS = ("channel-read",)
KEY = ("channel-read", "addr:127.0.0.1")


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    """A redis-server for this module's tests (each counts under a prefix of its own)."""
    if shutil.which("redis-server") is None:
        pytest.skip("no redis-server binary (Debian: apt install redis-server)")
    server = RedisServer().start()
    yield server.url
    server.stop()


@pytest.fixture(params=["local", "redis"])
def services(request: pytest.FixtureRequest) -> Iterator[Services]:
    """A small world, channel reads limited to 2 a minute, counted in this process or in
    Redis."""
    opened = open_services(
        ":memory:", Config(channels=5, buckets={"channel-read": (2, 60.0)}), ManualClock()
    )
    if request.param == "redis":
        from explorer.emulator.redislimits import RedisLimits

        url = request.getfixturevalue("redis_url")
        opened.limits = RedisLimits(url, opened.limits.buckets, prefix=uuid.uuid4().hex)
    yield opened
    opened.limits.close()
    opened.store.close()


def _tally(services: Services) -> Tally:
    return Tally(services, BUCKETS, lambda _: "addr:127.0.0.1", services.clock())


def test_requests_in_flight_fill_the_bucket(services: Services) -> None:
    """Two admitted requests not answered yet leave no place for a third."""
    first, second = _tally(services), _tally(services)
    assert (first.admit(), second.admit()) == (None, None)
    assert _tally(services).admit() == "channel-read"


def test_a_cancelled_request_gives_its_place_back_uncharged(services: Services) -> None:
    """A request that ends without an answer of its own frees its place and costs nothing."""
    first, second = _tally(services), _tally(services)
    first.admit(), second.admit()
    first.cancel()
    third = _tally(services)
    assert third.admit() is None
    third.cancel(), second.cancel()
    assert services.limits.standing(KEY, services.clock()).remaining == 2


def test_an_answer_is_charged_once(services: Services) -> None:
    """A success is charged once, and its headers describe the window as its admission left
    it; a refused answer (429) gives its charge back."""
    counted, refused = _tally(services), _tally(services)
    counted.admit(), refused.admit()
    headers = counted.settle(200)
    refused.settle(429)
    assert headers["X-RateLimit-Remaining"] == "1"
    assert services.limits.standing(KEY, services.clock()).remaining == 1


def test_a_full_bucket_reports_when_it_resets(services: Services) -> None:
    """The refusal's headers describe the full window, which refills an interval after it
    opened."""
    opened_at = services.clock()
    for _ in range(2):
        tally = _tally(services)
        tally.admit()
        tally.settle(200)
    refused = _tally(services)
    assert refused.admit() == "channel-read"
    assert refused.rate_headers("channel-read") == {
        "X-Rate-Limit": "2",
        "X-RateLimit-Remaining": "0",
        "X-RateLimit-Reset": str(int((opened_at + 60) * 1000)),
    }
    services.clock.advance(60)  # type: ignore[attr-defined]
    assert _tally(services).admit() is None


class Counted(Limits):
    """Limits that count the calls made to ``inner``'s settle (a seam of ours)."""

    def __init__(self, inner: Limits) -> None:
        super().__init__(inner.buckets)
        self.inner, self.settles = inner, 0

    def admit(self, *args: Any) -> Admission | Refusal:
        return self.inner.admit(*args)

    def settle(self, *args: Any) -> Standing | None:
        self.settles += 1
        return self.inner.settle(*args)

    def close(self) -> None:
        self.inner.close()


def test_a_success_costs_one_call_and_an_error_two(services: Services) -> None:
    """A successful answer is settled by its admission alone; an answer that does not count
    calls the limits again to give its charge back."""
    services.limits = counting = Counted(services.limits)
    success, failure = _tally(services), _tally(services)
    success.admit(), failure.admit()
    success.settle(200)
    assert counting.settles == 0
    failure.settle(404)
    assert counting.settles == 1
    assert counting.standing(KEY, services.clock()).remaining == 1
