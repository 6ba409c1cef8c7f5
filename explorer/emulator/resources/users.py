"""Users and sign-in: registration, confirmation, lookups, and cookie sessions.

``DELETE /users/current`` and ``POST /users/current/refresh`` are the older spellings the
official Java client (beam-client-java 6.0.0, UsersService) and the Swift client still send:
the first signs out as ``DELETE /users/current/session`` does; the second answers the signed-in
user as ``GET /users/current`` does (a client asks it on start to learn whether its session
still holds) and extends nothing: a session lasts ``session_ttl`` from sign-in whatever is
asked, so a stolen cookie cannot be kept alive.

Login answers the same 401 message for an unknown user and a wrong password (no account
enumeration) and is charged to ``user-login-failed`` on failure, which stops brute force after
8 tries in 15 minutes. Password checks run the slow KDF in a worker thread so chat and other
requests keep flowing meanwhile.
"""

from __future__ import annotations

import asyncio
import re
import secrets
from typing import Any

import orjson
from starlette.responses import Response

from explorer.emulator import credentials, endings
from explorer.emulator.access import listed_users
from explorer.emulator.context import Context
from explorer.emulator.db import channels, sessions, users
from explorer.emulator.db.engine import dumps
from explorer.emulator.policy import SESSION_COOKIE, Route
from explorer.emulator.responses import CSRF_HEADER, ApiError, JSONResponse, bad_request, not_found
from explorer.emulator.scopes import private
from explorer.emulator.shapes import (
    CHANNEL_FROM,
    CHANNEL_SELECT,
    render_channel,
    render_user,
    user_groups,
)
from explorer.wire import routes as wire

#: Whole-text patterns (``fullmatch``: ``$`` would also match before a final newline).
USERNAME = re.compile(r"[A-Za-z0-9_]{3,20}")
EMAIL = re.compile(r"[^@\s\x00-\x1f\x7f]{1,64}@[^@\s\x00-\x1f\x7f]{1,255}\.[^@\s\x00-\x1f\x7f]{2,}")


def user_row(ctx: Context, user_id: int) -> tuple[Any, ...]:
    """The ``USER_FIELDS`` row of ``user_id``, else 404."""
    row = users.row(ctx.store, user_id)
    if row is None:
        raise not_found("User")
    return row


def current_user_body(ctx: Context, user_id: int) -> dict[str, Any]:
    """The ``GET /users/current`` object: the user plus channel and groups, and the private
    ``email`` and ``preferences`` when the caller holds ``user:details:self`` (a session does)."""
    user = render_user(user_row(ctx, user_id))
    email, groups, preferences = users.private(ctx.store, user_id) or (None, "[]", "{}")
    channel_row = channels.of_owner(ctx.store, user_id, CHANNEL_SELECT, CHANNEL_FROM)
    if channel_row is not None:
        channel = render_channel(channel_row, ctx.services.types.all())
        del channel["user"]
        user["channel"] = channel
    user["groups"] = user_groups(groups)
    if private(ctx.caller, "user:details:self"):
        user["email"] = email
        user["preferences"] = orjson.loads(preferences)
    return user


def _text(body: dict[str, Any], name: str) -> str:
    value = body.get(name)
    if not isinstance(value, str) or not value:
        raise bad_request(f"{name} is required and must be a string.", name, "required")
    return value


async def register(ctx: Context) -> Response:
    """POST /users: create an account and its channel; the confirm code is mailed (logged)."""
    body = await ctx.json_object()
    username, password, email = (
        _text(body, "username"),
        _text(body, "password"),
        _text(body, "email"),
    )
    if not USERNAME.fullmatch(username):
        raise bad_request("username must be 3-20 letters, digits or underscores.", "username")
    if not 8 <= len(password) <= 256:
        raise bad_request("password must be 8-256 characters.", "password")
    if not EMAIL.fullmatch(email):
        raise bad_request("email is not a valid address.", "email")
    password_hash = await asyncio.to_thread(credentials.hash_password, password)
    now = ctx.iso_now()
    code = f"{secrets.randbelow(10**6):06d}"
    with ctx.store.transaction() as tx:
        if users.taken(tx, username):
            raise ApiError(409, "That username is taken.")
        user_id = users.add(tx, username, email, password_hash, code, now)
        key = credentials.new_token(16)
        channels.add_for(tx, user_id, username, f"{username}'s stream", now, key)
        users.set_avatar(tx, user_id, f"/api/v1/users/{user_id}/avatar")
    ctx.services.mailbox.append({"to": email, "userId": user_id, "code": code})
    return JSONResponse(render_user(user_row(ctx, user_id)), status_code=201)


async def confirm(ctx: Context) -> dict[str, Any]:
    """PUT /users/{id}/confirm: verify the account with the code issued at registration."""
    user_id = ctx.path_int("user")
    body = await ctx.json_object()
    code = _text(body, "code")
    row = users.confirmation(ctx.store, user_id)
    if row is None:
        raise not_found("User")
    if row[1]:
        raise ApiError(409, "This account is already verified.")
    if not credentials.same(code, row[0] or ""):
        raise ApiError(403, "That confirmation code is not valid.")
    users.verify(ctx.store, user_id, ctx.iso_now())
    return render_user(user_row(ctx, user_id))


async def get_user(ctx: Context) -> dict[str, Any]:
    """GET /users/{id}: the public User object (404 for a suspended account, but to staff)."""
    user_id = ctx.path_int("user")
    if not users.is_listed(ctx.store, user_id, listed_users(ctx)):
        raise not_found("User")
    return render_user(user_row(ctx, user_id))


async def get_current(ctx: Context) -> dict[str, Any]:
    """GET /users/current: the caller for any valid credential (the historical chat-bot flow
    reads ``id``, ``username`` and ``channel.id`` with a chat-only token)."""
    return current_user_body(ctx, ctx.user_id())


async def login(ctx: Context) -> Response:
    """POST /users/login: check the password, open a session, hand out the CSRF token."""
    body = await ctx.fields()
    username, password = _text(body, "username"), _text(body, "password")
    row = users.sign_in(ctx.store, username)
    ok = await asyncio.to_thread(credentials.check_password, password, row[1] if row else None)
    if row is None or not ok:
        raise ApiError(401, "Invalid username or password.")
    if row[2]:
        # Told only to whoever knows the password: no enumeration through this answer.
        raise ApiError(403, "This account is suspended.")
    token = credentials.new_token()
    ttl = ctx.services.config.session_ttl
    sessions.open_session(ctx.store, credentials.digest(token), row[0], ctx.now, ttl)
    response = JSONResponse(current_user_body(ctx, row[0]))
    response.set_cookie(
        SESSION_COOKIE,
        token,
        max_age=int(ctx.services.config.session_ttl),
        httponly=True,
        samesite="lax",
        path="/",
    )
    response.headers[CSRF_HEADER] = credentials.csrf_token(ctx.services.secret, token)
    return response


async def logout(ctx: Context) -> Response:
    """DELETE /users/current/session: end the cookie session (its CSRF token, JWTs, chat
    authkeys and unexchanged codes die with it)."""
    caller = ctx.caller
    if caller is None or caller.session_id is None:
        raise ApiError(400, "This request is not signed in with a session cookie.")
    sessions.end(ctx.store, caller.session_id)
    endings.end_credential(ctx.services, caller.credential)
    response = Response(status_code=204)
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response


async def update_user(ctx: Context) -> dict[str, Any]:
    """PATCH /users/{id}: change one's own bio or social links."""
    user_id = ctx.path_int("user")
    if user_id != ctx.user_id():
        raise ApiError(403, "You can only change your own account.")
    body = await ctx.json_object()
    changes: dict[str, Any] = {}
    if "bio" in body:
        if body["bio"] is not None and (not isinstance(body["bio"], str) or len(body["bio"]) > 500):
            raise bad_request("bio must be a string of at most 500 characters or null.", "bio")
        changes["bio"] = body["bio"]
    if "social" in body:
        social = body["social"]
        if not isinstance(social, dict) or not all(
            isinstance(k, str) and isinstance(v, str) and len(v) < 300 for k, v in social.items()
        ):
            raise bad_request("social must map names to link strings.", "social")
        changes["social"] = dumps(social)
    if not changes:
        raise bad_request("Nothing to change: send bio and/or social.", "body")
    users.update_profile(ctx.store, user_id, changes, ctx.iso_now())
    return render_user(user_row(ctx, user_id))


_USER = {"$ref": "#/components/schemas/User"}

routes = [
    Route(
        wire.REGISTER,
        register,
        summary="Register an account",
        body={"$ref": "#/components/schemas/Registration"},
        status=201,
        errors=(400, 409, 413),
    ),
    Route(
        wire.ACCOUNT,
        get_current,
        summary="The signed-in user (email and preferences need user:details:self)",
        errors=(401, 403, 461),
    ),
    Route(
        wire.LOGIN,
        login,
        summary="Sign in with a password (cookie session)",
        body={"$ref": "#/components/schemas/Login"},
        errors=(400, 401, 403),  # 403: a suspended account
    ),
    Route(
        wire.LOGOUT,
        logout,
        summary="Sign out (end the cookie session)",
        status=204,
        errors=(400, 401, 461),
    ),
    Route(
        wire.LOGOUT_CURRENT,
        logout,
        summary="Sign out (the older spelling of DELETE /users/current/session)",
        status=204,
        errors=(400, 401, 461),
    ),
    Route(
        wire.ACCOUNT_REFRESH,
        get_current,
        summary="The signed-in user, as GET /users/current (the session is not extended)",
        errors=(401, 403, 461),
    ),
    Route(wire.USER, get_user, summary="One user", errors=(400, 404)),
    Route(
        wire.USER_UPDATE,
        update_user,
        summary="Change one's bio or social links",
        body={
            "type": "object",
            "properties": {
                "bio": {"type": "string", "maxLength": 500, "nullable": True},
                "social": {
                    "type": "object",
                    "additionalProperties": {"type": "string", "maxLength": 299},
                },
            },
            "anyOf": [{"required": ["bio"]}, {"required": ["social"]}],
        },
        errors=(400, 401, 403, 461),
    ),
    Route(
        wire.USER_CONFIRM,
        confirm,
        summary="Verify an account with its code",
        body={
            "type": "object",
            "required": ["code"],
            "properties": {"code": {"type": "string", "minLength": 1}},
        },
        errors=(400, 403, 404, 409),
    ),
]
