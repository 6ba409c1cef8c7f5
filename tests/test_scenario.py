"""Scenarios: raids, polls, moderation and faults played through the control namespace."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import httpx
import pytest
import websockets

from explorer.emulator import Platform
from explorer.errors import BadRequest
from explorer.scenario import Scenario


@pytest.fixture
def running(make_platform: Callable[..., Platform]) -> Platform:
    """A small platform of its own (scenarios change it), limits off."""
    return make_platform(rate_limits=False)


def channel(platform: Platform, ref: int | str) -> dict[str, Any]:
    """The channel record of ``ref`` (id or token)."""
    return dict(httpx.get(f"{platform.base_url}/channels/{ref}", timeout=10).json())


def an_offline_channel(platform: Platform) -> dict[str, Any]:
    """One offline channel's record."""
    page = httpx.get(
        f"{platform.base_url}/channels", params={"where": "online:eq:0", "limit": 1}, timeout=10
    )
    return dict(page.json()[0])


def test_raid_ends_the_stream_hosts_and_moves_the_audience(running: Platform) -> None:
    """A raid ends the raider's stream, makes it host the target and adds its audience to
    the target's, in one step."""
    raider, target = channel(running, "streamer"), an_offline_channel(running)
    [happened] = Scenario(running.base_url).raid("streamer", target["token"]).play()
    assert happened.error is None and happened.answer["viewers"] == raider["viewersCurrent"]
    after = channel(running, "streamer")
    assert (after["online"], after["viewersCurrent"], after["hosteeId"]) == (False, 0, target["id"])
    raided = channel(running, target["id"])
    assert raided["viewersCurrent"] == target["viewersCurrent"] + raider["viewersCurrent"]


def test_a_raid_from_an_offline_channel_is_refused_saying_why(running: Platform) -> None:
    """Only a live stream raids: the step's error says so, and nothing changed."""
    offline, before = an_offline_channel(running), channel(running, "streamer")
    [happened] = Scenario(running.base_url).raid(offline["token"], "streamer", viewers=5).play()
    assert isinstance(happened.error, BadRequest) and "not live" in str(happened.error)
    assert channel(running, "streamer")["viewersCurrent"] == before["viewersCurrent"]
    assert channel(running, offline["id"])["hosteeId"] == offline["hosteeId"]


async def watch_chat(platform: Platform, ref: str, wanted: str, joined: asyncio.Event) -> Any:
    """Join ``ref``'s chat anonymously with plain websockets; the first ``wanted`` event's
    data, or the close code if the connection closes first."""
    record = channel(platform, ref)
    endpoint = httpx.get(f"{platform.base_url}/chats/{record['id']}", timeout=10).json()
    async with websockets.connect(endpoint["endpoints"][0]) as chat:
        await chat.send(
            json.dumps({"type": "method", "method": "auth", "arguments": [record["id"]], "id": 1})
        )
        try:
            async for frame in chat:
                packet = json.loads(frame)
                if packet.get("id") == 1:
                    joined.set()
                elif packet.get("event") == wanted:
                    return packet["data"]
        except websockets.ConnectionClosed as closed:
            return closed.rcvd.code if closed.rcvd else None
    return chat.close_code


def during(platform: Platform, wanted: str, scenario: Scenario) -> Any:
    """What a plain chat client of ``streamer`` sees (:func:`watch_chat`) while ``scenario``
    plays, started once the client has joined."""

    async def run() -> Any:
        joined = asyncio.Event()
        seen = asyncio.create_task(watch_chat(platform, "streamer", wanted, joined))
        await asyncio.wait_for(joined.wait(), 10)
        happened = await asyncio.to_thread(scenario.play)
        assert all(h.error is None for h in happened), happened
        return await asyncio.wait_for(seen, 10)

    return asyncio.run(run())


def test_a_poll_reaches_the_chat(running: Platform) -> None:
    """poll() starts a poll in the channel's chat, as its owner."""
    scenario = Scenario(running.base_url).poll("streamer", "Which?", ["a", "b"], seconds=5)
    poll = during(running, "PollStart", scenario)
    assert poll["q"] == "Which?" and poll["author"]["user_name"] == "streamer"


def test_a_timeout_reaches_the_chat(running: Platform) -> None:
    """timeout() times a user out in the channel's chat, by the owner: everyone sees that
    user's messages purged for a timeout (the UserTimeout itself goes to that user only)."""
    scenario = Scenario(running.base_url).timeout("streamer", "viewer", "2m")
    purged = during(running, "PurgeMessage", scenario)
    assert purged["cause"]["type"] == "timeout" and purged["cause"]["durationString"] == "2m"


def test_a_slow_client_is_dropped_with_1008(running: Platform) -> None:
    """slow_client() drops the anonymous connections as too slow (close code 1008)."""
    assert during(running, "never", Scenario(running.base_url).slow_client(None)) == 1008


def test_a_node_failure_stops_and_restarts_the_node(running: Platform) -> None:
    """fail_node(back_after=) stops the node, then starts it again that much later."""
    slept: list[float] = []
    now = [0.0]

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    scenario = Scenario(running.base_url, clock=lambda: now[0], sleep=sleep)
    happened = scenario.fail_node(1, at=1.0, back_after=2.5).play()
    assert [h.step.kind for h in happened] == ["node failure", "node back"]
    assert [h.answer["running"] for h in happened] == [False, True]
    assert slept == [1.0, 2.5]


def test_world_moments_wait_on_the_world_clock(make_platform: Callable[..., Platform]) -> None:
    """A step at a world time waits the wall time the world's speed makes of it."""
    fast = make_platform(rate_limits=False, speed=3600.0)
    clock = httpx.get(f"{fast.root_url}/_emulator/clock", timeout=10).json()
    world_now = datetime.fromisoformat(clock["now"])
    slept: list[float] = []
    now = [0.0]

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    scenario = Scenario(fast.base_url, clock=lambda: now[0], sleep=sleep)
    scenario.poll("streamer", "Later?", ["yes"], at=world_now + timedelta(hours=2)).play()
    # Two world hours at 3,600x are two wall seconds, less what the world moved meanwhile.
    assert len(slept) == 1 and 1.0 < slept[0] <= 2.0


def test_the_control_namespace_refuses_bad_steps(running: Platform) -> None:
    """A step naming no channel or user is a 400 saying which, not a crash."""
    happened = (
        Scenario(running.base_url)
        .raid("no-such-channel", "streamer")
        .chat("streamer", "msg", "hi", user="no-such-user")
        .chat("streamer", "no-such-method")
        .play()
    )
    said = [str(h.error) for h in happened]
    assert "No channel is 'no-such-channel'" in said[0]
    assert "No user is 'no-such-user'" in said[1]
    assert "no-such-method was refused" in said[2]
