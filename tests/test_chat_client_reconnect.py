"""The chat client through node failures: reconnecting elsewhere without a gap or a duplicate,
replacing an expired authkey, and giving up when every node is gone.

Authkeys expire on the platform's clock, which this module's platform takes from the test
(``start(clock=...)``): the test moves it forward instead of sleeping past the key's lifetime.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

import explorer
from explorer.chat import Chat
from explorer.chat.session import State
from explorer.errors import ConnectionFailed
from tests.chatkit import World
from tests.clocks import ShiftedClock
from tests.test_chat_client import texts, wait_until

#: Key lifetime of this module's platform, in seconds of its clock.
AUTHKEY_TTL = 60.0


@pytest.fixture(scope="module")
def clock() -> ShiftedClock:
    """The platform's clock."""
    return ShiftedClock()


@pytest.fixture(scope="module")
def world(clock: ShiftedClock) -> Iterator[World]:
    """A platform with two chat nodes on the test's clock."""
    running = World.start(authkey_ttl=AUTHKEY_TTL, clock=clock, chat_rate=1000.0, chat_burst=1000)
    yield running
    running.stop()


@pytest.fixture
def chats(world: World) -> Iterator[Callable[..., Chat]]:
    """A factory of joined sync chats in the streamer's channel; the nodes run again after."""
    opened: list[tuple[explorer.Client, Chat]] = []

    def make(user: str | None, **options: Any) -> Chat:
        credentials = {"username": user, "password": "explorer"} if user else {}
        api = explorer.connect(world.base_url, progress=False, **credentials)
        chat = api.chat(world.channel, **options)
        opened.append((api, chat))
        return chat

    yield make
    for api, chat in opened:
        chat.close()
        api.close()
    for node in range(2):
        control(world, node, "start")


def control(world: World, node: int, action: str) -> None:
    """Stop or start chat node ``node`` through the emulator's control namespace."""
    url = f"{world.platform.root_url}/_emulator/chat/nodes/{node}/{action}"
    httpx.post(url, timeout=10).raise_for_status()


def node_of(world: World, chat: Chat) -> int:
    """The index of the node ``chat`` is connected to."""
    return world.platform.chat_endpoints.index(chat.endpoint)


def test_node_stopped_mid_stream_leaves_no_gap(world: World, chats: Callable[..., Chat]) -> None:
    """When its node stops, the reader reconnects to the other node and recovers what was said
    meanwhile from history: its log then equals history, without gaps or duplicates."""
    # The reader waits 1-2 s before reconnecting; the sender is back within a few ms.
    reader = chats(None, reconnect_delay=2.0)
    sender = chats("streamer", reconnect_delay=0.01)
    for i in range(3):
        sender.send(f"before {i}")
    wait_until(lambda: len(texts(reader)) == 3)
    lost = reader.endpoint
    control(world, node_of(world, reader), "stop")
    for i in range(5):
        sender.send(f"meanwhile {i}")
    assert reader.state == State.RECONNECTING
    wait_until(lambda: reader.state == State.CONNECTED, timeout=10)
    for i in range(3):
        sender.send(f"after {i}")
    wait_until(lambda: len(texts(reader)) == 11)
    said = [
        m
        for m in sender.history(100)
        if m["message"]["message"][0]["text"].startswith(("before", "meanwhile", "after"))
    ]
    messages = reader.log.messages()
    assert list(messages["message_id"]) == [m["id"] for m in said]
    assert list(messages["from_history"]) == [False] * 3 + [True] * 5 + [False] * 3
    assert reader.endpoint != lost and reader.async_twin.reconnects == 1
    assert (reader.async_twin.recovered, reader.async_twin.gaps) == (5, 0)


def test_calls_wait_for_the_reconnect(world: World, chats: Callable[..., Chat]) -> None:
    """A method called while the client reconnects is sent once it has joined again."""
    chat = chats("viewer", reconnect_delay=0.3)
    control(world, node_of(world, chat), "stop")
    wait_until(lambda: chat.state == State.RECONNECTING)
    assert chat.ping() is None
    assert chat.state == State.AUTHENTICATED


def test_state_changes_are_reported(world: World, chats: Callable[..., Chat]) -> None:
    """State callbacks hear the reconnect: reconnecting, then connected again."""
    chat = chats(None, reconnect_delay=0.05)
    states: list[State] = []
    chat.on_state(states.append)
    control(world, node_of(world, chat), "stop")
    wait_until(lambda: states[-1:] == [State.CONNECTED])
    assert states == [State.RECONNECTING, State.CONNECTED]


def test_refused_authkey_is_replaced(
    world: World, clock: ShiftedClock, chats: Callable[..., Chat]
) -> None:
    """After the authkey expired, the reconnect's refused auth fetches a fresh key and the
    client is signed in again."""
    chat = chats("viewer", reconnect_delay=0.01)
    clock.advance(AUTHKEY_TTL + 1)
    control(world, node_of(world, chat), "stop")
    wait_until(lambda: chat.async_twin.reconnects == 1 and chat.state == State.AUTHENTICATED)
    assert chat.async_twin.key_refreshes == 1
    assert chat.send("signed in again")["user_name"] == "viewer"


def test_gives_up_when_every_node_is_gone(world: World, chats: Callable[..., Chat]) -> None:
    """With every node stopped the client gives up after give_up_after: closed, with a
    ConnectionFailed that names the attempts, raised to iterators and calls."""
    chat = chats(None, reconnect_delay=0.05, give_up_after=1.0)
    events = chat.events(timeout=10)
    for node in range(2):
        control(world, node, "stop")
    wait_until(lambda: chat.state == State.CLOSED, timeout=10)
    assert isinstance(chat.error, ConnectionFailed)
    assert "within 1 s" in str(chat.error) and "ws://" in str(chat.error)
    with pytest.raises(ConnectionFailed):
        list(events)
    with pytest.raises(ConnectionFailed):
        chat.ping()
