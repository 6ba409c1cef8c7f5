"""Channel analytics that rank things: emotes used in chat and games by audience.

Built on the machinery of ``analytics`` (same ranges, owner-only access, determinism).
``emojiUsageRanks`` is the daily sum of ``emojiUsage``, so the two always agree. Game totals
(live streams, viewer-hours) come from an RNG shared by the whole world rather than the
channel's, so every owner sees the same game figures; the pool of each game's streams is the
number of channels in the store that play it.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from typing import Any

from explorer.emulator.context import Context
from explorer.emulator.policy import Param
from explorer.emulator.resources.analytics import (
    DAY,
    HOUR,
    INT,
    STR,
    SeriesRoute,
    Timeline,
    point_schema,
    series_routes,
    series_schemas,
)
from explorer.emulator.responses import bad_request
from explorer.wire import channel_routes as channel_wire

#: Chat emotes and how often each is used relative to the first, most popular first.
EMOTES: tuple[tuple[str, float], ...] = (
    (":)", 1.0),
    ("<3", 0.7),
    (":D", 0.6),
    (":cactus", 0.45),
    (":lul", 0.4),
    (":gg", 0.3),
    (":fire", 0.25),
    (":salute", 0.15),
    (":wave", 0.12),
    (":mappa", 0.08),
)


def emotes(t: Timeline, hour: int) -> dict[str, int]:
    """Emote uses in chat during ``hour`` (only emotes used at least once)."""
    authed = t.audience(hour)[1]
    if authed == 0:
        return {}
    rng = t.profile.rng("emotes", hour)
    counts = {name: round(authed * weight * 0.4 * rng.uniform(0.3, 1.7)) for name, weight in EMOTES}
    return {name: count for name, count in counts.items() if count}


def emoji_usage(t: Timeline, ctx: Context) -> list[dict[str, Any]]:
    """Hourly: uses of each emote, a row per emote used; ``emoji`` keeps only that one."""
    only = ctx.params.get("emoji")
    if only is not None and not 0 < len(only) <= 64:
        raise bad_request("emoji must be 1-64 characters.", "emoji")
    return [
        t.point(hour * HOUR, emoji=name, count=count)
        for hour in t.hours()
        for name, count in emotes(t, hour).items()
        if only is None or name == only
    ]


def emoji_ranks(t: Timeline, ctx: Context) -> list[dict[str, Any]]:
    """Daily: the emotes used that day, ranked by uses."""
    points = []
    for day in t.days():
        totals: Counter[str] = Counter()
        for hour in range(day * 24, day * 24 + 24):
            totals.update(emotes(t, hour))
        points += [
            t.point(day * DAY, emoji=name, count=count, rank=rank)
            for rank, (name, count) in enumerate(totals.most_common(), start=1)
        ]
    return points


def _game_day(t: Timeline, day: int, type_id: int, pool: int, own: int) -> tuple[int, int, float]:
    """(live streams, viewer-hours, mean viewer-hours of the other streams) of a game on
    ``day``, drawn from ``pool`` channels; the channel's own stream (``own`` viewer-hours, when
    it played this game) is added."""
    rng = random.Random(f"{t.profile.seed}:games:{day}:{type_id}")
    streams = round(pool * rng.uniform(0.1, 0.3))
    mean = rng.uniform(4.0, 30.0)
    views = round(streams * mean * rng.lognormvariate(0, 0.2))
    if own and type_id == t.profile.type_id:
        return streams + 1, views + own, mean
    return streams, views, mean


def _pools(ctx: Context) -> dict[int, int]:
    """Channels per game in the store."""
    rows = ctx.store.all(
        "SELECT typeId, COUNT(*) FROM channels WHERE typeId IS NOT NULL GROUP BY typeId"
    )
    return {row[0]: row[1] for row in rows}


def game_ranks(t: Timeline, ctx: Context) -> list[dict[str, Any]]:
    """Daily, on days the channel streamed: its rank among the streams of its game, the game's
    live streams and viewer-hours, and the channel's own viewer-hours (``shared``)."""
    type_id = t.profile.type_id
    if type_id is None:
        return []
    pool = _pools(ctx).get(type_id, 0)
    points = []
    for day in t.days():
        shared = sum(t.watched(day))
        if not shared:
            continue
        streams, views, mean = _game_day(t, day, type_id, pool, shared)
        # Other streams' viewer-hours are roughly exponential around their mean.
        rank = 1 + round((streams - 1) * math.exp(-shared / mean))
        points.append(
            t.point(day * DAY, type=type_id, rank=rank, streams=streams, views=views, shared=shared)
        )
    return points


def game_ranks_global(t: Timeline, ctx: Context) -> list[dict[str, Any]]:
    """Daily: every game with live streams, ranked by viewer-hours platform-wide; ``shared`` is
    the channel's own viewer-hours in that game."""
    pools = _pools(ctx)
    points = []
    for day in t.days():
        watched = sum(t.watched(day))
        games = []
        for type_id, pool in pools.items():
            streams, views, _ = _game_day(t, day, type_id, pool, watched)
            if streams:
                shared = watched if type_id == t.profile.type_id else 0
                games.append((views, type_id, streams, shared))
        games.sort(key=lambda game: (-game[0], game[1]))
        points += [
            t.point(day * DAY, type=type_id, rank=rank, streams=streams, views=views, shared=shared)
            for rank, (views, type_id, streams, shared) in enumerate(games, start=1)
        ]
    return points


_GAME_RANK = (
    "AnalyticGameRank",
    point_schema(type=INT, rank=INT, streams=INT, views=INT, shared=INT),
)

SERIES: tuple[SeriesRoute, ...] = (
    SeriesRoute(
        channel_wire.CHANNEL_ANALYTICS_EMOJI_USAGE_RANKS,
        emoji_ranks,
        ("AnalyticEmojiRank", point_schema(emoji=STR, count=INT, rank=INT)),
        "Emotes ranked per day",
    ),
    SeriesRoute(
        channel_wire.CHANNEL_ANALYTICS_EMOJI_USAGE,
        emoji_usage,
        ("AnalyticEmojiUsage", point_schema(emoji=STR, count=INT)),
        "Emote uses per hour",
        (Param("emoji", STR, "keep only this emote, e.g. :cactus"),),
    ),
    SeriesRoute(
        channel_wire.CHANNEL_ANALYTICS_GAME_RANKS,
        game_ranks,
        _GAME_RANK,
        "Rank within the game per day",
    ),
    SeriesRoute(
        channel_wire.CHANNEL_ANALYTICS_GAME_RANKS_GLOBAL,
        game_ranks_global,
        _GAME_RANK,
        "Games ranked per day",
    ),
)

SCHEMAS = series_schemas(SERIES)
routes = series_routes(SERIES)
