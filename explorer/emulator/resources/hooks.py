"""Webhooks: an OAuth client asks the platform to POST live events to a web address.

As the historical API (mixer/developer-docs, pages/02.reference/04.webhooks): the client
authenticates with its id in ``Client-ID`` and its secret as ``Authorization: Secret <secret>``
(a confidential client of ``POST /oauth/clients``); ``POST /hooks`` registers
``{kind: "web", events: [...], url, secret?}``; ``GET /hooks`` lists the client's hooks,
``GET /hooks/{id}`` shows one, ``POST /hooks/{id}/renew`` extends it by :data:`LIFETIME`,
``POST /hooks/{id}/deactivate`` ends it. A Hook is ``{id, events, kind, url, isActive,
deactivationReason, expiresAt, renewUrl, createdAt}`` (the secret is never shown again):
``renewUrl`` is the absolute address of its renewal, as the docs' registration example shows
(reached under the address the request came in by).

One clock for the whole record: ``createdAt``, ``expiresAt`` and each delivery's ``sentAt``
are world time (:mod:`~explorer.emulator.clock`), as every other record's dates are, and a hook
expires when the world clock passes ``expiresAt``: at ``--speed N`` its 90 days pass N times
faster, like everything else the world dates.

Events are the live events' names (docs/live.md); private ones are refused (403), since a
client is no signed-in user. Delivery (:mod:`~explorer.emulator.live.webhooks`) reaches only
addresses the operator allows: ``Config.hook_allow`` (addresses or CIDR blocks; loopback by
default) checked at registration, the URL's host an address literal or ``localhost`` (no name
is resolved, so no DNS answer can point a hook elsewhere); anything else is a 400.

A user's clients hold at most :data:`MAX_HOOKS` active hooks together (a 400 past it, at
registration and renewal); each hook's events are indexed (``hook_events``) for delivery.
Deleting a client deactivates its hooks (``deactivationReason: "clientDeleted"``): the owner
can always end them that way, whoever holds the client's secret.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
from starlette.responses import Response

from explorer.emulator import credentials
from explorer.emulator.context import Context
from explorer.emulator.db import hooks, oauth
from explorer.emulator.live.webhooks import allowed, ensure_dispatcher
from explorer.emulator.policy import Route
from explorer.emulator.responses import ApiError, JSONResponse, bad_request, not_found
from explorer.emulator.world import iso
from explorer.wire import routes as wire
from explorer.wire.topics import UnknownTopic, parse

#: How long a hook lives from its registration or last renewal.
LIFETIME = timedelta(days=90)
#: Events one hook may name at most.
MAX_EVENTS = 1000
#: Active hooks the clients of one user may hold together.
MAX_HOOKS = 100


def _render(ctx: Context, row: tuple[Any, ...]) -> dict[str, Any]:
    hook = dict(zip(hooks.FIELDS, row, strict=True))
    hook["events"] = orjson.loads(hook["events"])
    hook["isActive"] = bool(hook["isActive"])
    hook["renewUrl"] = _renew_url(ctx, hook["id"])
    return hook


def _renew_url(ctx: Context, hook_id: str) -> str:
    """The absolute address of ``POST /hooks/{id}/renew``, under the prefix and host this
    request came in by (``/api/v1`` behind whatever proxy path)."""
    url = ctx.request.url
    prefix = url.path[: url.path.rindex("/hooks")]
    return str(url.replace(path=prefix + wire.RENEW_HOOK.url({"hook": hook_id}), query=""))


def _client(ctx: Context) -> str:
    """The OAuth client calling, by ``Client-ID`` and ``Authorization: Secret`` (else 401)."""
    client_id = ctx.request.headers.get("client-id", "")
    scheme, _, secret = ctx.request.headers.get("authorization", "").partition(" ")
    secret_hash = oauth.secret_hash(ctx.store, client_id)
    if (
        scheme.lower() != "secret"
        or secret_hash is None
        or not credentials.same(credentials.digest(secret.strip()), secret_hash)
    ):
        raise ApiError(401, "Send Client-ID and Authorization: Secret <client secret>.")
    return client_id


def _events(value: Any) -> list[str]:
    if not isinstance(value, list) or not 1 <= len(value) <= MAX_EVENTS:
        raise bad_request(f"events must be a list of 1 to {MAX_EVENTS} event names.", "events")
    for name in value:
        try:
            topic = parse(name)
        except UnknownTopic:
            raise bad_request(f"Unknown event {str(name)[:100]!r}.", "events") from None
        if topic.access != "public":
            raise ApiError(403, f"A hook cannot receive the private event {name!r}.")
    return list(dict.fromkeys(value))


def _room_for_one(ctx: Context, client_id: str) -> None:
    """A 400 when the clients of ``client_id``'s owner already hold :data:`MAX_HOOKS` active
    hooks."""
    if hooks.active_of_owner(ctx.store, client_id, ctx.iso_now()) >= MAX_HOOKS:
        raise bad_request(
            f"A user's clients may hold at most {MAX_HOOKS} active hooks.", "hooks", "limit"
        )


def _expiry(ctx: Context) -> str:
    """:data:`LIFETIME` from now on the world clock (the clock of ``createdAt``)."""
    return iso(datetime.fromtimestamp(ctx.world_now, UTC) + LIFETIME)


def _own(ctx: Context, client_id: str) -> tuple[Any, ...]:
    row = hooks.hook(ctx.store, ctx.request.path_params["hook"], client_id)
    if row is None:
        raise not_found("Hook")
    return row


async def register(ctx: Context) -> Response:
    """POST /hooks: register a web hook for live events."""
    client_id = _client(ctx)
    body = await ctx.json_object()
    if body.get("kind") != "web":
        raise bad_request('kind must be "web".', "kind")
    events = _events(body.get("events"))
    url = allowed(body.get("url"), ctx.services.config.hook_allow)
    secret = body.get("secret")
    if secret is not None and (not isinstance(secret, str) or not 1 <= len(secret) <= 256):
        raise bad_request("secret must be a string of 1 to 256 characters.", "secret")
    _room_for_one(ctx, client_id)
    hook_id = str(uuid.uuid4())
    hooks.add(ctx.store, hook_id, client_id, url, events, secret, _expiry(ctx), ctx.iso_now())
    ensure_dispatcher(ctx.services)
    row = hooks.hook(ctx.store, hook_id)
    assert row is not None
    return JSONResponse(_render(ctx, row), status_code=201)


async def list_hooks(ctx: Context) -> list[dict[str, Any]]:
    """GET /hooks: the calling client's hooks, newest first."""
    client_id = _client(ctx)
    ensure_dispatcher(ctx.services)
    return [_render(ctx, row) for row in hooks.of_client(ctx.store, client_id)]


async def get_hook(ctx: Context) -> dict[str, Any]:
    """GET /hooks/{id}: one of the client's hooks (its state: active, why it ended)."""
    return _render(ctx, _own(ctx, _client(ctx)))


async def renew(ctx: Context) -> dict[str, Any]:
    """POST /hooks/{id}/renew: live another :data:`LIFETIME` from now, active again."""
    client_id = _client(ctx)
    row = _own(ctx, client_id)
    if not row[4]:
        _room_for_one(ctx, client_id)
    hooks.renew(ctx.store, row[0], _expiry(ctx))
    ensure_dispatcher(ctx.services)
    return _render(ctx, _own(ctx, _client(ctx)))


async def deactivate(ctx: Context) -> dict[str, Any]:
    """POST /hooks/{id}/deactivate: stop delivering (reason ``deactivated``)."""
    row = _own(ctx, _client(ctx))
    hooks.deactivate(ctx.store, row[0])
    return _render(ctx, _own(ctx, _client(ctx)))


SCHEMAS: dict[str, Any] = {
    "Hook": {
        "type": "object",
        "required": [*hooks.FIELDS, "renewUrl"],
        "properties": {
            "id": {"type": "string", "format": "uuid"},
            "events": {"type": "array", "items": {"type": "string"}},
            "kind": {"type": "string", "enum": ["web"]},
            "url": {"type": "string"},
            "isActive": {"type": "boolean"},
            "deactivationReason": {"type": "string", "nullable": True},
            "expiresAt": {"type": "string", "format": "date-time"},
            "renewUrl": {"type": "string", "format": "uri"},
            "createdAt": {"type": "string", "format": "date-time"},
        },
    },
}
_SECRET_AUTH = (
    "the OAuth client, by Client-ID and Authorization: Secret <client secret> (not a user)"
)

routes = [
    Route(
        wire.REGISTER_HOOK,
        register,
        summary=f"Register a web hook for live events; {_SECRET_AUTH}",
        body={
            "type": "object",
            "required": ["kind", "events", "url"],
            "properties": {
                "kind": {"type": "string", "enum": ["web"]},
                "events": {"type": "array", "items": {"type": "string"}},
                "url": {"type": "string", "description": "an address the operator allows"},
                "secret": {"type": "string", "description": "signs each delivery (SHA-384)"},
            },
        },
        status=201,
        errors=(400, 401, 403),
    ),
    Route(
        wire.HOOKS,
        list_hooks,
        summary=f"The client's hooks; {_SECRET_AUTH}",
        errors=(401,),
    ),
    Route(
        wire.HOOK,
        get_hook,
        summary=f"One of the client's hooks; {_SECRET_AUTH}",
        errors=(401, 404),
    ),
    Route(
        wire.RENEW_HOOK,
        renew,
        summary=f"Renew a hook for another 90 days (active again); {_SECRET_AUTH}",
        errors=(400, 401, 404),
    ),
    Route(
        wire.DEACTIVATE_HOOK,
        deactivate,
        summary=f"Stop a hook; {_SECRET_AUTH}",
        errors=(401, 404),
    ),
]
