"""explorer: the live-streaming platform from Python and Jupyter, with the platform embedded.

``explorer.connect()`` gives a blocking client whose REST results are pandas DataFrames;
``explorer.AsyncClient`` is its async twin. ``client.chat(channel)`` joins a channel's live
chat (a blocking :class:`Chat`, or a :class:`ChatClient` from the async client) whose events
grow an :class:`EventLog`. Errors live in ``explorer.errors``; the chat's, :class:`ChatError`
and its codes :class:`ChatErrorCode`, are here too.

Collecting over time: ``client.watch(channels)`` joins many chats into one log (a
:class:`Watch`), ``client.track(query)`` takes periodic snapshots of channels (a
:class:`Tracker`), ``client.live(channels)`` follows live events such as audience changes
as they happen (a :class:`Live`); with ``to="capture/"`` each writes a Parquet capture (a
:class:`Recorder` each) that :func:`open_capture` reads back and :func:`replay` plays into the
live views.

Every public name but the errors loads when first named (the REST client with httpx, the
chats and live views with websockets, the capture and recorder with DuckDB and Parquet), so
``import explorer`` costs about what ``import pandas`` does and a script loads only what it
uses.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from explorer.core.deprecation import moved_module
from explorer.errors import ChatError, ChatErrorCode

if TYPE_CHECKING:
    from explorer.chat import Chat, ChatClient, ChatDetails
    from explorer.clients import AsyncClient, Client, connect
    from explorer.collect.track import AsyncTracker, Tracker
    from explorer.collect.watch import AsyncWatch, Watch
    from explorer.events.log import EventLog
    from explorer.live import AsyncLive, Live
    from explorer.recording.capture import Capture, open_capture
    from explorer.recording.recorder import Recorder
    from explorer.recording.replays import Replay, replay
    from explorer.rest.auth import Grant
    from explorer.rest.tables import time_series

#: Public names loaded on first use, by the module that defines them.
_LAZY = {
    "AsyncClient": "explorer.clients",
    "AsyncLive": "explorer.live",
    "AsyncTracker": "explorer.collect.track",
    "AsyncWatch": "explorer.collect.watch",
    "Capture": "explorer.recording.capture",
    "Chat": "explorer.chat",
    "ChatClient": "explorer.chat",
    "ChatDetails": "explorer.chat",
    "Client": "explorer.clients",
    "EventLog": "explorer.events.log",
    "Grant": "explorer.rest.auth",
    "Live": "explorer.live",
    "Recorder": "explorer.recording.recorder",
    "Replay": "explorer.recording.replays",
    "Tracker": "explorer.collect.track",
    "Watch": "explorer.collect.watch",
    "connect": "explorer.clients",
    "open_capture": "explorer.recording.capture",
    "replay": "explorer.recording.replays",
    "time_series": "explorer.rest.tables",
}

# The modules' old paths, from before the toolkit's parts became folders, and older moves:
# each warns on use and names the new path (for one release).
_MOVED = {
    "explorer.replay": "explorer.recording.replays",
    "explorer.widgets": "explorer.views.chat",
    "explorer.watchview": "explorer.views.watch",
    "explorer.trackview": "explorer.views.track",
    "explorer.account": "explorer.rest.account",
    "explorer.auth": "explorer.rest.auth",
    "explorer.capture": "explorer.recording.capture",
    "explorer.channel": "explorer.rest.channel",
    "explorer.channelrefs": "explorer.rest.channelrefs",
    "explorer.chatclient": "explorer.chat.client",
    "explorer.chatsocket": "explorer.chat.socket",
    "explorer.chatviews": "explorer.events.frames",
    "explorer.closing": "explorer.core.closing",
    "explorer.columns": "explorer.core.columns",
    "explorer.confetti": "explorer.rest.confetti",
    "explorer.constellation": "explorer.live.constellation",
    "explorer.coverage": "explorer.recording.coverage",
    "explorer.deprecation": "explorer.core.deprecation",
    "explorer.durations": "explorer.core.durations",
    "explorer.endpoints": "explorer.rest.endpoints",
    "explorer.eventchunks": "explorer.events.chunks",
    "explorer.eventlog": "explorer.events.log",
    "explorer.eventrows": "explorer.events.rows",
    "explorer.eventtables": "explorer.events.tables",
    "explorer.feeds": "explorer.events.feeds",
    "explorer.follows": "explorer.live.follows",
    "explorer.games": "explorer.rest.games",
    "explorer.handle": "explorer.rest.handle",
    "explorer.heap": "explorer.core.heap",
    "explorer.jupyterhub": "explorer.core.jupyterhub",
    "explorer.loop": "explorer.core.loop",
    "explorer.pacing": "explorer.rest.pacing",
    "explorer.pageplan": "explorer.rest.pageplan",
    "explorer.processes": "explorer.core.processes",
    "explorer.progress": "explorer.rest.progress",
    "explorer.ranksize": "explorer.core.ranksize",
    "explorer.recorder": "explorer.recording.recorder",
    "explorer.recordworker": "explorer.recording.worker",
    "explorer.rendering": "explorer.views.rendering",
    "explorer.replays": "explorer.recording.replays",
    "explorer.schemas": "explorer.rest.schemas",
    "explorer.session": "explorer.chat.session",
    "explorer.settings": "explorer.core.settings",
    "explorer.shortcode": "explorer.rest.shortcode",
    "explorer.sprites": "explorer.views.sprites",
    "explorer.storage": "explorer.recording.storage",
    "explorer.tables": "explorer.rest.tables",
    "explorer.track": "explorer.collect.track",
    "explorer.transport": "explorer.rest.transport",
    "explorer.twins": "explorer.views.twins",
    "explorer.watch": "explorer.collect.watch",
    "explorer.watchmembers": "explorer.collect.members",
}
for _old, _new in _MOVED.items():
    moved_module(_old, _new)

__all__ = [
    "AsyncClient",
    "AsyncLive",
    "AsyncTracker",
    "AsyncWatch",
    "Capture",
    "Chat",
    "ChatClient",
    "ChatDetails",
    "ChatError",
    "ChatErrorCode",
    "Client",
    "EventLog",
    "Grant",
    "Live",
    "Recorder",
    "Replay",
    "Tracker",
    "Watch",
    "connect",
    "open_capture",
    "replay",
    "time_series",
]


def __getattr__(name: str) -> Any:
    """Import a lazily loaded public name's module on first use and keep the name."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The module's names, the not yet loaded public ones included."""
    return sorted({*globals(), *_LAZY})
