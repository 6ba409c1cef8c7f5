"""The cached-page layer: a repeated anonymous page is answered before routing, exactly as the
guard would answer it, and everything else still reaches the guard."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from starlette.types import Receive, Scope, Send

from explorer.emulator import Platform
from explorer.emulator.app import build_app
from explorer.emulator.context import Config, Services
from explorer.emulator.pagecache import CachedPages, Fill, page_cache
from explorer.emulator.resources.channels import page_filler
from explorer.emulator.resources.channels import routes as channel_routes
from explorer.wire import routes as wire
from tests.clocks import ManualClock
from tests.databases import open_services

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
    services: Services, recorder: Recorder, *paths: str, fill: Fill | None = None, **headers: str
) -> list[httpx.Response]:
    """GET each path in turn (``HEAD`` for one written ``"HEAD /path"``) through the layer in
    front of ``recorder`` (computing pages not cached yet with ``fill``, if given)."""
    route = next(r for r in channel_routes if r.endpoint is wire.CHANNELS)
    layer = CachedPages(recorder, services, route, "/api/v1", fill)

    async def run() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=layer)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            calls = [path.split(" ") if " " in path else ("GET", path) for path in paths]
            return [await client.request(m, path, headers=headers) for m, path in calls]

    return asyncio.run(run())


def _same_answer(first: httpx.Response, second: httpx.Response) -> None:
    """Assert two answers are equal but for the rate-limit count left."""
    assert (second.status_code, second.content) == (first.status_code, first.content)
    left = int(first.headers["X-RateLimit-Remaining"])
    assert second.headers["X-RateLimit-Remaining"] == str(left - 1)
    strip = b"x-ratelimit-remaining"
    assert [h for h in second.headers.raw if h[0] != strip] == [
        h for h in first.headers.raw if h[0] != strip
    ]


def test_a_repeated_page_is_answered_before_routing(services: Services) -> None:
    """The second request is not routed, and gets the same status, body and headers."""
    recorder = Recorder(services)
    first, second = _get(services, recorder, PAGE, PAGE)
    assert recorder.calls == 1
    assert first.headers["X-RateLimit-Remaining"] == "3"
    _same_answer(first, second)


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


def test_pages_being_computed_hold_their_places_in_the_bucket(services: Services) -> None:
    """Six distinct pages asked at once while the first are still being computed: only four
    pass the bucket of four, the others get the guard's 429."""
    recorder = Recorder(services)
    route = next(r for r in channel_routes if r.endpoint is wire.CHANNELS)
    computing: list[int] = []
    answered: list[int] = []

    async def run() -> list[int]:
        release = asyncio.Event()
        inner = page_filler(services)

        async def fill(scope: Scope) -> tuple[bytes, str | None]:
            computing.append(1)
            await release.wait()
            return await inner(scope)

        layer = CachedPages(recorder, services, route, "/api/v1", fill)
        transport = httpx.ASGITransport(app=layer)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:

            async def get(page: int) -> int:
                answer = await client.get(f"/api/v1/channels?order=id:asc&page={page}")
                answered.append(answer.status_code)
                return answer.status_code

            tasks = [asyncio.ensure_future(get(page)) for page in range(6)]
            for _ in range(10_000):  # until every request was computing or answered
                if len(computing) + len(answered) == 6:
                    break
                await asyncio.sleep(0)
            release.set()
            return list(await asyncio.gather(*tasks))

    statuses = asyncio.run(run())
    assert sorted(statuses) == [200, 200, 200, 200, 429, 429]
    assert len(computing) == 4


def test_a_cached_search_is_charged_to_the_search_bucket(services: Services) -> None:
    """A page with ``q`` counts in channel-search, cached or not."""
    recorder = Recorder(services)
    answers = _get(services, recorder, *[PAGE + "&q=a"] * 2)
    assert recorder.calls == 1
    assert [a.headers["X-Rate-Limit"] for a in answers] == ["250", "250"]
    assert [a.headers["X-RateLimit-Remaining"] for a in answers] == ["249", "248"]


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/channels",
        "/api/v1/channels?fields=id,name&limit=3",
        "/api/v1/channels?where=viewersTotal:gt:0&order=id:asc&page=1&limit=5",
        "/api/v1/channels?order=viewersTotal%3Adesc&%70age=0",
        "/api/v1/channels?%71=a&scope=names",
        "/api/v1/channels?q=",
        "/api/v1/%63hannels?noCount=1",
    ],
)
def test_the_cached_answer_equals_the_routed_one(services: Services, path: str) -> None:
    """For several queries, spellings and buckets, the cached answer has the routed one's
    status, body and full header list."""
    recorder = Recorder(services)
    first, second = _get(services, recorder, path, path)
    assert recorder.calls == 1
    _same_answer(first, second)


@pytest.mark.parametrize(
    "path",
    [
        PAGE,
        "/api/v1/channels?where=viewersTotal:lt:50&order=viewersTotal:desc&page=1&limit=5",
        "/api/v1/channels?fields=id,name&limit=3&noCount=1",
        "/api/v1/channels?q=a&scope=names",
    ],
)
def test_a_page_not_cached_yet_is_computed_before_routing(services: Services, path: str) -> None:
    """With the listing's fill, a page not cached yet is answered by the layer with the status,
    body and full header list routing gives it (charged alike), then cached."""
    recorder = Recorder(services)
    (routed,) = _get(services, recorder, path)
    page_cache(services).pages.clear()
    filled, cached = _get(services, recorder, path, path, fill=page_filler(services))
    assert recorder.calls == 1
    _same_answer(routed, filled)
    _same_answer(filled, cached)


def test_a_refused_query_is_routed_even_with_a_fill(services: Services) -> None:
    """A query the listing refuses goes on to the guard, which writes the 400; the layer
    charges nothing for it (the second refusal leaves the bucket as the first did)."""
    recorder = Recorder(services)
    bad = "/api/v1/channels?where=nosuchfield:eq:1"
    first, second = _get(services, recorder, bad, bad, fill=page_filler(services))
    assert recorder.calls == 2
    assert [first.status_code, second.status_code] == [400, 400]
    assert first.content == second.content
    assert first.headers["X-RateLimit-Remaining"] == second.headers["X-RateLimit-Remaining"]


def test_a_query_spelled_differently_is_not_served_another_page(services: Services) -> None:
    """Queries that differ only in order or encoding are each answered for themselves."""
    recorder = Recorder(services)
    a, b = "?order=id:asc&limit=2&page=1", "?page=1&limit=2&order=id:asc"
    answers = _get(services, recorder, *[f"/api/v1/channels{q}" for q in (a, b, a, b)])
    assert recorder.calls == 2
    assert len({r.content for r in answers}) == 1
    _same_answer(answers[1], answers[2])


def test_an_invalid_query_is_refused_every_time(services: Services) -> None:
    """A query the listing rejects is routed and refused with the same 400 each time."""
    recorder = Recorder(services)
    bad = "/api/v1/channels?where=nosuchfield:eq:1"
    first, second = _get(services, recorder, bad, bad)
    assert recorder.calls == 2
    assert [first.status_code, second.status_code] == [400, 400]
    assert first.content == second.content


def test_head_is_routed_with_the_get_headers(services: Services) -> None:
    """``HEAD`` of a cached page goes through the guard and answers the GET's headers."""
    recorder = Recorder(services)
    got, head = _get(services, recorder, PAGE, f"HEAD {PAGE}")
    assert recorder.calls == 2
    assert head.status_code == 200 and head.content == b""
    assert head.headers["content-length"] == got.headers["content-length"]


def test_forwarded_addresses_are_counted_apart() -> None:
    """Behind a trusted proxy, cached answers are charged to the forwarded address, as the
    guard charges them: one full address does not refuse another."""
    opened = open_services(
        ":memory:",
        Config(
            channels=30,
            buckets={"channel-read": (2, 60.0)},
            forwarded_allow_ips=("127.0.0.1",),
        ),
        ManualClock(),
    )
    try:
        recorder = Recorder(opened)
        one = _get(opened, recorder, *[PAGE] * 3, **{"x-forwarded-for": "10.0.0.1"})
        other = _get(opened, recorder, *[PAGE] * 2, **{"x-forwarded-for": "10.0.0.2"})
    finally:
        opened.store.close()
    assert [r.status_code for r in one] == [200, 200, 429]
    assert [r.status_code for r in other] == [200, 200]
    assert [r.headers["X-RateLimit-Remaining"] for r in other] == ["1", "0"]


@pytest.mark.sqlite_only("the other process writes the file through a bare sqlite3 connection")
def test_a_write_by_another_process_invalidates_the_page(tmp_path: Path) -> None:
    """On a database file, a change another process makes (a bare SQLite connection, so
    through the schema's triggers alone) is seen by the next cached request."""
    db = str(tmp_path / "world.db")
    serving = open_services(db, Config(channels=30), ManualClock())
    try:
        recorder = Recorder(serving)
        (before,) = _get(serving, recorder, PAGE)
        top = before.json()[0]["id"]
        write = (
            "import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); "
            "db.execute(\"UPDATE channels SET name = 'elsewhere' WHERE id = ?\", "
            "(int(sys.argv[2]),)); "
            "db.commit()"
        )
        subprocess.run([sys.executable, "-c", write, db, str(top)], check=True, timeout=60)
        (after,) = _get(serving, recorder, PAGE)
    finally:
        serving.store.close()
    assert recorder.calls == 2
    assert after.json()[0]["name"] == "elsewhere"


def test_credentials_over_http_are_never_served_as_anonymous(
    make_platform: Callable[..., Platform], signed_in: Callable[..., httpx.Client]
) -> None:
    """Over a real server, after a page is cached: a session cookie (also beside other cookies)
    is charged to its user and gets its CSRF header, and any ``Authorization`` (Basic, in
    capitals) is judged by the guard (401), never answered the cached page."""
    running = make_platform(channels=30, buckets={"channel-read": (10, 60.0)})
    page = "/channels?limit=1"
    with httpx.Client(base_url=running.base_url, timeout=10) as anonymous:
        assert [anonymous.get(page).status_code for _ in range(3)] == [200] * 3
        user = signed_in(running.base_url, "streamer")
        session = user.cookies["explorer_session"]
        own = user.get(page)
        csrf = user.headers["X-CSRF-Token"]
        both = {"cookie": f"a=b; explorer_session={session}", "x-csrf-token": csrf}
        beside = anonymous.get(page, headers=both)
        basic = anonymous.get(page, headers={"AUTHORIZATION": "Basic dXNlcjpwYXNz"})
        empty = anonymous.get(page, headers={"cookie": ""})
    assert own.status_code == 200 and "X-CSRF-Token" in own.headers
    assert [own.headers["X-RateLimit-Remaining"], beside.headers["X-RateLimit-Remaining"]] == [
        "9",
        "8",
    ]
    assert basic.status_code == 401
    assert empty.status_code == 200 and "X-CSRF-Token" not in empty.headers
