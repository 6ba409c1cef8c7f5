"""The world's clock and stream sessions: the world clock and its speed, the pure session
schedule, and the streams applied to a real store on a manual clock."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator

import numpy as np
import pytest

from explorer.emulator import categories, clock, sessions, streams
from explorer.emulator.db import ddl
from explorer.emulator.db.engine import Store
from explorer.emulator.resources import recordings
from explorer.emulator.resources.analytics import DAY
from explorer.emulator.sessions import HOUR, Schedule, Session, audience_at, habits
from explorer.emulator.world import FIRST_CHANNEL_ID, WORLD_NOW, seed_store
from explorer.rest.transport import CLOCK_HEADER
from tests.clocks import ManualClock

NOW = WORLD_NOW.timestamp()


# --- the world clock ------------------------------------------------------------------------


def test_world_clock_runs_speed_times_its_wall_clock() -> None:
    """The world clock starts at its instant and moves `speed` world seconds a wall second."""
    wall = ManualClock()
    world = clock.WorldClock(NOW, 600, wall)
    assert world() == NOW
    wall.advance(2.5)
    assert world() == NOW + 1500
    assert world.iso() == "2020-07-22T00:25:00.000Z"


def test_speed_out_of_bounds_is_refused() -> None:
    """Speeds below 1 or above 100,000 are refused with a message naming the bounds."""
    for speed in (0.5, 0.0, 200_000.0):
        with pytest.raises(ValueError, match="between 1 and 100000"):
            clock.WorldClock(NOW, speed)


def test_headers_say_the_time_and_speed_and_the_chat_kept_only_when_thinned() -> None:
    """The clock headers carry the world time and speed; the chat kept appears once thinned."""
    world = clock.WorldClock(NOW, 10, ManualClock())
    assert world.headers() == {CLOCK_HEADER: "2020-07-22T00:00:00.000Z", "X-Explorer-Speed": "10"}
    world.kept = 0.25
    assert world.headers()[clock.KEPT_HEADER] == "0.25"
    assert world.describe() == {"now": "2020-07-22T00:00:00.000Z", "speed": 10, "chatKept": 0.25}


def test_a_saved_world_clock_resumes_where_it_stopped() -> None:
    """resume() starts a new store at the world's instant and a saved one where it was."""
    store = Store(":memory:")
    wall = ManualClock()
    first = clock.resume(store, 100, wall)
    assert first() == NOW
    wall.advance(36)
    first.save(store)
    wall.advance(1000)
    assert clock.resume(store, 1, wall)() == NOW + 3600
    store.close()


# --- the pure schedule ----------------------------------------------------------------------


def test_habits_are_a_pure_function_of_seed_and_size() -> None:
    """The same seed and size give the same habits; another seed others; streamer is fixed."""
    first, again, other = habits(3, 500), habits(3, 500), habits(4, 500)
    assert np.array_equal(first.audience, again.audience)
    assert not np.array_equal(first.audience, other.audience)
    assert first.audience[0] == sessions.STREAMER_AUDIENCE and first.active[0]


def test_bigger_channels_stream_more_hours_in_longer_sessions() -> None:
    """Hours a month and session lengths grow with the channel's audience."""
    traits = habits(0, 2000)
    active = np.flatnonzero(traits.active[1:]) + 1
    order = active[np.argsort(traits.audience[active])]
    small, big = order[: len(order) // 2], order[-len(order) // 10 :]
    assert traits.hours[big].mean() > 3 * traits.hours[small].mean()
    assert (np.diff(traits.length[order]) >= -1e-9).all()


def test_a_channels_sessions_never_overlap_and_stay_in_bounds() -> None:
    """Within a block and across blocks, a channel's sessions do not overlap; lengths are
    between a quarter hour and sixteen hours."""
    schedule = Schedule(1, habits(1, 300))
    for channel in range(300):
        found = schedule.of_channel(channel, sessions.HISTORY_START, NOW + 40 * DAY)
        for before, after in itertools.pairwise(found):
            assert before.end <= after.start
        assert all(0.25 * HOUR <= s.end - s.start <= 16 * HOUR for s in found)


def test_starting_lists_sessions_by_start_once() -> None:
    """starting(a, b) lists each session starting in (a, b] once, in order; split ranges
    give the same sessions as the whole."""
    schedule = Schedule(2, habits(2, 400))
    whole = schedule.starting(NOW, NOW + 3 * DAY)
    parts = schedule.starting(NOW, NOW + DAY) + schedule.starting(NOW + DAY, NOW + 3 * DAY)
    assert whole == parts and whole
    assert [s.start for s in whole] == sorted(s.start for s in whole)
    assert all(NOW < s.start <= NOW + 3 * DAY for s in whole)


def test_the_demo_channel_is_live_at_the_worlds_instant_and_on_july_first() -> None:
    """streamer (index 0) streams at WORLD_NOW and on 2020-07-01 in every world."""
    for seed in (0, 7):
        schedule = Schedule(seed, habits(seed, 100))
        assert 0 in {s.channel for s in (sessions.session(b, p) for b, p in schedule.live_at(NOW))}
        july = WORLD_NOW.replace(day=1).timestamp() + 19 * HOUR
        assert schedule.of_channel(0, july, july + HOUR)


def test_audience_rises_then_falls_within_a_session() -> None:
    """Viewers ramp up from the start, hold near the session's audience, and fall at the end;
    none before or after."""
    item = Session(1, 0, NOW, NOW + 4 * HOUR, 200.0)
    at = [audience_at(item, NOW + minutes * 60, 0) for minutes in (1, 10, 120, 236, 240)]
    assert at[0] < at[1] < at[2] and at[3] < at[2] and at[4] == 0
    assert 120 < at[2] < 300
    assert audience_at(item, NOW - 1, 0) == 0


# --- the streams applied to a store -----------------------------------------------------------


@pytest.fixture
def store(new_database: Callable[[], str]) -> Iterator[Store]:
    """A seeded 400-channel world in memory."""
    seeded = Store(new_database(), ddl())
    seed_store(seeded, 5, 400, lambda password: "x", categories.opening)
    yield seeded
    seeded.close()


def online(store: Store) -> set[int]:
    """Ids of the channels the store says are live."""
    return {row[0] for row in store.all("SELECT id FROM channels WHERE online = 1")}


def test_a_seeded_world_is_live_where_its_sessions_run(store: Store) -> None:
    """At the world's instant the store's live channels are the schedule's running sessions."""
    running = streams.Streams(store, streams.schedule_of(store), 5)
    assert online(store) == set(running.live) and FIRST_CHANNEL_ID in online(store)


def test_advancing_applies_starts_ends_views_follows_and_recordings(store: Store) -> None:
    """A day of world time later, live channels are the schedule's; each ended session added
    its views and followers (with follow records) and, for channels with VODs, a recording."""
    world = streams.Streams(store, streams.schedule_of(store), 5)
    before = dict(store.all("SELECT id, viewersTotal FROM channels"))
    followers = dict(store.all("SELECT id, numFollowers FROM channels"))
    ended: list[Session] = []
    for hour in range(1, 25):
        changes = world.advance(NOW + hour * HOUR)
        ended += changes.ended
        recordings.store_sessions(store, 5, changes.ended)
        assert online(store) == set(world.live)
    assert ended and streams.applied(store) == NOW + 24 * HOUR
    for item in ended:
        assert item.end <= NOW + 24 * HOUR
    gained = {streams.channel_id(item) for item in ended}
    for channel in gained:
        total = store.scalar("SELECT viewersTotal FROM channels WHERE id = ?", (channel,))
        assert total > before[channel] or all(
            streams.views(i) == 0 for i in ended if streams.channel_id(i) == channel
        )
    added = store.scalar("SELECT COUNT(*) FROM channel_follows")
    grown = sum(
        store.scalar("SELECT numFollowers FROM channels WHERE id = ?", (channel,))
        - followers[channel]
        for channel in gained
    )
    assert added == grown
    with_vods = [
        item
        for item in ended
        if store.scalar("SELECT hasVod FROM channels WHERE id = ?", (streams.channel_id(item),))
    ]
    stored = {row[0] for row in store.all("SELECT id FROM recordings")}
    assert stored == {item.id for item in with_vods}
    viewers = dict(store.all("SELECT id, viewersCurrent FROM channels WHERE online = 0"))
    assert set(viewers.values()) <= {0}


def test_advancing_twice_to_the_same_instant_changes_nothing(store: Store) -> None:
    """advance() to an instant already applied is a no-op."""
    world = streams.Streams(store, streams.schedule_of(store), 5)
    world.advance(NOW + 6 * HOUR)
    snapshot = store.all("SELECT * FROM channels ORDER BY id")
    assert world.advance(NOW + 6 * HOUR) == streams.Changes([], [])
    assert store.all("SELECT * FROM channels ORDER BY id") == snapshot
