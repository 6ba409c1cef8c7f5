"""Stream sessions: a watch's looks at its channels' broadcasts, which make the marks that date
each event in its session (``events/marks.py``).

A live channel's broadcast (``GET /channels/{id}/broadcast``, :meth:`Channel.broadcast
<explorer.rest.channel.Channel.broadcast>`) has an ``id``, the same while the channel stays live and
a new one each time it goes live, and the time it ``startedAt``. A watch looks its channels'
broadcasts up (:class:`Sessions`): as it joins each one, then every ``refresh`` those whose
``online`` flag changed (a listing request per hundred channels). What a look finds is a
*mark*: the channel is live in broadcast ``session`` since its start, or it was offline when
looked at. An event is in the session of its channel's latest mark at or before it
(:func:`stamp`): column ``session`` (the broadcast id; missing before the channel's first look
and after a look found it offline) and ``session_offset``, how long after the session's start
it came (a timedelta). Nothing is invented in between: a session that ended between two looks
runs, for its events, until the look that found the channel offline.

Clocks: a watch dates its events (``received_at``) on the platform's world clock
(:mod:`explorer.core.worldclock`), the clock of ``startedAt`` too, and gives :class:`Sessions` that
clock as ``wall``. A look counts the broadcast's age at its answer (the answer's world time,
the ``X-Explorer-Clock`` header, less ``startedAt``) back from the look on the events' clock,
so a mark's time is the start itself, and offsets are world time at any ``--speed``; a
platform that sends no clock is dated by this machine's clock throughout.

A recording keeps the marks in its recorder's manifest (``sessions``), so a capture stamps
its events the same way (``Capture.events(sessions=True)``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import pandas as pd

from explorer.errors import ExplorerError, NotFound
from explorer.events.marks import Mark, marks_frame
from explorer.rest.channel import Channel
from explorer.rest.channelrefs import ChannelListing

log = logging.getLogger(__name__)

#: Broadcasts a watch looks up per refresh at most: a quarter of the ``channel-read`` bucket
#: (1,000 requests per 5 minutes) at the default refresh of a minute, so the top rule's
#: listings and the user's requests keep the rest. A watch of more channels learns their
#: sessions over several refreshes.
LOOKS = 50
#: Channels per listing request when the watch looks which went on or off air.
_BATCH = 100


async def look(
    handle: Channel[Any], world: Callable[[], float | None], wall: Callable[[], float]
) -> tuple[str, float] | None:
    """The live broadcast of ``handle``'s channel: its id and its start on the events' clock
    ``wall`` (``world`` gives the answer's world time; see the module docstring), or None when
    the channel is offline."""
    try:
        found = await Channel.broadcast(handle)
    except NotFound:
        return None
    now = wall()
    started = found["startedAt"].iloc[0].timestamp()
    answered = world()
    return str(found.index[0]), now - (answered - started) if answered is not None else started


class Sessions:
    """The marks of a watch's channels (see the module docstring): :meth:`look` one channel,
    :meth:`refresh` those whose ``online`` flag changed; a mark is kept only when it changes
    what the channel's last one said."""

    def __init__(
        self,
        world: Callable[[], float | None] = lambda: None,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self._world = world
        self._wall = wall
        self._marks: list[Mark] = []
        self._last: dict[int, str | None] = {}

    def add(self, mark: Mark) -> None:
        """Keep ``mark`` unless the channel's last mark said the same."""
        if mark.channel in self._last and self._last[mark.channel] == mark.session:
            return
        self._last[mark.channel] = mark.session
        self._marks.append(mark)

    async def look(self, channel: int, handle: Channel[Any]) -> None:
        """Look up ``channel``'s broadcast and keep what was found; a failed look is logged
        (the channel's events stay without a session until the next one)."""
        try:
            found = await look(handle, self._world, self._wall)
        except ExplorerError as exc:
            log.warning(
                "explorer watch: looking up channel %d's broadcast failed: %s", channel, exc
            )
            return
        if found is None:
            self.add(Mark(channel, None, self._wall()))
        else:
            self.add(Mark(channel, *found))

    async def refresh(
        self,
        channels: list[int],
        listing: ChannelListing,
        handle: Callable[[int], Channel[Any]],
    ) -> None:
        """Mark the ``channels`` whose ``online`` flag (a listing request per hundred) differs
        from their last mark: offline ones at once, live ones by a look at their broadcast, at
        most :data:`LOOKS` of them (the others at the next refresh)."""
        looks = 0
        for start in range(0, len(channels), _BATCH):
            batch = channels[start : start + _BATCH]
            frame = await listing(
                where={"id": batch}, fields=("id", "online"), max_rows=len(batch), progress=False
            )
            online = {int(c): bool(v) for c, v in frame["online"].items()}
            for channel in batch:
                if channel not in online:
                    continue
                live = self._last.get(channel) is not None
                if not online[channel] and (live or channel not in self._last):
                    self.add(Mark(channel, None, self._wall()))
                elif online[channel] and not live and looks < LOOKS:
                    looks += 1
                    await self.look(channel, handle(channel))

    def marks(self) -> list[dict[str, Any]]:
        """Every mark kept, as a manifest keeps them."""
        return [mark.json() for mark in list(self._marks)]

    def frame(self) -> pd.DataFrame:
        """Every mark kept, as :func:`marks_frame` shows them."""
        return marks_frame(self.marks())
