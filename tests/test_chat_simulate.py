"""Simulated live activity: a seeded script, heavy-tailed rates, bots in real rooms."""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterator

import httpx
import pytest

from explorer.emulator import Platform, chatter, simulate
from explorer.emulator.categories import opening
from explorer.emulator.chat.moderation import parse_duration
from explorer.emulator.context import Config
from explorer.emulator.db.engine import Store
from explorer.emulator.simulate import Script, script_for
from explorer.emulator.world import seed_store
from tests.chatkit import World, run


@pytest.fixture(scope="module")
def store() -> Iterator[Store]:
    """A seeded 2,000-channel world in memory."""
    seeded = Store(":memory:")
    seed_store(seeded, 0, 2000, lambda password: "x", opening)
    yield seeded
    seeded.close()


def test_script_is_deterministic_per_seed(store: Store) -> None:
    """The same seed gives the same sequence of actions; another seed differs."""
    config = Config()

    def actions(seed: int) -> list[tuple[object, ...]]:
        script = script_for(store, seed, config)
        return [
            (round(a.delay, 9), a.channel, a.kind, a.actor, a.args)
            for a in (script.next() for _ in range(2000))
            if a is not None
        ]

    assert actions(1) == actions(1) != actions(2)
    kinds = {kind for _, _, kind, _, _ in actions(1)}
    assert {"msg", "whisper", "churn"} <= kinds


def test_rates_follow_chatter_and_are_thinned_alike_at_speed(store: Store) -> None:
    """At speed 1 each live channel chats at chatter's rate for its audience (times its
    voice's intensity), within budget, nothing thinned; at speed 1,000 every channel keeps the
    same share, the total fits the budget and kept says how much."""
    config = Config(sim_rate=40.0, sim_channel_rate=5.0)
    real = script_for(store, 0, config)
    assert real.kept == 1.0
    for plan in real.channels:
        natural = chatter.chat_rate(plan.viewers) * plan.intensity / 60
        assert plan.rate == pytest.approx(natural)
        assert 2 <= len(plan.bots) <= simulate.MAX_BOTS
    fast = script_for(store, 0, config, speed=1000)
    assert fast.total_rate <= 40.0 + 1e-9 and fast.channels[0].rate <= 5.0 + 1e-9
    shares = {
        round(plan.rate / (chatter.chat_rate(plan.viewers) * plan.intensity / 60 * 1000), 9)
        for plan in fast.channels
    }
    assert len(shares) == 1 and fast.kept == pytest.approx(shares.pop())
    assert 0 < fast.kept < 0.1


def test_moderation_comes_later_without_holding_back_chat(store: Store) -> None:
    """A message's delete or timeout comes MODERATION_DELAY after it while the messages drawn
    meanwhile keep their pace: the script's time grows as its rate says, not by the delay
    once per moderated message."""
    config = Config(sim_rate=4000.0, sim_channel_rate=4000.0)
    script = script_for(store, 0, config, speed=1000)
    actions = [action for action in (script.next() for _ in range(20_000)) if action]
    times = list(itertools.accumulate(action.delay for action in actions))
    moderated = [i for i, action in enumerate(actions) if action.kind in ("delete", "timeout")]
    assert len(moderated) >= 20 and min(action.delay for action in actions) >= 0
    assert times[-1] < 2 * len(actions) / script.total_rate
    for i in moderated:
        said = [j for j in range(i) if actions[j].kind == "msg"]
        assert any(times[i] - times[j] == pytest.approx(simulate.MODERATION_DELAY) for j in said)


def test_bots_the_script_times_out_sit_it_out(store: Store) -> None:
    """A bot the script times out or bans says nothing until its timeout ends (someone else
    in the cast speaks instead), so a busy chat's rate does not fall as its keenest chatters
    are silenced one by one."""
    config = Config(sim_channels=1)
    script = script_for(store, 0, config)
    silenced: dict[int, float] = {}
    clock, timeouts, said, refused = 0.0, 0, 0, 0
    for action in (script.next() for _ in range(40_000)):
        assert action is not None
        clock += action.delay
        if action.kind == "timeout":
            name, duration = action.args
            user = next(user for user, known in script.names.items() if known == name)
            silenced[user] = clock + (parse_duration(duration) or 0)
            timeouts += 1
        elif action.kind == "msg":
            said += 1
            refused += silenced.get(action.actor, 0.0) > clock
    assert timeouts >= 20 and said > 25_000
    assert refused < said / 1000


def test_script_runs_only_the_busiest_online_channels(store: Store) -> None:
    """Config.sim_channels caps the simulated channels at the busiest live ones, and every
    user the script may name has that user's name."""
    script = script_for(store, 0, Config(sim_channels=5))
    busiest = store.all(
        "SELECT id FROM channels WHERE online = 1 AND suspended = 0 "
        "ORDER BY viewersCurrent DESC, id LIMIT 5"
    )
    assert [plan.id for plan in script.channels] == [row[0] for row in busiest]
    cast = script.cast()
    names = dict(store.all("SELECT id, username FROM users"))
    assert cast and script.names == {user: names[user] for user in cast}


def test_poll_votes_are_planned_from_the_seed() -> None:
    """Vote plans are seeded per channel and poll, and stay within the poll's duration."""
    first = Script.votes(0, 100, 0, list(range(1, 31)), 3, 20.0)
    assert first == Script.votes(0, 100, 0, list(range(1, 31)), 3, 20.0)
    assert first != Script.votes(0, 100, 1, list(range(1, 31)), 3, 20.0)
    assert all(0 <= offset < 20.0 and 0 <= choice < 3 for offset, _, choice in first)
    assert len({voter for _, voter, _ in first}) >= 15


@pytest.fixture(scope="module")
def live() -> Iterator[World]:
    """A platform with simulation on, at speed 30 so tests see traffic quickly."""
    running = World.start(simulate=True, speed=30.0, sim_rate=60.0, sim_channel_rate=15.0)
    yield running
    running.stop()


def busiest(world: World) -> dict[str, object]:
    """The online channel with the most current viewers."""
    page = httpx.get(
        f"{world.base_url}/channels",
        params={"where": "online:eq:1", "order": "viewersCurrent:desc", "limit": 1},
        timeout=10,
    ).json()
    return dict(page[0])


def test_bots_chat_through_the_rooms(live: World) -> None:
    """Bots' messages reach websocket clients as ordinary ChatMessages and land in history."""
    channel = int(str(busiest(live)["id"]))

    async def scenario() -> None:
        chat = await live.join(None, channel)
        message = await chat.event("ChatMessage", timeout=5)
        assert message["channel"] == channel and message["user_roles"]
        assert message["message"]["message"] and len(message["id"]) == 36
        history = await chat.ok("history", 100)
        assert message["id"] in {m["id"] for m in history}
        await chat.close()

    run(scenario())


def test_bots_are_present_in_chat_users(live: World) -> None:
    """The simulated chatters of a busy channel are listed by GET /chats/{id}/users."""
    channel = busiest(live)
    users = httpx.get(f"{live.base_url}/chats/{channel['id']}/users", timeout=10)
    names = {u["userName"] for u in users.json()}
    assert len(names) >= 3 and channel["token"] in names


def test_bots_vote_in_a_users_poll(live: World) -> None:
    """A poll started by a real user gets votes from the channel's bots."""

    async def scenario() -> None:
        owner = await live.join("streamer")
        packet = await owner.call("vote:start", "Bots, vote!", ["red", "blue"], 2)
        if packet["error"] is not None:  # a simulated poll is running: wait for it to end
            assert packet["error"]["code"] == 4006
            await owner.event("PollEnd", timeout=95)
            await owner.ok("vote:start", "Bots, vote!", ["red", "blue"], 2)
        while (end := await owner.event("PollEnd", timeout=4))["q"] != "Bots, vote!":
            pass
        assert end["voters"] >= 2 and sum(end["responsesByIndex"]) == end["voters"]
        await owner.close()

    run(scenario(), timeout=120)


def test_viewer_counts_move_with_world_time(
    make_platform: Callable[..., Platform], monkeypatch: pytest.MonkeyPatch
) -> None:
    """viewersCurrent of live channels follows their audience curves as world time passes."""
    monkeypatch.setattr(simulate, "TICK", 0.2)
    platform = make_platform(rate_limits=False, simulate=True, speed=600, sim_rate=1.0)
    url = f"{platform.base_url}/channels"
    params = {"where": "online:eq:1", "order": "id:asc", "fields": "id,viewersCurrent"}
    before = httpx.get(url, params=params, timeout=10).json()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        time.sleep(0.3)
        if httpx.get(url, params=params, timeout=10).json() != before:
            return
    raise AssertionError("viewersCurrent never moved")


def test_ticks_take_at_most_their_share_of_the_loop() -> None:
    """A cheap tick waits the usual pause; a costly one waits so long that ticking takes
    TICK_SHARE of the loop's time, leaving the rest to REST and chat."""
    assert simulate.tick_wait(0.05, 0.001) == 0.05
    cost = 0.4
    assert cost / (cost + simulate.tick_wait(0.05, cost)) == pytest.approx(simulate.TICK_SHARE)


def test_a_thinned_chat_keeps_a_thinned_crowd_in_its_room(
    make_platform: Callable[..., Platform],
) -> None:
    """At a speed where the chat keeps a sliver of its messages, a busy channel's bots do not
    all wait in its room (each enters when it first acts): a tick's cost stays bounded."""
    world = World(make_platform(rate_limits=False, simulate=True, speed=5000, sim_rate=0.5))
    channel = busiest(world)["id"]
    users = httpx.get(f"{world.base_url}/chats/{channel}/users", timeout=10)
    assert users.status_code == 200 and len(users.json()) < simulate.MAX_BOTS // 3


def test_simulation_is_off_by_default_in_start(make_platform: Callable[..., Platform]) -> None:
    """start() runs no bots unless asked: a busy channel's chat has no users (bots join at once)."""
    world = World(make_platform(rate_limits=False))
    channel = busiest(world)["id"]
    users = httpx.get(f"{world.base_url}/chats/{channel}/users", timeout=10)
    assert users.status_code == 200 and users.json() == []


#: ``sqlite_stat1`` of the channels as the seeding's sampled ``ANALYZE`` left them at a million
#: channels: every index guessed to narrow ``suspended = 0`` down to a thousand rows.
MILLION_STATS = (
    ("channels_rank_followers", "832320 1001 1 1"),
    ("channels_rank_viewers_current", "864000 1001 4 1"),
    ("channels_rank_viewers_total", "817887 1001 1 1"),
    ("channels_online", "949824 1001 1001"),
    ("sqlite_autoindex_channels_1", "1085140 1"),
)


def test_live_channels_are_read_by_id_whatever_the_statistics() -> None:
    """The live channels are looked up by id even under the statistics a million-channel
    seeding leaves, which make an index led by ``suspended`` look cheaper (a scan of every
    channel per lookup: seconds a tick)."""
    store = Store(":memory:")
    seed_store(store, 0, 600, lambda password: "x", opening)
    store.conn.execute("DELETE FROM sqlite_stat1 WHERE tbl = 'channels'")
    store.conn.executemany(
        "INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES ('channels', ?, ?)", MILLION_STATS
    )
    store.conn.execute("ANALYZE sqlite_schema")
    live = store.all("SELECT id, viewersCurrent FROM channels ORDER BY id LIMIT 500")
    statements: list[str] = []
    store.conn.set_trace_callback(statements.append)
    found = simulate.live_channels(store, live)
    store.conn.set_trace_callback(None)
    assert [row[0] for row in found] == [channel for channel, _ in live]
    lookups = [sql for sql in statements if "FROM channels" in sql]
    assert lookups
    for sql in lookups:
        plan = " ".join(row[3] for row in store.all(f"EXPLAIN QUERY PLAN {sql}"))
        assert "INTEGER PRIMARY KEY" in plan, plan
    store.close()


def test_a_listing_is_answered_while_the_simulator_is_behind(
    make_platform: Callable[..., Platform],
) -> None:
    """With far more chat asked for than the loop can post, the simulator still yields
    between its actions: a listing is answered instead of waiting behind its backlog."""
    world = World(
        make_platform(
            rate_limits=False,
            simulate=True,
            speed=100_000,
            sim_rate=1_000_000.0,
            sim_channel_rate=1_000_000.0,
        )
    )
    channel = busiest(world)["id"]
    with httpx.Client(base_url=world.base_url, timeout=60) as client:
        for page in range(5):
            params = {"order": "viewersTotal:desc", "page": page, "fields": "id"}
            assert client.get("/channels", params=params).status_code == 200
        history = client.get(f"/chats/{channel}/history").json()
    assert history, "the simulator posted nothing"
