"""A channel handle: ``api.channel("streamer")`` and everything one can ask of that channel.

The handle is lazy (no request until a method is called) and its methods are the channel's
sub-resources as the platform groups them under ``/channels/{channel}``, ``/chats/{channel}``
and ``/interactive/{channel}``: its record, followers, roles, hosting, settings, Discord,
partnership, media, analytics, chat presence, confetti and interactive game. Reads are nouns
(``followers()``), writes ``set_x``/``add_x``/``remove_x``/``clear_x`` or a verb (``follow()``).
In Jupyter a sync handle shows as a small card with the channel's name, title and viewers.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from datetime import date, datetime
from typing import TYPE_CHECKING, Any, TypeAlias, Unpack, overload

import pandas as pd

from explorer.errors import ExplorerError, NotFound
from explorer.rest import schemas, tables
from explorer.rest.account import Account
from explorer.rest.endpoints import Choice, Result
from explorer.rest.handle import (
    Async,
    Call,
    Handle,
    Image,
    ListingOptions,
    M,
    Sync,
    action,
    endpoint,
    field_names,
    names,
)
from explorer.wire import channel_routes as channel_wire
from explorer.wire import routes as wire
from explorer.wire.numbers import identifier
from explorer.wire.query import MAX_LIMIT, format_order

if TYPE_CHECKING:
    # The chat client (websockets, event logs) loads when a chat is first asked for.
    from explorer.chat import Chat, ChatClient, ChatDetails

#: A moment for an analytics range: a datetime (naive means UTC) or an ISO-8601 string.
Moment: TypeAlias = datetime | date | pd.Timestamp | str

#: Every analytics series, and the row serving it.
ANALYTICS = Choice(
    "series",
    {
        "viewerSummary": channel_wire.CHANNEL_ANALYTICS_VIEWER_SUMMARY,
        "viewers": channel_wire.CHANNEL_ANALYTICS_VIEWERS,
        "viewersMetrics": channel_wire.CHANNEL_ANALYTICS_VIEWERS_METRICS,
        "streamSessions": channel_wire.CHANNEL_ANALYTICS_STREAM_SESSIONS,
        "streamHosts": channel_wire.CHANNEL_ANALYTICS_STREAM_HOSTS,
        "followers": channel_wire.CHANNEL_ANALYTICS_FOLLOWERS,
        "subscriptions": channel_wire.CHANNEL_ANALYTICS_SUBSCRIPTIONS,
        "subRevenue": channel_wire.CHANNEL_ANALYTICS_SUB_REVENUE,
        "cpm": channel_wire.CHANNEL_ANALYTICS_CPM,
        "sparkSpent": channel_wire.CHANNEL_ANALYTICS_SPARK_SPENT,
        "emojiUsageRanks": channel_wire.CHANNEL_ANALYTICS_EMOJI_USAGE_RANKS,
        "emojiUsage": channel_wire.CHANNEL_ANALYTICS_EMOJI_USAGE,
        "gameRanks": channel_wire.CHANNEL_ANALYTICS_GAME_RANKS,
        "gameRanksGlobal": channel_wire.CHANNEL_ANALYTICS_GAME_RANKS_GLOBAL,
    },
)
ANALYTICS_SERIES: tuple[str, ...] = tuple(ANALYTICS.options)
#: Every manifest kind, and the row serving it.
MANIFESTS = Choice(
    "kind",
    {
        "m3u8": channel_wire.CHANNEL_MANIFEST_M3U8,
        "smil": channel_wire.CHANNEL_MANIFEST_SMIL,
        "ftl": channel_wire.CHANNEL_MANIFEST_FTL,
        "light": channel_wire.CHANNEL_MANIFEST_LIGHT,
        "light2": channel_wire.CHANNEL_MANIFEST_LIGHT2,
    },
)
_CARD_FIELDS = ("id", "token", "name", "online", "viewersCurrent", "numFollowers", "type", "user")


def _moment(value: Moment | None) -> str | None:
    """An ISO-8601 timestamp for ``from``/``to``; text is sent as given, for the platform to
    judge. A naive datetime is taken as UTC, as the platform takes an offset-less timestamp."""
    if value is None or isinstance(value, str):
        return value
    stamp = pd.Timestamp(value)
    return (stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp).isoformat()


def _emoticons(pack: dict[str, Any]) -> pd.DataFrame:
    """A pack's ``{code: {x, y, width, height}}`` as a frame indexed by code."""
    codes = pack.get("emoticons") or {}
    return tables.frame(
        [{"code": code, **place} for code, place in codes.items()], schemas.EMOTICON
    )


class Channel(Handle[M]):
    """One channel, by id or token (its name): ``api.channel("streamer")``.

    Lists are DataFrames indexed by ``id`` (or the record's key), single records one-row
    frames (``.iloc[0]`` for a Series), settings dicts. Paged lists take ``max_rows`` and
    ``progress``. Owner-only methods say so; refusals raise the typed errors.
    """

    _bound = ("channel",)

    @property
    def key(self) -> int | str:
        """The id or token this handle was made with."""
        key = self._values["channel"]
        assert isinstance(key, int | str)
        return key

    def __repr__(self) -> str:
        return f"<Channel {self.key!r} at {self.base_url} as {self._identity()}>"

    async def _not_found(self, missing: NotFound) -> NotFound:
        """A channel named by a token no channel has: close tokens, from one search of names
        sharing its first letters (a page, so a typo costs one request)."""
        token = self.key
        if not isinstance(token, str) or not missing.message.startswith("Channel not found"):
            return missing
        params = {"q": token[:3], "scope": "names", "fields": "token"}
        try:
            found = await self._transport.records(
                wire.CHANNELS.path,
                wire.CHANNELS.bucket_for(params),
                params,
                size=MAX_LIMIT,
                pages=1,
                max_rows=MAX_LIMIT,
                progress=False,
            )
        except ExplorerError:
            found = []
        tokens = [str(row["token"]) for row in found if row.get("token")]
        close = difflib.get_close_matches(token, tokens, n=3, cutoff=0.6)
        hint = (
            f"did you mean {' or '.join(map(repr, close))}?"
            if close
            else f"api.channels(q={token[:3]!r}) searches channel names."
        )
        said = f"Channel not found: none is called {token!r}; {hint}"
        return NotFound(missing.status, missing.error, said, missing.details)

    async def _card(self) -> pd.DataFrame:
        """The card shows the channel's basic fields, not its whole record."""
        return await Channel.info(self, fields=_CARD_FIELDS)

    # -- the record ---------------------------------------------------------------------------

    @endpoint(channel_wire.CHANNEL)
    def info(self, *, fields: str | Iterable[str] | None = None) -> Call[pd.DataFrame]:
        """The channel as a one-row frame like ``channels()``; ``fields`` projects it."""
        projected = field_names(fields)
        joined = ",".join(projected) if projected is not None else None
        return Call(params={"fields": joined}, fields=projected)

    @endpoint(channel_wire.CHANNEL_DETAILS)
    def details(self) -> Call[pd.DataFrame]:
        """The channel with its media resources (thumbnail, cover, badge), as one row."""
        return Call()

    @endpoint(channel_wire.CHANNEL_UPDATE)
    def update(self, **changes: Any) -> Call[pd.DataFrame]:
        """Change the editable fields (owner): ``name``, ``description``, ``typeId``,
        ``languageId``, ``audience``, ``vodsEnabled``. The channel afterwards, as one row."""
        return Call(json=changes)

    @endpoint(channel_wire.CHANNEL_DROP_STREAM_KEY, result=Result.NONE)
    def _drop_stream_key(self) -> Call[None]:
        """Invalidate the stream key (owner); the platform issues a new one."""
        return Call()

    @action
    async def reset_stream_key(self) -> str:
        """Issue a new stream key (owner), invalidating the old one; the new key."""
        await Channel._drop_stream_key(self)
        frame = await Channel.info(self)
        return str(frame["streamKey"].iloc[0])

    # -- followers, roles, relationship -------------------------------------------------------

    @endpoint(channel_wire.CHANNEL_FOLLOWERS, result=Result.PAGED)
    def followers(self, **options: Unpack[ListingOptions]) -> Call[pd.DataFrame]:
        """The followers, newest first, indexed by user id, with ``followedAt``."""
        return Call(**options)

    @endpoint(channel_wire.CHANNEL_FOLLOW)
    def follow(self) -> Call[pd.DataFrame]:
        """Follow the channel (idempotent); the follow state and ``numFollowers`` as one row."""
        return Call()

    @endpoint(channel_wire.CHANNEL_UNFOLLOW)
    def unfollow(self) -> Call[pd.DataFrame]:
        """Stop following the channel (idempotent); the follow state as one row."""
        return Call()

    @endpoint(channel_wire.CHANNEL_USERS, result=Result.PAGED)
    def users(
        self,
        *,
        role: str | None = None,
        **options: Unpack[ListingOptions],
    ) -> Call[pd.DataFrame]:
        """The owner and the holders of roles, indexed by user id, with ``roles``; ``role``
        keeps one role's holders (bans and mutes are shown to moderators only)."""
        return Call(params={"role": role}, **options)

    @endpoint(channel_wire.CHANNEL_SET_ROLES)
    def set_roles(
        self, user_id: int, *, add: str | Iterable[str] = (), remove: str | Iterable[str] = ()
    ) -> Call[pd.DataFrame]:
        """Grant and revoke a user's roles (``Mod``, ``Subscriber``, ``Banned``, ``Muted``);
        takes effect in chat at once. The user with their roles as one row."""
        return Call(json={"add": names(add), "remove": names(remove)})

    @endpoint(channel_wire.CHANNEL_RELATIONSHIP)
    def relationship(self, user_id: int | None = None) -> Call[pd.DataFrame]:
        """A user's roles here and their follow (the caller's by default), as one row."""
        return Call(params={"user": user_id})

    # -- hosting and discovery ----------------------------------------------------------------

    @endpoint(channel_wire.CHANNEL_HOSTING)
    def hosting(self) -> Call[pd.DataFrame]:
        """Whom the channel hosts, as one row with the hosted channel's ``hostee.*`` columns."""
        return Call()

    @endpoint(channel_wire.CHANNEL_SET_HOSTING)
    def set_hosting(self, hostee_id: int) -> Call[pd.DataFrame]:
        """Host another channel, by id (owner); the hosting as one row."""
        return Call(json={"id": hostee_id})

    @endpoint(channel_wire.CHANNEL_CLEAR_HOSTING, result=Result.NONE)
    def clear_hosting(self) -> Call[None]:
        """Stop hosting (owner); harmless when not hosting."""
        return Call()

    @endpoint(channel_wire.CHANNEL_HOSTERS, result=Result.PAGED)
    def hosters(self, **options: Unpack[ListingOptions]) -> Call[pd.DataFrame]:
        """The channels hosting this one, most watched first, like ``channels()``."""
        return Call(**options)

    @endpoint(channel_wire.CHANNEL_RELATED, result=Result.PAGED)
    def related(self, **options: Unpack[ListingOptions]) -> Call[pd.DataFrame]:
        """Channels sharing this one's type and/or language, best matches first."""
        return Call(**options)

    # -- settings -----------------------------------------------------------------------------

    @endpoint(channel_wire.CHANNEL_PREFERENCES, result=Result.OBJECT)
    def preferences(self) -> Call[dict[str, Any]]:
        """The preferences (owner), keyed as the platform names them (``hosting:allow``,
        ``channel:slowchat``, ...)."""
        return Call()

    @endpoint(channel_wire.CHANNEL_SET_PREFERENCES, result=Result.OBJECT)
    def set_preferences(self, changes: Mapping[str, Any]) -> Call[dict[str, Any]]:
        """Change some preferences (owner; None resets a key to its default); all of them
        afterwards. A mapping rather than keywords: the keys hold colons."""
        return Call(json=dict(changes))

    @endpoint(channel_wire.CHANNEL_EMOTICONS, shape=_emoticons)
    def emoticons(self) -> Call[pd.DataFrame]:
        """The emoticon pack: each code's place on the sprite sheet, indexed by code."""
        return Call()

    @endpoint(channel_wire.CHANNEL_SET_EMOTICONS, shape=_emoticons)
    def set_emoticons(self, changes: Mapping[str, Mapping[str, int] | None]) -> Call[pd.DataFrame]:
        """Add or move emoticons (code to ``{x, y, width, height}``) or remove them (code to
        None) in a partnered channel's pack (owner); the pack afterwards."""
        return Call(json={"emoticons": dict(changes)})

    @endpoint(channel_wire.CHANNEL_DISCORD, result=Result.OBJECT)
    def discord(self) -> Call[dict[str, Any]]:
        """The Discord bot settings (owner or staff)."""
        return Call()

    @endpoint(channel_wire.CHANNEL_SET_DISCORD, result=Result.OBJECT)
    def set_discord(self, settings: Mapping[str, Any]) -> Call[dict[str, Any]]:
        """Replace the Discord bot settings (owner; omitted keys take their defaults)."""
        return Call(json=dict(settings))

    @endpoint(channel_wire.CHANNEL_DISCORD_CHANNELS, result=Result.TABLE)
    def discord_channels(self, **options: Unpack[ListingOptions]) -> Call[pd.DataFrame]:
        """The text and voice channels of the channel's Discord guild (owner or staff)."""
        return Call(**options)

    @endpoint(channel_wire.CHANNEL_DISCORD_ROLES, result=Result.TABLE)
    def discord_roles(self, **options: Unpack[ListingOptions]) -> Call[pd.DataFrame]:
        """The roles of the channel's Discord guild (owner or staff)."""
        return Call(**options)

    @endpoint(channel_wire.CHANNEL_DISCORD_INVITE, result=Result.OBJECT)
    def discord_invite(self) -> Call[dict[str, Any]]:
        """Whether the caller may get an invite to the channel's Discord, and their current one."""
        return Call()

    @endpoint(channel_wire.CHANNEL_NEW_DISCORD_INVITE, result=Result.OBJECT)
    def new_discord_invite(self) -> Call[dict[str, Any]]:
        """A fresh Discord invite for the caller, replacing theirs, if the channel allows."""
        return Call()

    # -- partnership and suspension -----------------------------------------------------------

    @endpoint(channel_wire.CHANNEL_PARTNERSHIP)
    def partnership(self) -> Call[pd.DataFrame]:
        """The partnership application (owner or staff), as one row."""
        return Call()

    @endpoint(channel_wire.CHANNEL_APPLY_FOR_PARTNERSHIP)
    def apply_for_partnership(self, message: str) -> Call[pd.DataFrame]:
        """Apply for partnership (owner) with a message of 20-2,000 characters."""
        return Call(json={"message": message})

    @endpoint(channel_wire.CHANNEL_PARTNERSHIP_CODES, result=Result.TABLE)
    def partnership_codes(self, **options: Unpack[ListingOptions]) -> Call[pd.DataFrame]:
        """A partner's redeemable codes (owner or staff), indexed by id."""
        return Call(**options)

    @endpoint(channel_wire.CHANNEL_SUSPEND)
    def suspend(self) -> Call[pd.DataFrame]:
        """Suspend the channel (staff): it leaves listings and goes offline. The channel."""
        return Call()

    @endpoint(channel_wire.CHANNEL_UNSUSPEND)
    def unsuspend(self) -> Call[pd.DataFrame]:
        """Lift the channel's suspension (staff). The channel."""
        return Call()

    # -- media: recordings, manifests, images, transcodes -------------------------------------

    @endpoint(channel_wire.CHANNEL_RECORDINGS, result=Result.PAGED)
    def recordings(
        self,
        *,
        order: str | Iterable[str] | None = None,
        **options: Unpack[ListingOptions],
    ) -> Call[pd.DataFrame]:
        """The recordings, newest first unless ``order`` (over ``id``, ``createdAt``,
        ``viewsTotal``, ``duration``) says otherwise, indexed by id; ``vods`` lists files."""
        return Call(params={"order": format_order(order)}, **options)

    @endpoint(channel_wire.CHANNEL_BROADCAST)
    def broadcast(self) -> Call[pd.DataFrame]:
        """The live broadcast as one row: ``id`` (the same while the channel stays live) and
        ``startedAt``. Offline channels answer 404 (:class:`~explorer.errors.NotFound`)."""
        return Call()

    @endpoint(MANIFESTS, result=Result.TEXT)
    def manifest(self, kind: str = "m3u8") -> Call[str]:
        """A live channel's playback manifest as text: ``m3u8`` (HLS), ``smil``, or the JSON
        ``ftl``, ``light`` and ``light2``. Offline channels answer 404."""
        return Call()

    @endpoint(channel_wire.CHANNEL_SET_THUMBNAIL)
    def set_thumbnail(self, image: Image) -> Call[pd.DataFrame]:
        """Upload the thumbnail (owner; PNG or JPEG, as bytes or a file path). The stored
        image as one row; ``url`` serves it."""
        return Call(image=image)

    @endpoint(channel_wire.CHANNEL_SET_BADGE)
    def set_badge(self, image: Image) -> Call[pd.DataFrame]:
        """Upload the subscriber badge (owner; PNG or JPEG bytes or path); the stored image."""
        return Call(image=image)

    @endpoint(channel_wire.CHANNEL_SET_BANNER)
    def set_banner(self, image: Image) -> Call[pd.DataFrame]:
        """Upload the banner (owner; PNG or JPEG bytes or path); the stored image."""
        return Call(image=image)

    @endpoint(channel_wire.CHANNEL_BANNER)
    def banner(self) -> Call[pd.DataFrame]:
        """The banner image record, as one row (404 when there is none)."""
        return Call()

    @endpoint(channel_wire.CHANNEL_CLEAR_BANNER, result=Result.NONE)
    def clear_banner(self) -> Call[None]:
        """Remove the banner (owner)."""
        return Call()

    @endpoint(channel_wire.CHANNEL_UNLOCK_TRANSCODES)
    def unlock_transcodes(self) -> Call[pd.DataFrame]:
        """Pay the owner's sparks to unlock lower-quality renditions (owner), as one row."""
        return Call()

    # -- analytics ----------------------------------------------------------------------------

    @endpoint(ANALYTICS, result=Result.SERIES)
    def analytics(
        self,
        series: str,
        start: Moment | None = None,
        end: Moment | None = None,
        *,
        emoji: str | None = None,
        **options: Unpack[ListingOptions],
    ) -> Call[pd.DataFrame]:
        """One analytics series (owner) with a UTC ``DatetimeIndex``.

        ``series`` is one of :data:`ANALYTICS_SERIES`: ``viewerSummary`` (daily peak, average,
        viewer-hours), ``viewers`` (hourly), ``viewersMetrics``, ``streamSessions``,
        ``streamHosts``, ``followers``, ``subscriptions``, ``subRevenue``, ``cpm``,
        ``sparkSpent``, ``emojiUsageRanks``, ``emojiUsage`` (``emoji`` keeps one emote),
        ``gameRanks``, ``gameRanksGlobal``. ``start``/``end`` bound the range (datetimes,
        naive meaning UTC, or ISO strings); the platform defaults to the last 7 days and allows
        at most 90.
        """
        params = {"emoji": emoji, "from": _moment(start), "to": _moment(end)}
        return Call(params=params, **options)

    # -- chat ---------------------------------------------------------------------------------

    @endpoint(channel_wire.CHANNEL_CHAT_DETAILS, result=Result.OBJECT)
    def _chat_details(self, channel_id: int) -> Call[dict[str, Any]]:
        """Where to connect for the chat, the caller's permissions and an authkey."""
        return Call()

    @action
    async def chat_details(self) -> ChatDetails:
        """Where to connect for the channel's chat, the caller's permissions and an authkey."""
        from explorer.chat import ChatDetails

        channel_id = await Channel.id(self)
        body = await Channel._chat_details(self, channel_id)
        return ChatDetails(
            channel_id=channel_id,
            endpoints=tuple(body.get("endpoints") or ()),
            permissions=tuple(body.get("permissions") or ()),
            authkey=body.get("authkey"),
        )

    @action
    async def id(self) -> int:
        """The channel's id (asked of the platform once when the handle has its token)."""
        key = self.key
        number = key if isinstance(key, int) else identifier(key)
        if number is not None:
            return number
        if "id" not in self._values:
            frame = await Channel.info(self, fields="id")
            self._values["id"] = int(frame.index[0])
        found = self._values["id"]
        assert isinstance(found, int)
        return found

    @overload
    def chat(self: Channel[Async], **options: Any) -> ChatClient: ...

    @overload
    def chat(self: Channel[Sync], **options: Any) -> Chat: ...

    def chat(self, **options: Any) -> ChatClient | Chat:
        """The channel's live chat: signed in, it joins as the user, otherwise anonymously.

        From an async handle a :class:`~explorer.chat.ChatClient` (join with ``await`` or
        ``async with``); from a sync one a joined :class:`~explorer.chat.Chat` whose events
        keep flowing into ``chat.log`` in the background. ``options`` go to ChatClient
        (``max_rows``, ``backlog``, timeouts, ...)."""
        from explorer.chat import ChatClient, join

        # The coroutines run on the client's loop in either mode (``join`` uses the private one).
        client = ChatClient(
            lambda: Channel.chat_details(self),
            user_id=lambda: Account.id(self._handle(Account)),
            base_url=self.base_url,
            **{"clock": self._transport.clock.now, **options},
        )
        return join(client) if self._mode is Sync else client

    @endpoint(channel_wire.CHANNEL_CHATTERS, result=Result.PAGED)
    def chatters(self, **options: Unpack[ListingOptions]) -> Call[pd.DataFrame]:
        """Signed-in users in the chat now, by name, indexed by user id, with their roles."""
        return Call(**options)

    @endpoint(channel_wire.CHANNEL_FIND_CHATTERS, result=Result.PAGED)
    def find_chatters(self, prefix: str, **options: Unpack[ListingOptions]) -> Call[pd.DataFrame]:
        """Users in the chat whose name starts with ``prefix``."""
        return Call(params={"username": prefix}, **options)

    @endpoint(channel_wire.CHANNEL_CHATTER)
    def chatter(self, user_id: int) -> Call[pd.DataFrame]:
        """One user present in the chat, as one row (404 when not there)."""
        return Call()

    @endpoint(channel_wire.CHANNEL_CHAT_FRIENDS, result=Result.PAGED)
    def chat_friends(self, **options: Unpack[ListingOptions]) -> Call[pd.DataFrame]:
        """Users in the chat whose channels the caller follows."""
        return Call(**options)

    # -- confetti and interactive -------------------------------------------------------------

    @endpoint(channel_wire.CHANNEL_CONFETTI, result=Result.TABLE)
    def confetti(self, **options: Unpack[ListingOptions]) -> Call[pd.DataFrame]:
        """The confetti the channel may fire (platform-wide ones and its own), indexed by id."""
        return Call(**options)

    @endpoint(channel_wire.CHANNEL_INTERACTIVE)
    def interactive(self) -> Call[pd.DataFrame]:
        """The interactive game the channel runs, its version (``version.*``) and host."""
        return Call()

    @endpoint(channel_wire.CHANNEL_INTERACTIVE_ROBOT)
    def interactive_robot(self) -> Call[pd.DataFrame]:
        """Address and key for the channel's game client (owner), as one row."""
        return Call()
