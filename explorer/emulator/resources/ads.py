"""The ad-break API of 2020: ``POST /api/v2/ads/channels/{channelId}`` starts an ad break.

As the developer docs of its day describe it (mixer/developer-docs,
pages/01.guides/03.core/04.AdBreaks/doc.md, "Ad-Break Trigger API (Beta)"): a credential with
the ``chat:ad_break`` scope asks for an ad break on its own channel with a body ``{"requestId":
"<a GUID>"}`` and gets ``{"id": <channel id>}``. Refusals carry the docs' ``errorCode`` and
``errorMessage`` beside the platform's error fields: 403 ``42023`` without the scope or on
another user's channel, and 400 for a channel id that is no integer (``42012``), a body that is
not the documented one (``42018``), an unknown channel (``42002``), a channel that is not
partnered (``42004``: the feature is for partners), hosting (``42007``), co-streaming
(``42008``) or offline (``42020``). A channel runs at most :data:`MAX_BREAKS` breaks in any
:data:`WINDOW` seconds (429 with ``Retry-After``), counted on the wall clock like every limit.
The same ``requestId`` again is the same request: answered 200 again, no second break.

It is mounted under ``/api/v2`` (:data:`V2_ROUTES`, beside the V2 chat routes), outside the
``/api/v1`` contract the toolkit calls.
"""

from __future__ import annotations

import math
import uuid
from typing import Any

import orjson

from explorer.emulator.context import Context
from explorer.emulator.db import ad_breaks, channels
from explorer.emulator.policy import Route
from explorer.emulator.responses import ApiError
from explorer.wire.endpoint import Endpoint
from explorer.wire.numbers import identifier

#: The scope a credential needs.
SCOPE = "chat:ad_break"
#: Ad breaks one channel may run in any :data:`WINDOW` seconds.
MAX_BREAKS = 2
#: The window of :data:`MAX_BREAKS`, in wall seconds (15 minutes).
WINDOW = 15 * 60.0
_NOT_ENABLED = "The ad break feature is not enabled for this channel."


class AdError(ApiError):
    """A refusal of the ad-break API: the platform's error body plus the docs' ``errorCode``
    and ``errorMessage``."""

    def __init__(self, status: int, code: int, message: str) -> None:
        super().__init__(status, message)
        self.code = code

    def body(self) -> dict[str, Any]:
        """The platform's error fields, then the documented pair."""
        return {**super().body(), "errorCode": self.code, "errorMessage": self.message}


def _request_id(raw: bytes) -> str:
    """The body's ``requestId`` (a GUID, normalised), or "" when the body is not the
    documented ``{"requestId": ...}`` (a ``42018``)."""
    try:
        body = orjson.loads(raw)
        value = body["requestId"]
        return str(uuid.UUID(value)) if isinstance(value, str) and len(value) <= 64 else ""
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        return ""


async def start_break(ctx: Context) -> dict[str, Any]:
    """POST /api/v2/ads/channels/{channelId}: run an ad break on the caller's live channel."""
    caller = ctx.caller
    assert caller is not None  # the route needs a signed-in caller
    if SCOPE not in caller.scopes:
        raise AdError(403, 42023, f"[Debug] The OAuth token is missing the {SCOPE} scope.")
    channel_id = identifier(ctx.request.path_params["channel"])
    if channel_id is None:
        raise AdError(400, 42012, "[Debug] Invalid channelId in path")
    request_id = _request_id(await ctx.body())
    if not request_id:
        raise AdError(400, 42018, "[Debug] The request body is invalid.")
    row = channels.fields(
        ctx.store,
        channel_id,
        "userId",
        "partnered",
        "online",
        "hosteeId",
        "costreamId",
        "suspended",
    )
    if row is None or (row[5] and row[0] != caller.user_id):
        raise AdError(400, 42002, "[Debug] Channel not found.")
    owner, partnered, online, hostee, costream, _ = row
    if owner != caller.user_id:
        raise AdError(403, 42023, "[Debug] You can only run ads on your own channel.")
    answer = {"id": channel_id}
    if ad_breaks.requested(ctx.store, channel_id, request_id):
        return answer
    if not partnered:
        raise AdError(400, 42004, f"[Debug] Oops! {_NOT_ENABLED}")
    if hostee is not None:
        raise AdError(400, 42007, "[Debug] Oops! You can't run ads while hosting.")
    if costream is not None:
        raise AdError(400, 42008, "[Debug] Oops! You can't run ads while co-streaming.")
    if not online:
        raise AdError(400, 42020, "[Debug] Oops! You can't run ads while offline.")
    now = ctx.now
    with ctx.store.transaction() as tx:
        recent = ad_breaks.started_since(tx, channel_id, now - WINDOW)
        if len(recent) >= MAX_BREAKS:
            wait = math.ceil(recent[-MAX_BREAKS] + WINDOW - now)
            raise ApiError(
                429,
                f"A channel may run {MAX_BREAKS} ad breaks every {WINDOW / 60:g} minutes.",
                headers={"Retry-After": str(max(wait, 1))},
            )
        ad_breaks.add(tx, channel_id, request_id, caller.user_id, now)
    return answer


#: Nothing under ``/api/v1``: the ad-break API is V2 only.
routes: list[Route] = []

#: The ad-break route, mounted under ``/api/v2`` (see the module's docstring).
V2_ROUTES = [
    Route(
        Endpoint("POST", "/ads/channels/{channel}", "channel-write", signin="user"),
        start_break,
        summary=f"Run an ad break on one's own live, partnered channel (needs {SCOPE})",
        body={
            "type": "object",
            "required": ["requestId"],
            "properties": {"requestId": {"type": "string", "format": "uuid"}},
        },
        response={
            "type": "object",
            "required": ["id"],
            "properties": {"id": {"type": "integer"}},
        },
        errors=(400, 401, 403, 413, 429, 461),
    ),
]
