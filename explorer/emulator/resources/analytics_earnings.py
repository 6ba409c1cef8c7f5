"""Channel analytics about money: subscriptions, subscription revenue, ads (CPM) and sparks.

Built on the machinery of ``analytics`` (same ranges, owner-only access, determinism). Only
partners can be subscribed to or show ads, so ``subscriptions``, ``subRevenue`` and ``cpm`` are
empty lists for other channels. Amounts of money are integers in cents.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from explorer.emulator import status
from explorer.emulator.context import Context
from explorer.emulator.resources.analytics import (
    DAY,
    HOUR,
    Profile,
    SeriesRoute,
    Timeline,
    counter_series,
    pick,
    series_routes,
)
from explorer.wire import channel_routes as channel_wire

GATEWAYS = (("stripe", 45), ("paypal", 35), ("xbox", 20))
#: A subscription's monthly price and the creator's share of it, in cents.
SUB_PRICE = 499
SUB_SHARE = 0.5


def subscribers(profile: Profile) -> int:
    """Subscribers on the world's day, for partners only: a month's paid subscriptions at the
    channel's audience and hours streamed (``status.subscribers``), so that the platform pays
    about 4.5 subscriptions per 1,000 viewer-hours; a share of the followers for a channel
    made later (it has no streaming habits)."""
    if not profile.partnered:
        return 0
    if profile.index is None:
        return max(1, profile.followers // 25)
    habits = profile.schedule.habits
    return status.subscribers(
        float(habits.audience[profile.index]), float(habits.hours[profile.index])
    )


def subscriptions(t: Timeline, ctx: Context) -> list[dict[str, Any]]:
    """Daily: total subscribers and the change over the day."""
    base = subscribers(t.profile)
    return counter_series(t, base, "subscriptions") if base else []


def sub_revenue(t: Timeline, ctx: Context) -> list[dict[str, Any]]:
    """Daily, per payment gateway: subscriptions paid that day (new ones plus a thirtieth of
    the others renewing), their gross and the channel's share."""
    base = subscribers(t.profile)
    if not base:
        return []
    points = []
    for day in t.days():
        total = t.profile.counter(base, day, "subscriptions")
        fresh = max(0, total - t.profile.counter(base, day - 1, "subscriptions"))
        rng = t.profile.rng("revenue", day)
        paid = fresh + round(total / 30 * rng.uniform(0.8, 1.2))
        gateways = Counter(pick(rng, GATEWAYS) for _ in range(paid))
        for gateway, count in sorted(gateways.items()):
            gross = count * SUB_PRICE
            points.append(
                t.point(
                    day * DAY,
                    gateway=gateway,
                    count=count,
                    gross=gross,
                    total=round(gross * SUB_SHARE),
                )
            )
    return points


def cpm(t: Timeline, ctx: Context) -> list[dict[str, Any]]:
    """Daily: ad impressions (about two per viewer-hour) and the payout at $2-6 per 1000."""
    if not t.profile.partnered:
        return []
    points = []
    for day in t.days():
        rng = t.profile.rng("cpm", day)
        impressions = round(sum(t.watched(day)) * rng.uniform(1.5, 3.0))
        payout = round(impressions * rng.uniform(200, 600) / 1000)
        points.append(t.point(day * DAY, impressions=impressions, payout=payout))
    return points


def spark_spent(t: Timeline, ctx: Context) -> list[dict[str, Any]]:
    """Hourly: sparks signed-in viewers spent in the channel (0 while offline)."""
    points = []
    for hour in t.hours():
        authed = t.audience(hour)[1]
        sparks = round(authed * t.profile.rng("sparks", hour).uniform(0.0, 4.0)) if authed else 0
        points.append(t.point(hour * HOUR, sparks=sparks))
    return points


SERIES: tuple[SeriesRoute, ...] = (
    SeriesRoute(
        channel_wire.CHANNEL_ANALYTICS_SUBSCRIPTIONS,
        subscriptions,
        "Subscribers per day",
    ),
    SeriesRoute(
        channel_wire.CHANNEL_ANALYTICS_SUB_REVENUE,
        sub_revenue,
        "Subscription revenue per day and gateway",
    ),
    SeriesRoute(
        channel_wire.CHANNEL_ANALYTICS_CPM,
        cpm,
        "Ad impressions and payout per day",
    ),
    SeriesRoute(
        channel_wire.CHANNEL_ANALYTICS_SPARK_SPENT,
        spark_spent,
        "Sparks spent per hour",
    ),
)

routes = series_routes(SERIES)
