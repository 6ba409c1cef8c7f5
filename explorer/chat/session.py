"""The chat session without I/O: method ids and pending replies, the join state, a gapless
event log across reconnects, and the reconnect schedule.

``chat/client.py`` owns timers and futures (``chat/socket.py`` the socket); what happens to a
frame, a reply or a lost connection is decided here, by plain methods that take what arrived and
return what it means, so every rule is tested without a network (python-websockets' habit: a
protocol core that never touches a socket). Pure: no I/O and no sleeping; time and randomness
are passed in.

States (platform.md, "States and transitions"; a connection must call ``auth`` after opening)::

    connecting --opened--> connected --auth, signed in--> authenticated
                           (auth, anonymous: stays connected)
    connected / authenticated --lost--> reconnecting --opened--> connected --> ...
    any --close() or giving up--> closed

Method ids count up for the whole session, across reconnects (reference.md fact 5). A method
is *pending* from :meth:`ChatState.request` until its reply (:meth:`ChatState.receive` returns its
:class:`Answer`) or until the connection is lost (:meth:`ChatState.lost` returns its id). Frames
are taken a socket read at a time: a busy chat delivers a hundred or so per read, and handling
them in one loop with one clock reading is measurably cheaper than one call per frame.

Gapless log: every event goes into the :class:`~explorer.events.log.EventLog`. While a client
is away its channel keeps talking, and ``history`` (at most 100 of the latest messages) is the
only way to see what was said. So the session remembers the ids of the last 100 messages it
recorded in order (``_recent``), seeded on the first join from a ``history`` call
(:meth:`ChatState.baseline`). After a reconnect it *holds* incoming events until
:meth:`ChatState.resync` gets the new ``history``: the messages after the latest remembered id
are the missed ones; those not already in the log are added (``from_history`` True) and
delivered as ``ChatMessage`` events, then the held events follow, so the log and the event
stream equal what the channel said, without duplicates. A message can be stored, and so in
``history``, before its node delivers it live (the nodes share messages through a broker): the
next 100 live messages are compared with the ids the reply added, and one of them coming
again is dropped. When no remembered id is in the
reply, more than 100 messages may have been missed: all of them are added and
:attr:`ChatState.gaps` counts the possible gap. Whispers are never in ``history``: a whisper
sent while away is lost, so whisper ids are not remembered either.

What cannot be filled is reported, not hidden: every reconnect leaves an :class:`Outage` in
:attr:`ChatState.outages` (from the moment the connection was lost to the fill), saying whether
messages may be missing (``history`` held too few, or could not be had) and how many messages
recorded earlier ``history`` no longer returns (removed by moderation while away: the
``DeleteMessage``/``PurgeMessage``/``ClearMessages`` events sent meanwhile are not in
``history``, so the comparison is how the client learns of them). Events other than messages
sent while away (removals of messages said meanwhile, polls, joins) cannot be recovered at
all: the outage's interval is where an analyst must expect them missing.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import orjson

from explorer.core.renames import warn_renamed
from explorer.errors import ChatError
from explorer.events.chunks import Raw
from explorer.events.log import EventLog
from explorer.wire.packets import Event, PacketError, Reply, decode, encode_method

#: Most messages one ``history`` call returns (platform.md, "Limits").
HISTORY_LIMIT = 100
#: Outages one session keeps in :attr:`ChatState.outages` (older ones stay counted).
OUTAGES_KEPT = 1000


class Loss(StrEnum):
    """What an :class:`Outage` may have lost."""

    #: Messages were filled from ``history``; only other events sent meanwhile are lost.
    EVENTS = "events"
    #: More messages than ``history`` returns may have been missed (a counted gap).
    MESSAGES = "messages"
    #: ``history`` could not be had: every message sent meanwhile may be missing.
    UNFILLED = "unfilled"


@dataclass(frozen=True, slots=True)
class Outage:
    """One time the client was away from a channel: from ``start`` (the connection was lost)
    to ``end`` (the fill, or the give-up), epoch seconds; what may be lost there (``loss``),
    and ``removed``: messages recorded before that ``history`` no longer returns."""

    channel: int | None
    start: float
    end: float
    loss: Loss
    removed: int = 0


class State(StrEnum):
    """Where a chat connection stands (see the module docstring)."""

    CONNECTING = "connecting"
    CONNECTED = "connected"
    AUTHENTICATED = "authenticated"
    RECONNECTING = "reconnecting"
    CLOSED = "closed"


@dataclass(frozen=True, slots=True)
class Answer:
    """The outcome of one method: its reply ``data``, or the ``error`` the reply carried."""

    id: int
    method: str
    data: Any = None
    error: ChatError | None = None


class ChatState:
    """One client's chat session with a channel, over any number of connections."""

    def __init__(self, log: EventLog) -> None:
        self.log = log
        #: The channel joined, recorded with every event (a log may hold several channels).
        self.channel: int | None = None
        self.state = State.CONNECTING
        #: The endpoint of the current (or last) connection.
        self.endpoint: str | None = None
        self.authenticated = False
        self.roles: tuple[str, ...] = ()
        #: Messages recovered from ``history`` after reconnects.
        self.recovered = 0
        #: Reconnects after which messages may be missing (more than ``history`` returns).
        self.gaps = 0
        #: Every time the client was away, newest last (at most :data:`OUTAGES_KEPT`).
        self.outages: deque[Outage] = deque(maxlen=OUTAGES_KEPT)
        #: Messages recorded earlier that ``history`` no longer returned after a reconnect.
        self.removed = 0
        #: Rows this session added to the log, and how many of them are ChatMessages (a log
        #: several sessions feed counts them all together).
        self.recorded = 0
        self.recorded_messages = 0
        #: Frames that were not packets, and the last one's error.
        self.malformed = 0
        self.last_malformed: PacketError | None = None
        #: Called with the new state on every change.
        self.listeners: list[Callable[[State], object]] = []
        self._next_id = 1
        self._pending: dict[int, str] = {}
        # (id, author) of the latest messages recorded in order.
        self._recent: deque[tuple[str, Any]] = deque(maxlen=HISTORY_LIMIT)
        self._held: list[tuple[Event, Raw, float]] | None = None
        # Ids a ``history`` reply just added, and how many more live messages to compare with
        # them: one of them may still come live after the reply (see :meth:`_came_again`).
        self._filled: set[str] = set()
        self._filled_left = 0
        self._joined = False
        self._lost_at: float | None = None

    def _set(self, state: State) -> None:
        if state is not self.state:
            self.state = state
            for listener in list(self.listeners):
                listener(state)

    # Connections.

    @property
    def rejoining(self) -> bool:
        """Whether an earlier connection joined: the next join must :meth:`resync`."""
        return self._joined

    def opened(self, endpoint: str) -> None:
        """A socket to ``endpoint`` is open; after an earlier join, hold events until resync."""
        self.endpoint = endpoint
        if self._joined:
            self._held = []
        self._set(State.CONNECTED)

    def joined(self, data: Any) -> None:
        """Take the reply data of ``auth``: signed in or anonymous, and the roles."""
        reply = data if isinstance(data, Mapping) else {}
        self._joined = True
        self.authenticated = reply.get("authenticated") is True
        self.roles = tuple(reply.get("roles") or ())
        self._set(State.AUTHENTICATED if self.authenticated else State.CONNECTED)

    def lost(self, at: float) -> list[int]:
        """The connection dropped at ``at`` (epoch s): the ids of methods that will never be
        answered.

        Events held for a resync that cannot happen now are recorded at once; the ids they
        carry are not remembered, so the next resync still looks for what came before them.
        The outage starts at the first loss and ends at the next fill.
        """
        if self._joined and self._lost_at is None:
            self._lost_at = at
        self._release(remember=False)
        pending = list(self._pending)
        self._pending.clear()
        self._set(State.RECONNECTING if self._joined else State.CONNECTING)
        return pending

    def closed(self, at: float | None = None) -> list[int]:
        """The session ended (at ``at``, epoch s): the ids of methods that will never be
        answered. Ended while away (given up, or closed while reconnecting), the outage ends
        there, every message since unfilled."""
        if at is not None and self._lost_at is not None:
            self._outage(at, Loss.UNFILLED, 0)
        self._release(remember=False)
        pending = list(self._pending)
        self._pending.clear()
        self._set(State.CLOSED)
        return pending

    # Methods and frames.

    def auth_arguments(self, channel_id: int, user_id: int | None, key: str | None) -> list[Any]:
        """``auth`` arguments: ``[channel, user, key]`` signed in, ``[channel]`` anonymous."""
        if user_id is None or key is None:
            return [channel_id]
        return [channel_id, user_id, key]

    def request(self, method: str, arguments: Sequence[Any]) -> tuple[int, bytes]:
        """A new method packet: its id and its bytes (send them as a text frame)."""
        id = self._next_id
        self._next_id += 1
        self._pending[id] = method
        return id, encode_method(method, list(arguments), id)

    def cancel(self, id: int) -> None:
        """Stop waiting for the reply to ``id`` (a late reply is then ignored)."""
        self._pending.pop(id, None)

    def receive(
        self,
        frames: Iterable[Raw],
        received_at: float,
        deliver: Callable[[Event], object] | None = None,
    ) -> list[Answer]:
        """Take frames from the server, in order, all received at ``received_at`` (one read of
        the socket): record each event and pass it to ``deliver``; return the answers to
        pending methods.

        Events held for a resync are neither recorded nor delivered yet; replies nobody waits
        for are dropped; frames that are not packets are skipped, counted in
        :attr:`malformed` and the last one kept in :attr:`last_malformed`. Events are handed
        over one by one rather than returned as a list: keeping a few hundred decoded packets
        alive until the end of a read makes decoding them twice as slow.
        """
        answers: list[Answer] = []
        held = self._held
        record = self._record
        filled = self._filled
        for frame in frames:
            try:
                obj = orjson.loads(frame)
            except orjson.JSONDecodeError:
                obj = None
            # packets.decode's rule for an event packet, inlined: nearly every frame is one.
            if type(obj) is dict and obj.get("type") == "event":
                name = obj.get("event")
                if type(name) is str:
                    data = obj.get("data")
                    if held is not None:
                        held.append((Event(name, data), frame, received_at))
                    elif filled and name == "ChatMessage" and self._came_again(data):
                        continue
                    else:
                        record(name, data, frame, received_at, True)
                        if deliver is not None:
                            deliver(Event(name, data))
                    continue
            try:
                packet = decode(frame)
            except PacketError as malformed:
                self.malformed += 1
                self.last_malformed = malformed
                continue
            if type(packet) is Reply:
                method = self._pending.pop(packet.id, None)
                if method is None:
                    continue
                error = None if packet.error is None else ChatError.from_object(packet.error)
                answers.append(Answer(packet.id, method, packet.data, error))
        return answers

    def _came_again(self, data: Any) -> bool:
        """Whether live message ``data`` is one the last ``history`` reply added. The platform
        may store a message, answer ``history`` with it, and only then deliver it live (its
        chat nodes share messages through a broker), so for the next :data:`HISTORY_LIMIT` live
        messages each is compared with the ids the reply added."""
        self._filled_left -= 1
        if self._filled_left <= 0:
            self._filled.clear()
        message_id = data.get("id") if type(data) is dict else None
        if message_id in self._filled:
            self._filled.discard(message_id)
            return True
        return False

    def _fill(self, messages: Sequence[Mapping[str, Any]], received_at: float) -> None:
        """Add ``messages`` of a ``history`` reply to the log, and watch for them live."""
        self._count_history(self.log.add_history(messages, received_at, self.channel))
        self._filled = {m["id"] for m in messages if isinstance(m.get("id"), str)}
        self._filled_left = HISTORY_LIMIT

    def _record(self, name: str, data: Any, raw: Raw, received_at: float, remember: bool) -> None:
        message_id = None
        self.recorded += 1
        if name == "ChatMessage":
            self.recorded_messages += 1
            if type(data) is dict:
                message_id = data.get("id")
                if type(message_id) is not str:
                    message_id = None
                elif remember and "target" not in data:  # a whisper has a target
                    self._recent.append((message_id, data.get("user_id")))
        elif name in _REMOVALS:
            self._forget(name, data)
        self.log.append_event(name, data, raw, received_at, message_id, self.channel)

    def _forget(self, name: str, data: Any) -> None:
        """A removal seen live: its messages are no longer in ``history``, and that is no
        loss (the log has the removal)."""
        if name == "ClearMessages":
            self._recent.clear()
            return
        if type(data) is not dict:
            return
        key, index = ("id", 0) if name == "DeleteMessage" else ("user_id", 1)
        value = data.get(key)
        kept = [entry for entry in self._recent if entry[index] != value]
        if len(kept) != len(self._recent):
            self._recent = deque(kept, maxlen=HISTORY_LIMIT)

    def _release(self, remember: bool) -> list[Event]:
        held, self._held = self._held or [], None
        for event, raw, received_at in held:
            self._record(event.event, event.data, raw, received_at, remember)
        return [event for event, _, _ in held]

    # Keeping the log gapless.

    def baseline(
        self, messages: Sequence[Mapping[str, Any]], received_at: float, backlog: int = 0
    ) -> None:
        """Take the first join's ``history``: remember its ids, and add the last ``backlog``
        messages to the log (before events that arrived meanwhile, which are kept too)."""
        ids = [(m["id"], m.get("user_id")) for m in messages if isinstance(m.get("id"), str)]
        self._recent = deque([*ids, *self._recent], maxlen=HISTORY_LIMIT)
        if backlog > 0:
            self._fill(list(messages)[-backlog:], received_at)

    def _count_history(self, added: int) -> None:
        self.recorded += added
        self.recorded_messages += added

    def resync(self, messages: Sequence[Mapping[str, Any]], received_at: float) -> list[Event]:
        """Take a rejoin's ``history``: add the missed messages, release the held events, and
        return both, in that order, as the events to deliver (see the module docstring)."""
        ids = [m.get("id") for m in messages]
        known = {message_id for message_id, _ in self._recent}
        anchor = next((i for i in range(len(ids) - 1, -1, -1) if ids[i] in known), None)
        gap = anchor is None and bool(known)
        if gap:
            self.gaps += 1
        removed = self._removed_while_away(ids, known)
        self._outage(received_at, Loss.MESSAGES if gap else Loss.EVENTS, removed)
        held = {
            e.data.get("id")
            for e, _, _ in self._held or ()
            if e.event == "ChatMessage" and type(e.data) is dict
        }
        missed = [
            m for m in messages[0 if anchor is None else anchor + 1 :] if m.get("id") not in held
        ]
        wanted = {m["id"] for m in missed if isinstance(m.get("id"), str)}
        kept = self.log.kept_message_ids(wanted)
        fresh = [m for m in missed if m.get("id") not in kept]
        self._fill(fresh, received_at)
        self.recovered += len(fresh)
        self._recent.extend(
            (m["id"], m.get("user_id")) for m in fresh if isinstance(m.get("id"), str)
        )
        recovered = [Event("ChatMessage", m) for m in fresh]
        return recovered + self._release(remember=True)

    def _removed_while_away(self, ids: Sequence[Any], known: set[str]) -> int:
        """Messages recorded since the oldest one ``history`` still returns that it no
        longer returns: removed while the client was away."""
        returned = set(ids)
        first = next((i for i in ids if i in known), None)
        if first is None:
            return 0
        recent = [message_id for message_id, _ in self._recent]
        gone = {i for i in recent[recent.index(first) :] if i not in returned}
        if gone:  # counted once: forgotten like a removal seen live
            self._recent = deque((e for e in self._recent if e[0] not in gone), HISTORY_LIMIT)
        self.removed += len(gone)
        return len(gone)

    def _outage(self, end: float, loss: Loss, removed: int) -> None:
        """Close the outage under way (if any) at ``end``."""
        start, self._lost_at = self._lost_at, None
        if start is not None:
            self.outages.append(Outage(self.channel, start, end, loss, removed))

    def resync_failed(self, at: float) -> list[Event]:
        """``history`` could not be had after a rejoin (at ``at``, epoch s): release the held
        events as they are and count a possible gap."""
        self.gaps += 1
        self._outage(at, Loss.UNFILLED, 0)
        return self._release(remember=True)


#: Events that remove messages from ``history``.
_REMOVALS = frozenset(("DeleteMessage", "PurgeMessage", "ClearMessages"))


def backoff(initial: float, maximum: float, rng: random.Random) -> Iterator[float]:
    """Delays before successive reconnect attempts: ``initial``, doubling up to ``maximum``,
    each times a random factor in [0.5, 1) so that the clients of a failed node spread out."""
    delay = initial
    while True:
        yield delay * (0.5 + rng.random() / 2)
        delay = min(delay * 2, maximum)


def next_endpoint(endpoints: Sequence[str], avoid: str | None, rng: random.Random) -> str:
    """A random endpoint other than ``avoid`` (the one just lost or failed), if there is one."""
    others = [e for e in endpoints if e != avoid]
    return rng.choice(others or list(endpoints))


def __getattr__(name: str) -> object:
    """``Session``, the old name of :class:`ChatState` (kept one release, with a warning)."""
    if name == "Session":
        warn_renamed("explorer.chat.session.Session", "explorer.chat.session.ChatState")
        return ChatState
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
