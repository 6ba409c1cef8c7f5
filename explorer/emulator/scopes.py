"""The OAuth scope vocabulary of the historical platform, and what each scope unlocks here.

Every grant accepts every scope of :data:`SCOPES`: the developer docs' scope reference plus
the strings published clients send (Firebot, mixer.py, the chat-bot tutorial, ...). A scope
whose rule the platform has takes effect (route guards in the route table, chat permissions in
:data:`~explorer.emulator.chat.roles.PERMISSION_SCOPES`, private fields through
:func:`private`); the rest are accepted and recorded on the token, so a client's grant works
unchanged. A scope that never existed is still ``invalid_scope``.
"""

from __future__ import annotations

from explorer.emulator.context import Caller

#: Chat scopes (reference.md lists the first ten; the rest are the docs' chat scopes;
#: ``chat:ad_break`` guards the REST ad-break API, :mod:`~explorer.emulator.resources.ads`).
CHAT_SCOPES: tuple[str, ...] = (
    "chat:connect",
    "chat:chat",
    "chat:whisper",
    "chat:poll_vote",
    "chat:poll_start",
    "chat:timeout",
    "chat:purge",
    "chat:remove_message",
    "chat:clear_messages",
    "chat:giveaway_start",
    "chat:bypass_catbot",
    "chat:bypass_filter",
    "chat:bypass_links",
    "chat:bypass_slowchat",
    "chat:cancel_skill",
    "chat:change_ban",
    "chat:change_role",
    "chat:edit_options",
    "chat:view_deleted",
    "chat:ad_break",
)
#: REST scopes: the docs' scope reference (``*:self`` scopes act on the caller's own records).
REST_SCOPES: tuple[str, ...] = (
    "achievement:view:self",
    "announcement:create",
    "channel:analytics",
    "channel:analytics:self",
    "channel:clip:create:self",
    "channel:costream:self",
    "channel:deleteBroadcast:self",
    "channel:details:self",
    "channel:follow:self",
    "channel:partnership",
    "channel:partnership:self",
    "channel:streamKey:self",
    "channel:teststream:view:self",
    "channel:update:self",
    "delve:view:self",
    "interactive:manage:self",
    "interactive:play",
    "interactive:robot:self",
    "invoice:capture:self",
    "invoice:view:self",
    "log:view:self",
    "notification:update:self",
    "notification:view:self",
    "oauth:manage:self",
    "recording:manage:self",
    "redeemable:create:self",
    "redeemable:redeem:self",
    "redeemable:view:self",
    "resource:find:self",
    "subscription:cancel:self",
    "subscription:create:self",
    "subscription:renew:self",
    "subscription:view:self",
    "team:administer",
    "team:manage:self",
    "transaction:cancel:self",
    "transaction:view:self",
    "type:viewHidden",
    "user:act_as",
    "user:analytics:self",
    "user:details:self",
    "user:getDiscordInvite:self",
    "user:log:self",
    "user:notification:self",
    "user:seen:self",
    "user:update:self",
    "user:updatePassword:self",
)
#: Every scope a token may carry; a cookie session holds them all.
SCOPES: frozenset[str] = frozenset(CHAT_SCOPES + REST_SCOPES)


def private(caller: Caller | None, scope: str) -> bool:
    """True when ``caller`` may see the fields ``scope`` keeps private (a read with a public
    view answers the public part to any valid credential, the private part only with it)."""
    return caller is not None and scope in caller.scopes
