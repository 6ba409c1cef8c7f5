"""A watch's members and counts: each channel's chat client (or why it failed), what the
chats a channel had before its current one counted, and the event rates of the running ones
(``collect/watch.py`` uses them for its stats, outages and status)."""

from __future__ import annotations

import asyncio
import dataclasses
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from explorer.chat.client import ChatClient
from explorer.chat.session import OUTAGES_KEPT, Outage
from explorer.core.renames import warn_renamed

#: Rates are events per second over this many seconds.
RATE_WINDOW = 10.0
#: Samples closer together than this are not kept (a view may read stats very often).
_SAMPLE_SPACING = 0.1


@dataclass(slots=True)
class WatchedChannel:
    """One channel of the watch: its chat client once made, or why it failed."""

    channel: int
    token: str | None
    chat: ChatClient | None = None
    error: BaseException | None = None
    join: asyncio.Task[None] | None = None
    #: Whether the top rule picked it (explicit channels stay when they leave the top).
    top: bool = False
    explicit: bool = False

    @property
    def state(self) -> str:
        """``joining``, ``failed``, or the chat client's state."""
        chat = self.chat
        if self.error is not None or (chat is not None and chat.error is not None):
            return "failed"
        if chat is None or chat.channel_id is None or self.join is not None:
            return "joining"
        return str(chat.state)

    @property
    def failure(self) -> str | None:
        error = self.error if self.error is not None else self.chat and self.chat.error
        return None if error is None else str(error) or type(error).__name__


@dataclass(slots=True)
class Totals:
    """What the chats a channel had before its current one counted (left, failed, replaced)."""

    events: int = 0
    messages: int = 0
    reconnects: int = 0
    gaps: int = 0
    removed: int = 0
    outages: list[Outage] = field(default_factory=list)
    #: Why the last of them failed (a join or a reconnect that gave up), if it did.
    error: str | None = None

    def add(self, chat: ChatClient) -> None:
        self.events += chat.recorded
        self.messages += chat.recorded_messages
        self.reconnects += chat.reconnects
        self.gaps += chat.gaps
        self.removed += chat.removed
        self.outages.extend(chat.outages)
        del self.outages[:-OUTAGES_KEPT]


@dataclass(slots=True)
class Rates:
    """Events per second of each chat client over the last ``window`` seconds, from samples
    of its running count; thread-safe (views read from other threads)."""

    clock: Callable[[], float]
    window: float = RATE_WINDOW
    _samples: deque[tuple[float, dict[ChatClient, int]]] = field(default_factory=deque)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def sample(self, counts: dict[ChatClient, int]) -> dict[ChatClient, float]:
        """Take a sample of each chat client's count; its rate since the oldest sample in the
        window (clients new since then count from 0). Keyed by client, not channel: a channel
        left and joined again has a new client counting from 0."""
        now = self.clock()
        with self._lock:
            samples = self._samples
            if not samples or now - samples[-1][0] >= _SAMPLE_SPACING:
                samples.append((now, counts))
            # Keep one sample at or before the window's start as the baseline.
            while len(samples) > 2 and samples[1][0] <= now - self.window:
                samples.popleft()
            since, base = samples[0]
        span = now - since
        if span <= 0:
            return dict.fromkeys(counts, 0.0)
        return {chat: (count - base.get(chat, 0)) / span for chat, count in counts.items()}


def channel_totals(past: Totals | None, chat: ChatClient | None) -> Totals:
    """A channel's totals: its past chats' and its current one's."""
    total = dataclasses.replace(past, outages=list(past.outages)) if past else Totals()
    if chat is not None:
        total.add(chat)
    return total


def __getattr__(name: str) -> object:
    """``Member``, the old name of :class:`WatchedChannel` (kept one release, with a warning)."""
    if name == "Member":
        warn_renamed("explorer.collect.members.Member", "explorer.collect.members.WatchedChannel")
        return WatchedChannel
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
