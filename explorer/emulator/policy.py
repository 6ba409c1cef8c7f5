"""Who may call what, how often: the route table's rules, applied before every handler.

Each route binds a wire row (``explorer.wire.routes``), which declares its method, path,
bucket, whether it needs a signed-in caller, and the OAuth scopes a bearer token must carry.
:func:`guard` wraps a handler with exactly those rules, in this order:

0. a state-changing request a browser sent from another site's page is 403
   (:func:`cross_site`): a cross-site form cannot sign anyone in or act for them;
1. identify the caller: ``Authorization: Bearer`` (OAuth token; ``OAuth`` is a synonym, as
   passport-mixer sends it), ``Authorization: JWT``, or the session cookie; CSRF applies only
   to the cookie (reference.md fact 9);
2. a route that relies on the cookie with a missing/invalid ``X-CSRF-Token`` answers 461 with
   the session's token in the header, so the retry succeeds;
3. signed-in and scope checks (401 / 403);
4. the rate-limit buckets (the route's own, ``global``, and any extra such as
   ``user-login-failed``) counted per identity: the user when signed in, else the address
   (and its ``Client-ID`` on a platform with per-client limits, :func:`client_of`; the
   lockout and registration buckets by :func:`counting`'s own rule);
5. the handler; then the buckets are charged by the response status (``counts_status``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import HTTPConnection, Request
from starlette.responses import Response

from explorer.emulator import addresses, credentials, endings, plaintext
from explorer.emulator.config import Config
from explorer.emulator.context import Caller, Context, Services
from explorer.emulator.db import oauth, sessions
from explorer.emulator.limits import Admission, Key, Refusal, Standing
from explorer.emulator.responses import CSRF_HEADER, ApiError, JSONResponse
from explorer.emulator.scopes import SCOPES
from explorer.wire.endpoint import Endpoint
from explorer.wire.query import QueryError
from explorer.wire.ratelimit import (
    BUCKET_HEADER,
    ENFORCED_HEADER,
    LIMIT_HEADER,
    REMAINING_HEADER,
    RESET_HEADER,
    counts_status,
)

SESSION_COOKIE = "explorer_session"

Handler = Callable[[Context], Awaitable[Any]]


@dataclass(frozen=True, slots=True)
class Param:
    """A documented query parameter (for the OpenAPI description)."""

    name: str
    schema: dict[str, Any]
    description: str = ""
    required: bool = False


@dataclass(frozen=True, slots=True)
class Route:
    """One endpoint served: the wire row (method, path, bucket, sign-in, scopes, record), the
    handler, and what the OpenAPI description says beyond the row. ``response`` is the answer's
    schema when the row's record does not say it."""

    endpoint: Endpoint
    handler: Handler
    summary: str = ""
    params: tuple[Param, ...] = ()
    body: dict[str, Any] | None = None
    response: dict[str, Any] | None = None
    status: int = 200
    content_type: str = "application/json"
    errors: tuple[int, ...] = field(default=())

    @property
    def method(self) -> str:
        """The HTTP method (the row's)."""
        return self.endpoint.method

    @property
    def path(self) -> str:
        """The path template below ``/api/v1`` (the row's)."""
        return self.endpoint.path

    @property
    def answer(self) -> dict[str, Any] | None:
        """The answer's schema: ``response``, else a reference to the row's record."""
        if self.response is not None or not self.endpoint.record:
            return self.response
        ref = {"$ref": f"#/components/schemas/{self.endpoint.record}"}
        return {"type": "array", "items": ref} if self.endpoint.many else ref


def identify(request: HTTPConnection, services: Services) -> tuple[Caller | None, bool, int | None]:
    """Find the caller of ``request``.

    Returns ``(caller, csrf_ok, session_id)``: a cookie caller comes back with ``csrf_ok``
    False when its token is missing or wrong. A bad bearer/JWT raises 401.
    """
    store, now = services.store, services.clock()
    header = request.headers.get("authorization")
    if header:
        scheme, _, value = header.partition(" ")
        scheme, value = scheme.lower(), value.strip()
        if scheme in ("bearer", "oauth"):
            row = oauth.access_token(store, credentials.digest(value))
            if row is None or row[3] or row[2] < now:
                raise ApiError(401, "Invalid or expired access token.")
            grant = f"grant:{row[4]}"
            return Caller(row[0], "bearer", frozenset(row[1].split()), credential=grant), True, None
        if scheme == "jwt":
            claims = credentials.jwt_decode(services.secret, value)
            if (
                claims is None
                or not isinstance(claims.get("exp"), int | float)
                or not isinstance(claims.get("sub"), int)
                or not isinstance(claims.get("src"), str)
            ):
                raise ApiError(401, "Invalid JWT.")
            if claims["exp"] < now:
                raise ApiError(401, "Expired JWT.")
            # A JWT lives only as long as the credential that minted it (see endings).
            if not endings.source_alive(services, claims["src"], claims["sub"]):
                raise ApiError(401, "The credential behind this JWT has ended.")
            scopes = frozenset(claims.get("scopes", ()))
            return Caller(claims["sub"], "jwt", scopes, credential=claims["src"]), True, None
        if scheme == "secret":
            # An OAuth client's secret (web hooks): no user; the hooks routes check it.
            return None, True, None
        raise ApiError(401, "Unsupported Authorization scheme.")
    cookie = request.cookies.get(SESSION_COOKIE)
    if not cookie:
        return None, True, None
    token_hash = credentials.digest(cookie)
    session = sessions.found(store, services.caches.setdefault("sessions", {}), token_hash)
    if session is None or session[2] < now:
        return None, True, None
    session_id, user_id = session[0], session[1]
    expected = credentials.csrf_token(services.secret, cookie)
    sent = request.headers.get(CSRF_HEADER, "")
    csrf_ok = credentials.same(sent, expected)
    credential = endings.session_credential(token_hash)
    caller = Caller(user_id, "session", SCOPES, session_id, credential)
    return caller, csrf_ok, session_id


def _render(route: Route, result: Any) -> Response:
    if isinstance(result, Response):
        return result
    if result is None:
        return Response(status_code=204 if route.status == 200 else route.status)
    return JSONResponse(result, status_code=route.status)


#: Methods that change nothing, so another site's page may send them.
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def cross_site(request: Request) -> bool:
    """Whether a browser sent ``request`` from a page of another origin.

    Browsers name the page's origin in ``Origin`` on every request that can change something
    (forms included, sign-in included); programs send none. Another port on the same host is
    another origin, so a page served elsewhere on loopback is refused too.
    """
    origin = request.headers.get("origin")
    if origin is None:
        return False
    scheme, _, host = origin.partition("://")
    return host != request.headers.get("host") or scheme != request.url.scheme


#: Buckets counted per address whatever credential a request carries: a token of one's own
#: must not turn the lockout or the registration limit into a per-user count.
PER_ADDRESS = frozenset({"user-login-failed", "user-register"})

#: The status a request is counted as from its admission until its answer is known.
SUCCESS = 200

#: Whom a request is charged to in each bucket it counts in.
Identity = Callable[[str], str]

#: The header naming the calling application (reference fact 9); with
#: ``Config.limits_per_client`` it splits an address's anonymous buckets per client.
CLIENT_HEADER = "client-id"
#: Characters of a Client-ID kept for counting (a longer one is cut, not a new identity).
_CLIENT_CHARS = 64


def client_of(header: addresses.HeaderLookup, config: Config) -> str | None:
    """The Client-ID an anonymous request is counted under, when the platform counts per
    client (``Config.limits_per_client``); None otherwise or when none was sent."""
    if not config.limits_per_client:
        return None
    sent = header(CLIENT_HEADER)
    return sent[:_CLIENT_CHARS] if sent else None


def counting(
    route: Route, caller: Caller | None, address: str, client: str | None = None
) -> Identity:
    """Whom a request from ``address`` (:func:`~explorer.emulator.addresses.of_request`)
    counts as, bucket by bucket: the signed-in user, else the address (and ``client``, its
    :func:`client_of`, when given); :data:`PER_ADDRESS` buckets always the address, except
    where a signed-in caller proves a password or code (a route that needs a user): there
    failures count per credential, so a stolen session or token cannot lock its owner's own
    credential out."""
    address = f"addr:{address}"
    anonymous = f"{address}/client:{client}" if client else address
    own = f"user:{caller.user_id}" if caller is not None else anonymous
    proof = (
        f"cred:{caller.credential}"
        if caller is not None and route.endpoint.signin == "user"
        else None
    )

    def of(bucket: str) -> str:
        if bucket not in PER_ADDRESS:
            return own
        return proof or address

    return of


def charged(route: Route, params: Mapping[str, str]) -> tuple[str, ...]:
    """The buckets a request to ``route`` with query ``params`` counts in: the route's (or its
    search bucket), ``global``, and any extra."""
    return (route.endpoint.bucket_for(params), "global", *route.endpoint.also)


@dataclass(slots=True)
class Tally:
    """What one request counts in: its ``buckets``, charged to ``identity``, at ``now``.

    :meth:`admit` counts the request as a success would in every bucket (charging ahead, or
    holding a place where only a failure counts), so requests arriving while it awaits (a page
    being computed, the database), in this process or another sharing the limits, see it
    counted; :meth:`settle` corrects what its answer counts otherwise, and :meth:`cancel`
    gives everything back. A success needs no second call to the limits: its rate-limit
    headers describe the window as its admission left it. The windows live in
    ``services.limits`` (:mod:`~explorer.emulator.limits`).
    """

    services: Services
    buckets: tuple[str, ...]
    identity: Identity
    now: float
    #: What :meth:`admit` did, until the answer is settled.
    admission: Admission | None = None
    #: What the limits last said of a bucket (the full one, the one reported).
    standings: dict[str, Standing] = field(default_factory=dict)

    def _keys(self) -> list[Key]:
        return [(name, self.identity(name)) for name in self.buckets]

    def admit(self) -> str | None:
        """The first bucket whose window is full, if any (none when limits are off); else the
        request is counted as a success until :meth:`settle` or :meth:`cancel`."""
        if not self.services.config.rate_limits:
            return None
        ahead = [counts_status(name, SUCCESS) for name in self.buckets]
        found = self.services.limits.admit(self._keys(), self.now, ahead)
        if isinstance(found, Refusal):
            self.standings[self.buckets[found.index]] = found.standing
            return self.buckets[found.index]
        self.admission = found
        return None

    def cancel(self) -> None:
        """Give back what :meth:`admit` counted: the request was not answered here (it goes
        on elsewhere, or failed)."""
        if self.admission is not None:
            counted = [False] * len(self.buckets)
            self.services.limits.settle(self._keys(), self.now, counted, self.admission, None)
            self.admission = None

    def rate_headers(self, bucket: str) -> dict[str, str]:
        """The rate-limit headers describing ``bucket``'s window."""
        if not self.services.config.rate_limits:
            # Nothing is counted down, so a client has nothing to wait for.
            return {ENFORCED_HEADER: "false"}
        standing = self.standings.get(bucket)
        if standing is None:
            key = (bucket, self.identity(bucket))
            standing = self.standings[bucket] = self.services.limits.standing(key, self.now)
        return {
            LIMIT_HEADER: str(standing.limit),
            REMAINING_HEADER: str(standing.remaining),
            RESET_HEADER: str(int(standing.resets_at * 1000)),
        }

    def settle(self, status: int, header_bucket: str | None = "") -> dict[str, str]:
        """Charge the buckets a response with ``status`` counts in; return the headers every
        response adds: the world clock's, then the rate-limit headers of ``header_bucket``
        (the first of the buckets when empty, none when None)."""
        services = self.services
        headers = services.world.headers()
        shown = (header_bucket or self.buckets[0]) if header_bucket is not None else None
        if services.config.rate_limits:
            counted = [counts_status(name, status) for name in self.buckets]
            report = self.buckets.index(shown) if shown in self.buckets else None
            admission, self.admission = self.admission, None
            if admission is not None and admission.settled_by(counted):
                standing = None if report is None else admission.standings[report]
            else:
                keys = self._keys()
                standing = services.limits.settle(keys, self.now, counted, admission, report)
            if standing is not None and report is not None:
                self.standings[self.buckets[report]] = standing
        if shown is not None:
            headers.update(self.rate_headers(shown))
        return headers

    def finish(self, response: Response, header_bucket: str | None = "") -> Response:
        """:meth:`settle` ``response`` and add its headers."""
        response.headers.update(self.settle(response.status_code, header_bucket))
        return response


def guard(route: Route, services: Services) -> Callable[[Request], Awaitable[Response]]:
    """The Starlette endpoint for ``route``: the rules above, then the handler."""

    async def endpoint(request: Request) -> Response:
        now = services.clock()
        buckets = charged(route, request.query_params)
        address = addresses.of_request(request, services.config)
        client = client_of(request.headers.get, services.config)
        csrf_session: int | None = None
        if request.method not in SAFE_METHODS and cross_site(request):
            refused = ApiError(403, "A page of another site may not send this request.")
            anonymous = Tally(services, buckets, counting(route, None, address, client), now)
            return anonymous.finish(refused.response())
        try:
            caller, csrf_ok, session_id = identify(request, services)
            if caller is not None and not csrf_ok:
                # Only routes that rely on the caller need the cookie's CSRF token.
                if route.endpoint.signin == "none":
                    caller = None
                else:
                    csrf_session = session_id
        except ApiError as refused:
            anonymous = Tally(services, buckets, counting(route, None, address, client), now)
            return anonymous.finish(refused.response())
        tally = Tally(services, buckets, counting(route, caller, address, client), now)
        if csrf_session is not None:
            token = credentials.csrf_token(services.secret, request.cookies[SESSION_COOKIE])
            csrf = ApiError(461, "Invalid or missing CSRF header", headers={CSRF_HEADER: token})
            return tally.finish(csrf.response())
        try:
            if route.endpoint.signin == "user" and caller is None:
                raise ApiError(401, "You must be signed in to do this.")
            if caller is not None and route.endpoint.scopes:
                missing = [s for s in route.endpoint.scopes if s not in caller.scopes]
                if missing:
                    raise ApiError(403, f"Missing scope {missing[0]}.")
            full = tally.admit()
            if full is not None:
                error = ApiError(429, "Too Many Requests")
                error.headers.update(tally.rate_headers(full))
                error.headers[BUCKET_HEADER] = full
                # A refusal counts in global only, and describes the full bucket alone.
                refusal = Tally(services, ("global",), tally.identity, now)
                return refusal.finish(error.response(), header_bucket=None)
            plaintext.check_request(request)
            response = _render(route, await route.handler(Context(request, services, caller)))
        except ApiError as error:
            response = error.response()
        except QueryError as error:
            response = ApiError(
                400,
                error.message,
                details=[{"path": error.path, "type": "query", "message": error.message}],
            ).response()
        except BaseException:
            tally.cancel()  # no answer of ours (a crash, a cancelled request): nothing charged
            raise
        if caller is not None and caller.kind == "session" and CSRF_HEADER not in response.headers:
            # (A handler's own token wins: signing in again answers the new session's.)
            response.headers[CSRF_HEADER] = credentials.csrf_token(
                services.secret, request.cookies[SESSION_COOKIE]
            )
        return tally.finish(response)

    return endpoint
