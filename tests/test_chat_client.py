"""The chat client against a real platform: joins, every method, errors, events, the sync
handle in scripts and running loops, polls in the log."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import explorer
from explorer import ChatError, ChatErrorCode
from explorer.chat import Chat, ChatClient, ChatDetails
from explorer.chat.session import State
from explorer.errors import ChatTimeout, ClientClosed, ConnectionFailed, ExplorerError
from explorer.wire.packets import Event
from tests.chatkit import World

ROOT = Path(__file__).resolve().parent.parent


def wait_until(condition: Callable[[], Any], timeout: float = 5.0) -> Any:
    """Poll ``condition`` until it is truthy (returned) or ``timeout`` seconds pass (fail)."""
    deadline = time.monotonic() + timeout
    while not (result := condition()):
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.01)
    return result


def texts(chat: Chat) -> list[str]:
    """The texts of the ChatMessage rows in ``chat``'s log."""
    return list(chat.log.messages()["text"])


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    """One platform for this module (two chat nodes, no simulated chatter)."""
    running = World.start(chat_rate=1000.0, chat_burst=1000)
    yield running
    running.stop()


@pytest.fixture(scope="module")
def chats(world: World) -> Iterator[Callable[..., Chat]]:
    """A factory of joined sync chats: ``chats(user_or_None, channel_owner)``."""
    opened: list[tuple[explorer.Client, Chat]] = []

    def make(user: str | None, owner: str = "streamer", **options: Any) -> Chat:
        credentials = {"username": user, "password": "explorer"} if user else {}
        api = explorer.connect(world.base_url, progress=False, **credentials)
        chat = api.chat(owner, **options)
        opened.append((api, chat))
        return chat

    yield make
    for api, chat in opened:
        chat.close()
        api.close()


@pytest.fixture(scope="module")
def streamer(chats: Callable[..., Chat]) -> Chat:
    """The channel owner, joined to their own channel."""
    return chats("streamer")


@pytest.fixture(scope="module")
def viewer(chats: Callable[..., Chat]) -> Chat:
    """A signed-in viewer in the streamer's channel."""
    return chats("viewer")


def test_anonymous_join_reads_but_cannot_send(chats: Callable[..., Chat], streamer: Chat) -> None:
    """Without credentials the client joins anonymously, receives messages, and is refused
    when it talks."""
    reader = chats(None)
    assert (reader.state, reader.authenticated, reader.roles) == (State.CONNECTED, False, ())
    streamer.send("hello, anonymous")
    wait_until(lambda: "hello, anonymous" in texts(reader))
    with pytest.raises(ChatError) as refused:
        reader.send("may I?")
    assert refused.value.code == ChatErrorCode.NOT_AUTHENTICATED


def test_signed_in_join_is_authenticated(streamer: Chat, world: World) -> None:
    """With credentials the chat authenticates with its authkey and shows the roles and
    permissions the join granted."""
    assert (streamer.state, streamer.authenticated) == (State.AUTHENTICATED, True)
    assert "Owner" in streamer.roles and "clear_messages" in streamer.permissions
    assert streamer.channel_id == world.channel
    assert streamer.endpoint in world.platform.chat_endpoints


def test_repr_shows_channel_state_endpoint_and_counts(streamer: Chat, world: World) -> None:
    """repr and the HTML repr of a chat name its channel, state, endpoint and event counts,
    never a bare object address."""
    streamer.send("counted")
    wait_until(lambda: streamer.log.counts.get("ChatMessage"))
    for shown in (repr(streamer), repr(streamer.async_twin), streamer._repr_html_()):
        assert str(world.channel) in shown and "authenticated" in shown
        assert str(streamer.endpoint) in shown and "ChatMessage" in shown
        assert " at 0x" not in shown
    assert repr(streamer).startswith("<Chat channel ")
    assert streamer._repr_html_().startswith("<table>")


def round_trips() -> dict[str, Callable[[Chat, Chat], None]]:
    """One case per chat method: call it and check its reply (and event, where there is one)."""

    def send(streamer: Chat, viewer: Chat) -> None:
        sent = streamer.send("round trip")
        assert sent["user_name"] == "streamer" and sent["message"]["message"][0]["text"]
        wait_until(lambda: viewer.log.seen_message(sent["id"]))

    def whisper(streamer: Chat, viewer: Chat) -> None:
        sent = streamer.whisper("viewer", "psst")
        assert sent["target"] == "viewer" and sent["message"]["meta"]["whisper"] is True
        wait_until(lambda: viewer.log.messages()["whisper"].any())

    def poll(streamer: Chat, viewer: Chat) -> None:
        assert streamer.start_poll("Best map?", ["lava", "ice"], 1) == "Poll started."
        assert viewer.vote(1) is True
        wait_until(lambda: viewer.log.counts.get("PollEnd"), timeout=5)

    def timeout_user(streamer: Chat, viewer: Chat) -> None:
        assert streamer.timeout_user("viewer2", "1s") == "viewer2 has been timed out for 1s."

    def purge(streamer: Chat, viewer: Chat) -> None:
        assert streamer.purge("viewer2") is None
        wait_until(lambda: viewer.log.counts.get("PurgeMessage"))

    def delete_message(streamer: Chat, viewer: Chat) -> None:
        sent = streamer.send("delete me")
        assert streamer.delete_message(sent["id"]) == "Message deleted."
        wait_until(lambda: viewer.log.counts.get("DeleteMessage"))

    def clear_messages(streamer: Chat, viewer: Chat) -> None:
        assert streamer.clear_messages() == "Messages cleared."
        wait_until(lambda: viewer.log.counts.get("ClearMessages"))

    def history(streamer: Chat, viewer: Chat) -> None:
        sent = streamer.send("for the record")
        assert streamer.history(5)[-1]["id"] == sent["id"]

    def start_giveaway(streamer: Chat, viewer: Chat) -> None:
        viewer.send("pick me")
        assert streamer.start_giveaway() == "Starting a giveaway"

    def ping(streamer: Chat, viewer: Chat) -> None:
        assert streamer.ping() is None

    def attach_emotes(streamer: Chat, viewer: Chat) -> None:
        assert viewer.attach_emotes() is None
        streamer.send("hello :)")
        wait_until(lambda: "emoticons" in viewer.log.packets()[-1]["data"]["message"]["meta"])

    return {f.__name__: f for f in (send, whisper, poll, timeout_user, purge, delete_message)} | {
        f.__name__: f for f in (clear_messages, history, start_giveaway, ping, attach_emotes)
    }


@pytest.mark.parametrize("method", sorted(round_trips()))
def test_method_round_trip(method: str, streamer: Chat, viewer: Chat) -> None:
    """Each chat method gets its reply through the client (and its event to the others)."""
    round_trips()[method](streamer, viewer)


@pytest.mark.parametrize(
    ("call", "code"),
    [
        (lambda chat: chat.vote(0), ChatErrorCode.POLL_ERROR),
        (lambda chat: chat.timeout_user("streamer", "5s"), ChatErrorCode.ACCESS_DENIED),
        (lambda chat: chat.delete_message("no-such-id"), ChatErrorCode.NOT_FOUND),
        (lambda chat: chat.call("noSuchMethod"), ChatErrorCode.UNKNOWN_METHOD),
        (lambda chat: chat.history("ten"), ChatErrorCode.BAD_REQUEST),
    ],
)
def test_error_reply_raises_chat_error(
    call: Callable[[Chat], Any], code: ChatErrorCode, viewer: Chat
) -> None:
    """An error reply raises ChatError (an ExplorerError) with the platform's code, and the
    client goes on."""
    with pytest.raises(ExplorerError) as failed:
        call(viewer)
    assert isinstance(failed.value, ChatError) and failed.value.code == code
    assert viewer.ping() is None


def test_call_without_a_reply_in_time_raises_chat_timeout(viewer: Chat) -> None:
    """A method whose reply does not come within its timeout raises ChatTimeout, both an
    ExplorerError and a TimeoutError."""
    with pytest.raises(ChatTimeout, match="ping got no reply within") as late:
        viewer.ping(timeout=1e-6)
    assert isinstance(late.value, ExplorerError) and isinstance(late.value, TimeoutError)
    assert viewer.ping() is None


def test_events_iterate_in_a_plain_script(streamer: Chat, viewer: Chat) -> None:
    """``for event in chat.events(name, timeout=...)`` yields events from its creation and ends
    when the time is up."""
    started = time.monotonic()
    events = viewer.events("ChatMessage", timeout=1.0)
    streamer.send("one")
    streamer.send("two")
    got = [event.data["message"]["message"][0]["text"] for event in events]
    assert got == ["one", "two"]
    assert 1.0 <= time.monotonic() - started < 3.0


def test_a_misspelt_event_name_is_refused_with_the_known_ones(viewer: Chat) -> None:
    """events(), on() and the async events() refuse a name that is not an event, naming the
    closest one and listing them all, instead of matching nothing forever."""
    with pytest.raises(
        ValueError, match=r"'ChatMesage'\. Did you mean 'ChatMessage'\?.*UserTimeout"
    ):
        viewer.events("ChatMesage")
    with pytest.raises(ValueError, match="The events are: WelcomeEvent, ChatMessage"):
        viewer.on(print, "ChatMessage", "Nope")
    with pytest.raises(ValueError, match="PollEnd"):
        viewer._aio.events("PollEnded")


def test_a_timed_out_chatter_s_own_log_shows_the_duration(chats: Callable[..., Chat]) -> None:
    """The chatter timed out alone gets UserTimeout, so their own log's moderation view shows
    how long (what recipe 4 shows, timing out its own demo account)."""
    owner, target = chats("moderator", "moderator"), chats("viewer2", "moderator")
    owner.timeout_user("viewer2", "2s")
    wait_until(lambda: (target.log.moderation()["event"] == "UserTimeout").any())
    timed_out = target.log.moderation().query("event == 'UserTimeout'")
    assert timed_out["duration_ms"].tolist() == [2000]


def test_callbacks_see_events_on_the_loop(streamer: Chat, viewer: Chat) -> None:
    """Callbacks get the events they asked for, on the toolkit's loop thread, until removed."""
    seen: list[tuple[str, str]] = []
    remove = viewer.on(
        lambda e: seen.append((e.event, threading.current_thread().name)), "ChatMessage"
    )
    streamer.send("called back")
    wait_until(lambda: seen)
    remove()
    streamer.send("not called back")
    wait_until(lambda: "not called back" in texts(viewer))
    assert seen == [("ChatMessage", "explorer-loop")]


def test_sync_api_works_inside_a_running_event_loop(streamer: Chat, viewer: Chat) -> None:
    """The blocking handle works from a coroutine of another running loop, as in a cell."""

    async def cell() -> str:
        sent = streamer.send("from a running loop")
        return str(sent["id"])

    message_id = asyncio.run(cell())
    wait_until(lambda: viewer.log.seen_message(message_id))


def test_async_client_iterates_and_calls(world: World) -> None:
    """The async client joins with ``async with``, calls methods and iterates events."""

    async def scenario() -> list[str]:
        async with (
            explorer.AsyncClient(
                world.base_url, username="viewer2", password="explorer", progress=False
            ) as api,
            api.chat(world.channel) as chat,
        ):
            events = chat.events("ChatMessage")
            await chat.send("async hello")
            async for event in events:
                return [event.data["user_name"], event.data["message"]["message"][0]["text"]]
        raise AssertionError("no event")

    assert asyncio.run(asyncio.wait_for(scenario(), 10)) == ["viewer2", "async hello"]


def test_closed_client_ends_iterators_and_refuses_calls(chats: Callable[..., Chat]) -> None:
    """close() ends event iteration and later calls raise ClientClosed."""
    chat = chats(None)
    events = chat.events()
    chat.close()
    assert list(events) == []
    assert chat.state == State.CLOSED
    with pytest.raises(ClientClosed):
        chat.ping()


def test_gives_up_when_no_node_answers() -> None:
    """With no node answering, connecting fails after give_up_after with every attempt named."""

    async def details() -> ChatDetails:
        return ChatDetails(1, ("ws://127.0.0.1:9", "ws://127.0.0.1:7"), ())

    async def scenario() -> tuple[ConnectionFailed, float, ChatClient]:
        client = ChatClient(details, give_up_after=0.5, reconnect_delay=0.05)
        started = time.monotonic()
        with pytest.raises(ConnectionFailed) as failed:
            await client.start()
        return failed.value, time.monotonic() - started, client

    error, took, client = asyncio.run(scenario())
    assert 0.4 <= took < 3.0
    assert "ws://127.0.0.1:9" in str(error) and "ws://127.0.0.1:7" in str(error)
    assert (client.state, client.error) == (State.CLOSED, error)


def test_polls_follow_a_scripted_poll(chats: Callable[..., Chat]) -> None:
    """A poll started and voted on through chat shows in ``log.polls()`` answer by answer,
    from the first PollStart to the PollEnd."""
    owner = chats("moderator", "moderator")
    voters = [chats(user, "moderator") for user in ("viewer", "viewer2", "staff")]
    owner.start_poll("Tea or coffee?", ["tea", "coffee"], 1.5)
    for chat, choice in zip(voters, [0, 1, 1], strict=True):
        chat.vote(choice)
    wait_until(lambda: owner.log.counts.get("PollEnd"), timeout=5)
    polls = owner.log.polls()
    assert list(polls.columns) == ["time", "question", "answer", "votes", "voters", "ended"]
    assert set(polls["question"]) == {"Tea or coffee?"}
    first, last = polls.iloc[:2], polls.iloc[-2:]
    assert list(first["answer"]) == ["tea", "coffee"] and list(first["votes"]) == [0, 0]
    assert list(last["votes"]) == [1, 2] and list(last["voters"]) == [3, 3]
    assert list(last["ended"]) == [True, True] and not polls["ended"].iloc[:-2].any()


def test_scripts_never_import_jupyter() -> None:
    """A script that joins a chat and iterates its events imports no IPython or ipywidgets."""
    script = textwrap.dedent(
        """
        import sys
        import explorer
        from tests.databases import start

        platform = start(channels=20, rate_limits=False)
        api = explorer.connect(platform.base_url, progress=False)
        with api.chat(int(api.channels(fields="id").index[0])) as chat:
            for event in chat.events(timeout=0.2):
                pass
        api.close()
        platform.stop()
        loaded = [name for name in ("IPython", "ipywidgets", "matplotlib") if name in sys.modules]
        print(",".join(loaded) or "none")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "none"


def test_event_objects_are_packets(viewer: Chat, streamer: Chat) -> None:
    """Iterated events are the wire format's Event objects: name and data."""
    events = viewer.events("ChatMessage", timeout=2)
    streamer.send("typed")
    event = next(events)
    events.close()
    assert isinstance(event, Event) and event.event == "ChatMessage"
