"""Assembles the platform's ASGI app: every resource module's routes, each wrapped by policy.

Mounted paths: ``/api/v1`` (the platform), ``/api/v2/chats/{id}`` (the alias one official
client uses, reference.md fact 7), ``/api/v2/chats/{id}/users`` (the V2 chatters list) and
``/api/v2/ads/channels/{id}`` (the 2020 ad-break API, :mod:`~explorer.emulator.resources.ads`),
``/_emulator`` (the control namespace), ``/go`` (the shortcode page,
:mod:`~explorer.emulator.gopage`), ``/_latest/emoticons/default.png`` (the builtin emoticon
sprite sheet, :mod:`~explorer.emulator.chat.emoticons`) and
``/oauth/authorize`` at the web root, where the historical platform's consent page was and
where Firebot and passport-mixer send people. Websockets at the web root are Constellation,
the live-events service (:mod:`~explorer.emulator.live.constellation`), where a client that
had ``wss://constellation.mixer.com`` finds it once that is replaced by our root address.
Errors Starlette raises itself (no such path, method not allowed) get the platform's JSON
error shape too.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, WebSocketRoute
from starlette.routing import Route as StarletteRoute
from starlette.types import ASGIApp, Receive, Scope, Send

from explorer.emulator import gopage
from explorer.emulator.chat import emoticons
from explorer.emulator.context import Services
from explorer.emulator.hosts import Hosts
from explorer.emulator.live.constellation import Constellation
from explorer.emulator.live.webhooks import RefuseDeliveries
from explorer.emulator.openapi import describe, extra_schemas
from explorer.emulator.pagecache import CachedPages
from explorer.emulator.policy import Route, guard
from explorer.emulator.resources import ads, channels, chats, chatters, control, modules, oauth
from explorer.emulator.responses import ApiError, JSONResponse
from explorer.emulator.routing import IndexedRouter
from explorer.wire import routes as wire

log = logging.getLogger("explorer.emulator")


def platform_routes() -> list[Route]:
    """Every route of the platform's API, in matching order."""
    return [route for module in modules() for route in module.routes]


def _mount(routes: list[Route], services: Services) -> list[StarletteRoute]:
    return [
        StarletteRoute(r.path, guard(r, services), methods=[r.method], name=f"{r.method} {r.path}")
        for r in routes
    ]


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    message = {404: "No such endpoint.", 405: "Method not allowed on this endpoint."}.get(
        exc.status_code, str(exc.detail)
    )
    return ApiError(exc.status_code, message, headers=dict(exc.headers or {})).response()


#: What a request gets while the database server cannot be reached (restarting, say).
UNAVAILABLE = "The database is unavailable; try again shortly."
#: Seconds a client is asked to wait before it tries again then.
RETRY_AFTER = "1"


def _server_error(services: Services) -> Callable[[Request, Exception], Awaitable[Response]]:
    """The handler of errors no route handled: 503 with ``Retry-After`` when the database is
    away (nothing was written: its transaction never committed), 500 otherwise."""

    async def handle(request: Request, exc: Exception) -> Response:
        # %r: the path is a client's text, and a log read in a terminal must not obey it.
        if services.store.unavailable(exc):
            log.warning("database unavailable on %s %r: %s", request.method, request.url.path, exc)
            return ApiError(503, UNAVAILABLE, headers={"Retry-After": RETRY_AFTER}).response()
        log.exception("unhandled error on %s %r", request.method, request.url.path)
        return ApiError(500, "Internal error.").response()

    return handle


class ServedByStore:
    """ASGI middleware: each HTTP request awaited through the store's
    :meth:`~explorer.emulator.db.engine.Store.serve`, which on PostgreSQL awaits its reads
    (the loop serving other requests while one waits for the database)."""

    def __init__(self, app: ASGIApp, services: Services) -> None:
        self.app = app
        self.store = services.store

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            await self.store.serve(self._call(scope, receive, send))
        else:
            await self.app(scope, receive, send)

    async def _call(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, send)


def build_app(services: Services) -> Starlette:
    """The ASGI app for one platform instance."""
    routes = platform_routes()
    document = describe(routes, extra_schemas(modules()))

    async def openapi(request: Request) -> Response:
        return JSONResponse(document)

    api = [*_mount(routes, services), StarletteRoute("/openapi.json", openapi, methods=["GET"])]
    # Mounting the indexed dispatcher keeps per-request routing cost flat in the route count.
    alias = _mount(
        [
            *[r for r in chats.routes if r.path == "/chats/{channel}"],
            *chatters.V2_ROUTES,
            *ads.V2_ROUTES,
        ],
        services,
    )
    listing = next(r for r in routes if r.endpoint is wire.CHANNELS)
    # Where the store awaits its reads (PostgreSQL), each request is served through it,
    # outside every other layer; elsewhere that layer would only cost each request a call.
    served = [Middleware(ServedByStore, services=services)] if services.store.awaits_reads else []
    return Starlette(
        # Inside the 500 handler, before any routing: a request naming a host the platform
        # does not serve (DNS rebinding) is refused first, then the platform's own hook
        # deliveries (a hook pointed at the platform itself), then anonymous channel pages
        # are answered by the page cache's layer (cached, or computed and cached).
        middleware=[
            *served,
            Middleware(Hosts, config=services.config),
            Middleware(RefuseDeliveries),
            Middleware(
                CachedPages,
                services=services,
                route=listing,
                prefix="/api/v1",
                fill=channels.page_filler(services),
            ),
        ],
        routes=[
            Mount("/api/v1", app=IndexedRouter(api)),
            Mount("/api/v2", routes=alias),
            Mount("/_emulator", routes=_mount(control.routes, services)),
            *gopage.routes,
            *emoticons.routes,
            *_mount([r for r in oauth.routes if r.path == "/oauth/authorize"], services),
            WebSocketRoute("/", Constellation(services).serve),
        ],
        exception_handlers={HTTPException: _http_error, Exception: _server_error(services)},
    )
