"""The top of the REST surface, shared by ``Client`` and ``AsyncClient``: listings, handles,
account creation, signing in, and raw requests.

Everything the platform offers is one name here or one handle away: ``channels()`` ranks and
lists, ``channel(c)`` / ``user(id)`` / ``me`` / ``game(id)`` / ``game_version(id)`` /
``confetti(id)`` hand out lazy handles whose methods are that thing's sub-resources, and the
platform-wide lists (types, games, ingests, languages, ...) sit beside them. ``ENDPOINTS`` is
the table of every endpoint row the toolkit calls, gathered from these classes.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Unpack, overload

import pandas as pd

from explorer.core.worldclock import CLOCK_HEADER, world_time
from explorer.errors import ConnectionFailed
from explorer.rest import schemas, tables, tokenfiles
from explorer.rest.account import Account, User
from explorer.rest.auth import CLIENT_ID, Grant
from explorer.rest.channel import Channel
from explorer.rest.channelrefs import Channels
from explorer.rest.confetti import Confetti
from explorer.rest.endpoints import Binding, Choice, Result, bucket_of
from explorer.rest.games import Game, GameVersion
from explorer.rest.handle import (
    Async,
    Call,
    Handle,
    ListingOptions,
    M,
    Sync,
    action,
    endpoint,
    endpoints_of,
    field_names,
)
from explorer.rest.shortcode import Shortcode
from explorer.rest.shortcode import show as show_shortcode
from explorer.rest.tokenfiles import Keeper
from explorer.rest.transport import decode
from explorer.wire import routes as wire
from explorer.wire.query import MAX_LIMIT, format_order, format_where

if TYPE_CHECKING:
    # Chats, watches, live events and trackers load when first asked for (websockets, event
    # logs): the REST client does not need them.
    from explorer.chat import Chat, ChatClient
    from explorer.collect.track import AsyncTracker, Target, Tracker
    from explorer.collect.watch import AsyncWatch, Watch
    from explorer.live.log import AsyncLive, Live

#: Interactive game listings and the row serving each.
GAME_LISTINGS = Choice(
    "listing",
    {
        "published": wire.GAMES_PUBLISHED,
        "owned": wire.GAMES_OWNED,
        "shared": wire.GAMES_SHARED,
        "editor": wire.GAMES_EDITOR,
        "reviewing": wire.GAMES_REVIEWING,
    },
)
#: Language listings and the row serving each.
LANGUAGE_LISTINGS = Choice(
    "listing",
    {
        "used": wire.LANGUAGES_USED,
        "active": wire.LANGUAGES_ACTIVE,
        "available": wire.LANGUAGES_AVAILABLE,
    },
)


class Api(Handle[M]):
    """The platform as a whole: what ``Client`` and ``AsyncClient`` have in common."""

    def __repr__(self) -> str:
        closed = " closed" if self._transport.closed else ""
        return f"<{type(self).__name__} {self.base_url} as {self._identity()}{closed}>"

    @property
    def closed(self) -> bool:
        """Whether the client was closed."""
        return self._transport.closed

    # -- handles ------------------------------------------------------------------------------

    def channel(self, channel: int | str) -> Channel[M]:
        """One channel, by id or token (its name), as a handle; no request until asked."""
        return self._handle(Channel, channel=channel)

    def user(self, user_id: int) -> User[M]:
        """One user, by id, as a handle."""
        return self._handle(User, user_id=user_id)

    @property
    def me(self) -> Account[M]:
        """The signed-in caller's own account (record, invoices, notifications, ...)."""
        return self._handle(Account)

    def game(self, game_id: int) -> Game[M]:
        """One interactive game, by id, as a handle."""
        return self._handle(Game, game_id=game_id)

    def game_version(self, version_id: int) -> GameVersion[M]:
        """One interactive game version, by id, as a handle."""
        return self._handle(GameVersion, version_id=version_id)

    def confetti(self, confetti_id: int) -> Confetti[M]:
        """One confetti, by id, as a handle."""
        return self._handle(Confetti, confetti_id=confetti_id)

    @overload
    def chat(self: Api[Async], channel: int | str, **options: Any) -> ChatClient: ...

    @overload
    def chat(self: Api[Sync], channel: int | str, **options: Any) -> Chat: ...

    def chat(self, channel: int | str, **options: Any) -> ChatClient | Chat:
        """The live chat of ``channel`` (an id, or the channel's name): a joined
        :class:`~explorer.chat.Chat` from ``Client``, a :class:`~explorer.chat.ChatClient` to
        join from ``AsyncClient``; same as ``channel(channel).chat(**options)``."""
        handle: Channel[Any] = self.channel(channel)
        chat: ChatClient | Chat = handle.chat(**options)
        return chat

    @overload
    def watch(self: Api[Async], channels: Channels = None, **options: Any) -> AsyncWatch: ...

    @overload
    def watch(self: Api[Sync], channels: Channels = None, **options: Any) -> Watch: ...

    def watch(
        self, channels: Channels = None, *, anonymous: bool = True, **options: Any
    ) -> AsyncWatch | Watch:
        """Many channels' live chats in one event log with a ``channel`` column: ``channels``
        (ids, tokens or a channels frame) and, with ``top=N``, the N online channels with the
        most ``viewersCurrent``, listed again every ``refresh``. ``to`` records to a Parquet
        capture as it goes, keeping a bounded tail in memory; ``shard=(K, N)`` keeps channels
        with ``id % N == K - 1``; ``anonymous=False`` joins the chats as the signed-in user.
        ``options`` are those of :class:`~explorer.collect.watch.AsyncWatch` (``top``, ``refresh``,
        ``to``, ``flush_every``, ``shard``, ``max_rows``, ``exclude_users`` (ids or names: their
        events are left out), ``redact_users`` (kept without names, ids and texts:
        ``events/exclusions.py``); any other goes to every chat client), declared there once. A
        started :class:`~explorer.collect.watch.Watch` from ``Client``, an
        :class:`~explorer.collect.watch.AsyncWatch` to ``await`` from ``AsyncClient``."""
        from explorer.collect.watch import AsyncWatch
        from explorer.collect.watch import start as start_watch

        aio = AsyncWatch(
            self.channel,
            functools.partial(Api.channels, self),
            channels,
            user_id=None if anonymous else functools.partial(Account.id, self.me),
            base_url=self.base_url,
            world=lambda: self._transport.clock.latest,
            world_clock=self._transport.clock.now,
            **options,
        )
        return start_watch(aio) if self._mode is Sync else aio

    @overload
    def live(self: Api[Async], channels: Channels = None, **options: Any) -> AsyncLive: ...

    @overload
    def live(self: Api[Sync], channels: Channels = None, **options: Any) -> Live: ...

    def live(
        self,
        channels: Channels = None,
        *,
        url: str | None = None,
        token: str | None = None,
        **options: Any,
    ) -> AsyncLive | Live:
        """Live events (Constellation) in one event log: of ``channels`` (ids, tokens or a
        channels frame) the ``events`` (``"update"``: changed fields such as
        ``viewersCurrent``; ``"followed"``, ``"hosted"``, ...), of ``users`` (ids) the
        ``user_events``, and any full event names in ``topics``. ``log.changes()`` reads the
        updates field by field; ``to`` records a capture. ``url`` is the live-events address
        (default: the platform's web root); ``token`` (an OAuth access token) signs the socket
        in, for the user's private events (``user_events=["notify"]``, with the scope
        ``notification:view:self``). ``options`` are those of
        :class:`~explorer.live.log.AsyncLive` (``users``, ``events``, ``user_events``, ``topics``,
        ``to``, ``flush_every``, ``max_rows``; any other goes to the socket), declared there
        once. A started :class:`~explorer.live.log.Live` from ``Client``, an
        :class:`~explorer.live.log.AsyncLive` to ``await`` from ``AsyncClient``."""
        from explorer.live.constellation import address as live_address
        from explorer.live.log import AsyncLive
        from explorer.live.log import start as start_live

        aio = AsyncLive(
            self.channel,
            url or live_address(self.base_url, token),
            channels,
            base_url=self.base_url,
            world_clock=self._transport.clock.now,
            **options,
        )
        return start_live(aio) if self._mode is Sync else aio

    # -- listings -----------------------------------------------------------------------------

    @endpoint(wire.CHANNELS, result=Result.PAGED)
    def channels(
        self,
        *,
        order: str | Iterable[str] | None = None,
        fields: str | Iterable[str] | None = None,
        where: Mapping[str, Any] | str | None = None,
        limit: int | None = None,
        q: str | None = None,
        scope: str | None = None,
        **options: Unpack[ListingOptions],
    ) -> Call[pd.DataFrame]:
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
        projected = field_names(fields)
        params = {
            "order": format_order(order),
            "where": format_where(where),
            "fields": ",".join(projected) if projected is not None else None,
            "q": q,
            "scope": scope,
        }
        return Call(
            params=params,
            size=limit or min(MAX_LIMIT, options.get("max_rows") or MAX_LIMIT),
            fields=projected,
            **options,
        )

    @overload
    def track(self: Api[Async], channels_or_query: Target, **options: Any) -> AsyncTracker: ...

    @overload
    def track(self: Api[Sync], channels_or_query: Target, **options: Any) -> Tracker: ...

    def track(
        self, channels_or_query: Target, *, live: bool = False, **options: Any
    ) -> AsyncTracker | Tracker:
        """Snapshots of channel fields every ``every`` into a long frame (``tracker.frame``:
        ``time``, ``channel``, ``token``, ``fields``), paced within the rate limits.

        ``channels_or_query``: ids, tokens, a channels DataFrame (its index), or a dict of
        :meth:`channels` arguments (``{"where": {"online": True}, "order":
        "viewersCurrent:desc", "max_rows": 50}``). ``live=True`` takes one snapshot, then
        follows each channel's ``channel:{id}:update`` live events instead of polling (a row
        per change of a tracked field, as it happens). ``options`` are those of
        :class:`~explorer.collect.track.AsyncTracker`, declared there once: ``every``, ``fields``,
        ``to`` (a Parquet capture, written every ``flush_every``), ``max_rows`` (the rows kept
        in memory; when recording, 100,000 by default), ``shard=(K, N)`` (channels with
        ``id % N == K - 1``), ``clock=``/``sleep=`` (the schedule's time source and wait, for
        tests). ``time`` is the platform's world time (its ``X-Explorer-Clock`` header), so
        tracking ``explorer serve --speed N`` dates rows in simulated time; ``clock`` dates them
        when the platform sends no clock. A :class:`~explorer.collect.track.Tracker` from
        ``Client``, an :class:`~explorer.collect.track.AsyncTracker` (call it inside the running
        loop) from ``AsyncClient``; ``close()`` / ``aclose()`` stops it.
        """
        from explorer.collect.track import start as start_tracker
        from explorer.live.constellation import address as live_address

        return start_tracker(
            functools.partial(Api.channels, self),
            channels_or_query,
            self._mode is Sync,
            live_url=live_address(self.base_url) if live else None,
            **{"world": self._transport.clock, **options},
        )

    @endpoint(wire.RECORDING)
    def recording(self, recording_id: int) -> Call[pd.DataFrame]:
        """One recording as a one-row frame; ``vods`` lists its files (``baseUrl``,
        ``format``, ``data`` with ``Width``, ``Height``, ``Fps``, ``Bitrate``)."""
        return Call()

    @endpoint(wire.SEARCH_USERS, result=Result.PAGED)
    def search_users(self, query: str, **options: Unpack[ListingOptions]) -> Call[pd.DataFrame]:
        """Users whose name starts with ``query`` (any case), by name, indexed by id, each
        with its ``channel`` (an object)."""
        return Call(params={"query": query}, **options)

    @endpoint(wire.TYPES, result=Result.TABLE)
    def types(
        self, *, online: bool | None = None, **options: Unpack[ListingOptions]
    ) -> Call[pd.DataFrame]:
        """Types (games and categories) indexed by id; ``online=True`` keeps those live now."""
        return Call(params={"online": int(online) if online is not None else None}, **options)

    @endpoint(wire.TYPE)
    def type(self, type_id: int) -> Call[pd.DataFrame]:
        """One type (game or category) as a one-row frame."""
        return Call()

    @endpoint(GAME_LISTINGS, result=Result.PAGED)
    def games(
        self,
        listing: str = "published",
        *,
        q: str | None = None,
        **options: Unpack[ListingOptions],
    ) -> Call[pd.DataFrame]:
        """Interactive games indexed by id: the ``published`` catalogue, or (signed in) the
        caller's ``owned``, ``shared`` (edited for others), ``editor`` (both) or, for staff,
        ``reviewing``; ``q`` searches names."""
        return Call(params={"q": q}, **options)

    @endpoint(wire.CREATE_GAME)
    def create_game(self, name: str, **fields: Any) -> Call[pd.DataFrame]:
        """Create an interactive game owned by the caller; ``fields`` may give
        ``description``, ``controlVersion`` and ``installation``. The game as one row."""
        return Call(json={"name": name, **fields})

    @endpoint(wire.INTERACTIVE_HOSTS, result=Result.TABLE)
    def interactive_hosts(self, **options: Unpack[ListingOptions]) -> Call[pd.DataFrame]:
        """The interactive hosts viewers join."""
        return Call(**options)

    @endpoint(wire.CREATE_CONFETTI)
    def create_confetti(
        self,
        name: str,
        particles: Sequence[Mapping[str, str]],
        *,
        channel_id: int | None = None,
        **settings: Any,
    ) -> Call[pd.DataFrame]:
        """Create a confetti for a channel (owner), or platform-wide without ``channel_id``
        (staff). ``particles`` are ``{"type": "color"|"emoji"|"image", "value": ...}``;
        ``settings`` may give ``count`` and ``durationMs``. The new confetti as one row."""
        body = {"name": name, "particles": list(particles), **settings}
        return Call(json=body if channel_id is None else {**body, "channelId": channel_id})

    @endpoint(wire.ACHIEVEMENTS, result=Result.TABLE)
    def achievements(self, **options: Unpack[ListingOptions]) -> Call[pd.DataFrame]:
        """Every achievement indexed by slug; signed in, also ``earned`` and ``earnedAt``."""
        return Call(**options)

    @endpoint(wire.ANNOUNCE)
    def announce(self, message: str, *, level: str = "info") -> Call[pd.DataFrame]:
        """Announce to every user (staff), at ``level`` ``info``, ``warning`` or ``critical``;
        delivered as notifications. The announcement with its ``recipients`` as one row."""
        return Call(json={"message": message, "level": level})

    @endpoint(wire.FRONTEND_VERSIONS, result=Result.TABLE)
    def frontend_versions(
        self, *, app: str | None = None, **options: Unpack[ListingOptions]
    ) -> Call[pd.DataFrame]:
        """Released builds of each client app (or of ``app``), newest first, with ``current``."""
        return Call(params={"app": app}, **options)

    @endpoint(wire.INGESTS, result=Result.TABLE)
    def ingests(
        self, *, protocol: str | None = None, **options: Unpack[ListingOptions]
    ) -> Call[pd.DataFrame]:
        """Ingest servers with their load, indexed by name; ``protocol`` keeps those taking it."""
        return Call(params={"protocol": protocol}, **options)

    @endpoint(wire.BEST_INGEST)
    def best_ingest(self, *, protocol: str | None = None) -> Call[pd.DataFrame]:
        """The least-loaded ingest (taking ``protocol``), as one row."""
        return Call(params={"protocol": protocol})

    @endpoint(LANGUAGE_LISTINGS, result=Result.TABLE)
    def languages(
        self, listing: str = "used", **options: Unpack[ListingOptions]
    ) -> Call[pd.DataFrame]:
        """Languages with channel counts, indexed by id: those channels ``used`` (most channels
        first), those ``active`` now (most live viewers first) or all ``available``."""
        return Call(**options)

    @endpoint(wire.IMAGE, result=Result.BYTES)
    def image(self, resource_id: int) -> Call[bytes]:
        """The bytes of an uploaded image, by the id of its record."""
        return Call()

    # -- accounts and signing in --------------------------------------------------------------

    @endpoint(wire.REGISTER)
    def register(self, username: str, password: str, email: str) -> Call[pd.DataFrame]:
        """Create an account (and its channel); the new user as a one-row frame. Confirm it
        with the code mailed to ``email``: ``user(id).confirm(code)``."""
        return Call(json={"username": username, "password": password, "email": email})

    @action
    async def login(self, username: str, password: str) -> pd.DataFrame:
        """Open a cookie session; the signed-in user as a one-row frame. The session's CSRF
        token is kept and refreshed (a 461 is retried once with the fresh token)."""
        body = await self._transport.login(username, password)
        return tables.frame([body], schemas.CURRENT_USER)

    @action
    async def logout(self) -> None:
        """End the cookie session; the client is anonymous afterwards."""
        await self._transport.logout()

    @action
    async def authorize(
        self,
        scopes: Iterable[str],
        *,
        client_id: str | None = None,
        flow: Literal["implicit", "shortcode"] = "implicit",
        timeout: float = 300.0,
        poll: float = 2.0,
        show: Callable[[Shortcode], object] = show_shortcode,
        token_file: str | os.PathLike[str] | None = None,
        on_refresh: Callable[[Grant], object] | None = None,
    ) -> Grant:
        """Get an OAuth token for ``scopes`` and switch to it.

        ``flow="implicit"`` runs the implicit grant with the signed-in session (``login`` or
        ``username``/``password`` first). ``flow="shortcode"`` needs no session: it shows a
        6-character code and the platform's ``/go`` address (``show``: a widget in Jupyter, a
        line in a script), waits up to ``timeout`` seconds, checking every ``poll``, for
        someone signed in to approve it (at ``/go``, or ``approve_code`` from another client),
        and refreshes the token by itself when it nears expiry. Afterwards requests carry
        ``Authorization: Bearer <token>`` and any cookie session is dropped; the
        :class:`~explorer.rest.auth.Grant` holds the token and its scopes.

        ``token_file`` keeps the token in that file (mode 600) and uses a kept one instead of
        asking again while it is good for ``scopes``; ``on_refresh`` is called with each new
        grant the token refreshes to, after the file is rewritten (``rest/tokenfiles.py``).
        """
        scopes = list(scopes)
        kept = tokenfiles.load(token_file) if token_file is not None else None
        if kept is not None and kept.serves(self.base_url, scopes, time.time()):
            keeper = Keeper(token_file, self.base_url, kept.client_id, on_refresh)
            self._transport.use_grant(
                kept.grant, kept.client_id, expires_at=kept.expires_at, on_refresh=keeper
            )
            return kept.grant
        keeper = Keeper(token_file, self.base_url, client_id or CLIENT_ID, on_refresh)
        if flow == "shortcode":
            grant = await self._transport.authorize_shortcode(
                scopes, client_id, timeout=timeout, poll=poll, show=show
            )
        else:
            grant = await self._transport.authorize(scopes, client_id)
        if token_file is not None or on_refresh is not None:
            self._transport.use_grant(grant, keeper.client_id, on_refresh=keeper)
            keeper.keep(grant, tokenfiles.expiry(grant))
        return grant

    @action
    async def approve_code(self, code: str, *, deny: bool = False) -> None:
        """Approve (or with ``deny=True`` refuse) a shortcode sign-in as the signed-in user."""
        which = wire.SHORTCODE_DENY if deny else wire.SHORTCODE_APPROVE
        await self._transport.send(which.method, which.path, which.bucket, json={"code": code})

    @action
    async def authorize_jwt(self) -> str:
        """Trade the current credential for a JWT and sign requests with it from now on."""
        return await self._transport.authorize_jwt()

    # -- anything else ------------------------------------------------------------------------

    @action
    async def clock(self) -> pd.Timestamp:
        """The platform's world time now (UTC), from the ``X-Explorer-Clock`` header every
        response carries: the clock its timestamps, recordings and analytics use, which runs
        ``explorer serve --speed`` times faster than real time."""
        response = await self._transport.send(wire.TYPES.method, wire.TYPES.path, wire.TYPES.bucket)
        moment = world_time(response.headers)
        if moment is None:
            raise ConnectionFailed(f"{self.base_url} sends no {CLOCK_HEADER} header.")
        return pd.Timestamp(moment, unit="s", tz="UTC").floor("ms")

    def budget(self) -> pd.DataFrame:
        """Each rate-limit bucket's state, indexed by bucket: ``limit`` and ``remaining``
        calls, when the window ``resets`` (UTC; missing when none is open), ``in_flight``
        requests, whether an answer ``reported`` it (the rest come from the bucket table, the
        global bucket is counted here) and whether it is ``unlimited`` (the platform enforces
        none). Read from the headers the platform already sent: no request is made."""
        return tables.frame(self._transport.budget(), schemas.BUDGET)

    @action
    async def get_json(self, path: str, **params: Any) -> Any:
        """``GET path`` (relative to the base URL) with query ``params``; the decoded JSON."""
        bucket = bucket_of(wire.TABLE, "GET", path)
        return decode(await self._transport.send("GET", path, bucket, params=params))

    @action
    async def get_frame(self, path: str, **params: Any) -> pd.DataFrame:
        """``GET path`` as a DataFrame: a list gives one row per item, an object one row.

        Nested objects flatten to dotted columns with inferred dtypes, ``id`` becomes the
        index. When the answer carries ``X-Total-Count`` and more rows exist, the following
        pages are fetched too (unless ``page`` is given).
        """
        bucket = bucket_of(wire.TABLE, "GET", path)
        records = await self._transport.records(
            path, bucket, params, size=None, pages=None, max_rows=None, progress=None
        )
        return tables.frame(records)

    @action
    async def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: Mapping[str, Any] | None = None,
    ) -> Any:
        """Any request (``PUT``, ``POST``, ...) with a JSON body; the decoded JSON answer."""
        bucket = bucket_of(wire.TABLE, method.upper(), path)
        response = await self._transport.send(
            method.upper(), path, bucket, params=params, json=json
        )
        return decode(response)


#: Every handle method bound to the wire's rows (the transport calls ``SIGN_IN`` itself): a
#: test checks that together they call every row.
ENDPOINTS: tuple[Binding, ...] = tuple(
    endpoints_of(Api, Channel, User, Account, Game, GameVersion, Confetti)
)
