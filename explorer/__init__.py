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
live views. :func:`import_chat` reads chat logs of real platforms (chat-downloader,
TwitchDownloader, justlog/rustlog, yt-dlp) into a capture of the same shape.

Every public name but the errors loads when first named (the REST client with httpx, the
chats and live views with websockets, the capture and recorder with DuckDB and Parquet), so
``import explorer`` costs about what ``import pandas`` does and a script loads only what it
uses.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from explorer.deprecation import moved_module
from explorer.errors import ChatError, ChatErrorCode

if TYPE_CHECKING:
    from explorer.auth import Grant
    from explorer.capture import Capture, open_capture
    from explorer.chat import Chat, ChatClient, ChatDetails
    from explorer.chatimport import import_chat
    from explorer.eventlog import EventLog
    from explorer.live import AsyncLive, Live
    from explorer.recorder import Recorder
    from explorer.replays import Replay, replay
    from explorer.rest import AsyncClient, Client, connect
    from explorer.tables import time_series
    from explorer.track import AsyncTracker, Tracker
    from explorer.watch import AsyncWatch, Watch

#: Public names loaded on first use, by the module that defines them.
_LAZY = {
    "AsyncClient": "explorer.rest",
    "AsyncLive": "explorer.live",
    "AsyncTracker": "explorer.track",
    "AsyncWatch": "explorer.watch",
    "Capture": "explorer.capture",
    "Chat": "explorer.chat",
    "ChatClient": "explorer.chat",
    "ChatDetails": "explorer.chat",
    "Client": "explorer.rest",
    "EventLog": "explorer.eventlog",
    "Grant": "explorer.auth",
    "Live": "explorer.live",
    "Recorder": "explorer.recorder",
    "Replay": "explorer.replays",
    "Tracker": "explorer.track",
    "Watch": "explorer.watch",
    "connect": "explorer.rest",
    "import_chat": "explorer.chatimport",
    "open_capture": "explorer.capture",
    "replay": "explorer.replays",
    "time_series": "explorer.tables",
}

# explorer.replay is the function; its module is explorer.replays. The views moved into
# explorer.views. The old import paths warn.
moved_module("explorer.replay", "explorer.replays")
moved_module("explorer.widgets", "explorer.views.chat")
moved_module("explorer.watchview", "explorer.views.watch")
moved_module("explorer.trackview", "explorer.views.track")

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
    "import_chat",
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
