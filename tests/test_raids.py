"""Raids and hosts: the pure model (who raids whom, the target's jump and decay), the streams
applying them to a store (hosteeId, viewers, live events), a live platform showing them at
speed, and the owner's analytics agreeing with them."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import cast

import httpx
import numpy as np
import pytest

from explorer.emulator import (
    Platform,
    categories,
    chatter,
    highlights,
    raids,
    sessions,
    simulate,
    streams,
)
from explorer.emulator.context import Config, Context
from explorer.emulator.db import ddl
from explorer.emulator.db.engine import Store
from explorer.emulator.raids import Raid
from explorer.emulator.resources import analytics
from explorer.emulator.sessions import HISTORY_START, audience_at
from explorer.emulator.world import FIRST_CHANNEL_ID, WORLD_NOW, iso, seed_store
from tests.clocks import ManualClock
from tests.conftest import SMALL_WORLD

NOW = WORLD_NOW.timestamp()
SignIn = Callable[..., httpx.Client]


def world_raids(seed: int = 0, channels: int = 3000) -> raids.Raiding:
    """The raids of a fresh schedule (not the cached one) of a small world."""
    return raids.Raiding(sessions.Schedule(seed, sessions.habits(seed, channels)))


def big_raid(raiding: raids.Raiding, since: float, until: float, seed: int = 0) -> Raid:
    """The first raid in ``(since, until]`` carrying at least 20 viewers."""
    return next(raid for raid in raiding.between(since, until) if raid.carried(seed) >= 20)


# --- the pure model ---------------------------------------------------------------------------


def test_a_raids_target_jumps_then_most_raiders_leave_within_minutes() -> None:
    """A raid's target jumps by most of the carried viewers, most of whom leave within minutes."""
    raid = big_raid(world_raids(), NOW, NOW + 3 * 86_400)
    carried = raid.carried(0)
    assert carried >= 0.75 * raids.CARRY * audience_at(raid.raider, raid.at - 60, 0)
    assert raid.arrivals(0, raid.at - 1) == 0
    assert raid.arrivals(0, raid.at + 60) >= 0.7 * carried
    assert raid.arrivals(0, raid.at + 600) < carried / 3
    assert raid.arrivals(0, raid.at + 3600) < raid.arrivals(0, raid.at + 600)
    assert raid.arrivals(0, raid.target.end) == 0


def test_raids_target_another_channel_live_for_a_while_mostly_a_smaller_one() -> None:
    """Raids target another channel live for MIN_LEFT more, mostly a smaller one."""
    found = world_raids().between(HISTORY_START, NOW)
    assert len(found) > 100
    for raid in found:
        assert raid.raider.end == raid.at and raid.target.channel != raid.raider.channel
        assert raid.target.start <= raid.at and raid.target.end >= raid.at + raids.MIN_LEFT
    smaller = np.mean([raid.target.audience < raid.raider.audience for raid in found])
    assert smaller > 0.6


def test_given_categories_raids_prefer_the_raiders() -> None:
    """Given channels' categories, raids prefer the raider's own category."""
    schedule = sessions.Schedule(0, sessions.habits(0, 3000))
    category = np.random.default_rng(3).integers(0, 8, 3000)

    def same(raiding: raids.Raiding) -> float:
        found = raiding.between(HISTORY_START, NOW)
        return float(
            np.mean([category[r.raider.channel] == category[r.target.channel] for r in found])
        )

    assert same(raids.Raiding(schedule, category)) > 2 * same(raids.Raiding(schedule))


def test_bigger_channels_raid_more_often() -> None:
    """The share of sessions ending in a raid grows with the session's audience."""
    raiding = world_raids()
    block = raiding.schedule.block(0)
    raided = np.zeros(len(block.start), dtype=bool)
    raided[raiding.block(0).raider] = True
    small, big = block.audience < 2, block.audience > 20
    assert raided[big].mean() > 1.5 * raided[small].mean() > 0


def test_raids_are_a_pure_function_of_seed_and_size() -> None:
    """Two schedules of the same seed and size raid alike; another seed raids otherwise."""
    first, again, other = world_raids(), world_raids(), world_raids(seed=1)
    for index in (0, 1):
        a, b = first.block(index), again.block(index)
        assert np.array_equal(a.raider, b.raider) and np.array_equal(a.target_id, b.target_id)
    assert not np.array_equal(first.block(0).target_id, other.block(0).target_id)


def test_a_session_and_its_target_find_the_same_raid() -> None:
    """of_session of a raid's raider and into of its target give back that raid."""
    raiding = world_raids()
    raid = raiding.between(NOW - 86_400, NOW)[0]
    assert raiding.of_session(raid.raider) == raid
    assert raid in raiding.into(raid.target, raid.at)
    assert raid not in raiding.into(raid.target, raid.at - 1)


# --- the streams applied to a store ------------------------------------------------------------


@pytest.fixture
def store(new_database: Callable[[], str]) -> Iterator[Store]:
    """The seed-0 small world in memory, as the platform seeds it."""
    seeded = Store(new_database(), ddl())
    seed_store(seeded, 0, SMALL_WORLD, lambda password: "x", categories.opening)
    yield seeded
    seeded.close()


def test_a_raider_hosts_its_live_target_and_lends_it_viewers(store: Store) -> None:
    """A raid hosts its target, whose viewers jump, with a live event; unhosted once it ends."""
    world = streams.Streams(store, streams.schedule_of(store), 0)
    raid = big_raid(world.raiding, NOW, NOW + 86_400)
    moment = raid.at + 60
    world.advance(moment)
    row = store.one("SELECT online, hosteeId FROM channels WHERE id = ?", (raid.raider_channel,))
    assert row == (0, raid.target_channel)
    viewers = store.scalar(
        "SELECT viewersCurrent FROM channels WHERE id = ?", (raid.target_channel,)
    )
    expected = audience_at(raid.target, moment, 0) + raid.arrivals(0, moment)
    assert viewers == expected > audience_at(raid.target, moment, 0)
    topic = f"channel:{raid.target_channel}:hosted"
    payloads = [
        row[0] for row in store.all("SELECT payload FROM live_events WHERE topic = ?", (topic,))
    ]
    assert any(f'"hosterId":{raid.raider_channel}' in payload for payload in payloads)
    world.advance(raid.target.end + 60)
    assert (
        store.scalar("SELECT hosteeId FROM channels WHERE id = ?", (raid.raider_channel,)) is None
    )


def test_a_raided_channels_chat_follows_its_jump_in_the_same_tick(store: Store) -> None:
    """A raided channel's chat plan follows its jump in the tick that applies the raid."""
    world = streams.Streams(store, streams.schedule_of(store), 0)
    raid = big_raid(world.raiding, NOW, NOW + 86_400)
    world.advance(raid.at + 60)
    script = simulate.Script(0, simulate.user_pool(store), Config(), 1.0)
    simulate.replan(script, store, world)
    plan = script.plans[raid.target_channel]
    own = audience_at(raid.target, raid.at + 60, 0)
    assert plan.viewers == own + raid.arrivals(0, raid.at + 60)
    assert plan.rate > chatter.chat_rate(own) * plan.intensity / 60


def test_a_raid_makes_its_targets_chat_burst_as_at_a_highlight(store: Store) -> None:
    """A raid landing makes the target's chat burst as a highlight does."""
    world = streams.Streams(store, streams.schedule_of(store), 0)
    raid = big_raid(world.raiding, NOW, NOW + 86_400)
    world.advance(raid.at + 30)
    minute = int(raid.at // 60)
    burst = world.highlight(raid.target_channel, minute - 1, minute)
    assert burst - highlights.excess(0, raid.target, minute - 1, minute) == streams.RAID_HYPE
    voice = chatter.ChannelVoice(0, raid.target_channel, ["a", "b"])
    voice.intensity(random.Random(1), burst)
    assert voice.hyped


def test_a_restarted_stream_keeps_the_hosts_and_raiders_of_before(store: Store) -> None:
    """Streams made after a raid restore its host and the raiders still at the target."""
    raid = big_raid(
        streams.Streams(store, streams.schedule_of(store), 0).raiding, NOW, NOW + 86_400
    )
    first = streams.Streams(store, streams.schedule_of(store), 0)
    first.advance(raid.at + 120)
    again = streams.Streams(store, streams.schedule_of(store), 0)
    assert again.raided(raid.target_channel) == first.raided(raid.target_channel) > 0
    assert again.hosting[raid.raider_channel] == raid


def test_the_raids_prepared_while_seeding_are_all_the_simulator_restores(
    new_database: Callable[[], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A world seeded with ``streams.prepare`` beside it starts its streams planning no raids:
    the prepared window is the one they restore (and without it they would plan some)."""
    plans: list[int] = []
    plan = raids.Raiding._plan

    def counted(self: raids.Raiding, index: int) -> raids.BlockRaids:
        plans.append(index)
        return plan(self, index)

    monkeypatch.setattr(raids.Raiding, "_plan", counted)
    seeded = Store(new_database(), ddl())
    sessions.world_schedule.cache_clear()
    seed_store(seeded, 7, SMALL_WORLD, lambda password: "x", categories.opening)
    streams.Streams(seeded, streams.schedule_of(seeded), 7)
    assert plans, "a fresh schedule's streams plan their standing raids"
    plans.clear()
    sessions.world_schedule.cache_clear()
    again = Store(new_database(), ddl())
    beside = lambda: streams.prepare(7, SMALL_WORLD)  # noqa: E731
    seed_store(again, 7, SMALL_WORLD, lambda password: "x", categories.opening, beside)
    prepared = len(plans)
    streams.Streams(again, streams.schedule_of(again), 7)
    assert prepared > 0 and len(plans) == prepared
    seeded.close()
    again.close()


# --- a live platform at speed and the owner's analytics ----------------------------------------


def channel_row(platform: Platform, channel: int) -> dict[str, object]:
    """The channel's row as GET /channels/{id} shows it."""
    row: dict[str, object] = httpx.get(f"{platform.base_url}/channels/{channel}", timeout=10).json()
    return row


def test_the_directory_shows_a_raid_at_speed(make_platform: Callable[..., Platform]) -> None:
    """At speed the directory shows the raider offline hosting its target, whose viewers jumped."""
    raiding = raids.of(sessions.world_schedule(0, SMALL_WORLD))
    raid = big_raid(raiding, NOW, NOW + 86_400)
    wall = ManualClock()
    platform = make_platform(rate_limits=False, simulate=True, speed=3600, clock=wall)
    moment = raid.at + 60
    wall.advance((moment - NOW) / 3600)
    deadline = time.monotonic() + 30
    while channel_row(platform, raid.raider_channel)["hosteeId"] is None:
        assert time.monotonic() < deadline, "the raider never hosted"
        time.sleep(0.2)
    raider = channel_row(platform, raid.raider_channel)
    target = channel_row(platform, raid.target_channel)
    assert raider["online"] is False and raider["hosteeId"] == raid.target_channel
    own = audience_at(raid.target, moment, 0)
    assert target["viewersCurrent"] == own + raid.arrivals(0, moment) > own


def test_analytics_host_events_are_the_worlds_raids(platform: Platform, signed_in: SignIn) -> None:
    """streamer's streamHosts over its history are exactly the model's raids from and into it."""
    owner = signed_in(platform.base_url, "streamer")
    span = {"from": "2020-06-22T00:00:00Z", "to": "2020-07-22T00:00:00Z"}
    events = owner.get(f"/channels/{FIRST_CHANNEL_ID}/analytics/tsdb/streamHosts", params=span)
    seen = sorted((e["time"], e["hoster"], e["hostee"]) for e in events.json())
    schedule = sessions.world_schedule(0, SMALL_WORLD)
    raiding = raids.of(schedule)
    mine = schedule.of_channel(0, HISTORY_START, NOW)
    made = [raiding.of_session(item) for item in mine]
    expected = [(raid.at, None, raid.target_channel) for raid in made if raid is not None]
    expected += [
        (raid.at, raid.raider_channel, None) for item in mine for raid in raiding.into(item, NOW)
    ]
    wanted = sorted(
        (iso(datetime.fromtimestamp(at, UTC)), hoster, hostee)
        for at, hoster, hostee in expected
        if HISTORY_START <= at < NOW
    )
    assert wanted and seen == wanted


def test_a_raided_channels_host_events_name_its_raiders() -> None:
    """A raided channel's streamHosts names each raider at the raid's moment."""
    schedule = sessions.world_schedule(0, 3000)
    raid = big_raid(raids.of(schedule), NOW - 7 * 86_400, NOW)
    profile = analytics.Profile(
        0, raid.target_channel, 10, 10, False, HISTORY_START, 3000, schedule,
        raid.target.channel,
    )  # fmt: skip
    window = analytics.TimeRange(NOW - 7 * 86_400, NOW, NOW)
    events = analytics.stream_hosts(analytics.Timeline(profile, window), cast(Context, None))
    moment = iso(datetime.fromtimestamp(raid.at, UTC))
    assert {"channel": raid.target_channel, "time": moment, "hoster": raid.raider_channel,
            "hostee": None} in events  # fmt: skip
    received = [e for e in events if e["hoster"] is not None]
    into = [r for item in schedule.of_channel(raid.target.channel, window.start, NOW)
            for r in raids.of(schedule).into(item, NOW) if window.holds(r.at)]  # fmt: skip
    assert len(received) == len(into)


# --- follows and chat spike at highlights and raids --------------------------------------------


def near(moment: float, spiked: list[tuple[float, float]], within: float = 600.0) -> bool:
    """True when ``moment`` falls within ``within`` seconds after one of ``spiked``."""
    return any(0 <= moment - at < within for at, _ in spiked)


def test_follows_cluster_after_highlights_and_raids() -> None:
    """Follows cluster in the ten minutes after highlights and raids."""
    schedule = sessions.world_schedule(0, 3000)
    followed = inside = 0
    window_time = total_time = 0.0
    for item in schedule.starting(NOW - 86_400, NOW):
        spiked = streams.spikes(schedule, 0, item)
        dates = [
            datetime.fromisoformat(at).timestamp()
            for _, at in streams.followers(item, 0, 3000, spiked)
        ]
        followed += len(dates)
        inside += sum(near(at, spiked) for at in dates)
        minutes = range(int(item.start), int(item.end), 60)
        window_time += sum(near(at, spiked) for at in minutes) * 60
        total_time += len(minutes) * 60
    assert followed > 200
    assert inside / followed > 2 * window_time / total_time


def test_raided_sessions_gain_follows_right_after_the_raid() -> None:
    """Raided sessions gain follows in the ten minutes after the raid."""
    schedule = sessions.world_schedule(0, 3000)
    found = raids.of(schedule).between(NOW - 7 * 86_400, NOW)
    after = followed = 0
    share = 0.0
    for raid in found:
        spiked = streams.spikes(schedule, 0, raid.target)
        assert (raid.at, streams.RAID_SPIKE_WEIGHT) in spiked
        dates = [
            datetime.fromisoformat(at).timestamp()
            for _, at in streams.followers(raid.target, 0, 3000, spiked)
        ]
        after += sum(0 <= at - raid.at < 600 for at in dates)
        followed += len(dates)
        share += len(dates) * 600 / (raid.target.end - raid.target.start)
    assert followed > 100 and after > 3 * share


def test_chat_is_hyped_at_the_sessions_highlights(store: Store) -> None:
    """Chat is calm before a session's highlight and hyped in its minute."""
    world = streams.Streams(store, streams.schedule_of(store), 0)
    channel, minute = next(
        (channel, minute)
        for channel, item in sorted(world.live.items())
        for minute, _ in highlights.of_session(0, item)
        if highlights.excess(0, item, -1, minute - 1) < 0.5
    )
    voice = chatter.ChannelVoice(0, channel, ["a", "b"])
    voice.intensity(random.Random(1), world.highlight(channel, minute - 6, minute - 1))
    assert not voice.hyped
    voice.intensity(random.Random(1), world.highlight(channel, minute - 1, minute))
    assert voice.hyped


@pytest.mark.parametrize("every", [1, 30])
def test_chat_fed_the_sessions_highlights_averages_its_rate_at_any_speed(every: int) -> None:
    """Chat fed its session's highlights keeps a mean intensity of 1 at any tick spacing."""
    values = []
    for k in range(200):
        item = sessions.Session(k * 1000 + 7, 0, 0.0, 6 * 3600.0, 10.0)
        voice, rng, last = chatter.ChannelVoice(0, k, ["a"]), random.Random(k), -1
        for minute in range(0, 360, every):
            burst = highlights.excess(0, item, last, minute)
            values.append(voice.intensity(rng, burst, minute - last))
            last = minute
    assert float(np.mean(values)) == pytest.approx(1.0, abs=0.05)
