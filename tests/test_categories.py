"""Categories: the shares of viewing they hold (realism rows 16 and 17), streams switching
category, a new release rising then fading, tournaments jumping into the top, and the
directory's ``typeId`` following the sessions, seeded and as world time passes."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import httpx
import numpy as np
import pytest

from explorer.emulator import Platform, categories, streams, tournaments
from explorer.emulator.categories import Segments
from explorer.emulator.db import ddl
from explorer.emulator.db.engine import Store
from explorer.emulator.resources import recordings
from explorer.emulator.sessions import DAY, HOUR, Block, audience_at, session, world_schedule
from explorer.emulator.world import FIRST_CHANNEL_ID, WORLD_NOW, seed_store
from tests.clocks import ManualClock
from tests.conftest import SMALL_WORLD

NOW = WORLD_NOW.timestamp()
FloatArray = np.ndarray


def by_category(block: Block, found: Segments) -> tuple[FloatArray, FloatArray]:
    """Viewer-hours and hours streamed of each type id over ``block``'s sessions, each
    session's time split at its switch."""
    hours = (block.end - block.start) / HOUR
    before = (found.switch - block.start) / HOUR
    watched, streamed = np.zeros(10_000), np.zeros(10_000)
    for category, span in ((found.first, before), (found.second, hours - before)):
        np.add.at(watched, category, span * block.audience)
        np.add.at(streamed, category, span)
    return watched, streamed


def month(seed: int, channels: int) -> tuple[FloatArray, FloatArray]:
    """:func:`by_category` over the 30 days after the world's instant."""
    block = world_schedule(seed, channels).block(1)
    return by_category(block, categories.of_block(seed, channels, block))


def test_top_categories_hold_the_published_shares_of_viewing() -> None:
    """Over 30 days the top category holds 0.10-0.20 of viewer-hours, the top ten 0.48-0.63."""
    watched, _ = month(0, 50_000)
    shares = np.sort(watched)[::-1] / watched.sum()
    assert 0.10 <= shares[0] <= 0.20
    assert 0.48 <= shares[:10].sum() <= 0.63


def test_top_categories_differ_in_viewers_per_channel() -> None:
    """Viewers per live channel across the 20 busiest categories: p90 / p10 within 4-10."""
    watched, streamed = month(0, 50_000)
    top = np.argsort(-watched)[:20]
    pull = watched[top] / streamed[top]
    assert 4 <= np.percentile(pull, 90) / np.percentile(pull, 10) <= 10


def test_categories_streamed_grow_with_the_world() -> None:
    """About 60-150 categories are streamed in 30 days at the default size, fewer in a
    smaller world."""
    default = int((month(0, 50_000)[1] > 0).sum())
    small = int((month(0, 5_000)[1] > 0).sum())
    assert 60 <= default <= 150 and small < default


def test_categories_are_a_pure_function_of_the_seed() -> None:
    """The same seed gives the same sessions' categories; another seed others."""
    block = world_schedule(0, 2000).block(0)
    first, again = (categories.of_block(0, 2000, block) for _ in range(2))
    other = categories.of_block(1, 2000, world_schedule(1, 2000).block(0))
    assert np.array_equal(first.first, again.first) and np.array_equal(first.switch, again.switch)
    assert not np.array_equal(first.first[:500], other.first[:500])


def test_some_sessions_switch_category_mid_stream() -> None:
    """Some sessions switch once, strictly inside the session; some warm up chatting first."""
    block = world_schedule(0, 5000).block(1)
    found = categories.of_block(0, 5000, block)
    switching = found.first != found.second
    assert 0.05 < switching.mean() < 0.3
    inside = (block.start[switching] < found.switch[switching]) & (
        found.switch[switching] < block.end[switching]
    )
    assert inside.all()
    chatting = categories.catalogue(0, 5000).chatting
    assert (found.first[switching] == chatting).any()


def test_a_release_rises_then_fades_and_reaches_the_top() -> None:
    """The release after the world's instant: its share of sessions starting each day rises
    to a peak days after ``availableAt`` and falls; on its peak day it is a top-3 category."""
    seed, channels = 0, 5000
    release, available = categories.catalogue(seed, channels).releases[1]
    assert available > NOW
    block = world_schedule(seed, channels).block(1)
    found = categories.of_block(seed, channels, block)
    day = np.floor((block.start - available) / DAY)
    shares = [float((found.first[day == d] == release).mean()) for d in range(12)]
    peak = int(np.argmax(shares))
    assert shares[0] < shares[peak] and shares[11] < shares[peak] / 2 and 1 <= peak <= 4
    assert (found.first[day < 0] != release).all()
    on_peak = day == peak
    watched, _ = by_category(
        Block(
            1,
            block.channel[on_peak],
            block.start[on_peak],
            block.end[on_peak],
            block.audience[on_peak],
        ),
        Segments(found.first[on_peak], found.second[on_peak], found.switch[on_peak]),
    )
    assert release in np.argsort(-watched)[:3]


def test_a_tournament_jumps_into_the_top_of_the_live_directory() -> None:
    """Mid-tournament its channel is among the five biggest live audiences, streaming an
    esports category; at the same hour the weekend before it is not."""
    seed, channels = 0, 5000
    schedule = world_schedule(seed, channels)
    held = categories.tournaments_in(seed, channels, 1)
    holder, middle = int(held.channel[0]), float(held.start[0] + held.end[0]) / 2

    def ranks(moment: float) -> tuple[list[int], dict[int, int]]:
        live = [session(block, at) for block, at in schedule.live_at(moment)]
        audiences = {item.channel: audience_at(item, moment, seed) for item in live}
        shown = categories.of_sessions(seed, channels, live).at(moment)
        kinds = {item.channel: int(kind) for item, kind in zip(live, shown, strict=True)}
        return sorted(audiences, key=lambda c: -audiences[c])[:5], kinds

    top, kinds = ranks(middle)
    assert holder in top and kinds[holder] in tournaments.CATEGORIES
    assert holder not in ranks(middle - 7 * DAY)[0]


@pytest.fixture
def store(new_database: Callable[[], str]) -> Iterator[Store]:
    """A seeded store of a 2,000-channel world."""
    seeded = Store(new_database(), ddl())
    seed_store(seeded, 0, 2000, lambda password: "x", categories.opening)
    yield seeded
    seeded.close()


def test_the_seeded_categories_are_what_the_sessions_say_at_the_instant(store: Store) -> None:
    """A live channel's seeded typeId is its session's category at the world's instant; an
    offline one's the category its last session ended in."""
    schedule = world_schedule(0, 2000)
    live = [session(block, at) for block, at in schedule.live_at(NOW)]
    shown = categories.of_sessions(0, 2000, live).at(NOW)
    for item, kind in zip(live[:50], shown[:50].tolist(), strict=True):
        assert (
            store.scalar(
                "SELECT typeId FROM channels WHERE id = ?", (item.channel + FIRST_CHANNEL_ID,)
            )
            == kind
        )
    running = {item.channel for item in live}
    offline = [c for c in range(1, 200) if c not in running]
    for channel in offline[:30]:
        past = schedule.of_channel(channel, NOW - 30 * DAY, NOW)
        if past:
            ended_in = categories.of_sessions(0, 2000, past[-1:]).second[0]
            typed = store.scalar(
                "SELECT typeId FROM channels WHERE id = ?", (channel + FIRST_CHANNEL_ID,)
            )
            assert typed == ended_in


def test_advancing_writes_the_switch_and_the_last_category(store: Store) -> None:
    """As world time passes a channel's typeId turns to its session's first category when
    it starts, to its second at the switch, and stays at that after the session ends."""
    schedule = world_schedule(0, 2000)
    later = schedule.starting(NOW, NOW + 2 * DAY)
    found = categories.of_sessions(0, 2000, later)
    k = next(k for k in range(len(later)) if found.first[k] != found.second[k])
    item, channel = later[k], later[k].channel + FIRST_CHANNEL_ID
    world = streams.Streams(store, schedule, 0)
    typed = "SELECT typeId FROM channels WHERE id = ?"
    for moment, expected in (
        (item.start + 60, found.first[k]),
        (float(found.switch[k]) - 60, found.first[k]),
        (float(found.switch[k]) + 60, found.second[k]),
        (item.end + 60, found.second[k]),
    ):
        world.advance(moment)
        assert store.scalar(typed, (channel,)) == expected


def test_a_switch_shows_in_the_directory_of_a_live_platform(
    make_platform: Callable[..., Platform],
) -> None:
    """At speed 3,600 a channel whose next session switches category is listed live in its
    first category once the session starts, then in its second once world time passes the
    switch."""
    wall = ManualClock()
    origin = wall()
    platform = make_platform(rate_limits=False, simulate=True, speed=3600, clock=wall)
    schedule = world_schedule(0, SMALL_WORLD)
    later = schedule.starting(NOW, NOW + DAY)
    found = categories.of_sessions(0, SMALL_WORLD, later)
    k = next(k for k in range(len(later)) if found.first[k] != found.second[k])
    item, channel = later[k], later[k].channel + FIRST_CHANNEL_ID

    def listed() -> int | None:
        rows = httpx.get(
            f"{platform.base_url}/channels",
            params={"where": f"id:eq:{channel}", "fields": "id,typeId,online"},
            timeout=10,
        ).json()
        return rows[0]["typeId"] if rows and rows[0]["online"] else None

    for moment, expected in (
        (item.start + 120, found.first[k]),
        (float(found.switch[k]) + 120, found.second[k]),
    ):
        wall.advance((moment - NOW) / 3600 - (wall() - origin))
        deadline = time.monotonic() + 20
        while listed() != expected and time.monotonic() < deadline:
            time.sleep(0.2)
        assert listed() == expected


def test_recordings_carry_the_category_their_stream_ended_in(store: Store) -> None:
    """The demo channel's recordings of its history each carry the category its session
    ended in, as the channel showed after it."""
    recordings.sync_recordings(store, FIRST_CHANNEL_ID)
    stored = dict(
        store.all("SELECT id, typeId FROM recordings WHERE channelId = ?", (FIRST_CHANNEL_ID,))
    )
    past = [
        item
        for item in world_schedule(0, 2000).of_channel(0, NOW - 30 * DAY, NOW)
        if item.end <= NOW
    ]
    ended_in = categories.of_sessions(0, 2000, past).second.tolist()
    assert stored and stored == {
        item.id: kind for item, kind in zip(past, ended_in, strict=True) if item.id in stored
    }
    assert len(set(stored.values())) > 1


def test_owners_game_rankings_are_the_sessions_categories(
    make_platform: Callable[..., Platform], signed_in: Callable[..., httpx.Client]
) -> None:
    """The owner's gameRanksGlobal for a day of the history ranks first the category with the
    most viewer-hours among the sessions that started that day, with those viewer-hours."""
    platform = make_platform(rate_limits=False)
    owner = signed_in(platform.base_url, "streamer")
    points = owner.get(
        f"/channels/{FIRST_CHANNEL_ID}/analytics/tsdb/gameRanksGlobal",
        params={"from": "2020-07-10T00:00:00.000Z", "to": "2020-07-11T00:00:00.000Z"},
    ).json()
    top = next(point for point in points if point["rank"] == 1)
    block = world_schedule(0, SMALL_WORLD).block(0)
    day = (block.start >= NOW - 12 * DAY) & (block.start < NOW - 11 * DAY)
    found = categories.of_block(0, SMALL_WORLD, block)
    watched, _ = by_category(
        Block(0, block.channel[day], block.start[day], block.end[day], block.audience[day]),
        Segments(found.first[day], found.second[day], found.switch[day]),
    )
    assert top["type"] == int(np.argmax(watched)) and top["views"] == round(watched.max())
    assert [point["rank"] for point in points] == list(range(1, len(points) + 1))
