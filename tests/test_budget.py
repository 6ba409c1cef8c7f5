"""api.budget(): each rate-limit bucket's remaining calls and reset, from the headers the
platform already sent."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pandas as pd
import pytest

import explorer
from explorer.emulator import Platform
from explorer.wire.ratelimit import BUCKETS
from tests.databases import start


@pytest.fixture(scope="module")
def platform() -> Iterator[Platform]:
    """A small platform enforcing its rate limits."""
    with start(channels=50, rate_limits=True) as running:
        yield running


def test_before_any_answer_every_bucket_shows_its_table_limit(platform: Platform) -> None:
    """A fresh client lists every bucket of the table with its limit, nothing reported and
    nothing remaining known (but the locally counted global bucket, full)."""
    with explorer.connect(platform.base_url, progress=False) as api:
        budget = api.budget()
    assert sorted(budget.index) == sorted(BUCKETS)
    assert budget["limit"].to_dict() == {name: b.count for name, b in BUCKETS.items()}
    assert budget.drop(index="global")["remaining"].isna().all()
    assert not budget.drop(index="global")["reported"].any()
    assert budget.loc["global", "remaining"] == BUCKETS["global"].count


def test_each_answer_updates_its_buckets_remaining_and_reset(platform: Platform) -> None:
    """Each request to a bucket leaves one call fewer remaining, as the platform's headers
    say, with the window's reset within the bucket's interval; others stay unreported."""
    with explorer.connect(platform.base_url, progress=False) as api:
        api.channels(max_rows=5)
        first = api.budget().loc["channel-read"]
        api.channel("streamer").info()
        second = api.budget()
    now = pd.Timestamp(time.time(), unit="s", tz="UTC")
    interval = pd.Timedelta(seconds=BUCKETS["channel-read"].interval)
    assert first["reported"] and second.loc["channel-read", "reported"]
    assert second.loc["channel-read", "remaining"] == first["remaining"] - 1
    assert now < second.loc["channel-read", "resets"] <= now + interval
    assert not second.loc["chats", "reported"]
