"""Event feeds: what one consumer of a chat's events has not taken yet.

A source (a :class:`~explorer.chat.ChatClient`) pushes every event into each subscribed feed
on its loop; a consumer takes them at its own pace, from an async iterator
(:class:`EventStream`) or a blocking one (:class:`EventIterator`, for scripts). A consumer that
falls ``limit`` events behind loses the oldest, counted in ``dropped``, so a slow reader never
holds the source back. Event names are checked against the platform's
(:data:`~explorer.wire.events.EVENTS`): a misspelt one would otherwise match nothing and
leave its consumer waiting forever.
"""

from __future__ import annotations

import asyncio
import difflib
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence

from explorer.wire.events import EVENTS
from explorer.wire.packets import Event


def event_names(names: Sequence[str]) -> frozenset[str]:
    """``names`` as a set, once each is an event the platform sends; raises ValueError naming
    the closest known name and listing them all otherwise."""
    for name in names:
        if name not in EVENTS:
            close = difflib.get_close_matches(str(name), EVENTS, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise ValueError(
                f"No chat event is called {name!r}.{hint} The events are: {', '.join(EVENTS)}."
            )
    return frozenset(names)


class Feed:
    """The events one consumer has not taken yet, oldest first, at most ``limit``.

    ``release`` is called with the feed when its consumer stops (the source unsubscribes it).
    """

    def __init__(self, names: Sequence[str], limit: int, release: Callable[[Feed], object]) -> None:
        self.names = event_names(names)
        self._release = release
        self.items: deque[Event] = deque(maxlen=limit)
        #: Events dropped because the consumer was ``limit`` events behind.
        self.dropped = 0
        self.ended = False
        self.error: BaseException | None = None

    def push(self, event: Event) -> None:
        """Add ``event`` if this feed wants it (called on the loop)."""
        if self.names and event.event not in self.names:
            return
        if len(self.items) == self.items.maxlen:
            self.dropped += 1
        self.items.append(event)
        self.wake()

    def end(self, error: BaseException | None) -> None:
        """No more events: the client closed (``error`` None) or gave up."""
        self.ended, self.error = True, error
        self.wake()

    def wake(self) -> None:
        """Tell a waiting consumer that something happened."""


class EventStream(Feed):
    """An async iterator over a chat's events, from its creation on (``async for``)."""

    def __init__(self, names: Sequence[str], limit: int, release: Callable[[Feed], object]) -> None:
        super().__init__(names, limit, release)
        self._waiter: asyncio.Future[None] | None = None

    def wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def __aiter__(self) -> EventStream:
        return self

    async def __anext__(self) -> Event:
        while not self.items:
            if self.ended:
                self._release(self)
                if self.error is not None:
                    raise self.error
                raise StopAsyncIteration
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        return self.items.popleft()

    def close(self) -> None:
        """Stop receiving events."""
        self._release(self)


class EventIterator(Feed):
    """A blocking iterator over a chat's events, from its creation on, for ``timeout`` seconds
    in all (None: until the chat closes); see :meth:`explorer.chat.Chat.events`."""

    def __init__(
        self,
        names: Sequence[str],
        limit: int,
        release: Callable[[Feed], object],
        timeout: float | None,
    ) -> None:
        super().__init__(names, limit, release)
        self._ready = threading.Event()
        self._deadline = None if timeout is None else time.monotonic() + timeout

    def wake(self) -> None:
        self._ready.set()

    def __iter__(self) -> EventIterator:
        return self

    def __next__(self) -> Event:
        while True:
            self._ready.clear()
            if self.items:
                return self.items.popleft()
            if self.ended:
                self.close()
                if self.error is not None:
                    raise self.error
                raise StopIteration
            left = None if self._deadline is None else self._deadline - time.monotonic()
            if left is not None and left <= 0:
                self.close()
                raise StopIteration
            self._ready.wait(left)

    def close(self) -> None:
        """Stop receiving events."""
        self._release(self)

    def __enter__(self) -> EventIterator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
