"""Follows: who follows a channel, and the caller following or unfollowing it.

``PUT`` and ``POST`` both follow and are idempotent: a user follows a channel at most once, so
repeating either leaves one follow and counts it once. ``DELETE`` unfollows, equally
idempotent. Each answers the caller's follow state with the channel's ``numFollowers``, which
changes in the same transaction as the follow itself (the seeded ``numFollowers`` also counts
followers from before the emulated world began, so it may exceed the listed followers). The
listed followers include those the channel's streams brought: the past 30 days' sessions' are
stored the first time anyone lists them, later sessions' as they end (``streams.py``).
Following one's own channel is refused. The historical body ``{"user": <id>}`` is accepted
but must name the caller.

The user's side, ``GET /users/{id}/follows`` (what the official Java client lists as a
user's follows): the channels they follow, most recently followed first, paged as the
followers are. It lists the follows stored: every follow made through the API or brought by a
session since the world's instant, and a channel's follows from the 30 days before once that
channel's followers have been listed (they are stored then, as above).
"""

from __future__ import annotations

from typing import Any

import orjson

from explorer.emulator import streams
from explorer.emulator.access import ChannelRef, channel_ref, listed_users
from explorer.emulator.context import Context, lenient_id
from explorer.emulator.db import follows
from explorer.emulator.db import users as db_users
from explorer.emulator.db.engine import Store, Transaction
from explorer.emulator.live import happenings
from explorer.emulator.paging import PAGE_PARAMS, channel_page, page_of, paged
from explorer.emulator.policy import Handler, Route
from explorer.emulator.resources import notifications
from explorer.emulator.responses import ApiError, JSONResponse, bad_request, not_found
from explorer.emulator.sessions import HISTORY_START
from explorer.emulator.shapes import USER_FIELDS, render_user
from explorer.emulator.world import WORLD_NOW
from explorer.wire import channel_routes as channel_wire
from explorer.wire import routes as wire
from explorer.wire.endpoint import Endpoint


async def _follower(ctx: Context, channel: ChannelRef) -> int:
    """The caller, after checking the optional historical body ``{"user": id}`` names them."""
    caller = ctx.user_id()
    raw = await ctx.body()
    if raw.strip():
        try:
            body = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise bad_request(f"Malformed JSON: {exc.msg}.", "body", "json") from None
        if not isinstance(body, dict):
            raise bad_request("The body must be a JSON object.", "body", "object")
        named = lenient_id(body.get("user", caller))
        if not isinstance(named, int) or isinstance(named, bool):
            raise bad_request("user must be a user id.", "user")
        if named != caller:
            raise ApiError(403, "You can only follow or unfollow as yourself.")
    if caller == channel.user_id:
        raise bad_request("You cannot follow your own channel.", "channel", "self")
    return caller


def _state(tx: Transaction, channel: ChannelRef, user_id: int) -> dict[str, Any]:
    """The caller's follow state, read in the transaction that changed it."""
    since, followers = follows.state(tx, channel.id, user_id)
    return {
        "channelId": channel.id,
        "userId": user_id,
        "following": since is not None,
        "followedAt": since,
        "numFollowers": followers,
    }


def seed_follows(store: Store, channel_id: int) -> None:
    """Store, once, the follows the channel's sessions of the world's history (the 30 days
    before ``WORLD_NOW``) brought; the seeded ``numFollowers`` already counts them. Later
    sessions add theirs as they end (``streams.py``)."""
    index = streams.index_of(store, channel_id)
    if index is None or follows.is_seeded(store, channel_id):
        return
    seed, users = int(store.meta("seed") or 0), db_users.highest_id(store)
    now = WORLD_NOW.timestamp()
    schedule = streams.schedule_of(store)
    past = schedule.of_channel(index, HISTORY_START, now)
    rows = [
        (channel_id, user, at)
        for item in past
        if item.end <= now
        for user, at in streams.followers(item, seed, users, streams.spikes(schedule, seed, item))
    ]
    follows.seed(store, channel_id, rows)


async def list_followers(ctx: Context) -> JSONResponse:
    """GET /channels/{id}/follow: the channel's followers, most recent first."""
    channel = channel_ref(ctx)
    seed_follows(ctx.store, channel.id)
    page = page_of(ctx)
    rows, total = follows.followers(
        ctx.store, channel.id, listed_users(ctx), page.limit, page.offset
    )
    width = len(USER_FIELDS)
    return paged([{**render_user(r[:width]), "followedAt": r[width]} for r in rows], total)


async def list_follows(ctx: Context) -> JSONResponse:
    """GET /users/{id}/follows: the channels the user follows, most recently followed first."""
    user_id = ctx.path_int("user")
    if not db_users.is_listed(ctx.store, user_id, listed_users(ctx)):
        raise not_found("User")
    return channel_page(ctx, follows.FOLLOWED_BY, (user_id,), follows.RECENTLY_FOLLOWED, (user_id,))


async def follow(ctx: Context) -> dict[str, Any]:
    """PUT or POST /channels/{id}/follow: follow the channel (idempotent)."""
    channel = channel_ref(ctx)
    user_id = await _follower(ctx, channel)
    with ctx.store.transaction() as tx:
        if follows.follow(tx, channel.id, user_id, ctx.iso_now()):
            follower = happenings.followed(tx, channel.id, user_id, following=True)
            notifications.followed(tx, channel.id, channel.user_id, follower, ctx.iso_now())
        return _state(tx, channel, user_id)


async def unfollow(ctx: Context) -> dict[str, Any]:
    """DELETE /channels/{id}/follow: stop following the channel (idempotent)."""
    channel = channel_ref(ctx)
    user_id = await _follower(ctx, channel)
    with ctx.store.transaction() as tx:
        if follows.unfollow(tx, channel.id, user_id):
            happenings.followed(tx, channel.id, user_id, following=False)
        return _state(tx, channel, user_id)


_WRITE_ERRORS = (400, 401, 403, 404, 413, 461)


def _write(endpoint: Endpoint, handler: Handler, summary: str) -> Route:
    return Route(
        endpoint,
        handler,
        summary=f'{summary}; an optional body {{"user": id}} must name the caller',
        errors=_WRITE_ERRORS,
    )


routes = [
    Route(
        channel_wire.CHANNEL_FOLLOWERS,
        list_followers,
        summary="The channel's followers, most recent first",
        params=PAGE_PARAMS,
        errors=(400, 404),
    ),
    _write(channel_wire.CHANNEL_FOLLOW, follow, "Follow the channel (idempotent)"),
    _write(
        channel_wire.CHANNEL_FOLLOW_BY_POST, follow, "Follow the channel (idempotent, same as PUT)"
    ),
    _write(channel_wire.CHANNEL_UNFOLLOW, unfollow, "Unfollow the channel (idempotent)"),
    Route(
        wire.USER_FOLLOWS,
        list_follows,
        summary="The channels a user follows, most recently followed first",
        params=PAGE_PARAMS,
        errors=(400, 404),
    ),
]
