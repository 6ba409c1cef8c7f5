"""REST clients: every resource as a DataFrame, paced by the rate-limit buckets.

:class:`AsyncClient` holds all the logic: one keep-alive ``httpx.AsyncClient``, orjson decoding,
page planning, pacing and retries. :class:`Client` is its blocking twin for scripts and
notebooks; each of its methods runs the same-named coroutine on the toolkit's private event
loop (``loop.py``), so the two cannot drift apart and the blocking API works inside a running
Jupyter kernel. ``explorer.connect()`` builds a :class:`Client`.

Listings (``channels``) fetch page 0, read ``X-Total-Count`` to plan the rest, fetch those pages
a few at a time (``concurrency``), and build one DataFrame from all records at the end
(``tables.py``). A progress bar (tqdm) shows multi-page fetches and every wait for a bucket.

Pacing: before each request the client asks the bucket's :class:`~explorer.ratelimit.Allowance`
(learnt from ``X-Rate-Limit``, ``X-RateLimit-Remaining`` and ``X-RateLimit-Reset``) and the
locally counted ``global`` bucket whether it may send, and sleeps until the window resets when
not. A 429 that still happens (another client on the same identity) is waited out and the GET
retried, at most ``MAX_ATTEMPTS`` times; other methods are never retried. Transport failures
become :class:`~explorer.errors.ConnectionFailed` and error answers the typed
:class:`~explorer.errors.PlatformError` subclasses, so no httpx exception escapes.

This module holds the transport and the core resources (channels, types, users, chat details,
signing in). Every other resource group (follows, hosting, analytics, uploads, interactive
games, invoices, ...) is a method of the :class:`~explorer.groups.Groups` mixin that
``AsyncClient`` inherits: one module for what endpoints mean, one for how requests travel.
"""

from __future__ import annotations

import asyncio
import math
import re
import secrets
import time
from collections.abc import Callable, Iterable, Mapping
from itertools import chain
from types import TracebackType
from typing import Any
from urllib.parse import quote

import httpx
import orjson
import pandas as pd
from tqdm.auto import tqdm

from explorer import embedded, loop, schemas, tables
from explorer.auth import (
    JWT_HEADER,
    BearerAuth,
    CsrfAuth,
    Grant,
    JwtAuth,
    authorize_url,
    parse_grant,
)
from explorer.chat import Chat, ChatClient, ChatDetails, join
from explorer.errors import ClientClosed, ConnectionFailed, PlatformError, error_for
from explorer.groups import Groups, present
from explorer.loop import Blocking
from explorer.query import MAX_LIMIT, format_order, format_where
from explorer.ratelimit import (
    BUCKETS,
    LIMIT_HEADER,
    REMAINING_HEADER,
    RESET_HEADER,
    Allowance,
)
from explorer.settings import DEFAULT_CONCURRENCY, DEFAULT_TIMEOUT, resolve

Record = dict[str, Any]
Status = Callable[[str | None], None]

TOTAL_HEADER = "X-Total-Count"
#: Tries per GET: the first plus retries after a 429 or a dropped connection.
MAX_ATTEMPTS = 5
#: Waits shorter than this are not worth a word in the progress bar.
_QUIET_WAIT = 0.5
_DEFAULT_INTERVAL = 60.0

#: The bucket each endpoint is charged to, as the platform documents it. Only the grouping
#: matters to the client (endpoints sharing a bucket share one allowance); the headers carry
#: the numbers. Unlisted endpoints are grouped by method and first path segment.
_ROUTE_BUCKETS: tuple[tuple[str, re.Pattern[str], str], ...] = tuple(
    (method, re.compile(pattern), bucket)
    for method, pattern, bucket in (
        ("GET", r"/(channels|types|interactive|confetti|language|resources)(/.*)?", "channel-read"),
        (
            "GET",
            r"/users/.+|/achievements|/frontendVersions|/(invoices|oauth/clients)(/.*)?",
            "user-read",
        ),
        ("GET", r"/chats/.+", "chats"),
        ("GET", r"/notifications(/.*)?", "notification-read"),
        ("GET", r"/oauth/authorize", "user-write"),
        ("POST", r"/users/login|/jwt/authorize|/oauth/token", "user-login"),
        ("POST", r"/users", "user-register"),
        ("POST", r"/notifications/emailUnsubscribe", "mail-subscribe"),
        ("PUT|POST|DELETE", r"/channels/[^/]+/follow", "channel-follow"),
        (
            "POST",
            r"/channels/[^/]+/(thumbnail|badge|banner)|/interactive/games/[^/]+/cover",
            "upload",
        ),
        ("PUT|PATCH|POST|DELETE", r"/(channels|interactive|confetti)(/.*)?", "channel-write"),
        (
            "PUT|PATCH|POST|DELETE",
            r"/(users|invoices|notifications|oauth)/.+|/announcements",
            "user-write",
        ),
    )
)


def bucket_of(method: str, path: str) -> str:
    """The name the client paces ``method path`` under (a bucket name where known)."""
    path = path.partition("?")[0]
    for methods, pattern, bucket in _ROUTE_BUCKETS:
        if re.fullmatch(methods, method) and pattern.fullmatch(path):
            return bucket
    return f"{method} /{path.strip('/').split('/', 1)[0]}"


def _header_number(headers: httpx.Headers, name: str) -> int | None:
    raw = headers.get(name)
    try:
        return int(raw) if raw is not None else None
    except ValueError:
        return None


class _Pacer:
    """Holds each request until its bucket and ``global`` allow it (see the module docstring)."""

    def __init__(self) -> None:
        self._allowances: dict[str, Allowance] = {}
        self._global = Allowance.assumed(BUCKETS["global"])
        self._changed = asyncio.Event()

    def forget(self) -> None:
        """Start over, e.g. after signing in: buckets are counted per identity."""
        self._allowances.clear()
        self._global = Allowance.assumed(BUCKETS["global"])

    def _allowance(self, bucket: str) -> Allowance:
        found = self._allowances.get(bucket)
        if found is None:
            known = BUCKETS.get(bucket)
            interval = known.interval if known else _DEFAULT_INTERVAL
            found = self._allowances[bucket] = Allowance(interval)
        return found

    async def acquire(self, bucket: str, status: Status | None) -> None:
        """Wait until one more request to ``bucket`` may go, and count it."""
        allowance, waited = self._allowance(bucket), False
        while True:
            now = time.time()
            delays = (allowance.delay(now), self._global.delay(now))
            if delays == (0.0, 0.0):
                allowance.take()
                self._global.take()
                if waited and status is not None:
                    status(None)
                return
            timed = [d for d in delays if d]
            timeout = max(timed) if timed else None
            if status is not None and timeout is not None and timeout > _QUIET_WAIT:
                status(f"waiting {math.ceil(timeout)} s for {bucket}")
            waited = True
            changed = self._changed
            try:
                async with asyncio.timeout(timeout):
                    await changed.wait()
            except TimeoutError:
                pass

    def settle(self, bucket: str, response: httpx.Response, attempt: int) -> None:
        """Learn from the answer to a request that :meth:`acquire` let through."""
        headers = response.headers
        self._allowance(bucket).settle(
            time.time(),
            response.status_code,
            _header_number(headers, LIMIT_HEADER),
            _header_number(headers, REMAINING_HEADER),
            _header_number(headers, RESET_HEADER),
            attempt,
        )
        self._global.release()
        self._notify()

    def release(self, bucket: str) -> None:
        """Forget a request that got no answer."""
        self._allowance(bucket).release()
        self._global.release()
        self._notify()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()


class _Progress:
    """A tqdm bar for one listing, shown once it has several pages or has to wait."""

    def __init__(self, enabled: bool, label: str) -> None:
        self._enabled, self._label = enabled, label
        self._bar: Any = None

    def start(self, total: int | None, done: int) -> None:
        """Show the bar: ``total`` rows expected (None if unknown), ``done`` already here."""
        if not self._enabled:
            return
        if self._bar is None:
            self._bar = tqdm(total=total, initial=done, desc=self._label, unit="rows", leave=False)
        elif total is not None:
            self._bar.total = total
            self._bar.update(done - self._bar.n)

    def update(self, rows: int) -> None:
        """Count ``rows`` more rows fetched."""
        if self._bar is not None:
            self._bar.update(rows)

    def status(self, text: str | None) -> None:
        """Say what the fetch waits for; None restores the label."""
        if self._enabled:
            self.start(None, 0)
            self._bar.set_description_str(text or self._label)

    def close(self) -> None:
        """Remove the bar."""
        if self._bar is not None:
            self._bar.close()


def _join(names: str | Iterable[str] | None) -> tuple[str, ...] | None:
    if names is None:
        return None
    parts = names.split(",") if isinstance(names, str) else names
    return tuple(n.strip() for n in parts if n.strip())


class AsyncClient(Groups):
    """Async client for the platform's REST API; results come back as DataFrames.

    ``base_url`` defaults to ``EXPLORER_BASE_URL``, else the embedded platform (started once per
    process). Credentials: ``token=`` (OAuth bearer) or ``username=``/``password=`` (cookie
    session, signed in on first use), else ``EXPLORER_TOKEN`` / ``EXPLORER_USERNAME`` and
    ``EXPLORER_PASSWORD``, else anonymous. ``progress`` shows tqdm bars on multi-page fetches,
    ``concurrency`` is how many pages of one listing are in flight at once, ``transport`` an
    httpx transport to use instead of the network (tests). Use ``async with`` or
    :meth:`aclose`. The methods of every other resource group come from
    :class:`~explorer.groups.Groups`.
    """

    def __init__(
        self,
        base_url: str | None = None,
        *,
        token: str | None = None,
        username: str | None = None,
        password: str | None = None,
        progress: bool | None = None,
        concurrency: int = DEFAULT_CONCURRENCY,
        timeout: float = DEFAULT_TIMEOUT,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        settings = resolve(
            base_url, token=token, username=username, password=password, progress=progress
        )
        self.base_url: str = settings.base_url or embedded.base_url()
        self.progress = settings.progress
        self.concurrency = max(1, concurrency)
        self._csrf = CsrfAuth()
        self._http = httpx.AsyncClient(
            base_url=self.base_url,
            auth=BearerAuth(settings.token) if settings.token else self._csrf,
            headers={"Accept": "application/json"},
            timeout=timeout,
            transport=transport,
        )
        self._pacer = _Pacer()
        self._credentials = (
            (settings.username, settings.password or "") if settings.username else None
        )
        self._signing_in = asyncio.Lock()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.base_url}{' closed' if self.closed else ''}>"

    @property
    def closed(self) -> bool:
        """Whether :meth:`aclose` was called."""
        return self._http.is_closed

    async def open(self) -> None:
        """Sign in with the credentials given at construction (otherwise done on first use)."""
        if self._credentials is None:
            return
        async with self._signing_in:
            if self._credentials is not None:
                username, password = self._credentials
                await self.login(username, password)

    async def aclose(self) -> None:
        """Close the connections; the client cannot be used afterwards."""
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        try:
            await self.open()
        except BaseException:
            await self.aclose()
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    # -- the wire ------------------------------------------------------------------------

    async def _send(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        files: Mapping[str, Any] | None = None,
        status: Status | None = None,
        sign_in: bool = True,
    ) -> httpx.Response:
        """One request, paced, retried when safe, errors translated; the successful answer."""
        if self.closed:
            raise ClientClosed("This client is closed; make a new one.")
        if sign_in:
            await self.open()
        bucket = bucket_of(method, path)
        attempts = MAX_ATTEMPTS if method == "GET" else 1
        attempt = 0
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
                raise ConnectionFailed(f"{method} {self.base_url}{path} failed: {exc!r}") from exc
            except BaseException:
                self._pacer.release(bucket)
                raise
            self._pacer.settle(bucket, response, attempt)
            if response.status_code == 429 and attempt < attempts:
                continue
            if response.is_error:
                raise self._error(response)
            return response

    def _error(self, response: httpx.Response) -> PlatformError:
        try:
            body = orjson.loads(response.content) if response.content else None
        except orjson.JSONDecodeError:
            body = None
        reset = _header_number(response.headers, RESET_HEADER)
        return error_for(
            response.status_code,
            body,
            response.reason_phrase,
            reset_at=reset / 1000.0 if reset is not None else None,
        )

    def _decode(self, response: httpx.Response) -> Any:
        if not response.content:
            return None
        try:
            return orjson.loads(response.content)
        except orjson.JSONDecodeError as exc:
            raise ConnectionFailed(
                f"{response.request.method} {response.request.url} answered with something "
                f"that is not JSON ({response.headers.get('content-type', 'no content type')})."
            ) from exc

    async def _json(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        status: Status | None = None,
    ) -> Any:
        return self._decode(await self._send(method, path, params=params, json=json, status=status))

    async def _object(
        self,
        path: str,
        params: Mapping[str, Any] | None = None,
        *,
        method: str = "GET",
        json: Any = None,
        files: Mapping[str, Any] | None = None,
    ) -> Record:
        """The JSON object ``method path`` answers; anything else is a bad reply."""
        response = await self._send(method, path, params=params, json=json, files=files)
        body = self._decode(response)
        if not isinstance(body, dict):
            raise ConnectionFailed(
                f"{method} {path} answered with {type(body).__name__}, not an object."
            )
        return body

    # -- listings --------------------------------------------------------------------------

    async def _page(
        self, path: str, params: Mapping[str, Any], status: Status
    ) -> tuple[list[Record], int | None]:
        response = await self._send("GET", path, params=params, status=status)
        body = self._decode(response)
        if isinstance(body, dict):
            body = [body]
        elif body is None:
            body = []
        elif not isinstance(body, list):
            raise ConnectionFailed(f"GET {path} answered with a {type(body).__name__}, not rows.")
        return body, _header_number(response.headers, TOTAL_HEADER)

    async def _collect(
        self,
        path: str,
        params: Mapping[str, Any],
        *,
        size: int | None,
        pages: int | None,
        max_rows: int | None,
        progress: bool | None,
    ) -> list[Record]:
        """Every record of a listing, page after page, until done or a limit is reached.

        With ``size`` the listing is paged explicitly (``page``/``limit``); without, the first
        answer decides the page size. A known total (``X-Total-Count``) lets the remaining
        pages go ``concurrency`` at a time; without one, explicitly paged listings continue
        page by page until a short one, others stop after the first answer.
        """
        bar = _Progress(self.progress if progress is None else progress, path)
        try:
            query = dict(params) if size is None else {**params, "page": 0, "limit": size}
            first, total = await self._page(path, query, bar.status)
            found, size = [first], size or len(first)
            more = (
                "page" not in params
                and 0 < size == len(first)
                and pages != 1
                and (max_rows is None or size < max_rows)
            )
            if more and total is not None:
                wanted = total if max_rows is None else min(total, max_rows)
                count = math.ceil(wanted / size)
                count = count if pages is None else min(count, pages)
                if count > 1:
                    bar.start(min(wanted, count * size), len(first))
                    found += await self._pages(path, params, size, count, bar)
            elif more and "page" in query:
                bar.start(None, len(first))
                found += await self._follow(path, params, size, pages, max_rows, bar)
            records = list(chain.from_iterable(found))
            return records[:max_rows] if max_rows is not None else records
        finally:
            bar.close()

    async def _pages(
        self, path: str, params: Mapping[str, Any], size: int, count: int, bar: _Progress
    ) -> list[list[Record]]:
        """Pages 1 .. count-1, ``concurrency`` at a time, in order."""
        gate = asyncio.Semaphore(self.concurrency)

        async def one(page: int) -> list[Record]:
            async with gate:
                query = {**params, "page": page, "limit": size, "noCount": 1}
                records, _ = await self._page(path, query, bar.status)
            bar.update(len(records))
            return records

        tasks = [asyncio.ensure_future(one(page)) for page in range(1, count)]
        try:
            return await asyncio.gather(*tasks)
        except BaseException:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise

    async def _follow(
        self,
        path: str,
        params: Mapping[str, Any],
        size: int,
        pages: int | None,
        max_rows: int | None,
        bar: _Progress,
    ) -> list[list[Record]]:
        """Pages 1, 2, ... one after another until a short page (no total known)."""
        found: list[list[Record]] = []
        rows, page = size, 1
        while (pages is None or page < pages) and (max_rows is None or rows < max_rows):
            records, _ = await self._page(path, {**params, "page": page, "limit": size}, bar.status)
            found.append(records)
            bar.update(len(records))
            rows, page = rows + len(records), page + 1
            if len(records) < size:
                break
        return found

    # -- resources -------------------------------------------------------------------------

    async def channels(
        self,
        *,
        order: str | Iterable[str] | None = None,
        fields: str | Iterable[str] | None = None,
        where: Mapping[str, Any] | str | None = None,
        limit: int | None = None,
        pages: int | None = None,
        max_rows: int | None = None,
        q: str | None = None,
        scope: str | None = None,
        progress: bool | None = None,
    ) -> pd.DataFrame:
        """Channels as a DataFrame indexed by channel id, following pages until done.

        ``order`` ranks (``"viewersTotal:desc"`` or a list of such terms); ``where`` filters,
        as the API's string (``"online:eq:1,viewersTotal:gte:100"``) or a dict (``{"online":
        True, "languageId": ["en", "de"], "viewersTotal": ("gte", 100)}``); ``fields``
        projects (a comma string or a list; ``user``/``type`` bring their dotted columns);
        ``q`` searches names, titles or types as ``scope`` says. ``limit`` is the page size
        (default and maximum 100), ``pages`` and ``max_rows`` stop early.

        Pages are slices of the ordering at the moment each is read: on a live platform a
        channel whose rank changes mid-fetch can appear twice or not at all, as with any
        offset paging (``frame[~frame.index.duplicated()]`` drops repeats).
        """
        field_names = _join(fields)
        params = present(
            order=format_order(order),
            where=format_where(where),
            fields=",".join(field_names) if field_names is not None else None,
            q=q,
            scope=scope,
        )
        size = limit or min(MAX_LIMIT, max_rows or MAX_LIMIT)
        records = await self._collect(
            "/channels", params, size=size, pages=pages, max_rows=max_rows, progress=progress
        )
        return tables.frame(records, schemas.CHANNEL, fields=field_names)

    async def channel(
        self, id_or_token: int | str, *, fields: str | Iterable[str] | None = None
    ) -> pd.DataFrame:
        """One channel, by id or token (its name), as a one-row frame like :meth:`channels`.

        A frame rather than a Series keeps the dtypes and lines up with listings; take
        ``.iloc[0]`` for a Series.
        """
        field_names = _join(fields)
        params = {"fields": ",".join(field_names)} if field_names is not None else None
        body = await self._object(f"/channels/{quote(str(id_or_token), safe='')}", params)
        return tables.frame([body], schemas.CHANNEL, fields=field_names)

    async def channel_details(self, id_or_token: int | str) -> pd.DataFrame:
        """One channel with its media resources (thumbnail, cover, badge), as a one-row frame."""
        body = await self._object(f"/channels/{quote(str(id_or_token), safe='')}/details")
        return tables.frame([body], schemas.CHANNEL)

    async def types(self, *, online: bool | None = None) -> pd.DataFrame:
        """Types (games and categories) indexed by id; ``online=True`` keeps those live now."""
        params = {"online": int(online)} if online is not None else {}
        body = await self._json("GET", "/types", params=params)
        return tables.frame(body, schemas.TYPE)

    async def game_type(self, type_id: int) -> pd.DataFrame:
        """One type (game or category) as a one-row frame."""
        return tables.frame([await self._object(f"/types/{int(type_id)}")], schemas.TYPE)

    async def user(self, user_id: int) -> pd.DataFrame:
        """One user as a one-row frame indexed by user id."""
        return tables.frame([await self._object(f"/users/{int(user_id)}")], schemas.USER)

    async def current_user(self) -> pd.DataFrame:
        """The signed-in user, with channel, groups, email and preferences, as a one-row frame."""
        return tables.frame([await self._object("/users/current")], schemas.CURRENT_USER)

    async def chat_details(self, channel_id: int) -> ChatDetails:
        """Where to connect for a channel's chat, the caller's permissions and an authkey."""
        body = await self._object(f"/chats/{int(channel_id)}")
        return ChatDetails(
            channel_id=int(channel_id),
            endpoints=tuple(body.get("endpoints") or ()),
            permissions=tuple(body.get("permissions") or ()),
            authkey=body.get("authkey"),
        )

    async def register(self, username: str, password: str, email: str) -> pd.DataFrame:
        """Create an account (and its channel); the new user as a one-row frame.

        The account is confirmed with the code mailed to ``email`` (:meth:`confirm`).
        """
        body = await self._json(
            "POST", "/users", json={"username": username, "password": password, "email": email}
        )
        return tables.frame([body], schemas.USER)

    async def confirm(self, user_id: int, code: str) -> pd.DataFrame:
        """Verify an account with the code from its confirmation mail; the user afterwards."""
        body = await self._json("PUT", f"/users/{int(user_id)}/confirm", json={"code": code})
        return tables.frame([body], schemas.USER)

    # -- signing in ------------------------------------------------------------------------

    def _use(self, auth: httpx.Auth) -> None:
        """Sign requests with ``auth`` from now on, dropping any cookie session."""
        self._http.auth = auth
        if auth is not self._csrf:
            self._http.cookies.clear()
            self._csrf.token = None
        self._pacer.forget()

    async def login(self, username: str, password: str) -> pd.DataFrame:
        """Open a cookie session; the signed-in user as a one-row frame.

        The session's CSRF token is kept and refreshed by the client (a 461 is retried once
        with the fresh token the platform sends).
        """
        self._use(self._csrf)
        body = self._decode(
            await self._send(
                "POST",
                "/users/login",
                json={"username": username, "password": password},
                sign_in=False,
            )
        )
        self._credentials = None
        self._pacer.forget()
        return tables.frame([body], schemas.CURRENT_USER)

    async def logout(self) -> None:
        """End the cookie session; the client is anonymous afterwards."""
        await self._send("DELETE", "/users/current/session")
        self._http.cookies.clear()
        self._csrf.token = None
        self._pacer.forget()

    async def authorize(self, scopes: Iterable[str], *, client_id: str | None = None) -> Grant:
        """Run the OAuth implicit grant with the signed-in session and switch to its token.

        Afterwards requests carry ``Authorization: Bearer <token>`` and the cookie session is
        dropped; the :class:`~explorer.auth.Grant` holds the token and its scopes. Requires a
        session (``login`` or ``username``/``password``).
        """
        state = secrets.token_urlsafe(12)
        extra = {"client_id": client_id} if client_id else {}
        response = await self._send("GET", authorize_url(scopes, state, **extra))
        location = response.headers.get("location")
        if response.status_code not in (301, 302, 303, 307) or not location:
            raise ConnectionFailed(
                f"/oauth/authorize answered {response.status_code} without a redirect."
            )
        grant = parse_grant(location)
        if grant.state != state:
            raise ConnectionFailed("/oauth/authorize returned a different state: not our grant.")
        self._use(BearerAuth(grant.access_token))
        return grant

    async def authorize_jwt(self) -> str:
        """Trade the current credential for a JWT and sign requests with it from now on."""
        response = await self._send("POST", "/jwt/authorize")
        token = response.headers.get(JWT_HEADER)
        if not token:
            raise ConnectionFailed(f"/jwt/authorize answered without an {JWT_HEADER} header.")
        self._use(JwtAuth(token))
        return token

    # -- anything else ---------------------------------------------------------------------

    async def get_json(self, path: str, **params: Any) -> Any:
        """``GET path`` (relative to the base URL) with query ``params``; the decoded JSON."""
        return await self._json("GET", path, params=params)

    async def get_frame(self, path: str, **params: Any) -> pd.DataFrame:
        """``GET path`` as a DataFrame: a list gives one row per item, an object one row.

        Nested objects flatten to dotted columns with inferred dtypes, ``id`` becomes the
        index. When the answer carries ``X-Total-Count`` and more rows exist, the following
        pages are fetched too (unless ``page`` is given).
        """
        records = await self._collect(
            path, params, size=None, pages=None, max_rows=None, progress=None
        )
        return tables.frame(records)

    async def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: Mapping[str, Any] | None = None,
    ) -> Any:
        """Any request (``PUT``, ``POST``, ...) with a JSON body; the decoded JSON answer."""
        return await self._json(method.upper(), path, params=params, json=json)

    # -- chat ----------------------------------------------------------------------------

    def chat(self, channel: int | str, **options: Any) -> ChatClient:
        """The live chat of ``channel`` (an id, or the channel's name) as a
        :class:`~explorer.chat.ChatClient`: signed in, it joins as the user, otherwise
        anonymously. Join with ``chat = await api.chat(channel)`` or ``async with``;
        ``options`` go to ChatClient (``max_rows``, ``backlog``, timeouts, ...)."""
        resolved: list[int] = []

        async def details() -> ChatDetails:
            if not resolved:
                if isinstance(channel, int) or channel.isdigit():
                    resolved.append(int(channel))
                else:
                    found = await self._object(f"/channels/{quote(channel)}", {"fields": "id"})
                    resolved.append(int(found["id"]))
            return await self.chat_details(resolved[0])

        async def user_id() -> int:
            return int((await self._object("/users/current"))["id"])

        return ChatClient(details, user_id=user_id, **options)


class Client:
    """Blocking client for the platform's REST API: the methods of :class:`AsyncClient`, each
    waiting for its result, safe to call from a running Jupyter kernel.

    Takes the arguments of :class:`AsyncClient`; signs in at once when given credentials. Use
    ``with`` or :meth:`close`.
    """

    def __init__(
        self,
        base_url: str | None = None,
        *,
        token: str | None = None,
        username: str | None = None,
        password: str | None = None,
        progress: bool | None = None,
        concurrency: int = DEFAULT_CONCURRENCY,
        timeout: float = DEFAULT_TIMEOUT,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        # Resolved here, in the caller's thread: starting the embedded platform takes a moment.
        url = resolve(base_url).base_url or embedded.base_url()

        async def build() -> AsyncClient:
            client = AsyncClient(
                url,
                token=token,
                username=username,
                password=password,
                progress=progress,
                concurrency=concurrency,
                timeout=timeout,
                transport=transport,
            )
            return await client.__aenter__()

        self._aio = loop.run(build())

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.base_url}{' closed' if self.closed else ''}>"

    @property
    def base_url(self) -> str:
        """The REST base address, ending in ``/api/v1``."""
        return self._aio.base_url

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._aio.closed

    def close(self) -> None:
        """Close the connections; the client cannot be used afterwards."""
        if not self.closed:
            loop.run(self._aio.aclose())

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    channels = Blocking(AsyncClient.channels)
    channel = Blocking(AsyncClient.channel)
    channel_details = Blocking(AsyncClient.channel_details)
    types = Blocking(AsyncClient.types)
    game_type = Blocking(AsyncClient.game_type)
    user = Blocking(AsyncClient.user)
    current_user = Blocking(AsyncClient.current_user)
    chat_details = Blocking(AsyncClient.chat_details)
    register = Blocking(AsyncClient.register)
    confirm = Blocking(AsyncClient.confirm)
    login = Blocking(AsyncClient.login)
    logout = Blocking(AsyncClient.logout)
    authorize = Blocking(AsyncClient.authorize)
    authorize_jwt = Blocking(AsyncClient.authorize_jwt)
    get_json = Blocking(AsyncClient.get_json)
    get_frame = Blocking(AsyncClient.get_frame)
    request = Blocking(AsyncClient.request)

    def chat(self, channel: int | str, **options: Any) -> Chat:
        """The live chat of ``channel`` (an id, or the channel's name), joined: a
        :class:`~explorer.chat.Chat` whose methods block while its events keep flowing into
        ``chat.log`` in the background. ``options`` go to :class:`~explorer.chat.ChatClient`."""
        return join(self._aio.chat(channel, **options))

    # resource groups (explorer.groups)
    followers = Blocking(AsyncClient.followers)
    follow = Blocking(AsyncClient.follow)
    unfollow = Blocking(AsyncClient.unfollow)
    channel_users = Blocking(AsyncClient.channel_users)
    set_roles = Blocking(AsyncClient.set_roles)
    relationship = Blocking(AsyncClient.relationship)
    hostee = Blocking(AsyncClient.hostee)
    set_hostee = Blocking(AsyncClient.set_hostee)
    stop_hosting = Blocking(AsyncClient.stop_hosting)
    hosters = Blocking(AsyncClient.hosters)
    related_channels = Blocking(AsyncClient.related_channels)
    update_channel = Blocking(AsyncClient.update_channel)
    reset_stream_key = Blocking(AsyncClient.reset_stream_key)
    preferences = Blocking(AsyncClient.preferences)
    set_preferences = Blocking(AsyncClient.set_preferences)
    emoticons = Blocking(AsyncClient.emoticons)
    set_emoticons = Blocking(AsyncClient.set_emoticons)
    discord = Blocking(AsyncClient.discord)
    set_discord = Blocking(AsyncClient.set_discord)
    discord_channels = Blocking(AsyncClient.discord_channels)
    discord_roles = Blocking(AsyncClient.discord_roles)
    discord_invite = Blocking(AsyncClient.discord_invite)
    new_discord_invite = Blocking(AsyncClient.new_discord_invite)
    partnership = Blocking(AsyncClient.partnership)
    apply_for_partnership = Blocking(AsyncClient.apply_for_partnership)
    partnership_codes = Blocking(AsyncClient.partnership_codes)
    suspend = Blocking(AsyncClient.suspend)
    unsuspend = Blocking(AsyncClient.unsuspend)
    recordings = Blocking(AsyncClient.recordings)
    manifest = Blocking(AsyncClient.manifest)
    upload_image = Blocking(AsyncClient.upload_image)
    banner = Blocking(AsyncClient.banner)
    remove_banner = Blocking(AsyncClient.remove_banner)
    image = Blocking(AsyncClient.image)
    unlock_transcodes = Blocking(AsyncClient.unlock_transcodes)
    analytics = Blocking(AsyncClient.analytics)
    chat_users = Blocking(AsyncClient.chat_users)
    chat_user = Blocking(AsyncClient.chat_user)
    chat_friends = Blocking(AsyncClient.chat_friends)
    confetti = Blocking(AsyncClient.confetti)
    create_confetti = Blocking(AsyncClient.create_confetti)
    update_confetti = Blocking(AsyncClient.update_confetti)
    delete_confetti = Blocking(AsyncClient.delete_confetti)
    interactive_games = Blocking(AsyncClient.interactive_games)
    interactive_game = Blocking(AsyncClient.interactive_game)
    create_game = Blocking(AsyncClient.create_game)
    update_game = Blocking(AsyncClient.update_game)
    delete_game = Blocking(AsyncClient.delete_game)
    upload_game_cover = Blocking(AsyncClient.upload_game_cover)
    game_editors = Blocking(AsyncClient.game_editors)
    add_game_editor = Blocking(AsyncClient.add_game_editor)
    remove_game_editor = Blocking(AsyncClient.remove_game_editor)
    game_versions = Blocking(AsyncClient.game_versions)
    game_version = Blocking(AsyncClient.game_version)
    create_version = Blocking(AsyncClient.create_version)
    update_version = Blocking(AsyncClient.update_version)
    delete_version = Blocking(AsyncClient.delete_version)
    interactive_hosts = Blocking(AsyncClient.interactive_hosts)
    interactive_channel = Blocking(AsyncClient.interactive_channel)
    interactive_robot = Blocking(AsyncClient.interactive_robot)
    achievements = Blocking(AsyncClient.achievements)
    invoices = Blocking(AsyncClient.invoices)
    invoice = Blocking(AsyncClient.invoice)
    capture_invoice = Blocking(AsyncClient.capture_invoice)
    notifications = Blocking(AsyncClient.notifications)
    notification = Blocking(AsyncClient.notification)
    share_subscription = Blocking(AsyncClient.share_subscription)
    unsubscribe_email = Blocking(AsyncClient.unsubscribe_email)
    update_user = Blocking(AsyncClient.update_user)
    oauth_clients = Blocking(AsyncClient.oauth_clients)
    create_oauth_client = Blocking(AsyncClient.create_oauth_client)
    delete_oauth_client = Blocking(AsyncClient.delete_oauth_client)
    announce = Blocking(AsyncClient.announce)
    frontend_versions = Blocking(AsyncClient.frontend_versions)
    ingests = Blocking(AsyncClient.ingests)
    best_ingest = Blocking(AsyncClient.best_ingest)
    languages = Blocking(AsyncClient.languages)


def connect(
    base_url: str | None = None,
    *,
    token: str | None = None,
    username: str | None = None,
    password: str | None = None,
    progress: bool | None = None,
) -> Client:
    """A blocking :class:`Client` for the platform at ``base_url``.

    ``base_url`` defaults to ``EXPLORER_BASE_URL``, else the embedded platform (started in this
    process on first need and reused). Sign in with ``token=`` (OAuth bearer) or
    ``username=``/``password=`` (cookie session); progress bars are on unless
    ``progress=False`` (or ``EXPLORER_PROGRESS=0``).
    """
    return Client(base_url, token=token, username=username, password=password, progress=progress)
