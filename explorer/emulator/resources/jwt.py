"""JWT authorization: trade any valid credential for a short-lived signed token.

``POST /jwt/authorize`` answers 204 with the token in the ``X-JWT`` header; later requests send
``Authorization: JWT <token>``. The JWT carries the scopes of the credential that minted it
(all scopes for a cookie session), so it never grants more than its source.
"""

from __future__ import annotations

from starlette.responses import Response

from explorer.emulator import credentials
from explorer.emulator.context import Context
from explorer.emulator.policy import Route
from explorer.wire import routes as wire

JWT_HEADER = "X-JWT"


async def authorize(ctx: Context) -> Response:
    """POST /jwt/authorize: a JWT for the caller, in the ``X-JWT`` header."""
    caller = ctx.caller
    user_id = ctx.user_id()
    assert caller is not None
    now = ctx.now
    # NumericDates may carry fractions (RFC 7519 section 2): truncating both ends to whole
    # seconds could cut up to a second off the lifetime.
    claims = {
        "sub": user_id,
        "scopes": sorted(caller.scopes),
        "iat": int(now),
        "exp": round(now + ctx.services.config.jwt_ttl, 3),
        "jti": credentials.new_token(8),
        # The credential it dies with: a JWT minted from a JWT keeps the first one's.
        "src": caller.credential,
    }
    token = credentials.jwt_encode(ctx.services.secret, claims)
    return Response(status_code=204, headers={JWT_HEADER: token})


routes = [
    Route(
        wire.AUTHORIZE_JWT,
        authorize,
        summary="Exchange the caller's credential for a JWT (header X-JWT)",
        status=204,
        errors=(401, 461),
    ),
]
