"""Changing one's password: the credentials of the old one end with it.

``PUT /users/current/password`` takes the current password and a new one (8-256 characters).
A wrong current password answers 401 and is charged to ``user-login-failed`` like a failed
login, so a stolen session cannot guess it faster here than at the login. On success every
other cookie session of the user ends, every OAuth token of theirs is revoked, and every chat
authkey of theirs ends on every node (:func:`~explorer.emulator.chat.authkeys.end`): whoever
held the old password holds nothing. The calling session stays signed in.
"""

from __future__ import annotations

import asyncio

from explorer.emulator import credentials, endings
from explorer.emulator.context import Context
from explorer.emulator.db import users
from explorer.emulator.policy import Route
from explorer.emulator.responses import ApiError, bad_request
from explorer.wire import routes as wire


async def change_password(ctx: Context) -> None:
    """PUT /users/current/password: check the current password, store the new one, end the
    user's other credentials."""
    user_id = ctx.user_id()
    body = await ctx.json_object()
    current, new = body.get("password"), body.get("newPassword")
    if not isinstance(current, str) or not current:
        raise bad_request("password (the current one) is required.", "password", "required")
    if not isinstance(new, str) or not 8 <= len(new) <= 256:
        raise bad_request("newPassword must be 8-256 characters.", "newPassword")
    stored = users.password_hash(ctx.store, user_id)
    if not await asyncio.to_thread(credentials.check_password, current, stored):
        raise ApiError(401, "The current password is wrong.")
    hashed = await asyncio.to_thread(credentials.hash_password, new)
    caller = ctx.caller
    users.set_password(ctx.store, user_id, hashed)
    keep = caller.credential if caller is not None and caller.kind == "session" else ""
    endings.end_user(ctx.services, user_id, keep)


routes = [
    Route(
        wire.ACCOUNT_PASSWORD,
        change_password,
        summary="Change one's password (ends the user's other sessions, tokens and chat keys)",
        body={
            "type": "object",
            "required": ["password", "newPassword"],
            "properties": {
                "password": {"type": "string", "minLength": 1},
                "newPassword": {"type": "string", "minLength": 8, "maxLength": 256},
            },
        },
        status=204,
        errors=(400, 401, 403, 413, 429, 461),
    ),
]
