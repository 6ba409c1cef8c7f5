"""Column declarations per resource: what each REST record's frame looks like.

A :class:`Schema` names a resource's fields in display order with their kinds; ``rest/tables.py``
turns records into DataFrames driven by these declarations. Pure data: no pandas here, so
adding a resource's shape is one declaration in this module.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TypeAlias, Union

from explorer.wire import records
from explorer.wire.kinds import Kind

#: How a field's values become a column: a kind (``explorer.wire.kinds``, which ``core/columns.py``
#: maps to a dtype), or an embedded object's schema.
Spec: TypeAlias = Union[Kind, "Schema"]


@dataclass(frozen=True, slots=True)
class Schema:
    """The declared shape of one resource: its fields in display order and their kinds.

    A field whose spec is another :class:`Schema` is an embedded object, flattened with its
    name as prefix. ``categories`` fixes the category order of an enum column (values outside
    it are still kept); ``optional`` fields appear only when present.
    """

    fields: Mapping[str, Spec]
    index: str | None = None
    categories: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    optional: frozenset[str] = frozenset()


TYPE = Schema({field.name: field.kind for field in records.TYPE}, index="id")
USER = Schema({field.name: field.kind for field in records.USER}, index="id")

#: A rate-limit bucket as the client knows it (``api.budget()``): from the answers' headers,
#: else the bucket table (see ``pacing.Pacer.budget``).
BUDGET = Schema(
    {
        "bucket": "str",
        "limit": "int",
        "remaining": "int",
        "resets": "seconds",
        "in_flight": "int",
        "reported": "bool",
        "unlimited": "bool",
    },
    index="bucket",
)

#: A user with their channel (``GET /users/search``): the channel as an object.
USER_WITH_CHANNEL = Schema({**USER.fields, "channel": "object"}, index="id")

_CHANNEL_FIELDS: dict[str, Spec] = {
    field.name: field.kind for field in (*records.CHANNEL, *records.CHANNEL_PRIVATE)
}
_AUDIENCES = {field.name: field.choices for field in records.CHANNEL if field.choices}
_PRIVATE = frozenset(field.name for field in records.CHANNEL_PRIVATE)

#: A channel as listed and fetched: with its ``type`` and owner ``user`` embedded.
CHANNEL = Schema(
    {**_CHANNEL_FIELDS, "type": TYPE, "user": USER},
    index="id",
    categories=_AUDIENCES,
    optional=_PRIVATE,
)

#: ``GET /users/current``: the user with their own channel, groups, email and preferences.
CURRENT_USER = Schema(
    {
        **USER.fields,
        "channel": Schema(_CHANNEL_FIELDS, categories=_AUDIENCES, optional=_PRIVATE),
        "groups": "object",
        "email": "str",
        "preferences": "object",
    },
    index="id",
)

#: A user with the time they followed a channel (``GET /channels/{id}/follow``).
FOLLOWER = Schema({**USER.fields, "followedAt": "time"}, index="id")

#: The caller's follow of a channel after following or unfollowing it.
FOLLOW_STATE = Schema(
    {
        "channelId": "int",
        "userId": "int",
        "following": "bool",
        "followedAt": "time",
        "numFollowers": "int",
    }
)

#: Whom a channel hosts: ``hostee`` is the hosted channel (null columns when not hosting).
HOSTING = Schema({"channelId": "int", "hosteeId": "int", "hostee": CHANNEL})

#: A user with their roles in one channel (``Owner``, ``Mod``, ``Subscriber``, ...).
CHANNEL_USER = Schema({**USER.fields, "roles": "object"}, index="id")

#: One user's standing in a channel: roles and follow.
RELATIONSHIP = Schema(
    {
        "channelId": "int",
        "userId": "int",
        "status": Schema(
            {
                "roles": "object",
                "follows": Schema({"user": "int", "channel": "int", "createdAt": "time"}),
            }
        ),
    }
)

#: One emoticon of a channel's pack: its code and place on the sprite sheet.
EMOTICON = Schema(
    {"code": "str", "x": "int", "y": "int", "width": "int", "height": "int"}, index="code"
)

#: A channel's partnership application.
PARTNERSHIP = Schema(
    {
        "channelId": "int",
        "status": "category",
        "message": "str",
        "followers": "int",
        "viewersTotal": "int",
        "createdAt": "time",
        "updatedAt": "time",
        "decidedAt": "time",
        "decidedBy": "int",
        "reason": "str",
    },
    categories={"status": ("pending", "accepted", "denied")},
)

#: A partner's redeemable code.
REDEEMABLE = Schema(
    {
        "id": "int",
        "ownerId": "int",
        "state": "category",
        "code": "str",
        "redeemedById": "int",
        "redeemedAt": "time",
        "createdAt": "time",
        "updatedAt": "time",
    },
    index="id",
    categories={"state": ("unredeemed", "redeemed")},
)

#: A text or voice channel, or a role, of a channel's (simulated) Discord guild.
DISCORD_CHANNEL = Schema({"id": "str", "name": "str", "type": "category"}, index="id")
DISCORD_ROLE = Schema({"id": "str", "name": "str", "color": "int"}, index="id")

#: A past broadcast; ``vods`` lists its files (HLS, raw, thumbnail, chat) as objects.
RECORDING = Schema(
    {
        "id": "int",
        "channelId": "int",
        "name": "str",
        "typeId": "int",
        "state": "category",
        "viewsTotal": "int",
        "duration": "float",
        "expiresAt": "time",
        "createdAt": "time",
        "updatedAt": "time",
        "vods": "object",
    },
    index="id",
    categories={"state": ("PROCESSING", "AVAILABLE", "DELETED")},
)

#: A live channel's current broadcast: ``id`` stays the same while it stays live.
BROADCAST = Schema(
    {
        "id": "str",
        "channelId": "int",
        "online": "bool",
        "isTestStream": "bool",
        "startedAt": "time",
    },
    index="id",
)

#: An uploaded image (thumbnail, badge, banner, game cover); ``url`` serves its bytes.
RESOURCE = Schema(
    {
        "id": "int",
        "type": "category",
        "relid": "int",
        "url": "str",
        "contentType": "category",
        "size": "int",
        "createdAt": "time",
    },
    index="id",
)

#: The outcome of unlocking transcodes: the channel's flag and the owner's sparks.
TRANSCODE_UNLOCK = Schema(
    {"channelId": "int", "hasTranscodes": "bool", "sparksSpent": "int", "sparks": "int"}
)

#: A signed-in user present in a channel's chat, with their roles there.
CHAT_USER = Schema({"userId": "int", "userName": "str", "userRoles": "object"}, index="userId")

#: An achievement; ``earned``/``earnedAt`` only for a signed-in caller.
ACHIEVEMENT = Schema(
    {
        "slug": "str",
        "name": "str",
        "description": "str",
        "sparks": "int",
        "earned": "bool",
        "earnedAt": "time",
    },
    index="slug",
    optional=frozenset({"earned", "earnedAt"}),
)

_LEVELS = {"level": ("info", "warning", "critical")}

#: A staff announcement and how many users it reached.
ANNOUNCEMENT = Schema(
    {
        "id": "int",
        "authorId": "int",
        "message": "str",
        "level": "category",
        "createdAt": "time",
        "recipients": "int",
    },
    index="id",
    categories=_LEVELS,
)

#: A confetti burst; ``channelId`` is missing for platform-wide ones.
CONFETTI = Schema(
    {
        "id": "int",
        "channelId": "int",
        "creatorId": "int",
        "name": "str",
        "particles": "object",
        "count": "int",
        "durationMs": "int",
        "createdAt": "time",
        "updatedAt": "time",
    },
    index="id",
)

#: A released build of a client app.
FRONTEND_VERSION = Schema(
    {
        "id": "int",
        "app": "category",
        "version": "str",
        "commit": "str",
        "releasedAt": "time",
        "current": "bool",
    },
    index="id",
    categories={"app": ("web", "xbox", "ios", "android")},
)

#: An ingest server and its current load (share of capacity in use), indexed by name.
INGEST = Schema(
    {"name": "str", "host": "str", "pingTest": "str", "protocols": "object", "load": "float"},
    index="name",
)

_GAME_FIELDS: dict[str, Spec] = {
    "id": "int",
    "ownerId": "int",
    "name": "str",
    "description": "str",
    "controlVersion": "str",
    "installation": "str",
    "coverUrl": "str",
    "hasPublishedVersions": "bool",
    "createdAt": "time",
    "updatedAt": "time",
}

#: An interactive game.
GAME = Schema(_GAME_FIELDS, index="id")

#: An editor of an interactive game.
GAME_EDITOR = Schema({"userId": "int", "username": "str", "addedAt": "time"}, index="userId")

_VERSION_STATES = {"state": ("draft", "pending", "published")}

#: A version of an interactive game; ``controls`` is the game's scene tree as an object.
GAME_VERSION = Schema(
    {
        "id": "int",
        "gameId": "int",
        "versionOrder": "int",
        "state": "category",
        "version": "str",
        "changelog": "str",
        "installation": "str",
        "download": "str",
        "controlVersion": "str",
        "controls": "object",
        "createdAt": "time",
        "updatedAt": "time",
    },
    index="id",
    categories=_VERSION_STATES,
)

#: An interactive host viewers join.
INTERACTIVE_HOST = Schema({"address": "str"})

#: The interactive game a channel runs: its newest published ``version`` and the address.
INTERACTIVE_CHANNEL = Schema(
    {
        "channelId": "int",
        "interactive": "bool",
        "gameId": "int",
        "version": Schema(GAME_VERSION.fields, categories=_VERSION_STATES),
        "address": "str",
    }
)

#: Where and with which key a channel's game client (the robot) connects.
INTERACTIVE_ROBOT = Schema(
    {"channelId": "int", "gameId": "int", "versionId": "int", "address": "str", "key": "str"}
)

#: A purchase in sparks; ``items`` lists its lines as objects, ``sparks`` is their net.
INVOICE = Schema(
    {
        "id": "int",
        "userId": "int",
        "status": "category",
        "items": "object",
        "sparks": "int",
        "createdAt": "time",
        "updatedAt": "time",
        "capturedAt": "time",
    },
    index="id",
    categories={"status": ("pending", "captured")},
)

#: A language with its channel counts, indexed by language id.
LANGUAGE = Schema(
    {"id": "str", "name": "str", "channels": "int", "online": "int", "viewersCurrent": "int"},
    index="id",
)

#: A notification (the historical docs' shape); ``payload`` (``type`` again, and who did what,
#: where) differs by type, so stays an object.
NOTIFICATION = Schema(
    {
        "id": "str",
        "userId": "int",
        "trigger": "str",
        "type": "category",
        "sentAt": "time",
        "payload": "object",
    },
    index="id",
    categories={
        "type": ("follow", "subscribe", "resubscribe", "host", "achievement", "announcement")
    },
)

#: A category of notification e-mail the user opted out of, and since when.
EMAIL_OPT_OUT = Schema({"category": "str", "since": "time"}, index="category")

#: An OAuth client; ``secret`` appears once, in the answer that registered a confidential one.
OAUTH_CLIENT = Schema(
    {
        "id": "str",
        "name": "str",
        "website": "str",
        "ownerId": "int",
        "redirectUris": "object",
        "confidential": "bool",
        "createdAt": "time",
        "secret": "str",
    },
    index="id",
    optional=frozenset({"secret"}),
)


def _series(**fields: Kind) -> Schema:
    """The point of an analytics series: ``time``, ``channel`` and its values."""
    return Schema({"time": "time", "channel": "int", **fields})


_COUNTER = _series(total="int", delta="int")
_GAME_RANK = _series(type="int", rank="int", streams="int", views="int", shared="int")

#: Every analytics series by name: ``viewerSummary`` is ``/analytics/viewers`` (daily), the
#: others are ``/analytics/tsdb/{name}``. Points are hourly, daily or events (see the platform).
ANALYTICS: dict[str, Schema] = {
    "viewerSummary": _series(peak="int", average="float", viewerHours="int", hoursLive="int"),
    "viewers": _series(anon="int", authed="int"),
    "viewersMetrics": _series(
        country="category", browser="category", platform="category", count="int"
    ),
    "streamSessions": _series(online="bool", partnered="bool", duration="int", type="int"),
    "streamHosts": _series(hoster="int", hostee="int"),
    "followers": _COUNTER,
    "subscriptions": _COUNTER,
    "subRevenue": _series(gateway="category", count="int", gross="int", total="int"),
    "cpm": _series(impressions="int", payout="int"),
    "sparkSpent": _series(sparks="int"),
    "emojiUsageRanks": _series(emoji="category", count="int", rank="int"),
    "emojiUsage": _series(emoji="category", count="int"),
    "gameRanks": _GAME_RANK,
    "gameRanksGlobal": _GAME_RANK,
}

#: Anything without a declared schema: every field inferred, ``id`` the index when present.
GENERIC = Schema({}, index="id")

#: The schema of each record the platform names (``explorer.wire`` rows' ``record``): what an
#: endpoint's answer becomes unless its method says otherwise.
RECORDS: dict[str, Schema] = {
    "Achievement": ACHIEVEMENT,
    "Announcement": ANNOUNCEMENT,
    "Channel": CHANNEL,
    "Broadcast": BROADCAST,
    "ChannelRelationship": RELATIONSHIP,
    "ChannelUser": CHANNEL_USER,
    "ChatUser": CHAT_USER,
    "Confetti": CONFETTI,
    "CurrentUser": CURRENT_USER,
    "DiscordChannel": DISCORD_CHANNEL,
    "DiscordRole": DISCORD_ROLE,
    "FollowState": FOLLOW_STATE,
    "Follower": FOLLOWER,
    "FrontendVersion": FRONTEND_VERSION,
    "Hosting": HOSTING,
    "Ingest": INGEST,
    "InteractiveChannel": INTERACTIVE_CHANNEL,
    "InteractiveEditor": GAME_EDITOR,
    "InteractiveGame": GAME,
    "InteractiveHost": INTERACTIVE_HOST,
    "InteractiveRobot": INTERACTIVE_ROBOT,
    "InteractiveVersion": GAME_VERSION,
    "Invoice": INVOICE,
    "LanguageChannels": LANGUAGE,
    "Notification": NOTIFICATION,
    "OAuthClient": OAUTH_CLIENT,
    "PartnershipApplication": PARTNERSHIP,
    "Recording": RECORDING,
    "Redeemable": REDEEMABLE,
    "Resource": RESOURCE,
    "TranscodeUnlock": TRANSCODE_UNLOCK,
    "Type": TYPE,
    "User": USER,
    "UserWithChannel": USER_WITH_CHANNEL,
}


def of_record(record: str) -> Schema:
    """The schema of the platform's ``record`` (:data:`GENERIC` when none is declared)."""
    return RECORDS.get(record, GENERIC)
