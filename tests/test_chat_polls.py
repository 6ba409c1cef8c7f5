"""Chat polls: vote:start, PollStart with progress, vote:choose / vote, PollEnd."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.chatkit import World, run
from tests.clocks import ManualClock


@pytest.fixture(scope="module")
def clock() -> ManualClock:
    """The module platform's clock: a poll ends once a test moves it past the poll's end."""
    return ManualClock()


@pytest.fixture(scope="module")
def world(clock: ManualClock) -> Iterator[World]:
    """One platform for this module, on ``clock``."""
    running = World.start(clock=clock)
    yield running
    running.stop()


def test_poll_start_progress_and_end(world: World, clock: ManualClock) -> None:
    """PollStart goes out at once and again with progress while votes arrive; PollEnd ends."""

    async def scenario() -> None:
        owner = await world.join("streamer")
        voter = await world.join("viewer", node=1)
        other = await world.join("viewer2")
        before = clock.now
        reply = await owner.ok("vote:start", "Best map?", ["Dust", "Mirage, of course"], 1.5)
        assert reply == "Poll started."
        start = await voter.event("PollStart")
        assert start["q"] == "Best map?" and start["answers"] == ["Dust", "Mirage, of course"]
        assert start["author"] == {
            "user_name": "streamer",
            "user_id": world.user_id("streamer"),
            "user_roles": ["Owner", "User"],
        }
        assert start["voters"] == 0 and start["responses"] == {"Dust": 0, "Mirage, of course": 0}
        assert start["responsesByIndex"] == [0, 0]
        assert start["duration"] == 1500 and start["endsAt"] == int((before + 1.5) * 1000)
        assert start["originatingChannel"] == world.channel
        clock.advance(0.5)
        assert await voter.ok("vote:choose", 1) is True
        assert await other.ok("vote", 0) is True
        progress = await voter.event("PollStart")
        while progress["voters"] < 2:
            progress = await voter.event("PollStart")
        assert progress["responses"] == {"Dust": 1, "Mirage, of course": 1}
        assert progress["duration"] == 1000 and progress["endsAt"] == start["endsAt"]
        clock.advance(2)
        end = await owner.event("PollEnd")
        assert end["duration"] == 0 and end["endsAt"] == start["endsAt"]
        assert end["voters"] == 2 and end["responsesByIndex"] == [1, 1]
        for chat in (owner, voter, other):
            await chat.close()

    run(scenario())


def test_one_vote_per_user_and_revote_moves_it(world: World, clock: ManualClock) -> None:
    """Voting again moves the user's vote; two connections of one user still count once."""

    async def scenario() -> None:
        mod = await world.join("moderator")
        tab1 = await world.join("viewer")
        tab2 = await world.join("viewer", node=1)
        assert await mod.ok("vote:start", "Snack?", ["yes", "no", "later"], 1) == "Poll started."
        await tab1.ok("vote:choose", 0)
        await tab2.ok("vote:choose", 2)
        await tab1.ok("vote:choose", 2)
        clock.advance(2)
        end = await mod.event("PollEnd")
        assert end["voters"] == 1 and end["responses"] == {"yes": 0, "no": 0, "later": 1}
        for chat in (mod, tab1, tab2):
            await chat.close()

    run(scenario())


def test_poll_errors(world: World, clock: ManualClock) -> None:
    """No poll, a second poll, an option out of range: each answers 4006."""

    async def scenario() -> None:
        owner = await world.join("streamer")
        viewer = await world.join("viewer")
        assert (await viewer.error("vote:choose", 0))["code"] == 4006
        await owner.ok("vote:start", "One?", ["a", "b"], 1)
        second = await owner.error("vote:start", "Two?", ["a", "b"], 1)
        assert second["code"] == 4006 and "already" in second["message"]
        assert (await viewer.error("vote:choose", 2))["code"] == 4006
        clock.advance(2)
        await owner.event("PollEnd")
        assert (await viewer.error("vote", 0))["code"] == 4006
        await owner.close()
        await viewer.close()

    run(scenario())


@pytest.mark.parametrize(
    "args",
    [
        ["Q", ["only one"], 10],
        ["Q", ["a", "b"], 0],
        ["Q", ["a", "b"], 100_000],
        ["Q", ["a", "b"], "10"],
        ["", ["a", "b"], 10],
        ["Q", ["a", ""], 10],
        ["Q", ["a", "b"]],
    ],
)
def test_bad_poll_arguments(world: World, args: list[object]) -> None:
    """vote:start with bad question, answers or duration answers 4000."""

    async def scenario() -> None:
        owner = await world.join("streamer")
        assert (await owner.error("vote:start", *args))["code"] == 4000
        await owner.close()

    run(scenario())


def test_poll_is_shared_across_nodes(world: World, clock: ManualClock) -> None:
    """Members on both nodes see the poll, and votes from either node count."""

    async def scenario() -> None:
        owner = await world.join("streamer", node=0)
        far = await world.join("viewer2", node=1)
        await owner.ok("vote:start", "Nodes?", ["zero", "one"], 1)
        assert (await far.event("PollStart"))["q"] == "Nodes?"
        await far.ok("vote:choose", 1)
        clock.advance(2)
        end = await far.event("PollEnd")
        assert end["responses"] == {"zero": 0, "one": 1}
        await owner.close()
        await far.close()

    run(scenario())
