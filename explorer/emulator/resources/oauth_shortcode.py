"""The shortcode grant: sign in an app that has no browser redirect (a notebook, a script, a
console), with the historical platform's wire shapes.

1. The app sends ``POST /oauth/shortcode {client_id, client_secret?, scope}`` and gets
   ``{code, handle, expires_in}``: ``code`` is 6 characters a person can type, ``handle`` a
   long secret only the app knows.
2. The person, signed in, reads what the code grants (``GET /oauth/shortcode/code/{code}``:
   the client and the scopes; the ``/go`` page shows them before its buttons), then approves
   ``code`` (``POST /oauth/shortcode/approve {code}``) or refuses it (``.../deny``).
3. The app polls ``GET /oauth/shortcode/check/{handle}``: 204 while waiting, 200 ``{code}``
   once approved (an authorization code for ``POST /oauth/token``, handed out once), 403 once
   denied, 404 once expired, collected or unknown.

Codes expire after :data:`SHORTCODE_TTL`, are single use, and a wrong code is charged to
``user-login-failed`` (8 per 15 minutes per session or token), which makes guessing someone
else's pending code hopeless. An approved code not yet exchanged ends with the session that
approved it (:mod:`explorer.emulator.endings`).
"""

from __future__ import annotations

import secrets
from typing import Any

from starlette.responses import Response

from explorer.emulator import credentials, endings
from explorer.emulator.context import Context
from explorer.emulator.db import oauth
from explorer.emulator.policy import Route
from explorer.emulator.resources.oauth import (
    check_client_secret,
    client_row,
    parse_scopes,
    read_body,
    store_code,
)
from explorer.emulator.responses import ApiError, JSONResponse, bad_request
from explorer.wire import routes as wire

#: Seconds a shortcode stays valid.
SHORTCODE_TTL = 300.0
#: Characters of a code: no 0/O, 1/I/L, so it reads back unambiguously.
ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 6


def _new_code() -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))


async def start(ctx: Context) -> Response:
    """POST /oauth/shortcode: a code for a person to approve, and the handle to poll."""
    body = await read_body(ctx)
    client = client_row(ctx.store, body.get("client_id", ""))
    check_client_secret(client, body)
    scopes = parse_scopes(body.get("scope", ""))
    handle = credentials.new_token()
    code = oauth.start_shortcode(
        ctx.store,
        credentials.digest(handle),
        _new_code,
        client[0],
        " ".join(scopes),
        ctx.now,
        SHORTCODE_TTL,
    )
    return JSONResponse({"code": code, "handle": handle, "expires_in": int(SHORTCODE_TTL)})


async def check(ctx: Context) -> Response:
    """GET /oauth/shortcode/check/{handle}: 204 waiting, 200 {code}, 403 denied, 404 gone."""
    digest = credentials.digest(ctx.request.path_params["handle"])
    row = oauth.shortcode(ctx.store, digest)
    if row is None or row[2] < ctx.now or row[3] == "collected":
        raise ApiError(404, "This shortcode is unknown or expired.")
    if row[3] == "denied":
        raise ApiError(403, "The user denied this request.")
    if row[3] == "waiting":
        return Response(status_code=204)
    assert row[4] is not None  # an approved shortcode names who approved it
    oauth.collect_shortcode(ctx.store, digest)
    source = endings.source_of(ctx.services, endings.shortcode_child(digest))
    return JSONResponse({"code": store_code(ctx, row[0], row[4], row[1].split(), "", source)})


def _unknown_code() -> ApiError:
    return ApiError(401, "That code is unknown, expired or already used.")


async def describe(ctx: Context) -> dict[str, Any]:
    """GET /oauth/shortcode/code/{code}: what approving a waiting code grants, and to whom
    (the client's name and site, the scopes), for the approver to read first."""
    code = ctx.request.path_params["code"].strip().upper()
    row = oauth.waiting_shortcode(ctx.store, code, ctx.now)
    if row is None:
        raise _unknown_code()
    client = {"id": row[1], "name": row[2], "website": row[3]}
    return {"code": code, "client": client, "scopes": row[0].split()}


async def _decide(ctx: Context, state: str) -> dict[str, Any]:
    body = await ctx.json_object()
    code = body.get("code")
    if not isinstance(code, str) or not code.strip():
        raise bad_request("code must be the 6-character code the app shows.", "code")
    handle = oauth.decide_shortcode(ctx.store, code.strip().upper(), state, ctx.user_id(), ctx.now)
    if handle is None:
        raise _unknown_code()
    assert ctx.caller is not None
    endings.derive(ctx.services, endings.shortcode_child(handle), ctx.caller.credential)
    return {"code": code.strip().upper(), "state": state}


async def approve(ctx: Context) -> dict[str, Any]:
    """POST /oauth/shortcode/approve {code}: the signed-in user grants the app its scopes."""
    return await _decide(ctx, "approved")


async def deny(ctx: Context) -> dict[str, Any]:
    """POST /oauth/shortcode/deny {code}: the signed-in user refuses the app."""
    return await _decide(ctx, "denied")


def _only_sessions(handler: Any) -> Any:
    """``handler`` for cookie sessions only: a token must not approve further grants."""

    async def wrapped(ctx: Context) -> Any:
        if ctx.caller is None or ctx.caller.kind != "session":
            raise ApiError(403, "Approve with a signed-in session, not a token.")
        return await handler(ctx)

    wrapped.__doc__ = handler.__doc__
    return wrapped


_CODE_BODY = {
    "type": "object",
    "required": ["code"],
    "properties": {"code": {"type": "string", "minLength": 1}},
}

SCHEMAS = {
    "Shortcode": {
        "type": "object",
        "required": ["code", "handle", "expires_in"],
        "properties": {
            "code": {"type": "string", "minLength": 6, "maxLength": 6},
            "handle": {"type": "string"},
            "expires_in": {"type": "integer"},
        },
    },
    "ShortcodeGrant": {
        "type": "object",
        "required": ["code", "client", "scopes"],
        "properties": {
            "code": {"type": "string"},
            "client": {
                "type": "object",
                "required": ["id", "name", "website"],
                "properties": {
                    "id": {"type": "string"},
                    "name": {"type": "string"},
                    "website": {"type": "string", "nullable": True},
                },
            },
            "scopes": {"type": "array", "items": {"type": "string"}},
        },
    },
    "ShortcodeDecision": {
        "type": "object",
        "required": ["code", "state"],
        "properties": {
            "code": {"type": "string"},
            "state": {"type": "string", "enum": ["approved", "denied"]},
        },
    },
}

routes = [
    Route(
        wire.SHORTCODE,
        start,
        summary="Start a shortcode grant (form-encoded or JSON)",
        body={
            "type": "object",
            "required": ["client_id", "scope"],
            "properties": {
                "client_id": {"type": "string"},
                "client_secret": {"type": "string"},
                "scope": {"type": "string"},
            },
        },
        errors=(400, 401),
    ),
    Route(
        wire.SHORTCODE_CHECK,
        check,
        summary="Poll a shortcode grant: 204 waiting, 200 approved, 403 denied, 404 gone",
        response={"type": "object", "properties": {"code": {"type": "string"}}},
        errors=(403, 404),
    ),
    Route(
        wire.SHORTCODE_GRANT,
        _only_sessions(describe),
        summary="What approving a waiting shortcode grants: the client and the scopes",
        errors=(401, 403, 461),
    ),
    Route(
        wire.SHORTCODE_APPROVE,
        _only_sessions(approve),
        summary="Approve a shortcode as the signed-in user",
        body=_CODE_BODY,
        errors=(400, 401, 403, 461),
    ),
    Route(
        wire.SHORTCODE_DENY,
        _only_sessions(deny),
        summary="Deny a shortcode as the signed-in user",
        body=_CODE_BODY,
        errors=(400, 401, 403, 461),
    ),
]
