"""The REST endpoints of one channel (``/channels/{channel}/...``, its chat and interactive
session): rows of the table in ``routes.py``, which explains them."""

from __future__ import annotations

from explorer.wire.endpoint import Endpoint, rows_of

# -- analytics ------------------------------------------------------------------------------

CHANNEL_ANALYTICS_VIEWER_SUMMARY = Endpoint(
    "GET",
    "/channels/{channel}/analytics/viewers",
    "channel-read",
    signin="user",
    scopes=("channel:analytics:self",),
    record="AnalyticViewerSummary",
    many=True,
)
CHANNEL_ANALYTICS_VIEWERS = Endpoint(
    "GET",
    "/channels/{channel}/analytics/tsdb/viewers",
    "channel-read",
    signin="user",
    scopes=("channel:analytics:self",),
    record="AnalyticViewers",
    many=True,
)
CHANNEL_ANALYTICS_VIEWERS_METRICS = Endpoint(
    "GET",
    "/channels/{channel}/analytics/tsdb/viewersMetrics",
    "channel-read",
    signin="user",
    scopes=("channel:analytics:self",),
    record="AnalyticViewerMetric",
    many=True,
)
CHANNEL_ANALYTICS_STREAM_SESSIONS = Endpoint(
    "GET",
    "/channels/{channel}/analytics/tsdb/streamSessions",
    "channel-read",
    signin="user",
    scopes=("channel:analytics:self",),
    record="AnalyticStreamSession",
    many=True,
)
CHANNEL_ANALYTICS_STREAM_HOSTS = Endpoint(
    "GET",
    "/channels/{channel}/analytics/tsdb/streamHosts",
    "channel-read",
    signin="user",
    scopes=("channel:analytics:self",),
    record="AnalyticStreamHost",
    many=True,
)
CHANNEL_ANALYTICS_FOLLOWERS = Endpoint(
    "GET",
    "/channels/{channel}/analytics/tsdb/followers",
    "channel-read",
    signin="user",
    scopes=("channel:analytics:self",),
    record="AnalyticCounter",
    many=True,
)

# -- analytics_earnings ---------------------------------------------------------------------

CHANNEL_ANALYTICS_SUBSCRIPTIONS = Endpoint(
    "GET",
    "/channels/{channel}/analytics/tsdb/subscriptions",
    "channel-read",
    signin="user",
    scopes=("channel:analytics:self",),
    record="AnalyticCounter",
    many=True,
)
CHANNEL_ANALYTICS_SUB_REVENUE = Endpoint(
    "GET",
    "/channels/{channel}/analytics/tsdb/subRevenue",
    "channel-read",
    signin="user",
    scopes=("channel:analytics:self",),
    record="AnalyticSubRevenue",
    many=True,
)
CHANNEL_ANALYTICS_CPM = Endpoint(
    "GET",
    "/channels/{channel}/analytics/tsdb/cpm",
    "channel-read",
    signin="user",
    scopes=("channel:analytics:self",),
    record="AnalyticCpm",
    many=True,
)
CHANNEL_ANALYTICS_SPARK_SPENT = Endpoint(
    "GET",
    "/channels/{channel}/analytics/tsdb/sparkSpent",
    "channel-read",
    signin="user",
    scopes=("channel:analytics:self",),
    record="AnalyticSparks",
    many=True,
)

# -- analytics_rankings ---------------------------------------------------------------------

CHANNEL_ANALYTICS_EMOJI_USAGE_RANKS = Endpoint(
    "GET",
    "/channels/{channel}/analytics/tsdb/emojiUsageRanks",
    "channel-read",
    signin="user",
    scopes=("channel:analytics:self",),
    record="AnalyticEmojiRank",
    many=True,
)
CHANNEL_ANALYTICS_EMOJI_USAGE = Endpoint(
    "GET",
    "/channels/{channel}/analytics/tsdb/emojiUsage",
    "channel-read",
    signin="user",
    scopes=("channel:analytics:self",),
    record="AnalyticEmojiUsage",
    many=True,
)
CHANNEL_ANALYTICS_GAME_RANKS = Endpoint(
    "GET",
    "/channels/{channel}/analytics/tsdb/gameRanks",
    "channel-read",
    signin="user",
    scopes=("channel:analytics:self",),
    record="AnalyticGameRank",
    many=True,
)
CHANNEL_ANALYTICS_GAME_RANKS_GLOBAL = Endpoint(
    "GET",
    "/channels/{channel}/analytics/tsdb/gameRanksGlobal",
    "channel-read",
    signin="user",
    scopes=("channel:analytics:self",),
    record="AnalyticGameRank",
    many=True,
)

# -- channel_broadcast ----------------------------------------------------------------------

CHANNEL_BROADCAST = Endpoint(
    "GET", "/channels/{channel}/broadcast", "channel-read", record="Broadcast"
)

# -- channel_discord ------------------------------------------------------------------------

CHANNEL_DISCORD = Endpoint(
    "GET",
    "/channels/{channel}/discord",
    "channel-read",
    signin="user",
    scopes=("channel:details:self",),
    record="DiscordSettings",
)
CHANNEL_SET_DISCORD = Endpoint(
    "PUT",
    "/channels/{channel}/discord",
    "channel-write",
    signin="user",
    scopes=("channel:update:self",),
    record="DiscordSettings",
)
CHANNEL_DISCORD_CHANNELS = Endpoint(
    "GET",
    "/channels/{channel}/discord/channels",
    "channel-read",
    signin="user",
    scopes=("channel:details:self",),
    record="DiscordChannel",
    many=True,
)
CHANNEL_DISCORD_ROLES = Endpoint(
    "GET",
    "/channels/{channel}/discord/roles",
    "channel-read",
    signin="user",
    scopes=("channel:details:self",),
    record="DiscordRole",
    many=True,
)
CHANNEL_DISCORD_INVITE = Endpoint(
    "GET",
    "/channels/{channel}/discord/invite",
    "channel-read",
    signin="user",
    scopes=("user:getDiscordInvite:self",),
    record="DiscordInviteStatus",
)
CHANNEL_NEW_DISCORD_INVITE = Endpoint(
    "POST",
    "/channels/{channel}/discord/invite",
    "channel-write",
    signin="user",
    scopes=("user:getDiscordInvite:self",),
    record="DiscordInvite",
)

# -- channel_emoticons ----------------------------------------------------------------------

CHANNEL_EMOTICONS = Endpoint(
    "GET", "/channels/{channel}/emoticons", "channel-read", signin="optional", record="EmoticonPack"
)
CHANNEL_SET_EMOTICONS = Endpoint(
    "PATCH",
    "/channels/{channel}/emoticons",
    "channel-write",
    signin="user",
    scopes=("channel:update:self",),
    record="EmoticonPack",
)

# -- channel_follows ------------------------------------------------------------------------

CHANNEL_FOLLOWERS = Endpoint(
    "GET",
    "/channels/{channel}/follow",
    "channel-read",
    signin="optional",
    record="Follower",
    many=True,
)
CHANNEL_FOLLOW = Endpoint(
    "PUT",
    "/channels/{channel}/follow",
    "channel-follow",
    signin="user",
    scopes=("channel:follow:self",),
    record="FollowState",
)
CHANNEL_FOLLOW_BY_POST = Endpoint(
    "POST",
    "/channels/{channel}/follow",
    "channel-follow",
    signin="user",
    scopes=("channel:follow:self",),
    record="FollowState",
)
CHANNEL_UNFOLLOW = Endpoint(
    "DELETE",
    "/channels/{channel}/follow",
    "channel-follow",
    signin="user",
    scopes=("channel:follow:self",),
    record="FollowState",
)

# -- channel_hosting ------------------------------------------------------------------------

CHANNEL_HOSTING = Endpoint(
    "GET", "/channels/{channel}/hostee", "channel-read", signin="optional", record="Hosting"
)
CHANNEL_SET_HOSTING = Endpoint(
    "PUT",
    "/channels/{channel}/hostee",
    "channel-write",
    signin="user",
    scopes=("channel:update:self",),
    record="Hosting",
)
CHANNEL_CLEAR_HOSTING = Endpoint(
    "DELETE",
    "/channels/{channel}/hostee",
    "channel-write",
    signin="user",
    scopes=("channel:update:self",),
)
CHANNEL_HOSTERS = Endpoint(
    "GET",
    "/channels/{channel}/hosters",
    "channel-read",
    signin="optional",
    record="Channel",
    many=True,
)

# -- channel_partnership --------------------------------------------------------------------

CHANNEL_PARTNERSHIP = Endpoint(
    "GET",
    "/channels/{channel}/partnership/app",
    "channel-read",
    signin="user",
    scopes=("channel:details:self",),
    record="PartnershipApplication",
)
CHANNEL_APPLY_FOR_PARTNERSHIP = Endpoint(
    "POST",
    "/channels/{channel}/partnership/app",
    "channel-write",
    signin="user",
    scopes=("channel:update:self",),
    record="PartnershipApplication",
)
CHANNEL_PARTNERSHIP_DENY = Endpoint(
    "POST",
    "/channels/{channel}/partnership/app/deny",
    "channel-write",
    signin="user",
    scopes=("channel:partnership",),
    record="PartnershipApplication",
)
CHANNEL_PARTNERSHIP_ACCEPT = Endpoint(
    "POST",
    "/channels/{channel}/partnership/app/accept",
    "channel-write",
    signin="user",
    scopes=("channel:partnership",),
    record="PartnershipApplication",
)
CHANNEL_PARTNERSHIP_CODES = Endpoint(
    "GET",
    "/channels/{channel}/partnership/codes",
    "channel-read",
    signin="user",
    scopes=("channel:details:self",),
    record="Redeemable",
    many=True,
)

# -- channel_preferences --------------------------------------------------------------------

CHANNEL_PREFERENCES = Endpoint(
    "GET",
    "/channels/{channel}/preferences",
    "channel-read",
    signin="user",
    scopes=("channel:details:self",),
    record="ChannelPreferences",
)
CHANNEL_SET_PREFERENCES = Endpoint(
    "POST",
    "/channels/{channel}/preferences",
    "channel-write",
    signin="user",
    scopes=("channel:update:self",),
    record="ChannelPreferences",
)

# -- channel_related ------------------------------------------------------------------------

CHANNEL_RELATED = Endpoint(
    "GET",
    "/channels/{channel}/related",
    "channel-read",
    signin="optional",
    record="Channel",
    many=True,
)

# -- channel_settings -----------------------------------------------------------------------

CHANNEL_REPLACE = Endpoint(
    "PUT",
    "/channels/{channel}",
    "channel-write",
    signin="user",
    scopes=("channel:update:self",),
    record="Channel",
)
CHANNEL_UPDATE = Endpoint(
    "PATCH",
    "/channels/{channel}",
    "channel-write",
    signin="user",
    scopes=("channel:update:self",),
    record="Channel",
)
CHANNEL_DROP_STREAM_KEY = Endpoint(
    "DELETE",
    "/channels/{channel}/streamKey",
    "channel-write",
    signin="user",
    scopes=("channel:streamKey:self",),
)

# -- channel_suspension ---------------------------------------------------------------------

CHANNEL_SUSPEND = Endpoint(
    "POST",
    "/channels/{channel}/suspend",
    "channel-write",
    signin="user",
    scopes=("user:act_as",),
    record="Channel",
)
CHANNEL_UNSUSPEND = Endpoint(
    "DELETE",
    "/channels/{channel}/suspend",
    "channel-write",
    signin="user",
    scopes=("user:act_as",),
    record="Channel",
)

# -- channel_users --------------------------------------------------------------------------

CHANNEL_USERS = Endpoint(
    "GET",
    "/channels/{channel}/users",
    "channel-read",
    signin="optional",
    record="ChannelUser",
    many=True,
)
CHANNEL_SET_ROLES = Endpoint(
    "PATCH",
    "/channels/{channel}/users/{user}",
    "channel-write",
    signin="user",
    record="ChannelUser",
)
CHANNEL_RELATIONSHIP = Endpoint(
    "GET",
    "/channels/{channel}/relationship",
    "channel-read",
    signin="optional",
    record="ChannelRelationship",
)

# -- channels -------------------------------------------------------------------------------

CHANNEL = Endpoint(
    "GET", "/channels/{channel}", "channel-read", signin="optional", record="Channel"
)
CHANNEL_DETAILS = Endpoint(
    "GET", "/channels/{channel}/details", "channel-read", signin="optional", record="Channel"
)
#: The older spelling of ``/details`` that the official Java client (6.0.0) still sends.
CHANNEL_DETAILED = Endpoint(
    "GET", "/channels/{channel}/detailed", "channel-read", signin="optional", record="Channel"
)

# -- chats ----------------------------------------------------------------------------------

CHANNEL_CHAT_DETAILS = Endpoint(
    "GET", "/chats/{channel}", "chats", signin="optional", record="ChatDetails"
)

# -- chatters -------------------------------------------------------------------------------

CHANNEL_CHAT_FRIENDS = Endpoint(
    "GET",
    "/chats/{channel}/friends",
    "chats",
    signin="user",
    scopes=("chat:connect",),
    record="ChatUser",
    many=True,
)
CHANNEL_CHATTERS = Endpoint(
    "GET", "/chats/{channel}/users", "chats", signin="optional", record="ChatUser", many=True
)
CHANNEL_FIND_CHATTERS = Endpoint(
    "GET", "/chats/{channel}/users/search", "chats", signin="optional", record="ChatUser", many=True
)
CHANNEL_CHATTER = Endpoint(
    "GET", "/chats/{channel}/users/{user}", "chats", signin="optional", record="ChatUser"
)

# -- confetti -------------------------------------------------------------------------------

CHANNEL_CONFETTI = Endpoint(
    "GET",
    "/channels/{channel}/confetti",
    "channel-read",
    signin="optional",
    record="Confetti",
    many=True,
)

# -- interactive_hosts ----------------------------------------------------------------------

CHANNEL_INTERACTIVE = Endpoint(
    "GET", "/interactive/{channel}", "channel-read", signin="optional", record="InteractiveChannel"
)
CHANNEL_INTERACTIVE_ROBOT = Endpoint(
    "GET",
    "/interactive/{channel}/robot",
    "channel-read",
    signin="user",
    scopes=("interactive:robot:self",),
    record="InteractiveRobot",
)

# -- manifests ------------------------------------------------------------------------------

CHANNEL_MANIFEST_M3U8 = Endpoint("GET", "/channels/{channel}/manifest.m3u8", "channel-read")
CHANNEL_MANIFEST_SMIL = Endpoint("GET", "/channels/{channel}/manifest.smil", "channel-read")
CHANNEL_MANIFEST_FTL = Endpoint(
    "GET", "/channels/{channel}/manifest.ftl", "channel-read", record="FtlManifest"
)
CHANNEL_MANIFEST_LIGHT = Endpoint(
    "GET", "/channels/{channel}/manifest.light", "channel-read", record="LightManifest"
)
CHANNEL_MANIFEST_LIGHT2 = Endpoint(
    "GET", "/channels/{channel}/manifest.light2", "channel-read", record="Light2Manifest"
)

# -- recordings -----------------------------------------------------------------------------

CHANNEL_RECORDINGS = Endpoint(
    "GET",
    "/channels/{channel}/recordings",
    "channel-read",
    signin="optional",
    record="Recording",
    many=True,
)

# -- transcodes -----------------------------------------------------------------------------

CHANNEL_UNLOCK_TRANSCODES = Endpoint(
    "POST",
    "/channels/{channel}/transcodes/unlock",
    "channel-write",
    signin="user",
    scopes=("channel:update:self",),
    record="TranscodeUnlock",
)

# -- uploads --------------------------------------------------------------------------------

CHANNEL_SET_THUMBNAIL = Endpoint(
    "POST",
    "/channels/{channel}/thumbnail",
    "upload",
    signin="user",
    scopes=("channel:update:self",),
    record="Resource",
)
CHANNEL_SET_BADGE = Endpoint(
    "POST",
    "/channels/{channel}/badge",
    "upload",
    signin="user",
    scopes=("channel:update:self",),
    record="Resource",
)
CHANNEL_SET_BANNER = Endpoint(
    "POST",
    "/channels/{channel}/banner",
    "upload",
    signin="user",
    scopes=("channel:update:self",),
    record="Resource",
)
CHANNEL_BANNER = Endpoint("GET", "/channels/{channel}/banner", "channel-read", record="Resource")
CHANNEL_CLEAR_BANNER = Endpoint(
    "DELETE",
    "/channels/{channel}/banner",
    "channel-write",
    signin="user",
    scopes=("channel:update:self",),
)


# -- chats ----------------------------------------------------------------------------------

CHANNEL_ANONYMOUS_CHAT_DETAILS = Endpoint(
    "GET", "/chats/{channel}/anonymous", "chats", record="ChatDetails"
)

#: The rows above, in declaration order.
TABLE: tuple[Endpoint, ...] = rows_of(list(globals().values()))
