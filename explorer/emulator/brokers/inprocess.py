"""The default broker: every chat node of the platform runs in this process.

Delivery is a call made at the moment of publishing, so stored messages reach subscribers in
history order without any bookkeeping.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable

from explorer.emulator.brokers.broker import Broker, Delivery, Subscriber


class InProcessBroker(Broker):
    """Every node in this process: delivery is a call."""

    def __init__(self) -> None:
        super().__init__()
        self._subscribers: defaultdict[int, dict[Subscriber, None]] = defaultdict(dict)

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

    def catch_up(self, channel_id: int, seq: int) -> None:
        """Nothing to do: publishing delivered every message at once."""

    def advertise(self, local: Callable[[], list[str]]) -> None:
        """Nothing to do: there is no directory beyond this process."""

    def endpoints(self, local: list[str]) -> list[str]:
        return local

    async def start(self) -> None:
        """This process is the only one, so whatever others held (a crashed run on the same
        database) is released now."""
        self._report(frozenset((self.origin,)), math.inf)

    async def refresh(self) -> None:
        """Nothing to do: :meth:`endpoints` reads the local nodes each time."""

    async def close(self) -> None:
        """Nothing to do: there is no connection."""
