"""Every record an endpoint answers with beyond Channel, User and Type, declared once, and the
enumerations their fields take.

Rows name these records (``Endpoint.record``); the platform's API description derives its
components from them (``explorer.emulator.shapes.component``) and the toolkit its frame schemas
(``explorer.schemas``), so a new field is one row here. Pure data, in the fields' order (the
toolkit's column order).
"""

from __future__ import annotations

from typing import Any

from explorer.wire.records import CHANNEL, USER, Field, Record

#: What a notification tells of (``Notification.type``): the historical docs show ``follow``,
#: the others follow that spelling (the noun of the happening).
NOTIFICATION_TYPES: tuple[str, ...] = (
    "follow",
    "subscribe",
    "resubscribe",
    "host",
    "achievement",
    "announcement",
)
#: Where a partnership application stands.
PARTNERSHIP_STATUSES: tuple[str, ...] = ("pending", "accepted", "denied")
#: Whether a partner's code was redeemed.
REDEEMABLE_STATES: tuple[str, ...] = ("unredeemed", "redeemed")
#: A past broadcast's state.
RECORDING_STATES: tuple[str, ...] = ("PROCESSING", "AVAILABLE", "DELETED")
#: The files of a past broadcast.
VOD_FORMATS: tuple[str, ...] = ("hls", "raw", "thumbnail", "chat")
#: Where an interactive game's version stands: editors draft and submit, staff publish.
VERSION_STATES: tuple[str, ...] = ("draft", "pending", "published")
#: Whether an invoice was paid.
INVOICE_STATUSES: tuple[str, ...] = ("pending", "captured")
#: How urgent a staff announcement is.
ANNOUNCEMENT_LEVELS: tuple[str, ...] = ("info", "warning", "critical")
#: The client apps with releases.
FRONTEND_APPS: tuple[str, ...] = ("web", "xbox", "ios", "android")
#: The protocols an ingest server takes.
INGEST_PROTOCOLS: tuple[str, ...] = ("rtmp", "ftl")
#: The kinds of a Discord guild's channel.
DISCORD_CHANNEL_TYPES: tuple[str, ...] = ("text", "voice")
#: The images an upload may be.
UPLOAD_TYPES: tuple[str, ...] = ("image/png", "image/jpeg")

_STRINGS: dict[str, Any] = {"type": "array", "items": {"type": "string"}}
#: A channel's type, embedded (null when it has none).
_TYPE = Field("type", "object", nullable=True, of="Type")


def _text(name: str, longest: int, nullable: bool = False) -> Field:
    """A text field of at most ``longest`` characters."""
    return Field(name, "str", nullable=nullable, longest=longest)


def text_limits(fields: tuple[Field, ...]) -> dict[str, int]:
    """The longest value of each text field among ``fields`` that has a limit."""
    return {field.name: field.longest for field in fields if field.longest is not None}


ACHIEVEMENT = Record(
    "Achievement",
    (
        Field("slug", "str"),
        Field("name", "str"),
        Field("description", "str"),
        Field("sparks", "int", doc="Sparks credited when earned."),
        Field(
            "earned",
            "bool",
            optional=True,
            doc="Only for a signed-in caller with achievement:view:self.",
        ),
        Field("earnedAt", "time", nullable=True, optional=True),
    ),
    index="slug",
)

ANNOUNCEMENT = Record(
    "Announcement",
    (
        Field("id", "int"),
        Field("authorId", "int"),
        Field("message", "str"),
        Field("level", "category", choices=ANNOUNCEMENT_LEVELS),
        Field("createdAt", "time"),
        Field("recipients", "int", doc="How many users received it as a notification."),
    ),
    index="id",
)

BROADCAST = Record(
    "Broadcast",
    (
        Field("id", "str", schema={"format": "uuid"}),
        Field("channelId", "int"),
        Field("online", "bool"),
        Field("isTestStream", "bool"),
        Field("startedAt", "time"),
    ),
    index="id",
)

CHANNEL_RELATIONSHIP = Record(
    "ChannelRelationship",
    (
        Field("channelId", "int"),
        Field("userId", "int"),
        Field(
            "status",
            "object",
            of=Record(
                "",
                (
                    Field("roles", "object", schema=_STRINGS),
                    Field(
                        "follows",
                        "object",
                        nullable=True,
                        of=Record(
                            "",
                            (
                                Field("user", "int"),
                                Field("channel", "int"),
                                Field("createdAt", "time"),
                            ),
                        ),
                    ),
                ),
            ),
        ),
    ),
)

CHANNEL_USER = Record("ChannelUser", (*USER, Field("roles", "object", schema=_STRINGS)), index="id")

CHAT_USER = Record(
    "ChatUser",
    (
        Field("userId", "int"),
        Field("userName", "str"),
        Field("userRoles", "object", schema=_STRINGS),
    ),
    index="userId",
)

#: The longest name and the most particles a confetti has; its integer settings' (lowest,
#: highest, default); the kinds of particle.
CONFETTI_NAME_MOST = 50
CONFETTI_PARTICLES_MOST = 10
CONFETTI_LIMITS: dict[str, tuple[int, int, int]] = {
    "count": (1, 500, 100),
    "durationMs": (500, 15000, 3000),
}
PARTICLE_KINDS: tuple[str, ...] = ("color", "emoji", "image")

#: What a confetti's creator chooses (the rest the platform sets).
CONFETTI_SETTINGS: tuple[Field, ...] = (
    Field("name", "str", longest=CONFETTI_NAME_MOST, schema={"minLength": 1}),
    Field(
        "particles",
        "object",
        schema={
            "type": "array",
            "items": {
                "type": "object",
                "required": ["type", "value"],
                "properties": {
                    "type": {"type": "string", "enum": list(PARTICLE_KINDS)},
                    "value": {"type": "string"},
                },
            },
            "minItems": 1,
            "maxItems": CONFETTI_PARTICLES_MOST,
        },
    ),
    *(
        Field(name, "int", schema={"minimum": low, "maximum": high, "default": default})
        for name, (low, high, default) in CONFETTI_LIMITS.items()
    ),
)

CONFETTI = Record(
    "Confetti",
    (
        Field("id", "int"),
        Field("channelId", "int", nullable=True, doc="null: any"),
        Field("creatorId", "int"),
        *CONFETTI_SETTINGS,
        Field("createdAt", "time"),
        Field("updatedAt", "time"),
    ),
    index="id",
)

CURRENT_USER = Record(
    "CurrentUser",
    (
        *USER,
        Field("channel", "object", of=Record("", (*CHANNEL, _TYPE))),
        Field("groups", "object", schema={"type": "array", "items": {"type": "object"}}),
        Field("email", "str", sometimes=True),
        Field("preferences", "object", sometimes=True),
    ),
    index="id",
)

DISCORD_CHANNEL = Record(
    "DiscordChannel",
    (
        Field("id", "str"),
        Field("name", "str"),
        Field("type", "category", choices=DISCORD_CHANNEL_TYPES),
    ),
    index="id",
)

DISCORD_ROLE = Record(
    "DiscordRole", (Field("id", "str"), Field("name", "str"), Field("color", "int")), index="id"
)

FOLLOW_STATE = Record(
    "FollowState",
    (
        Field("channelId", "int"),
        Field("userId", "int"),
        Field("following", "bool"),
        Field("followedAt", "time", nullable=True),
        Field("numFollowers", "int"),
    ),
)

FOLLOWER = Record("Follower", (*USER, Field("followedAt", "time")), index="id")

FRONTEND_VERSION = Record(
    "FrontendVersion",
    (
        Field("id", "int"),
        Field("app", "category", choices=FRONTEND_APPS),
        Field("version", "str"),
        Field("commit", "str"),
        Field("releasedAt", "time"),
        Field("current", "bool", doc="The newest release of its app."),
    ),
    index="id",
)

HOSTING = Record(
    "Hosting",
    (
        Field("channelId", "int"),
        Field("hosteeId", "int", nullable=True),
        Field("hostee", "object", nullable=True, of="Channel"),
    ),
)

INGEST = Record(
    "Ingest",
    (
        Field("name", "str"),
        Field("host", "str"),
        Field("pingTest", "str", doc="wss:// address for latency tests"),
        Field(
            "protocols",
            "object",
            schema={
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"type": {"type": "string", "enum": list(INGEST_PROTOCOLS)}},
                },
            },
        ),
        Field("load", "float", doc="Live streams over capacity."),
    ),
    index="name",
)

#: What an interactive game's editors write.
GAME_TEXT_FIELDS: tuple[Field, ...] = (
    _text("name", 80),
    _text("description", 2000, nullable=True),
    _text("controlVersion", 16),
    _text("installation", 2000, nullable=True),
)

INTERACTIVE_GAME = Record(
    "InteractiveGame",
    (
        Field("id", "int"),
        Field("ownerId", "int"),
        *GAME_TEXT_FIELDS,
        Field("coverUrl", "str", nullable=True),
        Field("hasPublishedVersions", "bool"),
        Field("createdAt", "time"),
        Field("updatedAt", "time"),
    ),
    index="id",
)

INTERACTIVE_EDITOR = Record(
    "InteractiveEditor",
    (Field("userId", "int"), Field("username", "str"), Field("addedAt", "time")),
    index="userId",
)

#: What a version's editors write.
VERSION_CONTENT_FIELDS: tuple[Field, ...] = (
    _text("version", 32),
    _text("changelog", 5000, nullable=True),
    _text("installation", 2000, nullable=True),
    _text("download", 500, nullable=True),
    _text("controlVersion", 16),
    Field("controls", "object"),
)

INTERACTIVE_VERSION = Record(
    "InteractiveVersion",
    (
        Field("id", "int"),
        Field("gameId", "int"),
        Field("versionOrder", "int"),
        Field("state", "category", choices=VERSION_STATES),
        *VERSION_CONTENT_FIELDS,
        Field("createdAt", "time"),
        Field("updatedAt", "time"),
    ),
    index="id",
)

INTERACTIVE_HOST = Record("InteractiveHost", (Field("address", "str", doc="wss:// address"),))

INTERACTIVE_CHANNEL = Record(
    "InteractiveChannel",
    (
        Field("channelId", "int"),
        Field("interactive", "bool"),
        Field("gameId", "int", nullable=True),
        Field(
            "version",
            "object",
            nullable=True,
            of="InteractiveVersion",
            doc="The running version: the game's newest published one.",
        ),
        Field("address", "str", nullable=True, doc="Where viewers join"),
    ),
)

INTERACTIVE_ROBOT = Record(
    "InteractiveRobot",
    (
        Field("channelId", "int"),
        Field("gameId", "int"),
        Field("versionId", "int"),
        Field("address", "str"),
        Field("key", "str", doc="Stable for a channel and version"),
    ),
)

INVOICE = Record(
    "Invoice",
    (
        Field("id", "int"),
        Field("userId", "int"),
        Field("status", "category", choices=INVOICE_STATUSES),
        Field(
            "items",
            "object",
            schema={
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["name", "quantity", "sparks"],
                    "properties": {
                        "name": {"type": "string"},
                        "quantity": {"type": "integer"},
                        "sparks": {"type": "integer", "description": "+ credits, - charges"},
                    },
                },
            },
        ),
        Field("sparks", "int", doc="Net change of the balance on capture."),
        Field("createdAt", "time"),
        Field("updatedAt", "time"),
        Field("capturedAt", "time", nullable=True),
    ),
    index="id",
)

LANGUAGE_CHANNELS = Record(
    "LanguageChannels",
    (
        Field("id", "str", doc="ISO 639-1 code, as in Channel.languageId"),
        Field("name", "str"),
        Field("channels", "int", doc="Visible channels in the language."),
        Field("online", "int", doc="Of those, live now."),
        Field("viewersCurrent", "int", doc="Their live viewers."),
    ),
    index="id",
)

NOTIFICATION = Record(
    "Notification",
    (
        Field("id", "str", schema={"format": "uuid"}),
        Field("userId", "int"),
        Field("trigger", "str", doc="Always empty, as in the docs."),
        Field("type", "category", choices=NOTIFICATION_TYPES),
        Field("sentAt", "time"),
        Field(
            "payload",
            "object",
            doc="``type`` again, and who did what, where (differs by type); a subscription's "
            "also ``shared`` (shareSub).",
            schema={"required": ["type"]},
        ),
    ),
    index="id",
)

OAUTH_CLIENT = Record(
    "OAuthClient",
    (
        Field("id", "str"),
        Field("name", "str"),
        Field("website", "str", nullable=True),
        Field("ownerId", "int", nullable=True),
        Field("redirectUris", "object", schema=_STRINGS),
        Field("confidential", "bool"),
        Field("createdAt", "time"),
        Field("secret", "str", optional=True),
    ),
    index="id",
)

PARTNERSHIP_APPLICATION = Record(
    "PartnershipApplication",
    (
        Field("channelId", "int"),
        Field("status", "category", choices=PARTNERSHIP_STATUSES),
        Field("message", "str"),
        Field("followers", "int"),
        Field("viewersTotal", "int"),
        Field("createdAt", "time"),
        Field("updatedAt", "time"),
        Field("decidedAt", "time", nullable=True),
        Field("decidedBy", "int", nullable=True),
        Field("reason", "str", nullable=True),
    ),
)

VOD = Record(
    "Vod",
    (
        Field("id", "int"),
        Field("recordingId", "int"),
        Field("baseUrl", "str"),
        Field("format", "category", choices=VOD_FORMATS),
        Field(
            "data",
            "object",
            nullable=True,
            doc="Width, Height (and Fps, Bitrate in kbit/s for video), capitalized as the "
            "historical API sent them",
            schema={
                "properties": {
                    name: {"type": "integer"} for name in ("Width", "Height", "Fps", "Bitrate")
                }
            },
        ),
        Field("createdAt", "time"),
        Field("updatedAt", "time"),
    ),
    index="id",
)

RECORDING = Record(
    "Recording",
    (
        Field("id", "int"),
        Field("channelId", "int"),
        Field("name", "str"),
        Field("typeId", "int", nullable=True),
        Field("state", "category", choices=RECORDING_STATES),
        Field("viewsTotal", "int"),
        Field("duration", "float", doc="seconds"),
        Field("expiresAt", "time"),
        Field("createdAt", "time"),
        Field("updatedAt", "time"),
        Field(
            "vods",
            "object",
            schema={"type": "array", "items": {"$ref": "#/components/schemas/Vod"}},
        ),
    ),
    index="id",
)

REDEEMABLE = Record(
    "Redeemable",
    (
        Field("id", "int"),
        Field("ownerId", "int"),
        Field("state", "category", choices=REDEEMABLE_STATES),
        Field("code", "str"),
        Field("redeemedById", "int", nullable=True),
        Field("redeemedAt", "time", nullable=True),
        Field("createdAt", "time"),
        Field("updatedAt", "time"),
    ),
    index="id",
)

RESOURCE = Record(
    "Resource",
    (
        Field("id", "int"),
        Field("type", "category", doc="thumbnail, badge, banner, cover, ..."),
        Field("relid", "int", doc="id of the record it belongs to"),
        Field("url", "str", doc="path serving the bytes on this host"),
        Field("contentType", "category", choices=UPLOAD_TYPES),
        Field("size", "int", doc="bytes"),
        Field("createdAt", "time"),
    ),
    index="id",
)

TRANSCODE_UNLOCK = Record(
    "TranscodeUnlock",
    (
        Field("channelId", "int"),
        Field("hasTranscodes", "bool"),
        Field("sparksSpent", "int"),
        Field("sparks", "int", doc="the owner's sparks left"),
    ),
)

USER_WITH_CHANNEL = Record(
    "UserWithChannel",
    (
        *USER,
        Field(
            "channel",
            "object",
            nullable=True,
            schema={"allOf": [{"$ref": "#/components/schemas/Channel"}]},
        ),
    ),
    index="id",
)


def _point(name: str, *fields: Field) -> Record:
    """The record of one analytics series' points: ``time``, ``channel`` and its values."""
    return Record(name, (Field("time", "time"), Field("channel", "int"), *fields))


def _ints(*names: str, nullable: bool = False) -> tuple[Field, ...]:
    return tuple(Field(name, "int", nullable=nullable) for name in names)


#: The points of each analytics series (the rows under ``/channels/{id}/analytics`` name them).
ANALYTICS_POINTS: tuple[Record, ...] = (
    _point(
        "AnalyticViewerSummary",
        Field("peak", "int"),
        Field("average", "float"),
        *_ints("viewerHours", "hoursLive"),
    ),
    _point("AnalyticViewers", *_ints("anon", "authed")),
    _point(
        "AnalyticViewerMetric",
        *(Field(name, "category") for name in ("country", "browser", "platform")),
        Field("count", "int"),
    ),
    _point(
        "AnalyticStreamSession",
        Field("online", "bool"),
        Field("partnered", "bool"),
        Field("duration", "int", sometimes=True, doc="seconds; offline events only"),
        Field("type", "int", nullable=True, sometimes=True, doc="game id; offline events only"),
    ),
    _point("AnalyticStreamHost", *_ints("hoster", "hostee", nullable=True)),
    _point("AnalyticCounter", *_ints("total", "delta")),
    _point("AnalyticSubRevenue", Field("gateway", "category"), *_ints("count", "gross", "total")),
    _point("AnalyticCpm", *_ints("impressions", "payout")),
    _point("AnalyticSparks", Field("sparks", "int")),
    _point("AnalyticEmojiRank", Field("emoji", "category"), *_ints("count", "rank")),
    _point("AnalyticEmojiUsage", Field("emoji", "category"), Field("count", "int")),
    _point("AnalyticGameRank", *_ints("type", "rank", "streams", "views", "shared")),
)

#: Every record of this module by name.
RECORDS: dict[str, Record] = {
    record.name: record
    for record in (
        ACHIEVEMENT,
        ANNOUNCEMENT,
        BROADCAST,
        CHANNEL_RELATIONSHIP,
        CHANNEL_USER,
        CHAT_USER,
        CONFETTI,
        CURRENT_USER,
        DISCORD_CHANNEL,
        DISCORD_ROLE,
        FOLLOW_STATE,
        FOLLOWER,
        FRONTEND_VERSION,
        HOSTING,
        INGEST,
        INTERACTIVE_CHANNEL,
        INTERACTIVE_EDITOR,
        INTERACTIVE_GAME,
        INTERACTIVE_HOST,
        INTERACTIVE_ROBOT,
        INTERACTIVE_VERSION,
        INVOICE,
        LANGUAGE_CHANNELS,
        NOTIFICATION,
        OAUTH_CLIENT,
        PARTNERSHIP_APPLICATION,
        RECORDING,
        REDEEMABLE,
        RESOURCE,
        TRANSCODE_UNLOCK,
        USER_WITH_CHANNEL,
        VOD,
        *ANALYTICS_POINTS,
    )
}
