"""Event feeds: what one consumer of a chat's events has not taken yet.

A source (a :class:`~explorer.chat.client.ChatClient`) pushes every event into each subscribed feed
on its loop; a consumer takes them at its own pace, from an async iterator
(:class:`EventStream`) or a blocking one (:class:`EventIterator`, for scripts). A consumer that
falls ``limit`` events behind loses the oldest, counted in ``dropped``, so a slow reader never
holds the source back. Event names are checked against the platform's
(:data:`~explorer.wire.events.EVENTS`): a misspelt one would otherwise match nothing and
leave its consumer waiting forever.

:class:`Subscribers` is the source's side: the feeds and callbacks it delivers each event to.
"""

from __future__ import annotations

import asyncio
import difflib
import logging
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Sequence

from explorer.wire.events import EVENTS
from explorer.wire.packets import Event

log = logging.getLogger("explorer.chat")

Callback = Callable[[Event], object]


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


class Subscribers:
    """A source's consumers: the feeds and callbacks each event goes to, subscribed from any
    thread, delivered to on the source's loop. The source sets ``_closing`` and ``error``."""

    _closing: bool
    error: BaseException | None

    def __init__(self, max_pending: int) -> None:
        self.max_pending = max_pending
        self._subscribing = threading.Lock()
        self._feeds: tuple[Feed, ...] = ()
        self._callbacks: tuple[tuple[Callback, frozenset[str]], ...] = ()

    def _deliver(self, event: Event) -> None:
        """Hand ``event`` to every iterator and callback that wants it."""
        for feed in self._feeds:
            feed.push(event)
        for callback, names in self._callbacks:
            if not names or event.event in names:
                try:
                    callback(event)
                except Exception:
                    log.exception("explorer chat: callback %r failed", callback)

    def _deliver_all(self, events: list[Event]) -> None:
        for event in events:
            self._deliver(event)

    def _subscribe(self, feed: Feed) -> None:
        # Copy on write under a lock: the loop iterates the old tuple; any thread may call.
        with self._subscribing:
            self._feeds = (*self._feeds, feed)
        if self._closing:
            feed.end(self.error)

    def _unsubscribe(self, feed: Feed) -> None:
        with self._subscribing:
            self._feeds = tuple(f for f in self._feeds if f is not feed)

    def events(self, *names: str, max_pending: int | None = None) -> EventStream:
        """An async iterator over events (only those called ``names``, when given), from now.

        Raises ValueError for a name that is not an event (the message lists them)."""
        stream = EventStream(names, max_pending or self.max_pending, self._unsubscribe)
        self._subscribe(stream)
        return stream

    def __aiter__(self) -> AsyncIterator[Event]:
        return self.events()

    def on(self, callback: Callback, *names: str) -> Callable[[], None]:
        """Call ``callback(event)`` on the loop for every event (or those called ``names``);
        returns a function that stops it. Raises ValueError for a name that is not an event."""
        entry = (callback, event_names(names))
        with self._subscribing:
            self._callbacks = (*self._callbacks, entry)

        def remove() -> None:
            with self._subscribing:
                self._callbacks = tuple(c for c in self._callbacks if c is not entry)

        return remove
