"""Channel analytics: owner-only time series, validated ranges, deterministic values."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import httpx
import pytest

from explorer.emulator import Platform, status
from explorer.emulator.sessions import STREAMER_AUDIENCE, STREAMER_HOURS

SERIES = (
    "viewers",
    "tsdb/viewers",
    "tsdb/viewersMetrics",
    "tsdb/streamSessions",
    "tsdb/streamHosts",
    "tsdb/subscriptions",
    "tsdb/followers",
    "tsdb/sparkSpent",
    "tsdb/emojiUsageRanks",
    "tsdb/emojiUsage",
    "tsdb/gameRanks",
    "tsdb/gameRanksGlobal",
    "tsdb/subRevenue",
    "tsdb/cpm",
)
RANGE = {"from": "2020-07-01T00:00:00.000Z", "to": "2020-07-15T00:00:00.000Z"}
SignIn = Callable[..., httpx.Client]


def parse(stamp: str) -> datetime:
    """An ISO timestamp of the platform as an aware datetime."""
    return datetime.fromisoformat(stamp)


@pytest.fixture(scope="module")
def streamer_channel(platform: Platform) -> int:
    """The id of the demo streamer's channel (online, partnered, busy)."""
    return int(httpx.get(f"{platform.base_url}/channels/streamer").json()["id"])


@pytest.fixture
def owner(platform: Platform, signed_in: SignIn) -> httpx.Client:
    """A client signed in as the streamer, who owns ``streamer_channel``."""
    return signed_in(platform.base_url, "streamer")


def series_url(channel: int, series: str) -> str:
    """The path of one analytics series of ``channel``."""
    return f"/channels/{channel}/analytics/{series}"


def point_schema(platform: Platform, series: str) -> dict[str, Any]:
    """The OpenAPI schema of one point of ``series``."""
    document = httpx.get(f"{platform.base_url}/openapi.json").json()
    operation = document["paths"][f"/channels/{{channel}}/analytics/{series}"]["get"]
    ref = operation["responses"]["200"]["content"]["application/json"]["schema"]["items"]["$ref"]
    schema: dict[str, Any] = document["components"]["schemas"][ref.rsplit("/", 1)[1]]
    return schema


@pytest.mark.parametrize("series", SERIES)
def test_owner_gets_points_of_the_documented_shape(
    platform: Platform, owner: httpx.Client, streamer_channel: int, series: str
) -> None:
    """Every series answers the owner with a list of points shaped as its OpenAPI schema."""
    response = owner.get(series_url(streamer_channel, series), params=RANGE)
    assert response.status_code == 200
    points = response.json()
    assert points, f"{series} is empty for a busy partnered channel"
    required = set(point_schema(platform, series)["required"])
    start, end = parse(RANGE["from"]), parse(RANGE["to"])
    for point in points:
        assert required <= set(point)
        assert point["channel"] == streamer_channel
        assert start - timedelta(days=1) < parse(point["time"]) < end


@pytest.mark.parametrize("series", SERIES)
def test_another_user_is_refused(
    platform: Platform, signed_in: SignIn, streamer_channel: int, series: str
) -> None:
    """A signed-in user who does not own the channel gets 403."""
    viewer = signed_in(platform.base_url, "viewer")
    assert viewer.get(series_url(streamer_channel, series), params=RANGE).status_code == 403


@pytest.mark.parametrize("series", SERIES)
def test_anonymous_is_refused(platform: Platform, streamer_channel: int, series: str) -> None:
    """Without credentials every series answers 401."""
    url = f"{platform.base_url}{series_url(streamer_channel, series)}"
    assert httpx.get(url, params=RANGE).status_code == 401


def test_staff_may_read_any_channel(
    platform: Platform, signed_in: SignIn, streamer_channel: int
) -> None:
    """Staff read another channel's analytics."""
    staff = signed_in(platform.base_url, "staff")
    response = staff.get(series_url(streamer_channel, "tsdb/viewers"), params=RANGE)
    assert response.status_code == 200


def test_unknown_channel_is_404(owner: httpx.Client) -> None:
    """A channel that does not exist answers 404."""
    assert owner.get(series_url(999_999_999, "tsdb/viewers"), params=RANGE).status_code == 404


@pytest.mark.parametrize(
    ("params", "path"),
    [
        ({"from": "yesterday", "to": RANGE["to"]}, "from"),
        ({"from": RANGE["from"], "to": "2024-13-01"}, "to"),
        ({"from": "", "to": RANGE["to"]}, "from"),
        ({"from": RANGE["to"], "to": RANGE["from"]}, "from"),
        ({"from": RANGE["from"], "to": RANGE["from"]}, "from"),
        ({"from": "2024-01-01T00:00:00Z", "to": "2024-04-01T00:00:01Z"}, "to"),
        ({"from": "2020-01-01T00:00:00Z"}, "to"),
    ],
)
def test_bad_ranges_are_400_naming_the_parameter(
    owner: httpx.Client, streamer_channel: int, params: dict[str, str], path: str
) -> None:
    """Unparseable, reversed, empty and over-90-day ranges answer 400 with details."""
    response = owner.get(series_url(streamer_channel, "tsdb/followers"), params=params)
    assert response.status_code == 400
    assert response.json()["details"][0]["path"] == path


@pytest.mark.parametrize("series", SERIES)
def test_same_query_same_numbers(owner: httpx.Client, streamer_channel: int, series: str) -> None:
    """Two identical queries answer identical bodies."""
    first = owner.get(series_url(streamer_channel, series), params=RANGE)
    second = owner.get(series_url(streamer_channel, series), params=RANGE)
    assert first.content == second.content


def test_overlapping_ranges_agree(owner: httpx.Client, streamer_channel: int) -> None:
    """An hour's value does not depend on the range that includes it."""
    url = series_url(streamer_channel, "tsdb/viewers")
    wide = owner.get(url, params=RANGE).json()
    narrow = owner.get(url, params={"from": "2020-07-05T10:30:00Z", "to": "2020-07-06T00:00:00Z"})
    points = narrow.json()
    assert points[0]["time"] == "2020-07-05T10:00:00.000Z"
    assert len(points) == 14
    assert all(point in wide for point in points)


def test_hourly_series_are_a_regular_grid(owner: httpx.Client, streamer_channel: int) -> None:
    """tsdb/viewers has one point per UTC hour of the range."""
    points = owner.get(series_url(streamer_channel, "tsdb/viewers"), params=RANGE).json()
    times = [parse(point["time"]) for point in points]
    assert len(times) == 14 * 24
    assert all(b - a == timedelta(hours=1) for a, b in itertools.pairwise(times))


def test_default_range_is_the_last_seven_days(owner: httpx.Client, streamer_channel: int) -> None:
    """Without from/to the series covers the elapsed hours of the world's last 7 days."""
    response = owner.get(series_url(streamer_channel, "tsdb/viewers"))
    points = response.json()
    now = parse(response.headers["X-Explorer-Clock"])
    assert 7 * 24 - 1 <= len(points) <= 7 * 24 + 1
    assert all(now - timedelta(days=7, hours=1) <= parse(p["time"]) < now for p in points)


def test_no_points_from_the_future(owner: httpx.Client, streamer_channel: int) -> None:
    """A range reaching past the world's now stops at the last elapsed bucket."""
    now = parse(owner.get(series_url(streamer_channel, "tsdb/viewers")).headers["X-Explorer-Clock"])
    params = {
        "from": (now - timedelta(days=2)).isoformat(),
        "to": (now + timedelta(days=2)).isoformat(),
    }
    points = owner.get(series_url(streamer_channel, "tsdb/sparkSpent"), params=params).json()
    assert points
    assert all(parse(p["time"]) + timedelta(hours=1) <= now for p in points)


def test_emoji_parameter_keeps_one_emote(owner: httpx.Client, streamer_channel: int) -> None:
    """emojiUsage with emoji=:cactus holds only :cactus rows."""
    url = series_url(streamer_channel, "tsdb/emojiUsage")
    points = owner.get(url, params={**RANGE, "emoji": ":cactus"}).json()
    assert points
    assert {point["emoji"] for point in points} == {":cactus"}


def test_emoji_ranks_sum_the_hourly_usage(owner: httpx.Client, streamer_channel: int) -> None:
    """emojiUsageRanks counts are the daily sums of emojiUsage."""
    usage = owner.get(series_url(streamer_channel, "tsdb/emojiUsage"), params=RANGE).json()
    daily: Counter[tuple[str, str]] = Counter()
    for point in usage:
        daily[(point["time"][:10], point["emoji"])] += point["count"]
    ranks = owner.get(series_url(streamer_channel, "tsdb/emojiUsageRanks"), params=RANGE).json()
    assert {(p["time"][:10], p["emoji"]): p["count"] for p in ranks} == dict(daily)


def test_followers_delta_is_the_change_of_total(owner: httpx.Client, streamer_channel: int) -> None:
    """Each day's delta is its total minus the previous day's total."""
    points = owner.get(series_url(streamer_channel, "tsdb/followers"), params=RANGE).json()
    for before, after in itertools.pairwise(points):
        assert after["total"] - before["total"] == after["delta"]


def test_money_series_are_empty_for_channels_that_are_not_partnered(
    platform: Platform, signed_in: SignIn
) -> None:
    """subscriptions, subRevenue and cpm are empty lists for a channel that is not a partner."""
    viewer = signed_in(platform.base_url, "viewer")
    channel = viewer.get("/users/current").json()["channel"]
    assert channel["partnered"] is False
    for series in ("tsdb/subscriptions", "tsdb/subRevenue", "tsdb/cpm"):
        assert viewer.get(series_url(channel["id"], series), params=RANGE).json() == []


def test_values_follow_the_channels_audience(
    platform: Platform, signed_in: SignIn, owner: httpx.Client, streamer_channel: int
) -> None:
    """A big channel's peak viewers dwarf a small channel's."""
    viewer = signed_in(platform.base_url, "viewer")
    small = viewer.get("/users/current").json()["channel"]["id"]
    big_peak = max(
        p["peak"] for p in owner.get(series_url(streamer_channel, "viewers"), params=RANGE).json()
    )
    small_points = viewer.get(series_url(small, "viewers"), params=RANGE).json()
    assert max((p["peak"] for p in small_points), default=0) * 20 < big_peak


def test_a_partners_month_of_subscriptions_follows_its_viewer_hours(
    owner: httpx.Client, streamer_channel: int
) -> None:
    """A partner's paid subscriptions over 30 days are its month's viewer-hours at its rate."""
    month = {"from": "2020-06-22T00:00:00Z", "to": "2020-07-22T00:00:00Z"}
    points = owner.get(series_url(streamer_channel, "tsdb/subRevenue"), params=month).json()
    paid = sum(point["count"] for point in points)
    expected = status.subscribers(STREAMER_AUDIENCE, STREAMER_HOURS)
    assert 0.8 * expected <= paid <= 1.25 * expected
