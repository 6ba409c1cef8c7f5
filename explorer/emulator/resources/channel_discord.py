"""A simulated Discord integration: each channel's guild, its bot settings, and invites.

No Discord is contacted. Every channel owns one simulated guild whose id, text and voice
channels and roles are a pure function of the world's seed and the channel id (like the rest of
the seeded world, identical on every run). The owner's bot settings are stored per channel and
may only name that guild's channels and roles. Viewers ask for invites; whether they get one
follows ``inviteSettings`` and their standing in the channel (``followers`` needs a follow,
``subscribers`` the Subscriber role; the channel's team always qualifies, banned users never).
Asking again replaces the caller's previous invite.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from typing import Any

from explorer.emulator import credentials
from explorer.emulator.access import ChannelRef, channel_ref, require_owner
from explorer.emulator.chat.roles import roles_of
from explorer.emulator.context import Context
from explorer.emulator.db import discord, follows
from explorer.emulator.policy import Handler, Route
from explorer.emulator.responses import ApiError, JSONResponse, bad_request
from explorer.emulator.world import iso
from explorer.wire import channel_routes as channel_wire
from explorer.wire.endpoint import Endpoint

INVITE_MODES = ("none", "everyone", "followers", "subscribers")
ROLE_KINDS = ("follower", "subscriber")
INVITE_TTL = 86400.0
MAX_GRACE_DAYS = 30
_TEAM = frozenset({"Owner", "Mod", "GlobalMod", "Staff", "Founder"})
_TEXT_NAMES = (
    "announcements",
    "stream-chat",
    "clips",
    "highlights",
    "memes",
    "off-topic",
    "art",
    "suggestions",
    "rules",
)
_VOICE_NAMES = ("Lounge", "Gaming", "Watch Party", "Music", "AFK")
_ROLE_NAMES = ("Moderators", "Subscribers", "Followers", "VIP", "Regulars", "Artists", "Bots")
DEFAULTS: dict[str, Any] = {
    "inviteSettings": "none",
    "inviteChannel": None,
    "liveChatChannel": None,
    "liveAnnounceChannel": None,
    "syncEmoteRoles": [],
    "roles": [],
}
#: Fields of the settings object a PUT may carry back (as read) but never changes.
READ_ONLY = frozenset({"channelId", "guildId", "updatedAt"})


@dataclass(frozen=True, slots=True)
class Guild:
    """A channel's simulated Discord guild."""

    id: str
    channels: tuple[dict[str, str], ...]
    roles: tuple[dict[str, Any], ...]

    def text_channels(self) -> set[str]:
        """Ids of the channels messages and invites can go to."""
        return {c["id"] for c in self.channels if c["type"] == "text"}

    def role_ids(self) -> set[str]:
        """Ids of the roles the bot may assign (every role but ``@everyone``)."""
        return {r["id"] for r in self.roles[1:]}


@cache
def guild(seed: int, channel_id: int) -> Guild:
    """The simulated guild of ``channel_id`` in the world of ``seed`` (Discord-style
    snowflake ids as strings; ``general`` and ``@everyone`` always exist)."""
    rng = random.Random(f"discord:{seed}:{channel_id}")

    def snowflake() -> str:
        return str(rng.randrange(10**17, 10**18))

    texts = ["general", *rng.sample(_TEXT_NAMES, rng.randint(2, 5))]
    voices = rng.sample(_VOICE_NAMES, rng.randint(1, 3))
    channels = [{"id": snowflake(), "name": n, "type": "text"} for n in texts]
    channels += [{"id": snowflake(), "name": n, "type": "voice"} for n in voices]
    names = ["@everyone", *rng.sample(_ROLE_NAMES, rng.randint(2, 5))]
    roles = [{"id": snowflake(), "name": n, "color": rng.randrange(0x1000000)} for n in names]
    return Guild(snowflake(), tuple(channels), tuple(roles))


def _guild(ctx: Context, channel_id: int) -> Guild:
    return guild(int(ctx.store.meta("seed") or 0), channel_id)


def _settings(ctx: Context, channel_id: int) -> dict[str, Any]:
    stored, updated = discord.settings(ctx.store, channel_id) or ({}, None)
    return {
        "channelId": channel_id,
        "guildId": _guild(ctx, channel_id).id,
        **DEFAULTS,
        **stored,
        "updatedAt": updated,
    }


def _text_channel(guild: Guild, body: dict[str, Any], name: str) -> str | None:
    value = body.get(name)
    if value is not None and (not isinstance(value, str) or value not in guild.text_channels()):
        raise bad_request(f"{name} must be the id of a text channel of the guild, or null.", name)
    return value


def _role_ids(guild: Guild, value: Any) -> list[str]:
    if not isinstance(value, list) or not all(
        isinstance(r, str) and r in guild.role_ids() for r in value
    ):
        raise bad_request(
            "syncEmoteRoles must list role ids of the guild (not @everyone).", "syncEmoteRoles"
        )
    if len(set(value)) != len(value):
        raise bad_request("syncEmoteRoles lists a role twice.", "syncEmoteRoles")
    return value


def _role_grants(guild: Guild, value: Any) -> list[dict[str, Any]]:
    problem = bad_request(
        f"roles must list {{roleId, type ({'/'.join(ROLE_KINDS)}), gracePeriod (0-"
        f"{MAX_GRACE_DAYS} days)}} for distinct roles of the guild (not @everyone).",
        "roles",
    )
    if not isinstance(value, list):
        raise problem
    grants = []
    for grant in value:
        if not isinstance(grant, dict) or set(grant) != {"roleId", "type", "gracePeriod"}:
            raise problem
        grace = grant["gracePeriod"]
        if (
            not isinstance(grant["roleId"], str)
            or grant["roleId"] not in guild.role_ids()
            or grant["type"] not in ROLE_KINDS
            or not isinstance(grace, int)
            or isinstance(grace, bool)
            or not 0 <= grace <= MAX_GRACE_DAYS
        ):
            raise problem
        grants.append({"roleId": grant["roleId"], "type": grant["type"], "gracePeriod": grace})
    if len({g["roleId"] for g in grants}) != len(grants):
        raise problem
    return grants


def _validated(guild: Guild, body: dict[str, Any]) -> dict[str, Any]:
    """Complete settings from a PUT body: every field sent or its default."""
    unknown = sorted(set(body) - set(DEFAULTS) - READ_ONLY)
    if unknown:
        raise bad_request(f"Unknown setting {unknown[0]!r}.", unknown[0], "unknown")
    mode = body.get("inviteSettings", DEFAULTS["inviteSettings"])
    if mode not in INVITE_MODES:
        raise bad_request(
            f"inviteSettings must be one of {', '.join(INVITE_MODES)}.", "inviteSettings"
        )
    settings = {
        "inviteSettings": mode,
        "inviteChannel": _text_channel(guild, body, "inviteChannel"),
        "liveChatChannel": _text_channel(guild, body, "liveChatChannel"),
        "liveAnnounceChannel": _text_channel(guild, body, "liveAnnounceChannel"),
        "syncEmoteRoles": _role_ids(guild, body.get("syncEmoteRoles", [])),
        "roles": _role_grants(guild, body.get("roles", [])),
    }
    if mode != "none" and settings["inviteChannel"] is None:
        raise bad_request("inviteChannel is required when invites are handed out.", "inviteChannel")
    return settings


async def get_settings(ctx: Context) -> dict[str, Any]:
    """GET /channels/{id}/discord: the bot settings (owner or staff)."""
    channel = channel_ref(ctx)
    require_owner(ctx, channel)
    return _settings(ctx, channel.id)


async def put_settings(ctx: Context) -> dict[str, Any]:
    """PUT /channels/{id}/discord: replace the bot settings (omitted fields take defaults)."""
    channel = channel_ref(ctx)
    require_owner(ctx, channel)
    settings = _validated(_guild(ctx, channel.id), await ctx.json_object())
    discord.set_settings(ctx.store, channel.id, settings, ctx.iso_now())
    return _settings(ctx, channel.id)


async def guild_channels(ctx: Context) -> list[dict[str, str]]:
    """GET /channels/{id}/discord/channels: the guild's text and voice channels (owner)."""
    channel = channel_ref(ctx)
    require_owner(ctx, channel)
    return list(_guild(ctx, channel.id).channels)


async def guild_roles(ctx: Context) -> list[dict[str, Any]]:
    """GET /channels/{id}/discord/roles: the guild's roles (owner)."""
    channel = channel_ref(ctx)
    require_owner(ctx, channel)
    return list(_guild(ctx, channel.id).roles)


def _refusal(ctx: Context, channel: ChannelRef, mode: str) -> str | None:
    """Why the caller may not have an invite under ``mode``, or None when they may."""
    user_id = ctx.user_id()
    roles = set(roles_of(ctx.store, channel.id, user_id))
    if "Banned" in roles:
        return "Banned users cannot get an invite."
    if mode == "none":
        return "This channel hands out no Discord invites."
    if mode == "everyone" or roles & _TEAM:
        return None
    if mode == "followers" and (
        "Subscriber" in roles or follows.followed_at(ctx.store, channel.id, user_id) is not None
    ):
        return None
    if mode == "subscribers" and "Subscriber" in roles:
        return None
    return f"Only {mode} of this channel can get an invite."


def _invite(ctx: Context, channel_id: int, settings: dict[str, Any]) -> dict[str, Any] | None:
    row = discord.invite(ctx.store, channel_id, ctx.user_id(), ctx.now)
    if row is None:
        return None
    code, created, expires = row
    return {
        "code": code,
        "url": f"https://discord.gg/{code}",
        "guildId": settings["guildId"],
        "channel": settings["inviteChannel"],
        "createdAt": created,
        "expiresAt": iso(datetime.fromtimestamp(expires, UTC)),
    }


async def invite_status(ctx: Context) -> dict[str, Any]:
    """GET /channels/{id}/discord/invite: whether the caller may get an invite, and theirs."""
    channel = channel_ref(ctx)
    settings = _settings(ctx, channel.id)
    refusal = _refusal(ctx, channel, settings["inviteSettings"])
    return {
        "channelId": channel.id,
        "inviteSettings": settings["inviteSettings"],
        "eligible": refusal is None,
        "reason": refusal,
        "invite": _invite(ctx, channel.id, settings) if refusal is None else None,
    }


async def create_invite(ctx: Context) -> JSONResponse:
    """POST /channels/{id}/discord/invite: a fresh invite for the caller, if they qualify."""
    channel = channel_ref(ctx)
    settings = _settings(ctx, channel.id)
    refusal = _refusal(ctx, channel, settings["inviteSettings"])
    if refusal is not None:
        raise ApiError(403, refusal)
    discord.replace_invite(
        ctx.store,
        credentials.new_token(5),
        channel.id,
        ctx.user_id(),
        ctx.iso_now(),
        ctx.now + INVITE_TTL,
    )
    return JSONResponse(_invite(ctx, channel.id, settings), status_code=201)


_STR = {"type": "string"}
_INT = {"type": "integer"}
_NULLABLE_STR = {"type": "string", "nullable": True}
_TIME = {"type": "string", "format": "date-time"}
_ROLE_GRANT = {
    "type": "object",
    "required": ["roleId", "type", "gracePeriod"],
    "properties": {
        "roleId": _STR,
        "type": {"type": "string", "enum": list(ROLE_KINDS)},
        "gracePeriod": {"type": "integer", "minimum": 0, "maximum": MAX_GRACE_DAYS},
    },
}
_SETTINGS_FIELDS: dict[str, Any] = {
    "inviteSettings": {"type": "string", "enum": list(INVITE_MODES)},
    "inviteChannel": _NULLABLE_STR,
    "liveChatChannel": _NULLABLE_STR,
    "liveAnnounceChannel": _NULLABLE_STR,
    "syncEmoteRoles": {"type": "array", "items": _STR},
    "roles": {"type": "array", "items": _ROLE_GRANT},
}
_INVITE = {"$ref": "#/components/schemas/DiscordInvite"}

SCHEMAS: dict[str, Any] = {
    "DiscordSettings": {
        "type": "object",
        "required": ["channelId", "guildId", *DEFAULTS, "updatedAt"],
        "properties": {
            "channelId": _INT,
            "guildId": _STR,
            **_SETTINGS_FIELDS,
            "updatedAt": {**_TIME, "nullable": True},
        },
    },
    "DiscordSettingsUpdate": {"type": "object", "properties": _SETTINGS_FIELDS},
    "DiscordInvite": {
        "type": "object",
        "required": ["code", "url", "guildId", "channel", "createdAt", "expiresAt"],
        "properties": {
            "code": _STR,
            "url": _STR,
            "guildId": _STR,
            "channel": _STR,
            "createdAt": _TIME,
            "expiresAt": _TIME,
        },
    },
    "DiscordInviteStatus": {
        "type": "object",
        "required": ["channelId", "inviteSettings", "eligible", "reason", "invite"],
        "properties": {
            "channelId": _INT,
            "inviteSettings": {"type": "string", "enum": list(INVITE_MODES)},
            "eligible": {"type": "boolean"},
            "reason": _NULLABLE_STR,
            "invite": {**_INVITE, "nullable": True},
        },
    },
}
_OWNER_READ_ERRORS = (401, 403, 404, 461)


def _guild_list(endpoint: Endpoint, handler: Handler, summary: str) -> Route:
    return Route(endpoint, handler, summary=summary, errors=_OWNER_READ_ERRORS)


routes = [
    Route(
        channel_wire.CHANNEL_DISCORD,
        get_settings,
        summary="The Discord bot settings (owner or staff)",
        errors=_OWNER_READ_ERRORS,
    ),
    Route(
        channel_wire.CHANNEL_SET_DISCORD,
        put_settings,
        summary="Replace the Discord bot settings (owner); omitted fields take defaults",
        body={"$ref": "#/components/schemas/DiscordSettingsUpdate"},
        errors=(400, 401, 403, 404, 413, 461),
    ),
    _guild_list(
        channel_wire.CHANNEL_DISCORD_CHANNELS,
        guild_channels,
        "The guild's channels (owner or staff)",
    ),
    _guild_list(
        channel_wire.CHANNEL_DISCORD_ROLES, guild_roles, "The guild's roles (owner or staff)"
    ),
    Route(
        channel_wire.CHANNEL_DISCORD_INVITE,
        invite_status,
        summary="Whether the caller may get a Discord invite, and their current one",
        errors=(401, 403, 404, 461),
    ),
    Route(
        channel_wire.CHANNEL_NEW_DISCORD_INVITE,
        create_invite,
        summary="A fresh Discord invite for the caller (replaces theirs), if inviteSettings allow",
        status=201,
        errors=(401, 403, 404, 461),
    ),
]
