"""Per-channel chat rooms: where room rules act and what they need (store, broker, clock).

A :class:`Room` is one channel's chat; the rules of its methods live in the modules that own
them (see :mod:`~explorer.emulator.chat.dispatch`) and act through :meth:`Room.publish`, so
chat nodes and the simulator's bots calling the same methods cause the same events.

Room state lives in SQLite, which every process of a platform shares, so chat nodes spread
over processes (:mod:`~explorer.emulator.brokers.redis`) agree on it: presence
(:mod:`~explorer.emulator.chat.presence`), timeouts
(:mod:`~explorer.emulator.chat.moderation`), polls (:mod:`~explorer.emulator.chat.polls`) and
history (:mod:`~explorer.emulator.chat.history`). Each decision is made by one transaction,
and SQLite runs write transactions one at a time, so no two nodes make the same decision.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from collections.abc import Callable, Coroutine
from typing import Any

from explorer.emulator.brokers.broker import Broker, Delivery
from explorer.emulator.config import Config
from explorer.emulator.db import channels
from explorer.emulator.db.engine import Store
from explorer.wire.packets import encode_event


class Rooms:
    """Every room of one platform, and what room logic needs: store, broker, clock, config."""

    def __init__(
        self,
        store: Store,
        broker: Broker,
        config: Config,
        clock: Callable[[], float],
    ) -> None:
        self.store = store
        self.broker = broker
        self.config = config
        self.clock = clock
        self.rng = random.Random(f"{config.seed}:giveaway")
        #: This process's connections per (channel, user), as its presence rows should say.
        self.local: Counter[tuple[int, int]] = Counter()
        self._rooms: dict[int, Room] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    def get(self, channel_id: int) -> Room | None:
        """The room of a channel that exists and is not suspended, else None."""
        owner = channels.unsuspended_owner(self.store, channel_id)
        if owner is None:
            return None
        room = self._rooms.get(channel_id)
        if room is None:
            room = self._rooms[channel_id] = Room(self, channel_id, owner)
        return room

    def keeping(self, alive: frozenset[str]) -> list[str]:
        """The processes whose room state stays when ``alive`` are the living ones (they and
        this one), in order (what :func:`~explorer.emulator.db.chat_presence.gone` reads)."""
        return sorted(alive | {self.broker.origin})

    def spawn(self, work: Coroutine[Any, Any, None]) -> None:
        """Run a room's background coroutine (a poll), cancelled by :meth:`close`."""
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def close(self) -> None:
        """Cancel running polls."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


class Room:
    """One channel's chat: where its rules act and how its events reach every node."""

    def __init__(self, rooms: Rooms, channel_id: int, owner_id: int) -> None:
        self.rooms = rooms
        self.channel_id = channel_id
        self.owner_id = owner_id
        #: Messages stored through this room (history prunes every so many).
        self.writes = 0
        #: The channel's emoticon pack and filter, once read (:mod:`.settings` owns them and
        #: their type, which builds on rooms: so this module names no type of it).
        self.settings: object | None = None

    def publish(self, event: str, data: Any, **delivery: Any) -> None:
        """Send event ``event`` to the room's members on every node."""
        self.deliver(Delivery(event, encode_event(event, data), **delivery))

    def deliver(self, delivery: Delivery) -> None:
        """Hand an encoded ``delivery`` to the room's members on every node."""
        self.rooms.broker.publish(self.channel_id, delivery)
