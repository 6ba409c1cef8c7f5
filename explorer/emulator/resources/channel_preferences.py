"""Channel preferences: the owner's switches and texts for a channel, validated key by key.

The keys are the historical platform's (``hosting:allow``, ``channel:slowchat``, ...). Only the
values an owner changed are stored; reads merge them over the defaults below, so a new key
never needs a migration. ``POST`` merges: each sent key is validated by its kind and stored,
``null`` resets a key to its default, unknown keys are refused. Other groups read single
values with :func:`preference` (hosting honours ``hosting:allow`` and ``hosting:allowlive``;
chat's CatBot ``channel:catbot:level`` and ``channel:bannedwords``, told of each change through
``ChatHub.settings_changed``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from explorer.emulator.access import channel_ref, require_owner
from explorer.emulator.context import Context
from explorer.emulator.db import preferences
from explorer.emulator.db.engine import Store
from explorer.emulator.policy import Route
from explorer.emulator.responses import bad_request
from explorer.wire import channel_routes as channel_wire


@dataclass(frozen=True, slots=True)
class Preference:
    """One preference key: its default, JSON schema and a check that names what is wrong."""

    default: Any
    schema: dict[str, Any]
    problem: Callable[[Any], str | None]


def _flag(default: bool) -> Preference:
    return Preference(
        default,
        {"type": "boolean"},
        lambda v: None if isinstance(v, bool) else "must be true or false",
    )


def _text(default: str, longest: int = 500) -> Preference:
    return Preference(
        default,
        {"type": "string", "maxLength": longest},
        lambda v: (
            None
            if isinstance(v, str) and len(v) <= longest
            else f"must be a string of at most {longest} characters"
        ),
    )


def _number(default: int, low: int, high: int) -> Preference:
    return Preference(
        default,
        {"type": "integer", "minimum": low, "maximum": high},
        lambda v: (
            None
            if isinstance(v, int) and not isinstance(v, bool) and low <= v <= high
            else f"must be an integer from {low} to {high}"
        ),
    )


def _choice(default: str, *options: str) -> Preference:
    return Preference(
        default,
        {"type": "string", "enum": list(options)},
        lambda v: None if v in options else f"must be one of {', '.join(options)}",
    )


def _words(longest: int = 500) -> Preference:
    return Preference(
        [],
        {"type": "array", "items": {"type": "string"}, "maxItems": longest},
        lambda v: (
            None
            if isinstance(v, list)
            and len(v) <= longest
            and all(isinstance(w, str) and 0 < len(w) <= 100 for w in v)
            else f"must be a list of at most {longest} words of 1-100 characters"
        ),
    )


PREFERENCES: dict[str, Preference] = {
    "sharetext": _text("Come watch %USER% live on explorer! %URL%"),
    "channel:links:allowed": _flag(True),
    "channel:links:clickable": _flag(True),
    "channel:slowchat": _number(0, 0, 3_600_000),
    "channel:bannedwords": _words(),
    "channel:users:levelRestrict": _number(0, 0, 150),
    "channel:catbot:level": _number(0, 0, 4),
    "channel:notify:follow": _flag(True),
    "channel:notify:followmessage": _text("%USER% followed the channel!"),
    "channel:notify:subscribe": _flag(True),
    "channel:notify:subscribemessage": _text("%USER% just subscribed!"),
    "channel:notify:hostedBy": _text("%USER% is now hosting the channel!"),
    "channel:notify:hosting": _text("Now hosting %USER%."),
    "channel:partner:submail": _text("", 2000),
    "channel:player:muteOwn": _flag(True),
    "channel:tweet:enabled": _flag(True),
    "channel:tweet:body": _text("Watch %USER% live: %URL%", 280),
    "channel:offline:autoplayVod": _flag(True),
    "channel:chat:hostswitch": _flag(True),
    "hosting:allow": _flag(True),
    "hosting:allowlive": _flag(True),
    "hypezone:allow": _flag(True),
    "costream:allow": _choice("all", "all", "following", "none"),
}


#: The keys chat reads (CatBot), whose change chat is told of.
_CHAT_KEYS = frozenset({"channel:catbot:level", "channel:bannedwords"})


def stored_preferences(store: Store, channel_id: int) -> dict[str, Any]:
    """Every preference of ``channel_id``: the stored values over the defaults."""
    values = {key: spec.default for key, spec in PREFERENCES.items()}
    for key, value in preferences.stored(store, channel_id).items():
        if key in values:
            values[key] = value
    return values


def preference(store: Store, channel_id: int, key: str) -> Any:
    """One preference of ``channel_id`` (its default when the owner never set it)."""
    value = preferences.stored_value(store, channel_id, key)
    return PREFERENCES[key].default if value is None else value


async def get_preferences(ctx: Context) -> dict[str, Any]:
    """GET /channels/{id}/preferences: every preference (owner or staff)."""
    channel = channel_ref(ctx)
    require_owner(ctx, channel)
    return stored_preferences(ctx.store, channel.id)


async def set_preferences(ctx: Context) -> dict[str, Any]:
    """POST /channels/{id}/preferences: validate and merge the sent keys, answer them all."""
    channel = channel_ref(ctx)
    require_owner(ctx, channel)
    body = await ctx.json_object()
    if not body:
        raise bad_request("Send at least one preference.", "body", "required")
    for key, value in body.items():
        spec = PREFERENCES.get(key)
        if spec is None:
            raise bad_request(f"Unknown preference {key!r}.", key, "unknown")
        problem = None if value is None else spec.problem(value)
        if problem:
            raise bad_request(f"{key} {problem}.", key)
    preferences.store_values(ctx.store, channel.id, body)
    if ctx.services.chat is not None and not _CHAT_KEYS.isdisjoint(body):
        ctx.services.chat.settings_changed(channel.id)
    return stored_preferences(ctx.store, channel.id)


_PREFERENCES = {"$ref": "#/components/schemas/ChannelPreferences"}

SCHEMAS: dict[str, Any] = {
    "ChannelPreferences": {
        "type": "object",
        "required": list(PREFERENCES),
        "properties": {key: spec.schema for key, spec in PREFERENCES.items()},
        "additionalProperties": False,
    },
}

routes = [
    Route(
        channel_wire.CHANNEL_PREFERENCES,
        get_preferences,
        summary="The channel's preferences (owner)",
        errors=(400, 401, 403, 404, 461),
    ),
    Route(
        channel_wire.CHANNEL_SET_PREFERENCES,
        set_preferences,
        summary="Change preferences (owner); null resets a key to its default",
        body={"type": "object", "description": "preference keys to values (or null)"},
        errors=(400, 401, 403, 404, 413, 461),
    ),
]
