"""The indexed route dispatcher: same answers as Starlette's router, found by (segment, depth)."""

from __future__ import annotations

import asyncio
import random
import re

import pytest
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from explorer.emulator import resources
from explorer.emulator.routing import IndexedRouter


async def _echo(request: Request) -> Response:
    return PlainTextResponse(f"{request.method} {request.url.path} {dict(request.path_params)}")


ROUTES = [
    Route("/things", _echo, methods=["GET"]),
    Route("/things/owned", _echo, methods=["GET"]),
    Route("/things/{thing}", _echo, methods=["GET", "DELETE"]),
    Route("/things/{thing}/parts", _echo, methods=["GET"]),
]


def call(router: IndexedRouter, method: str, path: str) -> tuple[int, str]:
    """Send one request through ``router`` and return (status, body)."""
    sent: list[dict[str, object]] = []

    async def receive() -> dict[str, object]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, object]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": method,
        "path": path,
        "root_path": "",
        "headers": [],
        "query_string": b"",
        "app": object(),
    }
    asyncio.run(router(scope, receive, send))  # type: ignore[arg-type]
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")  # type: ignore[misc]
    return int(sent[0]["status"]), body.decode()  # type: ignore[call-overload]


def test_parameters_are_extracted() -> None:
    """Path parameters reach the endpoint as with Starlette's router."""
    assert call(IndexedRouter(ROUTES), "GET", "/things/7/parts")[1] == (
        "GET /things/7/parts {'thing': '7'}"
    )


def test_wrong_method_is_405_allowing_every_method_of_the_path() -> None:
    """A path served with other methods answers 405 with all of them in Allow."""
    with pytest.raises(HTTPException) as raised:
        call(IndexedRouter(ROUTES), "POST", "/things/7")
    assert raised.value.status_code == 405
    assert raised.value.headers == {"Allow": "DELETE, GET, HEAD"}


@pytest.mark.parametrize("path", ["/nothing", "/things/7/parts/extra", "/"])
def test_unknown_paths_are_404(path: str) -> None:
    """Paths with no route of their segment and depth raise 404."""
    with pytest.raises(HTTPException) as raised:
        call(IndexedRouter(ROUTES), "GET", path)
    assert raised.value.status_code == 404


def test_parameter_first_segment_is_refused() -> None:
    """A route whose first segment is a parameter cannot be indexed and is refused early."""
    with pytest.raises(ValueError, match="literal"):
        IndexedRouter([Route("/{anything}", _echo)])


def test_literal_segment_wins_whatever_the_declared_order() -> None:
    """Routes declared in any order dispatch by specificity: a literal segment beats a
    parameter at the same position (as resource modules may be read in any order)."""
    shuffled = list(reversed(ROUTES))
    for routes in (ROUTES, shuffled, [ROUTES[2], ROUTES[0], ROUTES[3], ROUTES[1]]):
        router = IndexedRouter(routes)
        assert call(router, "GET", "/things/owned")[1] == "GET /things/owned {}"
        assert call(router, "GET", "/things/7")[1] == "GET /things/7 {'thing': '7'}"


_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")


def _template(path: str) -> Route:
    """A route at ``path`` (any method) whose response is its own path template."""

    async def endpoint(request: Request) -> Response:
        return PlainTextResponse(path)

    return Route(path, endpoint, methods=list(_METHODS))


def test_platform_routes_dispatch_right_in_any_module_order() -> None:
    """The platform's route table, its modules shuffled, sends a request for each route's path
    (parameters filled in) to that route: no literal is shadowed by another module's parameter."""
    routes = {route.path for module in resources.modules() for route in module.routes}
    rng = random.Random(14)
    for _ in range(5):
        modules = list(resources.modules())
        rng.shuffle(modules)
        order = list(dict.fromkeys(r.path for m in modules for r in reversed(m.routes)))
        router = IndexedRouter([_template(path) for path in order])
        for path in routes:
            concrete = re.sub(r"\{[^}]+\}", "7", path)
            assert call(router, "GET", concrete) == (200, path)
