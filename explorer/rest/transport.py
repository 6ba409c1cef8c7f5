"""The wire: one keep-alive HTTP client, paced, retried when safe, errors translated, signed in.

Every request of a client goes through :meth:`Transport.send`: it waits for the endpoint's
bucket (``rest/pacing.py``), sends, learns from the rate-limit headers, and retries a GET
after a 429 (at most ``MAX_ATTEMPTS`` times) or once after a dropped keep-alive connection; other
methods are never retried. Transport failures become :class:`~explorer.errors.ConnectionFailed` and
error answers the typed :class:`~explorer.errors.PlatformError` subclasses, so no httpx
exception escapes. Answers are decoded with orjson. Under httpx's client, GETs travel on the
toolkit's own kept connections (``rest/keepalive.py``: about a third of httpx's CPU for a
ranking's pages), other requests through httpx's transport; a ``transport=`` given (tests'
``httpx.MockTransport``) carries everything.

The transport also holds the caller's identity (``rest/auth.py`` flows): a cookie session opened
with the credentials given at construction on first use, an OAuth bearer token, or a JWT.
Listings are fetched through :meth:`Transport.records` (page planning in ``rest/pageplan.py``).
"""

from __future__ import annotations

import asyncio
import functools
import secrets
import ssl
import time
import urllib.request
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sized
from itertools import chain
from typing import Any, TypeVar
from urllib.parse import urlencode

import httpx
import orjson

from explorer.core.worldclock import CLOCK_HEADER as CLOCK_HEADER
from explorer.core.worldclock import PlatformClock
from explorer.errors import (
    ClientClosed,
    ConnectionFailed,
    PlatformError,
    SignInTimeout,
    error_for,
)
from explorer.rest import pageplan
from explorer.rest.auth import (
    CLIENT_ID,
    JWT_HEADER,
    BearerAuth,
    CsrfAuth,
    Grant,
    JwtAuth,
    RefreshingAuth,
    authorize_url,
    parse_grant,
    token_grant,
)
from explorer.rest.keepalive import KeepAliveTransport
from explorer.rest.pacing import Pacer, Status, header_number
from explorer.rest.progress import Progress
from explorer.rest.shortcode import Shortcode, shortcode
from explorer.wire import routes as wire
from explorer.wire.ratelimit import BUCKET_HEADER, RESET_HEADER

Record = dict[str, Any]
P = TypeVar("P", bound=Sized)

TOTAL_HEADER = "X-Total-Count"
#: The calling application (reference fact 9): the toolkit's client id and this client's tag.
CLIENT_HEADER = "Client-ID"
#: Tries per GET: the first plus retries after a 429 or a dropped connection.
MAX_ATTEMPTS = 5
_REDIRECTS = (301, 302, 303, 307)
#: Query values encoded by :meth:`Transport.url` as httpx would (others go to httpx).
_PLAIN = (str, int)


@functools.cache
def _tls() -> ssl.SSLContext:
    """The verifying TLS context every client shares: loading the CA bundle costs about 16 ms,
    which httpx would otherwise spend again on every client, even one that never uses TLS."""
    return ssl.create_default_context()


def _own_transport(base_url: str) -> httpx.AsyncBaseTransport | None:
    """The toolkit's lean transport for GETs (``rest/keepalive.py``), httpx's own for the
    rest; None (httpx's own for everything, with the proxies it finds) where the environment
    names a proxy for ``base_url``."""
    url = httpx.URL(base_url)
    proxies = urllib.request.getproxies()
    if (proxies.get(url.scheme) or proxies.get("all")) and not urllib.request.proxy_bypass(
        url.host
    ):
        return None
    return KeepAliveTransport(_tls(), httpx.AsyncHTTPTransport(verify=_tls()))


class Transport:
    """One client's connection to the platform (see the module docstring).

    ``token`` signs requests with an OAuth bearer token; ``credentials`` (username, password)
    open a cookie session on first use; neither means anonymous. ``concurrency`` is how many
    pages of one listing are in flight at once and ``progress`` whether listings show bars.
    """

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None,
        credentials: tuple[str, str] | None,
        progress: bool,
        concurrency: int,
        timeout: float,
        transport: httpx.AsyncBaseTransport | None,
    ) -> None:
        self.base_url = base_url
        self.progress = progress
        self.concurrency = max(1, concurrency)
        self._csrf = CsrfAuth()
        self._http = httpx.AsyncClient(
            base_url=base_url,
            auth=BearerAuth(token) if token else self._csrf,
            # A Client-ID of its own: a platform counting anonymous limits per client (a lab's)
            # gives this client its own buckets, not those of every client on its address.
            headers={
                "Accept": "application/json",
                CLIENT_HEADER: f"{CLIENT_ID}.{secrets.token_hex(4)}",
            },
            timeout=timeout,
            transport=transport if transport is not None else _own_transport(base_url),
            verify=_tls(),
        )
        #: The base URL ending with one ``/``, as httpx joins paths to it.
        self._root = str(self._http.base_url).rstrip("/") + "/"
        self._pacer = Pacer()
        self._credentials = credentials
        self._signing_in = asyncio.Lock()
        #: The signed-in user's name, when known (for reprs).
        self.username: str | None = credentials[0] if credentials else None
        #: How requests are signed: "anonymous", "session", "token" or "jwt".
        self.scheme = "token" if token else "session" if credentials else "anonymous"
        #: The platform's world clock, learnt from every response's headers: what the chats,
        #: watches, live events and trackers of this client date their rows with.
        self.clock = PlatformClock()

    @property
    def closed(self) -> bool:
        """Whether :meth:`aclose` was called."""
        return self._http.is_closed

    def budget(self) -> list[dict[str, object]]:
        """What the rate-limit headers told of each bucket so far (:meth:`Pacer.budget`)."""
        return self._pacer.budget(time.time())

    async def aclose(self) -> None:
        """Close the connections; the transport cannot be used afterwards."""
        await self._http.aclose()

    @property
    def signs_in(self) -> bool:
        """Whether :meth:`open` has a sign-in to do (credentials given, not yet used): a
        blocking client without one skips the hand-off to the loop thread at construction."""
        return self._credentials is not None

    async def open(self) -> None:
        """Sign in with the credentials given at construction, once (otherwise a no-op)."""
        if self._credentials is None:
            return
        async with self._signing_in:
            if self._credentials is not None:
                username, password = self._credentials
                await self.login(username, password)

    # -- requests ------------------------------------------------------------------------

    async def send(
        self,
        method: str,
        path: str,
        bucket: str,
        *,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        files: Mapping[str, Any] | None = None,
        status: Status | None = None,
        sign_in: bool = True,
    ) -> httpx.Response:
        """One request charged to ``bucket``: paced, retried when safe, errors translated;
        the successful answer."""
        if self.closed:
            raise ClientClosed("This client is closed; make a new one.")
        if sign_in:
            await self.open()
        attempts = MAX_ATTEMPTS if method == "GET" else 1
        attempt = 0
        path, params = self.url(path, params)
        while True:
            attempt += 1
            await self._pacer.acquire(bucket, status)
            try:
                response = await self._http.request(
                    method, path, params=params, json=json, files=files
                )
            except httpx.RequestError as exc:
                self._pacer.release(bucket)
                # Once, for a keep-alive connection the server closed meanwhile.
                transient = isinstance(exc, httpx.TransportError) and not isinstance(
                    exc, httpx.TimeoutException
                )
                if transient and attempt == 1 < attempts:
                    continue
                raise ConnectionFailed(unreachable(self.base_url, exc)) from None
            except BaseException:
                self._pacer.release(bucket)
                raise
            self._pacer.settle(bucket, response.status_code, response.headers, attempt)
            self.clock.observe(response.headers)
            if response.status_code == 429 and attempt < attempts:
                continue
            if response.is_error:
                raise _error(response, self.base_url)
            return response

    def url(
        self, path: str, params: Mapping[str, Any] | None
    ) -> tuple[str, Mapping[str, Any] | None]:
        """The URL and query to hand httpx for ``path`` and ``params``: a query of text and
        integers (a listing's pages) encoded here into one absolute URL, which httpx then
        parses once instead of three times (merging the base URL, then the query), a tenth
        of its CPU a request; anything else as given, for httpx to encode."""
        if (
            not params
            or not path.startswith("/")
            or "?" in path
            or not all(type(value) in _PLAIN for value in params.values())
        ):
            return path, params
        return f"{self._root}{path[1:]}?{urlencode(params)}", None

    async def records(
        self,
        path: str,
        bucket: str,
        params: Mapping[str, Any],
        *,
        size: int | None,
        pages: int | None,
        max_rows: int | None,
        progress: bool | None,
    ) -> list[Record]:
        """Every record of the listing at ``path`` (page planning in ``rest/pageplan.py``)."""

        async def read(response: httpx.Response) -> list[Record]:
            return rows(response)

        found = await self.pages(
            path, bucket, params, read, size=size, pages=pages, max_rows=max_rows, progress=progress
        )
        records = list(chain.from_iterable(found))
        return records[:max_rows] if max_rows is not None else records

    async def pages(
        self,
        path: str,
        bucket: str,
        params: Mapping[str, Any],
        read: Callable[[httpx.Response], Awaitable[P]],
        *,
        size: int | None,
        pages: int | None,
        max_rows: int | None,
        progress: bool | None,
    ) -> list[P]:
        """Every page of the listing at ``path``, in order, each answer made a page by
        ``read`` (its length the page's number of records); enough pages for ``max_rows``."""

        async def fetch(
            query: Mapping[str, Any], status: Status
        ) -> tuple[httpx.Response, int | None]:
            response = await self.send("GET", path, bucket, params=query, status=status)
            return response, header_number(response.headers, TOTAL_HEADER)

        bar = Progress(self.progress if progress is None else progress, path)
        try:
            return await pageplan.collect(
                fetch,
                read,
                params,
                size=size,
                pages=pages,
                max_rows=max_rows,
                bar=bar,
                concurrency=self.concurrency,
            )
        finally:
            bar.close()

    # -- who is calling ------------------------------------------------------------------

    def _use(self, auth: httpx.Auth, scheme: str) -> None:
        """Sign requests with ``auth`` from now on, dropping any cookie session."""
        self._http.auth = auth
        if auth is not self._csrf:
            self._http.cookies.clear()
            self._csrf.token = None
        self.scheme = scheme
        self._pacer.forget()

    async def login(self, username: str, password: str) -> Record:
        """Open a cookie session; the signed-in user's record. The session's CSRF token is
        kept and refreshed (a 461 is retried once with the fresh token the platform sends)."""
        self._use(self._csrf, "session")
        body = decode_object(
            await self.send(
                wire.LOGIN.method,
                wire.LOGIN.path,
                wire.LOGIN.bucket,
                json={"username": username, "password": password},
                sign_in=False,
            )
        )
        self._credentials = None
        self.username = str(body.get("username") or username)
        self._pacer.forget()
        return body

    async def logout(self) -> None:
        """End the cookie session; anonymous afterwards."""
        await self.send(wire.LOGOUT.method, wire.LOGOUT.path, wire.LOGOUT.bucket)
        self._http.cookies.clear()
        self._csrf.token = None
        self.username, self.scheme = None, "anonymous"
        self._pacer.forget()

    async def authorize(self, scopes: Iterable[str], client_id: str | None) -> Grant:
        """Run the OAuth implicit grant with the session and switch to its token."""
        state = secrets.token_urlsafe(12)
        extra = {"client_id": client_id} if client_id else {}
        response = await self.send(
            wire.AUTHORIZE.method, authorize_url(scopes, state, **extra), wire.AUTHORIZE.bucket
        )
        location = response.headers.get("location")
        if response.status_code not in _REDIRECTS or not location:
            raise ConnectionFailed(
                f"{wire.AUTHORIZE.path} answered {response.status_code} without a redirect."
            )
        grant = parse_grant(location)
        if grant.state != state:
            raise ConnectionFailed(
                f"{wire.AUTHORIZE.path} returned a different state: not our grant."
            )
        self._use(BearerAuth(grant.access_token), "token")
        return grant

    async def authorize_shortcode(
        self,
        scopes: Iterable[str],
        client_id: str | None,
        *,
        timeout: float,
        poll: float,
        show: Callable[[Shortcode], object],
    ) -> Grant:
        """Run the shortcode grant: show the code, wait (at most ``timeout`` seconds, checking
        every ``poll``) for a person to approve it, then sign requests with the refreshing
        token. A refusal raises :class:`~explorer.errors.Forbidden`, an expired code or wait
        :class:`~explorer.errors.SignInTimeout`."""
        client = client_id or CLIENT_ID
        started = decode_object(
            await self.send(
                wire.SHORTCODE.method,
                wire.SHORTCODE.path,
                wire.SHORTCODE.bucket,
                json={"client_id": client, "scope": " ".join(scopes)},
                sign_in=False,
            )
        )
        pending = shortcode(self.base_url, started)
        show(pending)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + min(timeout, pending.expires_in)
        check = wire.SHORTCODE_CHECK.url({"handle": pending.handle})
        while True:
            try:
                answer = await self.send("GET", check, wire.SHORTCODE_CHECK.bucket, sign_in=False)
            except PlatformError as gone:
                if gone.status == 404:
                    raise SignInTimeout(f"The code {pending.code} expired unapproved.") from None
                raise
            if answer.status_code == 200:
                break
            if loop.time() + poll > deadline:
                raise SignInTimeout(f"Nobody approved {pending.code} within {timeout:g} s.")
            await asyncio.sleep(poll)
        code = decode_object(answer)["code"]
        form = {"grant_type": "authorization_code", "client_id": client, "code": code}
        grant = token_grant(
            decode_object(
                await self.send(
                    wire.TOKEN.method, wire.TOKEN.path, wire.TOKEN.bucket, json=form, sign_in=False
                )
            )
        )
        self.use_grant(grant, client)
        return grant

    def use_grant(
        self,
        grant: Grant,
        client_id: str,
        *,
        expires_at: float | None = None,
        on_refresh: Callable[[Grant, float | None], object] | None = None,
    ) -> None:
        """Sign requests with ``grant``'s token from now on, refreshed by itself when it has
        a refresh token (:class:`~explorer.rest.auth.RefreshingAuth`: ``expires_at`` restores a
        kept token's expiry, ``on_refresh`` hears of each new grant)."""
        token_url = f"{self.base_url.rstrip('/')}{wire.TOKEN.path}"
        auth = RefreshingAuth(
            grant, token_url, client_id, expires_at=expires_at, on_refresh=on_refresh
        )
        self._use(auth, "token")

    async def authorize_jwt(self) -> str:
        """Trade the current credential for a JWT and sign requests with it from now on."""
        response = await self.send(
            wire.AUTHORIZE_JWT.method, wire.AUTHORIZE_JWT.path, wire.AUTHORIZE_JWT.bucket
        )
        token = response.headers.get(JWT_HEADER)
        if not token:
            raise ConnectionFailed(
                f"{wire.AUTHORIZE_JWT.path} answered without an {JWT_HEADER} header."
            )
        self._use(JwtAuth(token), "jwt")
        return token


def unreachable(base_url: str, exc: httpx.RequestError) -> str:
    """One line for a request that got no answer: where, what happened, and what to do."""
    request = exc.request
    said = f"{request.method} {request.url.path}"
    if isinstance(exc, httpx.TimeoutException):
        return (
            f"The platform at {base_url} did not answer {said} in time ({type(exc).__name__}): "
            "it may be overloaded or stopped; check it (its log, or `explorer serve`) and retry."
        )
    why = str(exc) or type(exc).__name__
    return (
        f"Cannot reach the platform at {base_url} ({said}: {why}): start it with "
        "`explorer serve` (or `explorer lab`), or set EXPLORER_BASE_URL to where it runs."
    )


def decode(response: httpx.Response) -> Any:
    """The answer's JSON (None when empty); a non-JSON answer is a bad reply."""
    if not response.content:
        return None
    try:
        return orjson.loads(response.content)
    except orjson.JSONDecodeError as exc:
        raise ConnectionFailed(
            f"{response.request.method} {response.request.url} answered with something "
            f"that is not JSON ({response.headers.get('content-type', 'no content type')})."
        ) from exc


def rows(response: httpx.Response) -> list[Record]:
    """A listing page's records: a JSON array, one object (one row) or nothing."""
    body = decode(response)
    if isinstance(body, dict):
        return [body]
    if body is None:
        return []
    if not isinstance(body, list):
        request = response.request
        raise ConnectionFailed(
            f"GET {request.url.path} answered with a {type(body).__name__}, not rows."
        )
    return body


def decode_object(response: httpx.Response) -> Record:
    """The JSON object the answer holds; anything else is a bad reply."""
    body = decode(response)
    if not isinstance(body, dict):
        request = response.request
        raise ConnectionFailed(
            f"{request.method} {request.url.path} answered with {type(body).__name__}, "
            "not an object."
        )
    return body


#: Where the platform's REST API lives under its root; a base URL should end with it.
API_PATH = "/api/v1"
#: The platform's answer to a path no route has (not a missing record).
NO_ROUTE = "No such endpoint."


def _error(response: httpx.Response, base_url: str) -> PlatformError:
    try:
        body = orjson.loads(response.content) if response.content else None
    except orjson.JSONDecodeError:
        body = None
    reset = header_number(response.headers, RESET_HEADER)
    if response.status_code == 404 and (
        not isinstance(body, dict) or body.get("message") == NO_ROUTE
    ):
        body = {"error": "Not Found", "message": _no_route(response.request, base_url)}
    return error_for(
        response.status_code,
        body,
        response.reason_phrase,
        reset_at=reset / 1000.0 if reset is not None else None,
        bucket=response.headers.get(BUCKET_HEADER),
        now=time.time(),
    )


def _no_route(request: httpx.Request, base_url: str) -> str:
    """What to say when nothing answers at a path: the URL, and the likely fix when the base
    URL lacks the API's path (``http://host:port`` given for ``http://host:port/api/v1``)."""
    said = f"No such endpoint: {request.method} {request.url}."
    path = httpx.URL(base_url).path.rstrip("/")
    if path.endswith(API_PATH):
        return said
    fixed = base_url.rstrip("/") + API_PATH
    return (
        f"{said} The base URL {base_url!r} does not end with {API_PATH}, where the platform's "
        f"REST API is: try explorer.connect({fixed!r}) (or EXPLORER_BASE_URL={fixed})."
    )
