"""Route dispatch indexed by (first path segment, number of segments).

Starlette's router tries routes one by one; with the platform's ~130 routes that costs tens of
microseconds per request before any work starts, more than serving a cached page. Every
platform path starts with a literal segment and no parameter spans segments, so a request can
only match routes with the same first segment and depth: this dispatcher looks that group up
in a dict and hands the request to a plain Starlette ``Router`` over just that group, which
keeps Starlette's own matching, 405 handling and path parameters.

Within a group, routes are tried by specificity (:func:`by_specificity`): a literal segment
beats a parameter at the same position, so ``/interactive/games`` is never caught by
``/interactive/{channel}``, whichever module declares its routes first.
"""

from __future__ import annotations

from collections.abc import Sequence

from starlette.exceptions import HTTPException
from starlette.routing import BaseRoute, Route, Router
from starlette.types import Receive, Scope, Send


def _key(path: str) -> tuple[str, int]:
    parts = path.strip("/").split("/")
    return parts[0], len(parts)


def specificity(path: str) -> tuple[bool, ...]:
    """Sort key of a route path: per segment, False for a literal and True for a parameter,
    so the route with a literal where another has a parameter (leftmost first) sorts first."""
    return tuple(part.startswith("{") for part in path.strip("/").split("/"))


def by_specificity(routes: Sequence[Route]) -> list[Route]:
    """``routes`` in matching order: more specific paths first, declared order otherwise."""
    return sorted(routes, key=lambda route: specificity(route.path))


class IndexedRouter:
    """An ASGI app dispatching to per-(segment, depth) Starlette routers."""

    def __init__(self, routes: Sequence[BaseRoute]) -> None:
        groups: dict[tuple[str, int], list[Route]] = {}
        for route in routes:
            assert isinstance(route, Route), "only plain routes are indexed"
            key = _key(route.path)
            if key[0].startswith("{"):
                raise ValueError(f"{route.path}: a first segment must be literal to be indexed")
            groups.setdefault(key, []).append(route)
        self.routers = {
            key: Router(routes=list(by_specificity(group)), redirect_slashes=False)
            for key, group in groups.items()
        }

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        root = scope.get("root_path", "")
        path: str = scope["path"]
        path = path[len(root) :] if path.startswith(root) else path
        router = self.routers.get(_key(path))
        if router is None:
            raise HTTPException(status_code=404)
        try:
            await router(scope, receive, send)
        except HTTPException as exc:
            if exc.status_code != 405:
                raise
            allow = ", ".join(sorted(allowed_methods(router, path)))
            raise HTTPException(status_code=405, headers={"Allow": allow}) from None


def allowed_methods(router: Router, path: str) -> set[str]:
    """Every method served at ``path``, for a 405's ``Allow`` header (RFC 9110).

    Routes are mounted one method each, so Starlette's own header names only the first route
    whose path matched. ``/users/current`` is its own resource, not ``/users/{user}`` with user
    "current": only the matching routes with the most literal segments describe it.
    """
    allowed: set[str] = set()
    best = -1
    for route in router.routes:
        if not (isinstance(route, Route) and route.path_regex.match(path)):
            continue
        literal = route.path.count("/") - route.path.count("{")
        if literal > best:
            best, allowed = literal, set()
        if literal == best:
            allowed |= route.methods or set()
    return allowed
