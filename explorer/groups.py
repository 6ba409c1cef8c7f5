"""The platform's resource groups as toolkit methods: the :class:`Groups` mixin of ``AsyncClient``.

``rest.py`` owns the transport (the keep-alive client, pacing, retries, paging, signing in) and
the core resources (channels, types, users, chat details); this module owns what every other
endpoint means: its path, its parameters and the schema of its answer. The two are apart
because together they would pass 1,700 lines, and because they change for different reasons
(a new endpoint touches only this module). :class:`Groups` reaches the wire through the three
primitives :class:`Wire` declares, which ``AsyncClient`` implements; the blocking ``Client``
gets each method as a twin like every other (``rest.py``).

What the methods answer:

- Lists are DataFrames shaped by the record's schema in ``tables.py``, indexed by ``id`` (or
  the record's own key: ``slug``, ``userId``, ``code``, ``name``). Paged lists are followed to
  the end unless ``max_rows`` says otherwise.
- A single record is a one-row frame, as from ``channel()``; ``.iloc[0]`` gives a Series.
- Analytics are time series with a sorted UTC ``DatetimeIndex``.
- Settings rather than records (channel preferences, Discord settings and invites) are dicts;
  manifests are text and uploaded images bytes. Deleting answers None.
- A ``channel`` argument is the channel's id or its token (name).
- Choices the client knows (analytics series, manifest kinds, upload kinds, listings) are
  checked before sending and raise ``ValueError``; everything else is the platform's to judge,
  and its refusals arrive as the typed :class:`~explorer.errors.PlatformError` subclasses.
- Write methods take the platform's own field names (``typeId``, ``durationMs``), as ``where``
  does, so what the API documents is what a notebook types.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime
from pathlib import Path
from typing import Any, Protocol, TypeAlias
from urllib.parse import quote

import pandas as pd

from explorer import schemas, tables
from explorer.query import MAX_LIMIT, format_order

#: A channel's id or its token (name).
ChannelKey: TypeAlias = int | str
#: An image to upload: its bytes, or the path of a PNG or JPEG file.
Image: TypeAlias = bytes | str | os.PathLike[str]
#: A moment for an analytics range: a datetime (naive means UTC) or an ISO-8601 string.
Moment: TypeAlias = datetime | date | pd.Timestamp | str

#: Every analytics series ``analytics()`` knows, as the platform names them.
ANALYTICS_SERIES: tuple[str, ...] = tuple(schemas.ANALYTICS)
MANIFEST_KINDS = ("m3u8", "smil", "ftl", "light", "light2")
UPLOAD_KINDS = ("thumbnail", "badge", "banner")
#: Interactive game listings and the path each is served at below ``/interactive/games``.
GAME_LISTINGS = {
    "published": "",
    "owned": "/owned",
    "shared": "/shared",
    "editor": "/editor",
    "reviewing": "/reviewing",
}
#: Language listings and the path each is served at below ``/language/channels``.
LANGUAGE_LISTINGS = {"used": "", "active": "/active", "available": "/available"}


def present(**values: Any) -> dict[str, Any]:
    """The ``values`` that are not None: the optional query parameters or fields given."""
    return {k: v for k, v in values.items() if v is not None}


def _q(part: object) -> str:
    """One path segment, percent-quoted so an id or token can never change the path."""
    return quote(str(part), safe="")


def _choose(value: str, options: Iterable[str], what: str) -> str:
    """``value`` if it is one of ``options``, else ``ValueError`` listing them."""
    known = tuple(options)
    if value not in known:
        raise ValueError(f"Unknown {what} {value!r}; choose one of: {', '.join(known)}.")
    return value


def _moment(value: Moment | None) -> str | None:
    """An ISO-8601 timestamp for ``from``/``to``; text is sent as given, for the platform to
    judge. A naive datetime is taken as UTC, as the platform takes an offset-less timestamp."""
    if value is None or isinstance(value, str):
        return value
    stamp = pd.Timestamp(value)
    return (stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp).isoformat()


def _names(value: str | Iterable[str]) -> list[str]:
    """One name or several as a list (a bare string is one name, not its letters)."""
    return [value] if isinstance(value, str) else list(value)


async def _image_part(image: Image) -> tuple[str, bytes, str]:
    """The multipart ``file`` part for ``image``. The platform judges the type by the bytes,
    so none is claimed here; a file is read in a worker thread to keep the loop free."""
    if isinstance(image, bytes | bytearray | memoryview):
        return "image", bytes(image), "application/octet-stream"
    path = Path(image)
    return path.name, await asyncio.to_thread(path.read_bytes), "application/octet-stream"


def _emoticons(pack: Mapping[str, Any]) -> pd.DataFrame:
    """A pack's ``{code: {x, y, width, height}}`` as a frame indexed by code."""
    codes = pack.get("emoticons") or {}
    return tables.frame(
        [{"code": code, **place} for code, place in codes.items()], schemas.EMOTICON
    )


class Answer(Protocol):
    """The parts of an HTTP response the groups read (``httpx.Response`` has them); typed
    structurally so that the HTTP library stays at the transport edge (``rest.py``)."""

    @property
    def text(self) -> str: ...

    @property
    def content(self) -> bytes: ...


class Wire(Protocol):
    """What :class:`Groups` needs from the transport; ``AsyncClient`` provides it."""

    async def _send(
        self, method: str, path: str, *, params: Mapping[str, Any] | None = None
    ) -> Answer: ...

    async def _object(
        self,
        path: str,
        params: Mapping[str, Any] | None = None,
        *,
        method: str = "GET",
        json: Any = None,
        files: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]: ...

    async def _collect(
        self,
        path: str,
        params: Mapping[str, Any],
        *,
        size: int | None,
        pages: int | None,
        max_rows: int | None,
        progress: bool | None,
    ) -> list[dict[str, Any]]: ...


class Groups(Wire):
    """Every resource group's methods (see the module docstring for what they answer)."""

    # -- shapes -------------------------------------------------------------------------------

    async def _table(
        self,
        path: str,
        schema: schemas.Schema,
        params: Mapping[str, Any] | None = None,
        *,
        paged: bool = False,
        max_rows: int | None = None,
        progress: bool | None = None,
    ) -> pd.DataFrame:
        """A list endpoint as a frame; ``paged`` ones are fetched in the largest pages."""
        records = await self._collect(
            path,
            params or {},
            size=MAX_LIMIT if paged else None,
            pages=None,
            max_rows=max_rows,
            progress=progress,
        )
        return tables.frame(records, schema)

    async def _record(
        self,
        path: str,
        schema: schemas.Schema,
        params: Mapping[str, Any] | None = None,
        *,
        method: str = "GET",
        json: Any = None,
        files: Mapping[str, Any] | None = None,
    ) -> pd.DataFrame:
        """An endpoint answering one record, as a one-row frame."""
        body = await self._object(path, params, method=method, json=json, files=files)
        return tables.frame([body], schema)

    async def _upload(self, path: str, image: Image) -> pd.DataFrame:
        """POST ``image`` as multipart ``file``; the stored Resource as a one-row frame."""
        part = await _image_part(image)
        return await self._record(path, schemas.RESOURCE, method="POST", files={"file": part})

    # -- followers, roles, relationship -------------------------------------------------------

    async def followers(
        self, channel: ChannelKey, *, max_rows: int | None = None, progress: bool | None = None
    ) -> pd.DataFrame:
        """A channel's followers, newest first, indexed by user id, with ``followedAt``."""
        return await self._table(
            f"/channels/{_q(channel)}/follow",
            schemas.FOLLOWER,
            paged=True,
            max_rows=max_rows,
            progress=progress,
        )

    async def follow(self, channel: ChannelKey) -> pd.DataFrame:
        """Follow a channel (idempotent); the follow state and ``numFollowers`` as one row."""
        path = f"/channels/{_q(channel)}/follow"
        return await self._record(path, schemas.FOLLOW_STATE, method="PUT")

    async def unfollow(self, channel: ChannelKey) -> pd.DataFrame:
        """Stop following a channel (idempotent); the follow state as one row."""
        path = f"/channels/{_q(channel)}/follow"
        return await self._record(path, schemas.FOLLOW_STATE, method="DELETE")

    async def channel_users(
        self,
        channel: ChannelKey,
        *,
        role: str | None = None,
        max_rows: int | None = None,
        progress: bool | None = None,
    ) -> pd.DataFrame:
        """The owner and the holders of roles in a channel, indexed by user id, with ``roles``;
        ``role`` keeps one role's holders (bans and mutes are shown to moderators only)."""
        return await self._table(
            f"/channels/{_q(channel)}/users",
            schemas.CHANNEL_USER,
            present(role=role),
            paged=True,
            max_rows=max_rows,
            progress=progress,
        )

    async def set_roles(
        self,
        channel: ChannelKey,
        user_id: int,
        *,
        add: str | Iterable[str] = (),
        remove: str | Iterable[str] = (),
    ) -> pd.DataFrame:
        """Grant and revoke a user's roles in a channel (``Mod``, ``Subscriber``, ``Banned``,
        ``Muted``); takes effect in chat at once. The user with their roles as one row."""
        return await self._record(
            f"/channels/{_q(channel)}/users/{_q(user_id)}",
            schemas.CHANNEL_USER,
            method="PATCH",
            json={"add": _names(add), "remove": _names(remove)},
        )

    async def relationship(self, channel: ChannelKey, user_id: int | None = None) -> pd.DataFrame:
        """A user's roles in a channel and their follow (the caller's by default), as one row."""
        path = f"/channels/{_q(channel)}/relationship"
        return await self._record(path, schemas.RELATIONSHIP, present(user=user_id))

    # -- hosting and discovery ----------------------------------------------------------------

    async def hostee(self, channel: ChannelKey) -> pd.DataFrame:
        """Whom a channel hosts, as one row with the hosted channel's ``hostee.*`` columns."""
        return await self._record(f"/channels/{_q(channel)}/hostee", schemas.HOSTING)

    async def set_hostee(self, channel: ChannelKey, hostee_id: int) -> pd.DataFrame:
        """Host another channel (owner); the hosting as one row."""
        return await self._record(
            f"/channels/{_q(channel)}/hostee", schemas.HOSTING, method="PUT", json={"id": hostee_id}
        )

    async def stop_hosting(self, channel: ChannelKey) -> None:
        """Stop hosting (owner); harmless when not hosting."""
        await self._send("DELETE", f"/channels/{_q(channel)}/hostee")

    async def hosters(
        self, channel: ChannelKey, *, max_rows: int | None = None, progress: bool | None = None
    ) -> pd.DataFrame:
        """The channels hosting a channel, most watched first, like :meth:`channels`."""
        return await self._table(
            f"/channels/{_q(channel)}/hosters",
            schemas.CHANNEL,
            paged=True,
            max_rows=max_rows,
            progress=progress,
        )

    async def related_channels(
        self, channel: ChannelKey, *, max_rows: int | None = None, progress: bool | None = None
    ) -> pd.DataFrame:
        """Channels sharing a channel's type and/or language, best matches first."""
        return await self._table(
            f"/channels/{_q(channel)}/related",
            schemas.CHANNEL,
            paged=True,
            max_rows=max_rows,
            progress=progress,
        )

    # -- channel settings ---------------------------------------------------------------------

    async def update_channel(self, channel: ChannelKey, **changes: Any) -> pd.DataFrame:
        """Change a channel's editable fields (owner): ``name``, ``description``, ``typeId``,
        ``languageId``, ``audience``, ``vodsEnabled``. The channel afterwards, as one row."""
        path = f"/channels/{_q(channel)}"
        return await self._record(path, schemas.CHANNEL, method="PATCH", json=changes)

    async def reset_stream_key(self, channel: ChannelKey) -> str:
        """Issue a new stream key (owner), invalidating the old one; the new key."""
        path = f"/channels/{_q(channel)}"
        await self._send("DELETE", f"{path}/streamKey")
        return str((await self._object(path))["streamKey"])

    async def preferences(self, channel: ChannelKey) -> dict[str, Any]:
        """A channel's preferences (owner), keyed as the platform names them
        (``hosting:allow``, ``channel:slowchat``, ...)."""
        return await self._object(f"/channels/{_q(channel)}/preferences")

    async def set_preferences(
        self, channel: ChannelKey, changes: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Change some preferences (owner; None resets a key to its default); all of them
        afterwards. A mapping rather than keywords: the keys hold colons."""
        return await self._object(
            f"/channels/{_q(channel)}/preferences", method="POST", json=dict(changes)
        )

    async def emoticons(self, channel: ChannelKey) -> pd.DataFrame:
        """A channel's emoticon pack: each code's place on the sprite sheet, indexed by code."""
        return _emoticons(await self._object(f"/channels/{_q(channel)}/emoticons"))

    async def set_emoticons(
        self, channel: ChannelKey, changes: Mapping[str, Mapping[str, int] | None]
    ) -> pd.DataFrame:
        """Add or move emoticons (code to ``{x, y, width, height}``) or remove them (code to
        None) in a partnered channel's pack (owner); the pack afterwards."""
        pack = await self._object(
            f"/channels/{_q(channel)}/emoticons", method="PATCH", json={"emoticons": dict(changes)}
        )
        return _emoticons(pack)

    async def discord(self, channel: ChannelKey) -> dict[str, Any]:
        """A channel's Discord bot settings (owner or staff)."""
        return await self._object(f"/channels/{_q(channel)}/discord")

    async def set_discord(self, channel: ChannelKey, settings: Mapping[str, Any]) -> dict[str, Any]:
        """Replace a channel's Discord bot settings (owner; omitted keys take their defaults)."""
        return await self._object(
            f"/channels/{_q(channel)}/discord", method="PUT", json=dict(settings)
        )

    async def discord_channels(self, channel: ChannelKey) -> pd.DataFrame:
        """The text and voice channels of a channel's Discord guild (owner or staff)."""
        return await self._table(
            f"/channels/{_q(channel)}/discord/channels", schemas.DISCORD_CHANNEL
        )

    async def discord_roles(self, channel: ChannelKey) -> pd.DataFrame:
        """The roles of a channel's Discord guild (owner or staff)."""
        return await self._table(f"/channels/{_q(channel)}/discord/roles", schemas.DISCORD_ROLE)

    async def discord_invite(self, channel: ChannelKey) -> dict[str, Any]:
        """Whether the caller may get an invite to a channel's Discord, and their current one."""
        return await self._object(f"/channels/{_q(channel)}/discord/invite")

    async def new_discord_invite(self, channel: ChannelKey) -> dict[str, Any]:
        """A fresh Discord invite for the caller, replacing theirs, if the channel allows."""
        return await self._object(f"/channels/{_q(channel)}/discord/invite", method="POST")

    # -- partnership and suspension -----------------------------------------------------------

    async def partnership(self, channel: ChannelKey) -> pd.DataFrame:
        """A channel's partnership application (owner or staff), as one row."""
        return await self._record(f"/channels/{_q(channel)}/partnership/app", schemas.PARTNERSHIP)

    async def apply_for_partnership(self, channel: ChannelKey, message: str) -> pd.DataFrame:
        """Apply for partnership (owner) with a message of 20-2,000 characters."""
        return await self._record(
            f"/channels/{_q(channel)}/partnership/app",
            schemas.PARTNERSHIP,
            method="POST",
            json={"message": message},
        )

    async def partnership_codes(self, channel: ChannelKey) -> pd.DataFrame:
        """A partner's redeemable codes (owner or staff), indexed by id."""
        return await self._table(f"/channels/{_q(channel)}/partnership/codes", schemas.REDEEMABLE)

    async def suspend(self, channel: ChannelKey) -> pd.DataFrame:
        """Suspend a channel (staff): it leaves listings and goes offline. The channel."""
        path = f"/channels/{_q(channel)}/suspend"
        return await self._record(path, schemas.CHANNEL, method="POST")

    async def unsuspend(self, channel: ChannelKey) -> pd.DataFrame:
        """Lift a channel's suspension (staff). The channel."""
        path = f"/channels/{_q(channel)}/suspend"
        return await self._record(path, schemas.CHANNEL, method="DELETE")

    # -- media: recordings, manifests, images, transcodes -------------------------------------

    async def recordings(
        self,
        channel: ChannelKey,
        *,
        order: str | Iterable[str] | None = None,
        max_rows: int | None = None,
        progress: bool | None = None,
    ) -> pd.DataFrame:
        """A channel's recordings, newest first unless ``order`` (over ``id``, ``createdAt``,
        ``viewsTotal``, ``duration``) says otherwise, indexed by id; ``vods`` lists files."""
        return await self._table(
            f"/channels/{_q(channel)}/recordings",
            schemas.RECORDING,
            present(order=format_order(order)),
            paged=True,
            max_rows=max_rows,
            progress=progress,
        )

    async def manifest(self, channel: ChannelKey, kind: str = "m3u8") -> str:
        """A live channel's playback manifest as text: ``m3u8`` (HLS), ``smil``, or the JSON
        ``ftl``, ``light`` and ``light2``. Offline channels answer 404."""
        _choose(kind, MANIFEST_KINDS, "manifest kind")
        return (await self._send("GET", f"/channels/{_q(channel)}/manifest.{kind}")).text

    async def upload_image(self, channel: ChannelKey, kind: str, image: Image) -> pd.DataFrame:
        """Upload a channel's ``thumbnail``, ``badge`` or ``banner`` (owner; PNG or JPEG, given
        as bytes or a file path). The stored image as one row; ``url`` serves it."""
        _choose(kind, UPLOAD_KINDS, "upload kind")
        return await self._upload(f"/channels/{_q(channel)}/{kind}", image)

    async def banner(self, channel: ChannelKey) -> pd.DataFrame:
        """A channel's banner image record, as one row (404 when it has none)."""
        return await self._record(f"/channels/{_q(channel)}/banner", schemas.RESOURCE)

    async def remove_banner(self, channel: ChannelKey) -> None:
        """Remove a channel's banner (owner)."""
        await self._send("DELETE", f"/channels/{_q(channel)}/banner")

    async def image(self, resource_id: int) -> bytes:
        """The bytes of an uploaded image, by the id of its record."""
        return (await self._send("GET", f"/resources/{_q(resource_id)}")).content

    async def unlock_transcodes(self, channel: ChannelKey) -> pd.DataFrame:
        """Pay the owner's sparks to unlock lower-quality renditions (owner), as one row."""
        path = f"/channels/{_q(channel)}/transcodes/unlock"
        return await self._record(path, schemas.TRANSCODE_UNLOCK, method="POST")

    # -- analytics ----------------------------------------------------------------------------

    async def analytics(
        self,
        channel: ChannelKey,
        series: str,
        start: Moment | None = None,
        end: Moment | None = None,
        *,
        emoji: str | None = None,
    ) -> pd.DataFrame:
        """One analytics series of a channel (owner) with a UTC ``DatetimeIndex``.

        ``series`` is one of :data:`ANALYTICS_SERIES`: ``viewerSummary`` (daily peak, average,
        viewer-hours), ``viewers`` (hourly), ``viewersMetrics``, ``streamSessions``,
        ``streamHosts``, ``followers``, ``subscriptions``, ``subRevenue``, ``cpm``,
        ``sparkSpent``, ``emojiUsageRanks``, ``emojiUsage`` (``emoji`` keeps one emote),
        ``gameRanks``, ``gameRanksGlobal``. ``start``/``end`` bound the range (datetimes,
        naive meaning UTC, or ISO strings); the platform defaults to the last 7 days and allows
        at most 90.
        """
        schema = schemas.ANALYTICS[_choose(series, ANALYTICS_SERIES, "analytics series")]
        where = "viewers" if series == "viewerSummary" else f"tsdb/{series}"
        params = present(emoji=emoji, **{"from": _moment(start), "to": _moment(end)})
        records = await self._collect(
            f"/channels/{_q(channel)}/analytics/{where}",
            params,
            size=None,
            pages=None,
            max_rows=None,
            progress=None,
        )
        return tables.time_series(records, "time", schema)

    # -- chat presence ------------------------------------------------------------------------

    async def chat_users(
        self,
        channel: ChannelKey,
        *,
        prefix: str | None = None,
        max_rows: int | None = None,
        progress: bool | None = None,
    ) -> pd.DataFrame:
        """Signed-in users in a channel's chat now, by name, indexed by user id, with their
        roles; ``prefix`` keeps those whose name starts with it."""
        path = f"/chats/{_q(channel)}/users"
        return await self._table(
            f"{path}/search" if prefix is not None else path,
            schemas.CHAT_USER,
            present(username=prefix),
            paged=True,
            max_rows=max_rows,
            progress=progress,
        )

    async def chat_user(self, channel: ChannelKey, user_id: int) -> pd.DataFrame:
        """One user present in a channel's chat, as one row (404 when not there)."""
        return await self._record(f"/chats/{_q(channel)}/users/{_q(user_id)}", schemas.CHAT_USER)

    async def chat_friends(
        self, channel: ChannelKey, *, max_rows: int | None = None, progress: bool | None = None
    ) -> pd.DataFrame:
        """Users in a channel's chat whose channels the caller follows."""
        return await self._table(
            f"/chats/{_q(channel)}/friends",
            schemas.CHAT_USER,
            paged=True,
            max_rows=max_rows,
            progress=progress,
        )

    # -- confetti -----------------------------------------------------------------------------

    async def confetti(self, channel: ChannelKey) -> pd.DataFrame:
        """The confetti a channel may fire (platform-wide ones and its own), indexed by id."""
        return await self._table(f"/channels/{_q(channel)}/confetti", schemas.CONFETTI)

    async def create_confetti(
        self,
        name: str,
        particles: Sequence[Mapping[str, str]],
        *,
        channel_id: int | None = None,
        **settings: Any,
    ) -> pd.DataFrame:
        """Create a confetti for a channel (owner), or platform-wide without ``channel_id``
        (staff). ``particles`` are ``{"type": "color"|"emoji"|"image", "value": ...}``;
        ``settings`` may give ``count`` and ``durationMs``. The new confetti as one row."""
        body = {
            "name": name,
            "particles": list(particles),
            **present(channelId=channel_id),
            **settings,
        }
        return await self._record("/confetti", schemas.CONFETTI, method="PUT", json=body)

    async def update_confetti(self, confetti_id: int, **changes: Any) -> pd.DataFrame:
        """Change a confetti's ``name``, ``particles``, ``count`` or ``durationMs``."""
        path = f"/confetti/{_q(confetti_id)}"
        return await self._record(path, schemas.CONFETTI, method="PATCH", json=changes)

    async def delete_confetti(self, confetti_id: int) -> None:
        """Delete a confetti (its creator, its channel's owner or staff)."""
        await self._send("DELETE", f"/confetti/{_q(confetti_id)}")

    # -- interactive games, versions, hosts ---------------------------------------------------

    async def interactive_games(
        self,
        *,
        listing: str = "published",
        q: str | None = None,
        max_rows: int | None = None,
        progress: bool | None = None,
    ) -> pd.DataFrame:
        """Interactive games indexed by id: the ``published`` catalogue, or (signed in) the
        caller's ``owned``, ``shared`` (edited for others), ``editor`` (both) or, for staff,
        ``reviewing``; ``q`` searches names."""
        where = GAME_LISTINGS[_choose(listing, GAME_LISTINGS, "game listing")]
        return await self._table(
            f"/interactive/games{where}",
            schemas.GAME,
            present(q=q),
            paged=True,
            max_rows=max_rows,
            progress=progress,
        )

    async def interactive_game(self, game_id: int) -> pd.DataFrame:
        """One interactive game, as one row."""
        return await self._record(f"/interactive/games/{_q(game_id)}", schemas.GAME)

    async def create_game(self, name: str, **fields: Any) -> pd.DataFrame:
        """Create an interactive game owned by the caller; ``fields`` may give
        ``description``, ``controlVersion`` and ``installation``. The game as one row."""
        body = {"name": name, **fields}
        return await self._record("/interactive/games", schemas.GAME, method="POST", json=body)

    async def update_game(self, game_id: int, **changes: Any) -> pd.DataFrame:
        """Change a game's ``name``, ``description``, ``controlVersion`` or ``installation``
        (owner or editor); the game afterwards."""
        path = f"/interactive/games/{_q(game_id)}"
        return await self._record(path, schemas.GAME, method="PUT", json=changes)

    async def delete_game(self, game_id: int) -> None:
        """Delete a game with all its versions (owner or staff)."""
        await self._send("DELETE", f"/interactive/games/{_q(game_id)}")

    async def upload_game_cover(self, game_id: int, image: Image) -> pd.DataFrame:
        """Upload a game's cover (owner or editor; PNG or JPEG bytes or file path)."""
        return await self._upload(f"/interactive/games/{_q(game_id)}/cover", image)

    async def game_editors(self, game_id: int) -> pd.DataFrame:
        """A game's editors, indexed by user id."""
        return await self._table(f"/interactive/games/{_q(game_id)}/editors", schemas.GAME_EDITOR)

    async def add_game_editor(self, game_id: int, user_id: int) -> pd.DataFrame:
        """Let a user edit a game (owner); the new editor as one row."""
        return await self._record(
            f"/interactive/games/{_q(game_id)}/editors",
            schemas.GAME_EDITOR,
            method="POST",
            json={"userId": user_id},
        )

    async def remove_game_editor(self, game_id: int, user_id: int) -> None:
        """Remove a game's editor (owner), or stop editing it (the editor themself)."""
        await self._send("DELETE", f"/interactive/games/{_q(game_id)}/editors/{_q(user_id)}")

    async def game_versions(self, game_id: int) -> pd.DataFrame:
        """A game's versions, newest first, indexed by id (drafts only for its team)."""
        path = f"/interactive/games/{_q(game_id)}/versions"
        return await self._table(path, schemas.GAME_VERSION)

    async def game_version(self, version_id: int) -> pd.DataFrame:
        """One game version, as one row."""
        return await self._record(f"/interactive/versions/{_q(version_id)}", schemas.GAME_VERSION)

    async def create_version(self, game_id: int, version: str, **fields: Any) -> pd.DataFrame:
        """Add a draft ``major.minor.patch`` version to a game (owner or editor); ``fields``
        may give ``changelog``, ``installation``, ``download``, ``controlVersion`` and
        ``controls``. The version as one row."""
        return await self._record(
            "/interactive/versions",
            schemas.GAME_VERSION,
            method="POST",
            json={"gameId": game_id, "version": version, **fields},
        )

    async def update_version(self, version_id: int, **changes: Any) -> pd.DataFrame:
        """Change a draft's content and/or move its ``state`` (``pending`` submits it for
        review, ``draft`` withdraws it; staff publish or reject). The version afterwards."""
        path = f"/interactive/versions/{_q(version_id)}"
        return await self._record(path, schemas.GAME_VERSION, method="PUT", json=changes)

    async def delete_version(self, version_id: int) -> None:
        """Delete an unpublished version (owner or editor)."""
        await self._send("DELETE", f"/interactive/versions/{_q(version_id)}")

    async def interactive_hosts(self) -> pd.DataFrame:
        """The interactive hosts viewers join."""
        return await self._table("/interactive/hosts", schemas.INTERACTIVE_HOST)

    async def interactive_channel(self, channel: ChannelKey) -> pd.DataFrame:
        """The interactive game a channel runs, its version (``version.*``) and host address."""
        return await self._record(f"/interactive/{_q(channel)}", schemas.INTERACTIVE_CHANNEL)

    async def interactive_robot(self, channel: ChannelKey) -> pd.DataFrame:
        """Address and key for a channel's game client (owner), as one row."""
        return await self._record(f"/interactive/{_q(channel)}/robot", schemas.INTERACTIVE_ROBOT)

    # -- the caller's account: achievements, invoices, notifications, OAuth clients, profile --

    async def achievements(self) -> pd.DataFrame:
        """Every achievement indexed by slug; signed in, also ``earned`` and ``earnedAt``."""
        return await self._table("/achievements", schemas.ACHIEVEMENT)

    async def invoices(self) -> pd.DataFrame:
        """The caller's invoices, newest first, indexed by id."""
        return await self._table("/invoices", schemas.INVOICE)

    async def invoice(self, invoice_id: int) -> pd.DataFrame:
        """One invoice (the caller's own; staff may read any), as one row."""
        return await self._record(f"/invoices/{_q(invoice_id)}", schemas.INVOICE)

    async def capture_invoice(self, invoice_id: int) -> pd.DataFrame:
        """Capture a pending invoice, moving its sparks exactly once; the invoice afterwards."""
        path = f"/invoices/{_q(invoice_id)}/capture"
        return await self._record(path, schemas.INVOICE, method="POST")

    async def notifications(
        self, *, max_rows: int | None = None, progress: bool | None = None
    ) -> pd.DataFrame:
        """The caller's notifications, newest first, indexed by id; ``payload`` is an object."""
        return await self._table(
            "/notifications",
            schemas.NOTIFICATION,
            paged=True,
            max_rows=max_rows,
            progress=progress,
        )

    async def notification(self, notification_id: int) -> pd.DataFrame:
        """One of the caller's notifications, as one row."""
        return await self._record(f"/notifications/{_q(notification_id)}", schemas.NOTIFICATION)

    async def share_subscription(
        self, notification_id: int, *, shared: bool = True
    ) -> pd.DataFrame:
        """Share a subscription notification to the channel's chat, or take the share back
        (``shared=False``); the notification afterwards."""
        return await self._record(
            f"/notifications/{_q(notification_id)}/shareSub",
            schemas.NOTIFICATION,
            method="POST" if shared else "DELETE",
        )

    async def unsubscribe_email(self, category: str) -> pd.DataFrame:
        """Opt out of one category of notification e-mail (``all`` for every one); every
        opt-out held, indexed by category, with ``since``."""
        body = await self._object(
            "/notifications/emailUnsubscribe", method="POST", json={"category": category}
        )
        return tables.frame(body.get("unsubscribed") or [], schemas.EMAIL_OPT_OUT)

    async def update_user(self, user_id: int, **changes: Any) -> pd.DataFrame:
        """Change one's own ``bio`` (text or None) or ``social`` links; the user afterwards."""
        path = f"/users/{_q(user_id)}"
        return await self._record(path, schemas.USER, method="PATCH", json=changes)

    async def oauth_clients(self) -> pd.DataFrame:
        """The OAuth clients the caller registered, indexed by client id."""
        return await self._table("/oauth/clients", schemas.OAUTH_CLIENT)

    async def create_oauth_client(
        self,
        name: str,
        redirect_uris: str | Iterable[str],
        *,
        website: str | None = None,
        confidential: bool = False,
    ) -> pd.DataFrame:
        """Register an OAuth client; a ``confidential`` one gets its ``secret`` in this answer
        only. The client as one row."""
        body = {
            "name": name,
            "redirectUris": _names(redirect_uris),
            "confidential": confidential,
            **present(website=website),
        }
        return await self._record("/oauth/clients", schemas.OAUTH_CLIENT, method="POST", json=body)

    async def delete_oauth_client(self, client_id: str) -> None:
        """Delete one of the caller's OAuth clients."""
        await self._send("DELETE", f"/oauth/clients/{_q(client_id)}")

    # -- platform-wide: announcements, frontend versions, ingests, languages -----------------

    async def announce(self, message: str, *, level: str = "info") -> pd.DataFrame:
        """Announce to every user (staff), at ``level`` ``info``, ``warning`` or ``critical``;
        delivered as notifications. The announcement with its ``recipients`` as one row."""
        body = {"message": message, "level": level}
        return await self._record("/announcements", schemas.ANNOUNCEMENT, method="POST", json=body)

    async def frontend_versions(self, *, app: str | None = None) -> pd.DataFrame:
        """Released builds of each client app (or of ``app``), newest first, with ``current``."""
        return await self._table("/frontendVersions", schemas.FRONTEND_VERSION, present(app=app))

    async def ingests(self, *, protocol: str | None = None) -> pd.DataFrame:
        """Ingest servers with their load, indexed by name; ``protocol`` keeps those taking it."""
        return await self._table("/ingests", schemas.INGEST, present(protocol=protocol))

    async def best_ingest(self, *, protocol: str | None = None) -> pd.DataFrame:
        """The least-loaded ingest (taking ``protocol``), as one row."""
        return await self._record("/ingests/best", schemas.INGEST, present(protocol=protocol))

    async def languages(self, listing: str = "used") -> pd.DataFrame:
        """Languages with channel counts, indexed by id: those channels ``used`` (most channels
        first), those ``active`` now (most live viewers first) or all ``available``."""
        where = LANGUAGE_LISTINGS[_choose(listing, LANGUAGE_LISTINGS, "language listing")]
        return await self._table(f"/language/channels{where}", schemas.LANGUAGE)
