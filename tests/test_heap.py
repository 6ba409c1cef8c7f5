"""Freed memory handed back to the operating system (``explorer.core.heap``)."""

from __future__ import annotations

import pytest

from explorer.core import heap
from tests.clocks import ManualClock


def test_release_every_releases_at_most_once_per_span(monkeypatch: pytest.MonkeyPatch) -> None:
    """ReleaseEvery releases on its first call, then not again until its span has passed on
    its clock."""
    released = []
    monkeypatch.setattr(heap, "release_freed", lambda: released.append(1))
    clock = ManualClock()
    release = heap.ReleaseEvery(1.0, clock)
    release()
    clock.advance(0.9)
    release()
    assert released == [1]
    clock.advance(0.1)
    release()
    assert released == [1, 1]
