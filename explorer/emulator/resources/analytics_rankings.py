"""Channel analytics that rank things: emotes used in chat and games by audience.

Built on the machinery of ``analytics`` (same ranges, owner-only access, determinism).
``emojiUsageRanks`` is the daily sum of ``emojiUsage``, so the two always agree. Game figures
(streams, viewer-hours, ranks) are the world's sessions by category (``categories.streamed``),
the ones the directory shows, so every owner sees the same game figures.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from explorer.emulator import categories
from explorer.emulator.categories import Streamed
from explorer.emulator.context import Context
from explorer.emulator.policy import Param
from explorer.emulator.resources.analytics import (
    DAY,
    HOUR,
    STR,
    SeriesRoute,
    Timeline,
    series_routes,
)
from explorer.emulator.responses import bad_request
from explorer.emulator.sessions import Schedule
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


def _streamed(t: Timeline, day: int) -> tuple[Streamed, slice] | None:
    """The world's streams of ``day`` by category (``categories.streamed``), or None before
    the world's history."""
    index = Schedule.block_of(day * DAY)
    if index < 0:
        return None
    profile = t.profile
    table = categories.streamed(profile.seed, profile.world_channels, index)
    return table, table.on(day)


def game_ranks(t: Timeline, ctx: Context) -> list[dict[str, Any]]:
    """Daily, for each game the channel streamed that day (by the day a stream started): its
    rank among that day's streams of the game by viewer-hours, the game's streams and
    viewer-hours, and the channel's own viewer-hours in it (``shared``)."""
    index = t.profile.index
    if index is None:
        return []
    points = []
    for day in t.days():
        found = _streamed(t, day)
        if found is None:
            continue
        table, rows = found
        category, channel, watched = (
            table.category[rows],
            table.channel[rows],
            table.watched[rows],
        )
        own = channel == index
        for type_id in np.unique(category[own]).tolist():
            low, high = np.searchsorted(category, [type_id, type_id + 1])
            mine = own[low:high]
            best = float(watched[low:high][mine].max())
            points.append(
                t.point(
                    day * DAY,
                    type=type_id,
                    rank=1 + int((watched[low:high] > best).sum()),
                    streams=int(high - low),
                    views=round(float(watched[low:high].sum())),
                    shared=round(float(watched[low:high][mine].sum())),
                )
            )
    return points


def game_ranks_global(t: Timeline, ctx: Context) -> list[dict[str, Any]]:
    """Daily: every game streamed that day, ranked by viewer-hours platform-wide; ``shared``
    is the channel's own viewer-hours in that game."""
    index = t.profile.index
    points = []
    for day in t.days():
        found = _streamed(t, day)
        if found is None:
            continue
        table, rows = found
        category, watched = table.category[rows], table.watched[rows]
        if not len(category):
            continue
        kinds, first, streams = np.unique(category, return_index=True, return_counts=True)
        views = np.add.reduceat(watched, first)
        own = np.where(table.channel[rows] == index, watched, 0.0)
        shared = np.add.reduceat(own, first)
        order = np.lexsort((kinds, -np.round(views)))
        points += [
            t.point(
                day * DAY,
                type=int(kinds[k]),
                rank=rank,
                streams=int(streams[k]),
                views=round(float(views[k])),
                shared=round(float(shared[k])),
            )
            for rank, k in enumerate(order.tolist(), start=1)
        ]
    return points


SERIES: tuple[SeriesRoute, ...] = (
    SeriesRoute(
        channel_wire.CHANNEL_ANALYTICS_EMOJI_USAGE_RANKS,
        emoji_ranks,
        "Emotes ranked per day",
    ),
    SeriesRoute(
        channel_wire.CHANNEL_ANALYTICS_EMOJI_USAGE,
        emoji_usage,
        "Emote uses per hour",
        (Param("emoji", STR, "keep only this emote, e.g. :cactus"),),
    ),
    SeriesRoute(
        channel_wire.CHANNEL_ANALYTICS_GAME_RANKS,
        game_ranks,
        "Rank within the game per day",
    ),
    SeriesRoute(
        channel_wire.CHANNEL_ANALYTICS_GAME_RANKS_GLOBAL,
        game_ranks_global,
        "Games ranked per day",
    ),
)

routes = series_routes(SERIES)
