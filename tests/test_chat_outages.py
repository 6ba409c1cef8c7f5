"""What a reconnect may lose, and that it is said: an unreachable endpoint leaves the cached
list at once, messages removed while away are counted, a gap beyond ``history`` is reported
per channel and interval in a watch's stats and a recording's manifest.

The platform runs in this process with two chat nodes, stopped and started through its control
namespace. A client away while something happens waits out its reconnect backoff
(``reconnect_delay``), which the test sets long enough for what it does meanwhile.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import explorer
from explorer.chat import Chat, ChatClient, ChatDetails
from explorer.chat.session import Loss, State
from explorer.emulator.fleet import free_port
from tests.chatkit import World, run
from tests.test_chat_client import texts, wait_until
from tests.test_chat_client_reconnect import control, node_of


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    """A platform with two chat nodes, fast chat allowed."""
    running = World.start(chat_rate=1000.0, chat_burst=1000)
    yield running
    running.stop()


@pytest.fixture
def apis(world: World) -> Iterator[Callable[..., explorer.Client]]:
    """A factory of REST clients (closed after the test); the nodes run again after."""
    made: list[explorer.Client] = []

    def make(user: str | None = None) -> explorer.Client:
        credentials = {"username": user, "password": "explorer"} if user else {}
        api = explorer.connect(world.base_url, progress=False, **credentials)
        made.append(api)
        return api

    yield make
    for api in made:
        api.close()
    for node in range(2):
        control(world, node, "start")


def dead_endpoint() -> str:
    """A websocket address where nothing listens: connecting is refused."""
    return f"ws://127.0.0.1:{free_port()}"


def test_unreachable_endpoints_leave_the_list_and_fresh_ones_are_fetched(world: World) -> None:
    """Endpoints that refuse the connection are dropped from the cached list one after the
    other without a backoff wait, and fresh details are fetched once none is left."""
    dead = (dead_endpoint(), dead_endpoint())

    async def scenario() -> None:
        api = explorer.AsyncClient(world.base_url, progress=False)
        fetched: list[ChatDetails] = []

        async def details() -> ChatDetails:
            real = await api.channel(world.channel).chat_details()
            stale = ChatDetails(real.channel_id, dead, real.permissions)
            fetched.append(real if fetched else stale)
            return fetched[-1]

        # A backoff wait would take at least 30 s: the run's bound fails the test first.
        client = ChatClient(details, reconnect_delay=60.0, max_reconnect_delay=60.0)
        await client.start()
        assert len(fetched) == 2 and client.endpoint in fetched[1].endpoints
        assert client.state == State.CONNECTED
        await client.aclose()
        await api.aclose()

    run(scenario(), timeout=15)


def test_moderation_during_a_reconnect_is_counted(
    world: World, apis: Callable[..., explorer.Client]
) -> None:
    """A message the reader had seen and that was deleted while it was away is counted as
    removed, in the client and in the outage of that reconnect."""
    reader: Chat = apis().chat(world.channel, reconnect_delay=4.0)
    sender: Chat = apis("streamer").chat(world.channel, reconnect_delay=0.01)
    sent = [sender.send(f"seen {i}")["id"] for i in range(3)]
    wait_until(lambda: texts(reader)[-3:] == [f"seen {i}" for i in range(3)])
    first = node_of(world, reader)
    control(world, first, "stop")
    wait_until(lambda: reader.state == State.RECONNECTING)
    sender.delete_message(sent[1])
    sender.send("meanwhile")
    assert reader.state == State.RECONNECTING  # all of it happened while the reader was away
    wait_until(lambda: "meanwhile" in texts(reader), timeout=10)
    client = reader.async_twin
    (outage,) = client.outages
    assert client.removed == 1 and outage.removed == 1
    assert outage.loss == Loss.EVENTS and outage.start < outage.end
    sender.delete_message(sent[2])  # seen live: the log has the removal, nothing is counted
    wait_until(lambda: reader.log.counts.get("DeleteMessage", 0) == 1)
    control(world, first, "start")
    control(world, node_of(world, reader), "stop")
    wait_until(lambda: len(client.outages) == 2, timeout=10)
    assert client.removed == 1 and client.outages[1].removed == 0


def read_manifest(capture: Path) -> dict[str, Any]:
    """The one recorder manifest of ``capture``."""
    (path,) = (capture / "recorders").glob("*.json")
    manifest: dict[str, Any] = json.loads(path.read_text())
    return manifest


def test_gap_beyond_history_is_reported_per_channel_and_interval(
    world: World, apis: Callable[..., explorer.Client], tmp_path: Path
) -> None:
    """More messages than history holds said while a watched chat is away: the outage says
    messages may be missing, in the watch's stats and outages and the recording's manifest."""
    capture = tmp_path / "capture"
    watch = apis().watch([world.channel], to=capture, reconnect_delay=4.0)
    sender: Chat = apis("streamer").chat(world.channel, reconnect_delay=0.01)
    sender.send("before")
    wait_until(lambda: "before" in set(watch.messages()["text"]))
    chat = watch.chat(world.channel)
    assert chat is not None and chat.endpoint is not None
    control(world, world.platform.chat_endpoints.index(chat.endpoint), "stop")
    wait_until(lambda: chat.state == State.RECONNECTING)
    for i in range(120):
        sender.send(f"meanwhile {i}")
    assert chat.state == State.RECONNECTING
    wait_until(lambda: "meanwhile 119" in set(watch.messages()["text"]), timeout=10)
    stats = watch.stats().loc[world.channel]
    assert (stats["gaps"], stats["outages"], stats["reconnects"]) == (1, 1, 1)
    outages = watch.outages()
    assert list(outages["loss"]) == ["messages"] and list(outages["channel"]) == [world.channel]
    watch.close()
    losses = read_manifest(capture)["losses"]
    assert losses["gaps"] == 1 and losses["failed"] == []
    (outage,) = losses["outages"]
    assert outage["channel"] == world.channel and outage["loss"] == "messages"
    assert outage["start"] < outage["end"]


def test_a_channel_given_up_is_reported_as_failed(
    world: World, apis: Callable[..., explorer.Client], tmp_path: Path
) -> None:
    """A watched chat that gives up (no node answers) is not dropped silently: the watch's
    stats say failed with the error, and the manifest lists the channel and an unfilled
    outage up to the give-up."""
    capture = tmp_path / "capture"
    watch = apis().watch([world.channel], to=capture, reconnect_delay=0.05, give_up_after=0.5)
    for node in range(2):
        control(world, node, "stop")
    wait_until(lambda: watch.stats().loc[world.channel, "state"] == "failed", timeout=10)
    watch.close()
    losses = read_manifest(capture)["losses"]
    assert [f["channel"] for f in losses["failed"]] == [world.channel]
    assert "answered within" in losses["failed"][0]["error"]
    # The chat may reconnect to the second node before that stops too: an outage filled from
    # history (events other than messages may be missing), before the unfilled one.
    kinds = [o["loss"] for o in losses["outages"]]
    assert kinds[-1] == "unfilled" and kinds.count("unfilled") == 1


def test_a_token_naming_no_channel_is_in_the_manifest(
    world: World, apis: Callable[..., explorer.Client], tmp_path: Path
) -> None:
    """A watched token that names no channel is listed in the recording's manifest as failed,
    without a channel, beside the channel recorded."""
    capture = tmp_path / "capture"
    watch = apis().watch([world.channel, "no-such-channel-anywhere"], to=capture)
    watch.close()
    losses = read_manifest(capture)["losses"]
    assert [f["channel"] for f in losses["failed"]] == [None]
    assert losses["failed"][0]["error"]
