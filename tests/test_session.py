"""The sans-I/O chat session: ids and replies, join state, gapless resync, reconnect schedule."""

from __future__ import annotations

import random
from typing import Any

import orjson

from explorer.chat.session import Answer, ChatState, Loss, Outage, State, backoff, next_endpoint
from explorer.errors import ChatError
from explorer.events.log import EventLog
from explorer.wire.packets import Event, encode_event, encode_reply

T = 1_700_000_000.0


def message(id: str, text: str = "hi", **extra: Any) -> dict[str, Any]:
    """Chat message data with ``id``."""
    return {
        "channel": 7,
        "id": id,
        "user_name": "ana",
        "user_id": 1,
        "user_roles": ["User"],
        "message": {"message": [{"type": "text", "data": text, "text": text}], "meta": {}},
        **extra,
    }


def chat_frame(id: str, **extra: Any) -> bytes:
    """A ChatMessage event frame."""
    return encode_event("ChatMessage", message(id, **extra))


def receive(session: ChatState, *frames: bytes) -> tuple[list[Event], list[Answer]]:
    """What ``session`` makes of ``frames`` read together: events delivered, answers."""
    events: list[Event] = []
    answers = session.receive(frames, T, events.append)
    return events, answers


def joined(session: ChatState, data: Any = None) -> ChatState:
    """``session`` opened on endpoint ``a`` and joined (anonymously unless ``data``)."""
    session.opened("a")
    session.joined(data or {"authenticated": False, "roles": []})
    return session


def rejoined(session: ChatState, history: list[str], live: tuple[str, ...] = ()) -> ChatState:
    """``session`` after a first join (with ``history`` ids seen there) and the ``live``
    messages that came on its first connection, then lost and opened again."""
    joined(session)
    session.baseline([message(i) for i in history], T)
    for id in live:
        receive(session, chat_frame(id))
    session.lost(T)
    session.opened("b")
    return session


def logged_ids(log: EventLog) -> list[str]:
    """Message ids of the log's ChatMessage rows, in order."""
    return list(log.messages()["message_id"])


def test_ids_count_up_across_connections() -> None:
    """Method ids are unique for the whole session, across reconnects (reference fact 5)."""
    session = joined(ChatState(EventLog()))
    first, packet = session.request("ping", [])
    session.lost(T)
    session.opened("b")
    second, _ = session.request("ping", [])
    assert (first, second) == (1, 2)
    assert orjson.loads(packet) == {"type": "method", "method": "ping", "arguments": [], "id": 1}


def test_events_are_logged_and_returned_in_order() -> None:
    """Event frames go into the log and come back to deliver, in order."""
    log = EventLog()
    events, answers = receive(joined(ChatState(log)), chat_frame("m1"), chat_frame("m2"))
    assert events == [Event("ChatMessage", message("m1")), Event("ChatMessage", message("m2"))]
    assert (logged_ids(log), answers) == (["m1", "m2"], [])


def test_reply_answers_its_method() -> None:
    """A reply is matched to its pending method by id and carries the data."""
    session = joined(ChatState(EventLog()))
    id, _ = session.request("msg", ["hi"])
    events, answers = receive(session, chat_frame("m1"), encode_reply(id, {"id": "m1"}))
    assert len(events) == 1
    assert answers == [Answer(id, "msg", {"id": "m1"})]


def test_error_reply_carries_a_chat_error() -> None:
    """An error reply becomes a ChatError with the platform's code and message."""
    session = joined(ChatState(EventLog()))
    id, _ = session.request("vote:choose", [0])
    error = {"code": 4006, "message": "There is no poll running.", "stacktrace": [], "data": {}}
    [answer] = receive(session, encode_reply(id, error=error))[1]
    assert isinstance(answer.error, ChatError)
    assert (answer.error.code, answer.error.message) == (4006, "There is no poll running.")


def test_reply_nobody_waits_for_is_ignored() -> None:
    """A reply to an unknown or cancelled id is dropped."""
    session = joined(ChatState(EventLog()))
    id, _ = session.request("ping", [])
    session.cancel(id)
    assert receive(session, encode_reply(id, omit_data=True), encode_reply(99)) == ([], [])


def test_garbage_frame_is_skipped_and_counted() -> None:
    """A frame that is not a packet is skipped, counted and kept as the last malformed one."""
    session = joined(ChatState(EventLog()))
    events, _ = receive(session, b"not json", chat_frame("m1"))
    assert [e.data["id"] for e in events] == ["m1"]
    assert session.malformed == 1 and session.last_malformed is not None


def test_join_sets_state_and_roles() -> None:
    """auth's reply decides between connected (anonymous) and authenticated, with roles."""
    anonymous = joined(ChatState(EventLog()))
    user = joined(ChatState(EventLog()), {"authenticated": True, "roles": ["Owner", "User"]})
    assert (anonymous.state, anonymous.authenticated) == (State.CONNECTED, False)
    assert (user.state, user.roles) == (State.AUTHENTICATED, ("Owner", "User"))


def test_states_in_order_and_listeners_hear_them() -> None:
    """connecting -> connected -> authenticated -> reconnecting -> connected -> closed."""
    session = ChatState(EventLog())
    heard: list[State] = []
    session.listeners.append(heard.append)
    joined(session, {"authenticated": True, "roles": []})
    session.lost(T)
    session.opened("b")
    session.closed()
    assert heard == [
        State.CONNECTED,
        State.AUTHENTICATED,
        State.RECONNECTING,
        State.CONNECTED,
        State.CLOSED,
    ]


def test_lost_connection_returns_pending_ids() -> None:
    """Methods pending when the connection drops are handed back to be failed."""
    session = joined(ChatState(EventLog()))
    ids = [session.request("ping", [])[0] for _ in range(2)]
    assert session.lost(T) == ids
    assert session.lost(T) == []


def test_auth_arguments() -> None:
    """auth takes [channel] anonymously, [channel, user, key] signed in."""
    session = ChatState(EventLog())
    assert session.auth_arguments(7, None, None) == [7]
    assert session.auth_arguments(7, 1, None) == [7]
    assert session.auth_arguments(7, 1, "k") == [7, 1, "k"]


def test_resync_adds_only_missed_messages() -> None:
    """After a rejoin, history after the last message seen is added, once, marked as history."""
    log = EventLog()
    session = rejoined(ChatState(log), ["h1", "h2"], ("m1", "m2"))
    delivered = session.resync([message(i) for i in ["h2", "m1", "m2", "g1", "g2"]], T + 1)
    assert [e.data["id"] for e in delivered] == ["g1", "g2"]
    assert logged_ids(log) == ["m1", "m2", "g1", "g2"]
    assert list(log.messages()["from_history"]) == [False, False, True, True]
    assert (session.recovered, session.gaps) == (2, 0)


def test_events_during_resync_wait_for_the_missed_ones() -> None:
    """Events arriving before history are held, then follow the recovered messages."""
    log = EventLog()
    session = rejoined(ChatState(log), ["h1"])
    assert receive(session, chat_frame("n1")) == ([], [])  # held
    delivered = session.resync([message(i) for i in ["h1", "g1", "n1"]], T)
    assert [e.data["id"] for e in delivered] == ["g1", "n1"]
    assert logged_ids(log) == ["g1", "n1"]
    assert receive(session, chat_frame("n2"))[0]  # no longer held


def test_a_message_history_filled_that_comes_live_after_is_recorded_once() -> None:
    """A message the rejoin's history added, delivered live only after the reply (the nodes
    share messages through a broker), is neither logged nor delivered again."""
    log = EventLog()
    session = rejoined(ChatState(log), ["h1"])
    assert [e.data["id"] for e in session.resync([message(i) for i in ["h1", "g1"]], T)] == ["g1"]
    delivered, _ = receive(session, chat_frame("g1"), chat_frame("n1"))
    assert [e.data["id"] for e in delivered] == ["n1"]
    assert logged_ids(log) == ["g1", "n1"]


def test_a_backlog_message_that_comes_live_after_the_first_join_is_recorded_once() -> None:
    """The first join's backlog is watched for live the same way."""
    log = EventLog()
    session = joined(ChatState(log))
    session.baseline([message(i) for i in ["h1", "h2"]], T, backlog=2)
    delivered, _ = receive(session, chat_frame("h2"), chat_frame("n1"))
    assert [e.data["id"] for e in delivered] == ["n1"]
    assert logged_ids(log) == ["h1", "h2", "n1"]


def test_resync_without_a_known_message_counts_a_gap() -> None:
    """When history holds no message seen before, all of it is added and a gap counted."""
    log = EventLog()
    session = rejoined(ChatState(log), ["h1"])
    session.resync([message(i) for i in ["g1", "g2"]], T)
    assert logged_ids(log) == ["g1", "g2"]
    assert session.gaps == 1


def test_every_rejoin_leaves_an_outage_saying_what_may_be_lost() -> None:
    """Lost to filled is one outage: events only when history reached back, messages when it
    did not, unfilled when history failed or the client gave up while away."""
    session = rejoined(ChatState(EventLog()), ["h1"])
    session.resync([message(i) for i in ["h1", "g1"]], T + 2)
    session.lost(T + 3)
    session.lost(T + 4)  # a failed attempt: the outage still starts at the first loss
    session.opened("c")
    session.resync([message(i) for i in ["x1", "x2"]], T + 5)
    session.lost(T + 6)
    session.opened("d")
    session.resync_failed(T + 7)
    session.lost(T + 8)
    session.closed(T + 9)
    assert list(session.outages) == [
        Outage(None, T, T + 2, Loss.EVENTS),
        Outage(None, T + 3, T + 5, Loss.MESSAGES),
        Outage(None, T + 6, T + 7, Loss.UNFILLED),
        Outage(None, T + 8, T + 9, Loss.UNFILLED),
    ]
    assert session.gaps == 2


def test_messages_removed_while_away_are_counted_once() -> None:
    """Messages seen before that history no longer returns are counted as removed while
    away, once; a removal seen live (DeleteMessage, PurgeMessage) is not counted."""
    session = rejoined(ChatState(EventLog()), ["h1", "h2", "h3", "h4"])
    session.resync([message(i) for i in ["h1", "h3", "g1"]], T)  # h2 and h4 removed
    assert (session.removed, session.outages[-1].removed) == (2, 2)
    delete = encode_event("DeleteMessage", {"id": "h3"})
    purge = encode_event("PurgeMessage", {"user_id": 1})
    receive(session, chat_frame("m1"), delete, chat_frame("m2", user_id=2), purge)
    session.lost(T)
    session.opened("c")
    session.resync([message(i, user_id=2) for i in ["m2", "g2"]], T)
    assert (session.removed, session.outages[-1].removed) == (2, 0)
    assert session.gaps == 0


def test_first_join_history_is_not_added_without_backlog() -> None:
    """The first join's history only marks where the session began, unless a backlog is
    asked for."""
    plain, backlog = EventLog(), EventLog()
    joined(ChatState(plain)).baseline([message(i) for i in ["h1", "h2", "h3"]], T)
    joined(ChatState(backlog)).baseline([message(i) for i in ["h1", "h2", "h3"]], T, backlog=2)
    assert logged_ids(plain) == []
    assert logged_ids(backlog) == ["h2", "h3"]


def test_whispers_are_not_anchors() -> None:
    """Whispers, never in history, do not push the last public message out of memory."""
    log = EventLog()
    session = joined(ChatState(log))
    session.baseline([], T)
    receive(session, chat_frame("m1"), *(chat_frame(f"w{i}", target="bob") for i in range(150)))
    session.lost(T)
    session.opened("b")
    delivered = session.resync([message(i) for i in ["m1", "g1"]], T)
    assert [e.data["id"] for e in delivered] == ["g1"]
    assert session.gaps == 0


def test_loss_during_resync_keeps_the_gap_recoverable() -> None:
    """Held events are recorded when the connection drops again, and the next resync still
    recovers what was missed before them."""
    log = EventLog()
    session = rejoined(ChatState(log), ["h1"])
    receive(session, chat_frame("n1"))  # held
    session.lost(T)  # recorded now, but not an anchor
    session.opened("a")
    delivered = session.resync([message(i) for i in ["h1", "g1", "n1", "g2"]], T)
    assert [e.data["id"] for e in delivered] == ["g1", "g2"]
    assert logged_ids(log) == ["n1", "g1", "g2"]


def test_backoff_doubles_with_jitter_up_to_the_cap() -> None:
    """Delays double from the first up to the cap, each scaled by 0.5-1."""
    delays = backoff(0.5, 4.0, random.Random(1))
    got = [next(delays) for _ in range(6)]
    for delay, base in zip(got, [0.5, 1, 2, 4, 4, 4], strict=True):
        assert base / 2 <= delay < base
    assert len(set(got)) == len(got)


def test_next_endpoint_avoids_the_one_just_lost() -> None:
    """The next endpoint differs from the one to avoid, unless it is the only one."""
    rng = random.Random(0)
    assert {next_endpoint(["a", "b", "c"], "a", rng) for _ in range(50)} == {"b", "c"}
    assert next_endpoint(["a"], "a", rng) == "a"
