"""The cached-page layer: a repeated anonymous page is answered before routing, exactly as the
guard would answer it, and everything else still reaches the guard."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import httpx
import pytest
from starlette.types import Receive, Scope, Send

from explorer.emulator.app import build_app
from explorer.emulator.context import Config, Services
from explorer.emulator.pagecache import CachedPages
from explorer.emulator.resources.channels import routes as channel_routes
from explorer.emulator.server import open_services
from explorer.wire import routes as wire
from tests.clocks import ManualClock

PAGE = "/api/v1/channels?order=viewersTotal:desc&page=0"


class Recorder:
    """The platform's app behind the layer, counting the requests that reach it."""

    def __init__(self, services: Services) -> None:
        self.app = build_app(services)
        self.calls = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.calls += 1
        await self.app(scope, receive, send)


@pytest.fixture
def services() -> Iterator[Services]:
    """A small world on a manual clock, channel reads limited to 4 a minute."""
    opened = open_services(
        ":memory:", Config(channels=30, buckets={"channel-read": (4, 60.0)}), ManualClock()
    )
    yield opened
    opened.store.close()


def _get(
    services: Services, recorder: Recorder, *paths: str, **headers: str
) -> list[httpx.Response]:
    """GET each path in turn through the layer in front of ``recorder``."""
    route = next(r for r in channel_routes if r.endpoint is wire.CHANNELS)
    layer = CachedPages(recorder, services, route, "/api/v1")

    async def run() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=layer)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            return [await client.get(path, headers=headers) for path in paths]

    return asyncio.run(run())


def test_a_repeated_page_is_answered_before_routing(services: Services) -> None:
    """The second request is not routed, and gets the same status, body and headers."""
    recorder = Recorder(services)
    first, second = _get(services, recorder, PAGE, PAGE)
    assert recorder.calls == 1
    assert (second.status_code, second.content) == (first.status_code, first.content)
    assert first.headers["X-RateLimit-Remaining"] == "3"
    assert second.headers["X-RateLimit-Remaining"] == "2"
    del first.headers["X-RateLimit-Remaining"], second.headers["X-RateLimit-Remaining"]
    assert list(second.headers.raw) == list(first.headers.raw)


def test_a_total_count_is_answered_from_the_cache_too(services: Services) -> None:
    """A counted page's ``X-Total-Count`` comes with its cached answer, an uncounted page's
    does not."""
    recorder = Recorder(services)
    first, second = _get(services, recorder, PAGE, PAGE)
    assert second.headers["X-Total-Count"] == first.headers["X-Total-Count"]
    uncounted = _get(services, recorder, *[PAGE + "&noCount=1"] * 2)
    assert recorder.calls == 2
    assert [("X-Total-Count" in a.headers) for a in uncounted] == [False, False]


def test_requests_with_a_credential_are_routed(services: Services) -> None:
    """A cookie or an Authorization header takes the request through the guard."""
    recorder = Recorder(services)
    _get(services, recorder, PAGE, PAGE, cookie="explorer_session=nothing")
    _get(services, recorder, PAGE, authorization="JWT nothing")
    assert recorder.calls == 3


def test_a_write_invalidates_the_cached_page(services: Services) -> None:
    """After a channel changes, the page is routed and encoded again."""
    recorder = Recorder(services)
    (before,) = _get(services, recorder, PAGE)
    top = before.json()[0]["id"]
    with services.store.transaction() as db:
        db.execute("UPDATE channels SET name = 'renamed' WHERE id = ?", (top,))
    (after,) = _get(services, recorder, PAGE)
    assert recorder.calls == 2
    assert after.json()[0]["name"] == "renamed"


def test_a_full_bucket_is_refused_by_the_guard(services: Services) -> None:
    """Cached or not, the fifth read in the window is the guard's 429."""
    recorder = Recorder(services)
    answers = _get(services, recorder, *[PAGE] * 5)
    assert [a.status_code for a in answers] == [200, 200, 200, 200, 429]
    assert recorder.calls == 2
    assert answers[4].headers["X-RateLimit-Remaining"] == "0"


def test_a_cached_search_is_charged_to_the_search_bucket(services: Services) -> None:
    """A page with ``q`` counts in channel-search, cached or not."""
    recorder = Recorder(services)
    answers = _get(services, recorder, *[PAGE + "&q=a"] * 2)
    assert recorder.calls == 1
    assert [a.headers["X-Rate-Limit"] for a in answers] == ["250", "250"]
    assert [a.headers["X-RateLimit-Remaining"] for a in answers] == ["249", "248"]
