"""Replaying a capture: its events fed into a fresh event log at a chosen speed.

:func:`replay` reads a capture's packets in time order (DuckDB streams and sorts them out of
core, ``Capture.packets``) and adds each to :attr:`Replay.log` with its original receive
time and channel, exactly as the chat client added it: live rows through
``EventLog.append``, rows that came from a ``history`` reply through
``EventLog.add_history``. So the log's frames and views equal those of the log that was
recorded, and everything that reads an event log works on a replay without a platform:
:meth:`Replay.widget` (a :class:`~explorer.views.chat.LiveChat`), :meth:`Replay.poll_chart`, and
the log's views (``messages()``, ``polls()``, ``users()``).

Pacing: the replay runs on the toolkit's loop (``explorer.core.loop.get_loop()``) and keeps row
``i`` at ``(received_at[i] - received_at[0]) / speed`` seconds after it began, by the
injected ``clock`` and ``sleep`` (tests pass a manual clock and a sleep that moves it);
``speed=None`` or ``float("inf")`` feeds everything at once, yielding to the loop now and
then. Files are read a batch at a time in a worker thread, off the loop.
"""

from __future__ import annotations

import asyncio
import math
import os
import threading
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any

import orjson
import pyarrow as pa

from explorer.core import loop
from explorer.events.log import EventLog, LogViews
from explorer.recording import sprites as capturesprites
from explorer.views.sprites import SpriteSheets

if TYPE_CHECKING:
    from explorer.recording.capture import Capture, When
    from explorer.views.chat import LiveChat, PollChart

#: Rows read from the files at once.
_BATCH_ROWS = 10_000
#: Rows fed between yields to the loop when not paced.
_YIELD_ROWS = 1_000
#: Shorter waits are not slept: the row is fed at once (at most this early).
_MIN_SLEEP = 0.002

Sleep = Callable[[float], Awaitable[object]]


def replay(
    capture: str | os.PathLike[str] | Capture,
    speed: float | None = 10.0,
    *,
    channels: Iterable[int] | None = None,
    start: When = None,
    end: When = None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Sleep | None = None,
) -> Replay:
    """Start replaying ``capture`` (a directory or an open
    :class:`~explorer.recording.capture.Capture`) at ``speed`` times real time (None or
    ``inf``: at once), only the events of ``channels`` received in ``[start, end)``; ``clock``
    and ``sleep`` (a coroutine function, default ``asyncio.sleep``) pace it. Raises ``ValueError``
    for a speed that is not positive."""
    if speed is not None and not speed > 0:
        raise ValueError(f"speed must be positive (or None for at once), not {speed!r}.")
    # DuckDB loads with the first capture opened, not with ``import explorer``.
    from explorer.recording.capture import Capture, open_capture

    source = capture if isinstance(capture, Capture) else open_capture(capture)
    filters = {"channels": None if channels is None else list(channels), "start": start, "end": end}
    return Replay(source, speed, filters, clock, sleep if sleep is not None else asyncio.sleep)


class Replay(LogViews):
    """A capture being fed into :attr:`log` (see the module docstring); made by :func:`replay`
    (``filters`` are ``Capture.packets``' keyword arguments)."""

    def __init__(
        self,
        capture: Capture,
        speed: float | None,
        filters: dict[str, Any],
        clock: Callable[[], float],
        sleep: Sleep,
    ) -> None:
        self.capture = capture
        self.speed = None if speed is None or math.isinf(speed) else float(speed)
        #: Filled as the replay runs, original receive times kept.
        self.log = EventLog()
        #: Why the replay stopped early, if it did.
        self.error: BaseException | None = None
        self._filters = filters
        self._total = capture.count(**self._filters)
        self._fed = 0
        self._clock = clock
        self._sleep = sleep
        self._done = threading.Event()
        self._sprites: SpriteSheets | None = None
        self._loop = loop.get_loop()
        self._future = asyncio.run_coroutine_threadsafe(self._run(), self._loop)

    async def _run(self) -> None:
        try:
            reader = await asyncio.to_thread(self.capture.packets, **self._filters)
            try:
                await self._feed(reader)
            finally:
                reader.close()
        except asyncio.CancelledError:
            raise
        except Exception as error:  # kept for wait() to raise, where someone is looking
            self.error = error
        finally:
            self._done.set()

    async def _feed(self, reader: pa.RecordBatchReader) -> None:
        first: float | None = None
        began = 0.0
        while (batch := await asyncio.to_thread(_next_batch, reader)) is not None:
            rows = zip(
                batch.column("received_at").to_pylist(),
                batch.column("channel").to_pylist(),
                batch.column("packet").to_pylist(),
                batch.column("from_history").to_pylist(),
                strict=True,
            )
            for at, channel, packet, history in rows:
                if self.speed is not None:
                    if first is None:
                        first, began = at, self._clock()
                    wait = began + (at - first) / self.speed - self._clock()
                    if wait > _MIN_SLEEP:
                        await self._sleep(wait)
                elif self._fed % _YIELD_ROWS == _YIELD_ROWS - 1:
                    await asyncio.sleep(0)
                self._add(orjson.loads(packet), at, channel, bool(history))

    def _add(self, packet: dict[str, Any], at: float, channel: int | None, history: bool) -> None:
        if history and isinstance(packet.get("data"), dict):
            self.log.add_history([packet["data"]], at, channel=channel)
        else:
            self.log.append(packet, at, channel=channel)
        self._fed += 1

    # State.

    @property
    def done(self) -> bool:
        """Whether every event has been fed (or the replay stopped)."""
        return self._done.is_set()

    @property
    def progress(self) -> tuple[int, int]:
        """(events fed, events to feed)."""
        return self._fed, self._total

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the replay is done (at most ``timeout`` seconds); whether it is.
        Raises what stopped it early, if something did."""
        finished = self._done.wait(timeout)
        if self.error is not None:
            raise self.error
        return finished

    def close(self) -> None:
        """Stop feeding (the log keeps what it has)."""
        self._future.cancel()
        self._done.wait(10)

    def __enter__(self) -> Replay:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def widget(self, rows: int = 20) -> LiveChat:
        """A :class:`~explorer.views.chat.LiveChat` of the replay: counts, rate, the last
        ``rows`` events, as for a live chat; builtin emoticons are cut from the sprite sheets
        kept with the capture (``recording/sprites.py``), with no platform running."""
        from explorer.views.chat import LiveChat

        if self._sprites is None:
            self._sprites = capturesprites.sheets(self.capture.path)
        return LiveChat(
            self.log,
            self._status,
            rows=rows,
            loop=self._loop,
            base_url=capturesprites.OFFLINE_BASE,
            sprites=self._sprites,
        )

    def poll_chart(self, question: str | None = None) -> PollChart:
        """A live :class:`~explorer.views.chat.PollChart` of a poll in the replay (the latest, or
        ``question``)."""
        from explorer.views.chat import PollChart

        return PollChart(self.log, question, loop=self._loop)

    def _status(self) -> tuple[str, str | None]:
        state = "replayed" if self.done else "replaying"
        pace = "at once" if self.speed is None else f"at {self.speed:g}x"
        return state, f"{self.capture.path} {pace}"

    def __repr__(self) -> str:
        fed, total = self.progress
        pace = "at once" if self.speed is None else f"at {self.speed:g}x"
        state = "done" if self.done else "running"
        return (
            f"<Replay of {str(self.capture.path)!r} {pace}: {fed:,} of {total:,} events, {state}>"
        )


def _next_batch(reader: pa.RecordBatchReader) -> pa.RecordBatch | None:
    """The reader's next batch, None at the end (StopIteration cannot cross to_thread)."""
    try:
        return reader.read_next_batch()
    except StopIteration:
        return None
