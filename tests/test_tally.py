"""A request's tally of rate-limit buckets: places held while it is served, charged or given
back when it ends."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from explorer.emulator.context import Config, Services
from explorer.emulator.policy import Tally
from tests.clocks import ManualClock
from tests.databases import open_services

BUCKETS = ("channel-read",)


@pytest.fixture
def services() -> Iterator[Services]:
    """A small world, channel reads limited to 2 a minute."""
    opened = open_services(
        ":memory:", Config(channels=5, buckets={"channel-read": (2, 60.0)}), ManualClock()
    )
    yield opened
    opened.store.close()


def _tally(services: Services) -> Tally:
    return Tally(services, BUCKETS, lambda _: "addr:127.0.0.1", services.clock())


def test_requests_in_flight_fill_the_bucket(services: Services) -> None:
    """Two admitted requests not answered yet leave no place for a third."""
    first, second = _tally(services), _tally(services)
    assert (first.admit(), second.admit()) == (None, None)
    assert _tally(services).admit() == "channel-read"


def test_a_cancelled_request_gives_its_place_back_uncharged(services: Services) -> None:
    """A request that ends without an answer of its own frees its place and costs nothing."""
    first, second = _tally(services), _tally(services)
    first.admit(), second.admit()
    first.cancel()
    assert _tally(services).admit() is None
    assert services.ledger.window("channel-read", "addr:127.0.0.1").used == 0


def test_an_answer_charges_the_held_place_once(services: Services) -> None:
    """Settling a success charges its place once; a refused answer (429) frees it."""
    counted, refused = _tally(services), _tally(services)
    counted.admit(), refused.admit()
    headers = counted.settle(200)
    refused.settle(429)
    window = services.ledger.window("channel-read", "addr:127.0.0.1")
    assert (window.used, window.pending, headers["X-RateLimit-Remaining"]) == (1, 0, "0")
