"""Fan-out between chat nodes, and the one home of room state that nodes must agree on.

A channel's chat members may sit on any node. Room logic (:mod:`rooms`) never writes to a
socket: it publishes a :class:`Delivery` for a channel, and the broker hands it to every
subscriber of that channel (each node with members there, and the simulator), which writes it
to its own connections. The state every node must see the same way (who is present, who is
timed out, the running poll) lives in one :class:`RoomState` per channel, held by the broker;
history lives in SQLite, which every node shares.

:class:`InProcessBroker` is the default: nodes run in one process, so delivery is a function
call and room state is one shared object. A Redis broker (a later issue) implements the same
interface with pub/sub: a :class:`Delivery` is plain data (bytes, ids) so it serialises as is,
and ``state()`` returns that process's replica of the room, kept current from the same stream.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class Delivery:
    """One event packet for a channel's members, and who may receive it.

    ``payload`` is the encoded event. ``emotes_payload``, when set, replaces it for
    connections that called ``attachEmotes``. ``users`` limits delivery to those users'
    connections (whispers, ``UserTimeout``); ``skip`` names one connection that must not get
    it (the joiner of ``UserJoin``). ``refresh_user`` asks every node to re-read that user's
    roles before delivering (``UserUpdate``).
    """

    event: str
    payload: bytes
    emotes_payload: bytes | None = None
    users: frozenset[int] | None = None
    skip: str | None = None
    refresh_user: int | None = None


class Subscriber(Protocol):
    """Something that receives a channel's deliveries (a chat node, the simulator)."""

    def deliver(self, channel_id: int, delivery: Delivery) -> None:
        """Write ``delivery`` to the local members of ``channel_id`` it concerns."""
        ...


@dataclass(slots=True)
class Poll:
    """A running poll: question, answers, author, timing and one vote per user."""

    question: str
    answers: list[str]
    author: dict[str, Any]
    duration: float
    ends_at: float
    votes: dict[int, int] = field(default_factory=dict)
    #: Votes arrived since the last progress ``PollStart``.
    changed: bool = False


@dataclass(slots=True)
class RoomState:
    """The part of a channel's chat every node must agree on."""

    #: Authenticated users present, with their number of live connections (join order).
    presence: dict[int, int] = field(default_factory=dict)
    #: Anonymous connections present.
    anonymous: int = 0
    #: Timed-out users and when their timeout ends (epoch seconds).
    timeouts: dict[int, float] = field(default_factory=dict)
    poll: Poll | None = None


class Broker(ABC):
    """Routes deliveries to the subscribers of a channel and holds the shared room state."""

    @abstractmethod
    def subscribe(self, channel_id: int, subscriber: Subscriber) -> None:
        """Start delivering ``channel_id``'s events to ``subscriber`` (idempotent)."""

    @abstractmethod
    def unsubscribe(self, channel_id: int, subscriber: Subscriber) -> None:
        """Stop delivering ``channel_id``'s events to ``subscriber`` (idempotent)."""

    @abstractmethod
    def publish(self, channel_id: int, delivery: Delivery) -> None:
        """Hand ``delivery`` to every subscriber of ``channel_id``, on every node."""

    @abstractmethod
    def state(self, channel_id: int) -> RoomState:
        """The shared state of ``channel_id``'s room (created empty on first use)."""


class InProcessBroker(Broker):
    """Every node in this process: delivery is a call, state is one shared object."""

    def __init__(self) -> None:
        self._subscribers: defaultdict[int, dict[Subscriber, None]] = defaultdict(dict)
        self._states: dict[int, RoomState] = {}

    def subscribe(self, channel_id: int, subscriber: Subscriber) -> None:
        self._subscribers[channel_id][subscriber] = None

    def unsubscribe(self, channel_id: int, subscriber: Subscriber) -> None:
        subscribers = self._subscribers.get(channel_id)
        if subscribers is not None:
            subscribers.pop(subscriber, None)
            if not subscribers:
                del self._subscribers[channel_id]

    def publish(self, channel_id: int, delivery: Delivery) -> None:
        subscribers = self._subscribers.get(channel_id)
        if subscribers:
            for subscriber in tuple(subscribers):
                subscriber.deliver(channel_id, delivery)

    def state(self, channel_id: int) -> RoomState:
        state = self._states.get(channel_id)
        if state is None:
            state = self._states[channel_id] = RoomState()
        return state
