"""Every REST endpoint once, but those of one channel (``channel_routes.py``): the table
both halves bind to.

The platform serves each row (``explorer.emulator.policy.Route`` binds it to a handler and its
OpenAPI details; the comments name the resource module) and the toolkit calls them
(``explorer.rest.endpoints`` binds a row to a handle method), so neither restates a path, a bucket,
a sign-in level or a scope; ``tests/test_rest_surface.py`` checks that each side binds every
row of :data:`TABLE`, and ``docs/rest.md`` is generated from the platform's bindings. A new
endpoint is one row here (or in ``channel_routes.py``), its handler, and its toolkit method.
"""

from __future__ import annotations

from explorer.wire import channel_routes
from explorer.wire.endpoint import Endpoint, rows_of

# -- achievements ---------------------------------------------------------------------------

ACHIEVEMENTS = Endpoint(
    "GET", "/achievements", "user-read", signin="optional", record="Achievement", many=True
)

# -- announcements --------------------------------------------------------------------------

ANNOUNCE = Endpoint(
    "POST",
    "/announcements",
    "user-write",
    signin="user",
    scopes=("announcement:create",),
    record="Announcement",
)

# -- channels -------------------------------------------------------------------------------

CHANNELS = Endpoint(
    "GET", "/channels", "channel-read", search=("q", "channel-search"), record="Channel", many=True
)

# -- chats ----------------------------------------------------------------------------------

CHAT_ENDPOINTS = Endpoint("GET", "/chats/endpoints", "chats", record="ChatEndpoints")

# -- confetti -------------------------------------------------------------------------------

CREATE_CONFETTI = Endpoint(
    "PUT",
    "/confetti",
    "channel-write",
    signin="user",
    scopes=("channel:update:self",),
    record="Confetti",
)
CONFETTI = Endpoint("GET", "/confetti/{confetti}", "channel-read", record="Confetti")
CONFETTI_UPDATE = Endpoint(
    "PATCH",
    "/confetti/{confetti}",
    "channel-write",
    signin="user",
    scopes=("channel:update:self",),
    record="Confetti",
)
CONFETTI_DELETE = Endpoint(
    "DELETE",
    "/confetti/{confetti}",
    "channel-write",
    signin="user",
    scopes=("channel:update:self",),
)

# -- frontend -------------------------------------------------------------------------------

FRONTEND_VERSIONS = Endpoint(
    "GET", "/frontendVersions", "user-read", record="FrontendVersion", many=True
)

# -- ingests --------------------------------------------------------------------------------

INGESTS = Endpoint("GET", "/ingests", "ingest", record="Ingest", many=True)
BEST_INGEST = Endpoint("GET", "/ingests/best", "ingest", record="Ingest")

# -- interactive_games ----------------------------------------------------------------------

GAMES_PUBLISHED = Endpoint(
    "GET", "/interactive/games", "channel-read", record="InteractiveGame", many=True
)
CREATE_GAME = Endpoint(
    "POST",
    "/interactive/games",
    "channel-write",
    signin="user",
    scopes=("interactive:manage:self",),
    record="InteractiveGame",
)
GAMES_OWNED = Endpoint(
    "GET",
    "/interactive/games/owned",
    "channel-read",
    signin="user",
    scopes=("interactive:manage:self",),
    record="InteractiveGame",
    many=True,
)
GAMES_SHARED = Endpoint(
    "GET",
    "/interactive/games/shared",
    "channel-read",
    signin="user",
    scopes=("interactive:manage:self",),
    record="InteractiveGame",
    many=True,
)
GAMES_EDITOR = Endpoint(
    "GET",
    "/interactive/games/editor",
    "channel-read",
    signin="user",
    scopes=("interactive:manage:self",),
    record="InteractiveGame",
    many=True,
)
GAMES_REVIEWING = Endpoint(
    "GET",
    "/interactive/games/reviewing",
    "channel-read",
    signin="user",
    scopes=("interactive:manage:self",),
    record="InteractiveGame",
    many=True,
)
GAME = Endpoint(
    "GET", "/interactive/games/{game}", "channel-read", signin="optional", record="InteractiveGame"
)
GAME_UPDATE = Endpoint(
    "PUT",
    "/interactive/games/{game}",
    "channel-write",
    signin="user",
    scopes=("interactive:manage:self",),
    record="InteractiveGame",
)
GAME_DELETE = Endpoint(
    "DELETE",
    "/interactive/games/{game}",
    "channel-write",
    signin="user",
    scopes=("interactive:manage:self",),
)
GAME_SET_COVER = Endpoint(
    "POST",
    "/interactive/games/{game}/cover",
    "upload",
    signin="user",
    scopes=("interactive:manage:self",),
    record="Resource",
)
GAME_EDITORS = Endpoint(
    "GET",
    "/interactive/games/{game}/editors",
    "channel-read",
    signin="optional",
    record="InteractiveEditor",
    many=True,
)
GAME_ADD_EDITOR = Endpoint(
    "POST",
    "/interactive/games/{game}/editors",
    "channel-write",
    signin="user",
    scopes=("interactive:manage:self",),
    record="InteractiveEditor",
)
GAME_REMOVE_EDITOR = Endpoint(
    "DELETE",
    "/interactive/games/{game}/editors/{user}",
    "channel-write",
    signin="user",
    scopes=("interactive:manage:self",),
)

# -- interactive_hosts ----------------------------------------------------------------------

INTERACTIVE_HOSTS = Endpoint(
    "GET", "/interactive/hosts", "channel-read", record="InteractiveHost", many=True
)

# -- interactive_versions -------------------------------------------------------------------

GAME_VERSIONS = Endpoint(
    "GET",
    "/interactive/games/{game}/versions",
    "channel-read",
    signin="optional",
    record="InteractiveVersion",
    many=True,
)
GAME_ADD_VERSION = Endpoint(
    "POST",
    "/interactive/versions",
    "channel-write",
    signin="user",
    scopes=("interactive:manage:self",),
    record="InteractiveVersion",
)
GAME_VERSION = Endpoint(
    "GET",
    "/interactive/versions/{version}",
    "channel-read",
    signin="optional",
    record="InteractiveVersion",
)
GAME_VERSION_UPDATE = Endpoint(
    "PUT",
    "/interactive/versions/{version}",
    "channel-write",
    signin="user",
    scopes=("interactive:manage:self",),
    record="InteractiveVersion",
)
GAME_VERSION_DELETE = Endpoint(
    "DELETE",
    "/interactive/versions/{version}",
    "channel-write",
    signin="user",
    scopes=("interactive:manage:self",),
)

# -- invoices -------------------------------------------------------------------------------

ACCOUNT_INVOICES = Endpoint(
    "GET",
    "/invoices",
    "user-read",
    signin="user",
    scopes=("invoice:view:self",),
    record="Invoice",
    many=True,
)
ACCOUNT_INVOICE = Endpoint(
    "GET",
    "/invoices/{invoice}",
    "user-read",
    signin="user",
    scopes=("invoice:view:self",),
    record="Invoice",
)
ACCOUNT_CAPTURE_INVOICE = Endpoint(
    "POST",
    "/invoices/{invoice}/capture",
    "user-write",
    signin="user",
    scopes=("invoice:view:self", "invoice:capture:self"),
    record="Invoice",
)

# -- jwt ------------------------------------------------------------------------------------

AUTHORIZE_JWT = Endpoint("POST", "/jwt/authorize", "user-login", signin="user")

# -- language -------------------------------------------------------------------------------

LANGUAGES_USED = Endpoint(
    "GET", "/language/channels", "channel-read", record="LanguageChannels", many=True
)
LANGUAGES_ACTIVE = Endpoint(
    "GET", "/language/channels/active", "channel-read", record="LanguageChannels", many=True
)
LANGUAGES_AVAILABLE = Endpoint(
    "GET", "/language/channels/available", "channel-read", record="LanguageChannels", many=True
)

# -- notifications --------------------------------------------------------------------------

ACCOUNT_NOTIFICATIONS = Endpoint(
    "GET",
    "/notifications",
    "notification-read",
    signin="user",
    scopes=("notification:view:self",),
    record="Notification",
    many=True,
)
ACCOUNT_UNSUBSCRIBE_EMAIL = Endpoint(
    "POST",
    "/notifications/emailUnsubscribe",
    "mail-subscribe",
    signin="user",
    scopes=("notification:update:self",),
    record="EmailSubscriptions",
)
ACCOUNT_NOTIFICATION = Endpoint(
    "GET",
    "/notifications/{notification}",
    "notification-read",
    signin="user",
    scopes=("notification:view:self",),
    record="Notification",
)
ACCOUNT_SHARE_SUBSCRIPTION = Endpoint(
    "POST",
    "/notifications/{notification}/shareSub",
    "user-write",
    signin="user",
    scopes=("notification:update:self",),
    record="Notification",
)
ACCOUNT_UNSHARE_SUBSCRIPTION = Endpoint(
    "DELETE",
    "/notifications/{notification}/shareSub",
    "user-write",
    signin="user",
    scopes=("notification:update:self",),
    record="Notification",
)

# -- oauth ----------------------------------------------------------------------------------

AUTHORIZE = Endpoint("GET", "/oauth/authorize", "user-write", signin="user")
TOKEN = Endpoint("POST", "/oauth/token", "user-login", record="TokenResponse")
REVOKE = Endpoint("POST", "/oauth/revoke", "user-write")
ACCOUNT_ADD_OAUTH_CLIENT = Endpoint(
    "POST",
    "/oauth/clients",
    "user-write",
    signin="user",
    scopes=("oauth:manage:self",),
    record="OAuthClient",
)
ACCOUNT_OAUTH_CLIENTS = Endpoint(
    "GET",
    "/oauth/clients",
    "user-read",
    signin="user",
    scopes=("oauth:manage:self",),
    record="OAuthClient",
    many=True,
)
OAUTH_CLIENT = Endpoint("GET", "/oauth/clients/{client}", "user-read", record="OAuthClient")
ACCOUNT_REMOVE_OAUTH_CLIENT = Endpoint(
    "DELETE", "/oauth/clients/{client}", "user-write", signin="user", scopes=("oauth:manage:self",)
)

# -- oauth_introspect -----------------------------------------------------------------------

INTROSPECT = Endpoint("POST", "/oauth/token/introspect", "user-read", record="Introspection")

# -- oauth_shortcode ------------------------------------------------------------------------

SHORTCODE = Endpoint("POST", "/oauth/shortcode", "user-login", record="Shortcode")
SHORTCODE_CHECK = Endpoint("GET", "/oauth/shortcode/check/{handle}", "user-read")
SHORTCODE_GRANT = Endpoint(
    "GET",
    "/oauth/shortcode/code/{code}",
    "user-read",
    signin="user",
    also=("user-login-failed",),
    record="ShortcodeGrant",
)
SHORTCODE_APPROVE = Endpoint(
    "POST",
    "/oauth/shortcode/approve",
    "user-write",
    signin="user",
    also=("user-login-failed",),
    record="ShortcodeDecision",
)
SHORTCODE_DENY = Endpoint(
    "POST",
    "/oauth/shortcode/deny",
    "user-write",
    signin="user",
    also=("user-login-failed",),
    record="ShortcodeDecision",
)

# -- passwords ------------------------------------------------------------------------------

ACCOUNT_PASSWORD = Endpoint(
    "PUT",
    "/users/current/password",
    "user-write",
    signin="user",
    scopes=("user:update:self",),
    also=("user-login-failed",),
)

# -- types ----------------------------------------------------------------------------------

TYPES = Endpoint("GET", "/types", "channel-read", record="Type", many=True)
TYPE = Endpoint("GET", "/types/{type}", "channel-read", record="Type")
TYPE_CHANNELS = Endpoint(
    "GET", "/types/{type}/channels", "channel-read", record="Channel", many=True
)

# -- uploads --------------------------------------------------------------------------------

IMAGE = Endpoint("GET", "/resources/{resource}", "channel-read")

# -- users ----------------------------------------------------------------------------------

REGISTER = Endpoint("POST", "/users", "user-register", record="User")
ACCOUNT = Endpoint("GET", "/users/current", "user-read", signin="user", record="CurrentUser")
LOGIN = Endpoint(
    "POST", "/users/login", "user-login", also=("user-login-failed",), record="CurrentUser"
)
LOGOUT = Endpoint("DELETE", "/users/current/session", "user-write", signin="user")
#: The older spellings the official Java and Swift clients send: sign out, and the signed-in
#: user again (what a client reads on start to learn whether its session still holds).
LOGOUT_CURRENT = Endpoint("DELETE", "/users/current", "user-write", signin="user")
ACCOUNT_REFRESH = Endpoint(
    "POST", "/users/current/refresh", "user-read", signin="user", record="CurrentUser"
)
USER = Endpoint("GET", "/users/{user}", "user-read", record="User")
USER_UPDATE = Endpoint(
    "PATCH",
    "/users/{user}",
    "user-write",
    signin="user",
    scopes=("user:update:self",),
    record="User",
)
USER_CONFIRM = Endpoint("PUT", "/users/{user}/confirm", "user-write", record="User")

# -- channel_follows (a user's side) -----------------------------------------------------------

USER_FOLLOWS = Endpoint("GET", "/users/{user}/follows", "user-read", record="Channel", many=True)

# -- user_search ----------------------------------------------------------------------------

SEARCH_USERS = Endpoint("GET", "/users/search", "user-read", record="UserWithChannel", many=True)

# -- recordings -----------------------------------------------------------------------------

RECORDING = Endpoint(
    "GET", "/recordings/{recording}", "channel-read", signin="optional", record="Recording"
)

# -- hooks ----------------------------------------------------------------------------------

REGISTER_HOOK = Endpoint("POST", "/hooks", "user-write", record="Hook")
HOOKS = Endpoint("GET", "/hooks", "user-read", record="Hook", many=True)
HOOK = Endpoint("GET", "/hooks/{hook}", "user-read", record="Hook")
RENEW_HOOK = Endpoint("POST", "/hooks/{hook}/renew", "user-write", record="Hook")
DEACTIVATE_HOOK = Endpoint("POST", "/hooks/{hook}/deactivate", "user-write", record="Hook")


#: Every row of the contract: those above, then the channel's.
TABLE: tuple[Endpoint, ...] = rows_of(list(globals().values())) + channel_routes.TABLE
