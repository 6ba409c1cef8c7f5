"""Token introspection (RFC 7662): who a token belongs to, what it may do, until when.

``POST /oauth/token/introspect`` takes ``token`` (form-encoded or JSON) and answers
``{active, scope, client_id, username, sub, token_type, exp}`` for a live access or refresh
token, and only ``{active: false}`` for anything else (unknown, expired, revoked or used), so
the answer says nothing about tokens the caller does not hold.
"""

from __future__ import annotations

from typing import Any

from explorer.emulator import credentials
from explorer.emulator.context import Context
from explorer.emulator.db import oauth
from explorer.emulator.policy import Route
from explorer.emulator.resources.oauth import OAuthError, read_body
from explorer.wire import routes as wire


async def introspect(ctx: Context) -> dict[str, Any]:
    """POST /oauth/token/introspect: the RFC 7662 description of one token."""
    form = await read_body(ctx)
    if not form.get("token"):
        raise OAuthError("invalid_request", "token is required.")
    row = oauth.described_token(ctx.store, credentials.digest(form["token"]))
    if row is None or row[5] or row[6] or row[4] < ctx.now:
        return {"active": False}
    return {
        "active": True,
        "scope": row[2],
        "client_id": row[1],
        "username": row[7],
        "sub": row[0],
        "token_type": "access_token" if row[3] == "access" else "refresh_token",
        "exp": int(row[4]),
    }


SCHEMAS = {
    "Introspection": {
        "type": "object",
        "required": ["active"],
        "properties": {
            "active": {"type": "boolean"},
            "scope": {"type": "string"},
            "client_id": {"type": "string"},
            "username": {"type": "string"},
            "sub": {"type": "integer"},
            "token_type": {"type": "string", "enum": ["access_token", "refresh_token"]},
            "exp": {"type": "integer", "description": "Expiry, Unix seconds"},
        },
    }
}

routes = [
    Route(
        wire.INTROSPECT,
        introspect,
        summary="Describe a token: owner, scopes, expiry (RFC 7662; form-encoded or JSON)",
        body={
            "content": "application/x-www-form-urlencoded",
            "schema": {
                "type": "object",
                "required": ["token"],
                "properties": {"token": {"type": "string", "minLength": 1}},
            },
        },
        errors=(400,),
    ),
]
