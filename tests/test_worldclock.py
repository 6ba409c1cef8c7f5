"""The world clock's response headers: they follow the clock to the millisecond; a process
joining a platform follows the owner's clock."""

from __future__ import annotations

from explorer.emulator.clock import (
    CLOCK_HEADER,
    KEPT_HEADER,
    SPEED_HEADER,
    WorldClock,
    join,
    resume,
)
from explorer.emulator.db.engine import Store
from tests.clocks import ManualClock


def test_headers_follow_the_world_millisecond() -> None:
    """Each reading names the world's instant at that moment, to the millisecond."""
    wall = ManualClock()
    clock = WorldClock(1_600_000_000.0, 2.0, wall)
    assert clock.headers() == {CLOCK_HEADER: "2020-09-13T12:26:40.000Z", SPEED_HEADER: "2"}
    wall.advance(0.0001)
    assert clock.headers()[CLOCK_HEADER] == "2020-09-13T12:26:40.000Z"
    wall.advance(0.0004)
    assert clock.headers()[CLOCK_HEADER] == "2020-09-13T12:26:40.001Z"


def test_headers_name_thinned_chat_as_soon_as_it_is_thinned() -> None:
    """A change of the chat kept shows in the next headers, even within a millisecond."""
    clock = WorldClock(1_600_000_000.0, 1.0, ManualClock())
    assert KEPT_HEADER not in clock.headers()
    clock.kept = 0.25
    assert clock.headers()[KEPT_HEADER] == "0.25"


def test_headers_are_the_caller_s_to_extend() -> None:
    """A caller adding to the returned headers does not change the next response's."""
    clock = WorldClock(1_600_000_000.0, 1.0, ManualClock())
    clock.headers()["X-Extra"] = "1"
    assert "X-Extra" not in clock.headers()


def test_a_joining_process_follows_the_owner_s_clock() -> None:
    """A clock joined later from the owner's anchor reads what the owner's reads, at speed,
    not the last saved position."""
    store, wall = Store(":memory:"), ManualClock()
    owner = resume(store, 100.0, wall)
    owner.anchor(store)
    owner.save(store)
    wall.advance(30)
    joined = join(store, 100.0, wall)
    assert joined() == owner() == resume(store, 100.0, wall)() + 3000
    store.close()
