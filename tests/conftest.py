"""Shared fixtures: real platforms on 127.0.0.1 port 0, stopped after use."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from explorer.emulator import Platform, start

SMALL_WORLD = 300


@pytest.fixture(scope="session")
def platform() -> Iterator[Platform]:
    """One shared read-mostly platform (seed 0, 300 channels, rate limits off)."""
    with start(channels=SMALL_WORLD, rate_limits=False) as running:
        yield running


@pytest.fixture
def make_platform() -> Iterator[Callable[..., Platform]]:
    """A factory for platforms with their own settings; each is stopped after the test."""
    started: list[Platform] = []

    def make(**options: Any) -> Platform:
        options.setdefault("channels", SMALL_WORLD)
        running = start(**options)
        started.append(running)
        return running

    yield make
    for running in started:
        running.stop()
