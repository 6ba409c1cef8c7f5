"""Encoded list pages, and the layer that answers a repeated anonymous request from them.

:class:`PageCache` keeps ``GET /channels`` pages as encoded bytes by query string, each valid
while the catalog version (kept by triggers, so by any writer, in any process) is unchanged.

:class:`CachedPages` is a pure ASGI layer in front of routing. A ``GET`` of the cached route
with no credential (no ``Authorization``, no cookie) whose page is cached and current is
answered here, with what the route's guard (:mod:`~explorer.emulator.policy`) would do for it:
the caller is the address, its buckets must all allow the request, the answer is charged to
them and carries the same headers (clock, rate limit, ``X-Total-Count``). Given the route's
``fill`` (what its handler computes for a page), a page not cached yet is computed here too and
answered the same way: distinct listings (a new filter or page each) cost the server about
half as much as through routing. Anything else, a full bucket (the guard writes the 429), a
query the listing refuses or one holding a NUL (the guard writes the 400), a credential, goes
on to the app unchanged. Starlette's routing, request objects and response objects cost more
than serving the page.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Awaitable, Callable
from urllib.parse import unquote_plus

from starlette.types import ASGIApp, Receive, Scope, Send

from explorer.emulator import addresses, plaintext
from explorer.emulator.context import Services
from explorer.emulator.policy import Route, Tally, charged, client_of, counting
from explorer.wire.query import QueryError

#: ``Services.caches`` name of the channel pages.
CHANNEL_PAGES = "channels"
#: The page an anonymous request's scope asks for: its body and total (None without a count);
#: raises :class:`~explorer.wire.query.QueryError` for a query the listing refuses.
Fill = Callable[[Scope], Awaitable[tuple[bytes, str | None]]]


class PageCache:
    """Encoded list pages by query string, each valid while the catalog version is unchanged.

    A full ranking asks every page once, but notebooks re-run cells and the recipes rank the
    same channels many ways; encoding a page costs ~1 ms and serving a cached one ~0.05 ms.
    """

    def __init__(self, size: int = 512) -> None:
        self.size = size
        self.pages: OrderedDict[str, tuple[int, bytes, str | None]] = OrderedDict()

    def get(self, key: str, version: int) -> tuple[bytes, str | None] | None:
        """The cached body and total for ``key`` if still current."""
        hit = self.pages.get(key)
        if hit is None or hit[0] != version:
            return None
        self.pages.move_to_end(key)
        return hit[1], hit[2]

    def put(self, key: str, version: int, body: bytes, total: str | None) -> None:
        """Remember a page, evicting the least recently used past ``size``."""
        self.pages[key] = (version, body, total)
        self.pages.move_to_end(key)
        if len(self.pages) > self.size:
            self.pages.popitem(last=False)


def page_cache(services: Services) -> PageCache:
    """The channel pages of ``services``, made on first use."""
    cache: PageCache | None = services.caches.get(CHANNEL_PAGES)
    if cache is None:
        cache = services.caches[CHANNEL_PAGES] = PageCache()
    return cache


def page_key(scope: Scope) -> str:
    """The cache key of a request: its raw query string (latin-1 maps every byte)."""
    query: bytes = scope.get("query_string", b"")
    return query.decode("latin-1")


def _names(query: str, wanted: str | None) -> dict[str, str]:
    """The parameter names of ``query`` (decoded as the request's query parameters are) that
    may be ``wanted``: none when ``query`` cannot spell it, plainly or percent-encoded."""
    if wanted is None or (wanted not in query and "%" not in query):
        return {}
    return {unquote_plus(part.partition("=")[0]): "" for part in query.split("&") if part}


#: Request headers that may name a caller; a request with one goes through the guard.
_CREDENTIALS = frozenset({b"authorization", b"cookie"})
_JSON = (b"content-type", b"application/json")


class CachedPages:
    """The ASGI layer answering ``route``'s cached pages for anonymous ``GET`` requests."""

    def __init__(
        self, app: ASGIApp, services: Services, route: Route, prefix: str, fill: Fill | None = None
    ) -> None:
        self.app = app
        self.services = services
        self.route = route
        self.path = prefix + route.path
        self.fill = fill
        assert route.method == "GET" and route.endpoint.signin != "user"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["path"] != self.path
            or scope["method"] != "GET"
            or scope.get("root_path")
            or plaintext.may_hold_nul(scope.get("query_string", b""))
            or not await self._answer(scope, send)
        ):
            await self.app(scope, receive, send)

    async def _answer(self, scope: Scope, send: Send) -> bool:
        """Answer ``scope`` from the cache and return True, or return False untouched."""
        raw: list[tuple[bytes, bytes]] = scope["headers"]
        if any(name in _CREDENTIALS for name, _ in raw):
            return False
        services = self.services
        key = page_key(scope)
        version = services.store.catalog_version()
        hit = page_cache(services).get(key, version)
        if hit is None and self.fill is None:
            return False
        now = services.clock()
        peer = scope.get("client")
        address = addresses.client(
            peer[0] if peer else None, _lookup(raw), services.config.forwarded_allow_ips
        )
        search = self.route.endpoint.search
        buckets = charged(self.route, _names(key, search and search[0]))
        client = client_of(_lookup(raw), services.config)
        tally = Tally(services, buckets, counting(self.route, None, address, client), now)
        if tally.admit() is not None:
            return False
        if hit is None:
            assert self.fill is not None
            try:
                hit = await self.fill(scope)
            except QueryError:
                tally.cancel()
                return False  # nothing charged: the guard charges and writes the 400
            except BaseException:
                tally.cancel()
                raise
            page_cache(services).put(key, version, *hit)
        body, total = hit
        headers = [(b"content-length", str(len(body)).encode()), _JSON]
        if total is not None:
            headers.insert(0, (b"x-total-count", total.encode()))
        for name, value in tally.settle(200).items():
            headers.append((name.lower().encode("latin-1"), value.encode("latin-1")))
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})
        return True


def _lookup(raw: list[tuple[bytes, bytes]]) -> addresses.HeaderLookup:
    """A request-header lookup by lower-case name over ASGI ``raw`` headers."""

    def header(name: str) -> str | None:
        wanted = name.encode("latin-1")
        for key, value in raw:
            if key == wanted:
                return value.decode("latin-1")
        return None

    return header
