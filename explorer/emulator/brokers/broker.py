"""The Broker seam: rooms publish deliveries, a broker hands them to every subscriber of the
channel, in this process and, with a Redis broker, in every other.

A channel's chat members may sit on any node, in any process. Room logic
(:mod:`~explorer.emulator.chat.rooms`) never writes to a socket: it publishes a
:class:`Delivery` for a channel, and the broker hands it to every subscriber of that channel
(each node with members there, and the simulator), which writes it to its own connections.
The broker holds no room state: presence, timeouts, polls and history live in SQLite, which
every process of a platform shares (see :mod:`~explorer.emulator.chat.rooms`), so one
implementation of the room rules serves one process or many.

:class:`~explorer.emulator.brokers.inprocess.InProcessBroker` is the default: every node runs
in this process. :class:`~explorer.emulator.brokers.redis.RedisBroker` (``explorer serve
--broker redis://...``) spreads a platform over processes; it reads what it missed from the
chat history through a :class:`Backlog`, so brokers import nothing of chat. Besides fan-out a
broker knows the processes of its platform: :attr:`Broker.origin` names this one in room state,
:meth:`Broker.watch` reports which are alive (so the living release what the dead held), and
:meth:`Broker.endpoints` lists the chat nodes of all of them, and :meth:`Broker.take` counts
platform-wide allowances (a user's chat rate over every process).
"""

from __future__ import annotations

import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

#: Called with the processes alive and a time: what processes not among them held in room
#: state before that time may be released (see :meth:`Broker.watch`).
Watcher = Callable[[frozenset[str], float], None]


@dataclass(frozen=True, slots=True)
class Delivery:
    """One event packet for a channel's members, and who may receive it.

    ``payload`` is the encoded event. ``emotes_payload``, when set, replaces it for
    connections that called ``attachEmotes``. ``users`` limits delivery to those users'
    connections (whispers, ``UserTimeout``); ``skip`` names one connection that must not get
    it (the joiner of ``UserJoin``). ``refresh_user`` asks every node to re-read that user's
    roles before delivering (``UserUpdate``). A stored chat message carries its position in
    history, ``seq``, and ``prev``, the position of the channel's message before it (both 0
    for every other event), so that a broker receiving from several processes can deliver
    stored messages in history order and fetch any it never received.
    """

    event: str
    payload: bytes
    emotes_payload: bytes | None = None
    users: frozenset[int] | None = None
    skip: str | None = None
    refresh_user: int | None = None
    seq: int = 0
    prev: int = 0


class Subscriber(Protocol):
    """Something that receives a channel's deliveries (a chat node, the simulator)."""

    def deliver(self, channel_id: int, delivery: Delivery) -> None:
        """Write ``delivery`` to the local members of ``channel_id`` it concerns."""
        ...


class Backlog(Protocol):
    """The stored chat messages, as a broker that missed some reads them (chat history)."""

    def latest(self) -> int:
        """The position of the newest stored message of any channel (0 when there is none)."""
        ...

    def latest_by_channel(self, after: int) -> dict[int, int]:
        """The newest position of each channel with messages stored after ``after``."""
        ...

    def since(self, channel_id: int, after: int, through: int) -> list[Delivery]:
        """Deliveries of ``channel_id``'s messages stored at ``after < seq <= through`` and
        not deleted, in history order."""
        ...


class Broker(ABC):
    """Routes deliveries to the subscribers of a channel, in every process of a platform."""

    def __init__(self) -> None:
        #: This process's name in room state (presence rows, poll owners).
        self.origin = uuid.uuid4().hex
        self._watchers: list[Watcher] = []

    @abstractmethod
    def subscribe(self, channel_id: int, subscriber: Subscriber) -> None:
        """Start delivering ``channel_id``'s events to ``subscriber`` (idempotent)."""

    @abstractmethod
    def unsubscribe(self, channel_id: int, subscriber: Subscriber) -> None:
        """Stop delivering ``channel_id``'s events to ``subscriber`` (idempotent)."""

    @abstractmethod
    def publish(self, channel_id: int, delivery: Delivery) -> None:
        """Hand ``delivery`` to every subscriber of ``channel_id``, on every node."""

    def watch(self, watcher: Watcher) -> None:
        """Call ``watcher(alive, before)`` whenever the broker knows which processes are
        alive: what the others held in room state before ``before`` may be released."""
        self._watchers.append(watcher)

    def _report(self, alive: frozenset[str], before: float) -> None:
        for watcher in self._watchers:
            watcher(alive, before)

    async def take(self, key: str, rate: float, burst: float, now: float) -> bool | None:
        """Take one token from the platform-wide bucket ``key`` (``rate`` per second, at most
        ``burst``, at time ``now``): True when there was one. None when this broker keeps no
        shared buckets (one process, or Redis away): the caller counts in process."""
        return None

    @abstractmethod
    def catch_up(self, channel_id: int, seq: int) -> None:
        """Deliver, before returning, every stored message of ``channel_id`` up to ``seq``
        that this process has not delivered yet (``history`` calls this, so that a joining
        client never gets a message both in its ``history`` reply and as a later event)."""

    @abstractmethod
    def advertise(self, local: Callable[[], list[str]]) -> None:
        """Where to read this process's running chat node addresses (for the directory)."""

    @abstractmethod
    def endpoints(self, local: list[str]) -> list[str]:
        """Every live chat node of the platform, given this process's ``local`` ones."""

    @abstractmethod
    async def start(self) -> None:
        """Connect and start background work."""

    @abstractmethod
    async def refresh(self) -> None:
        """Publish this process's node addresses now (after nodes started or stopped)."""

    @abstractmethod
    async def close(self) -> None:
        """Stop background work and disconnect."""
