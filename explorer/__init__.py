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
live views; :func:`compact` merges its small files into day files. :func:`import_chat` reads
chat logs of real platforms (chat-downloader, TwitchDownloader, justlog/rustlog, yt-dlp) into
a capture of the same shape.

Every public name but the errors loads when first named (the REST client with httpx and
pandas, the chats and live views with websockets, the capture and recorder with DuckDB and
Parquet), so ``import explorer`` loads none of them, pandas included (nor does ``explorer
serve``), and a script loads only what it uses.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from explorer.core.renames import moved_module
from explorer.errors import ChatError, ChatErrorCode

if TYPE_CHECKING:
    from explorer.chat import Chat, ChatClient, ChatDetails
    from explorer.events.log import EventLog
    from explorer.live import AsyncLive, Live
    from explorer.recording.capture import Capture, open_capture
    from explorer.recording.chatimport import import_chat
    from explorer.recording.compaction import compact
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
    "compact": "explorer.recording.compaction",
    "connect": "explorer.clients",
    "import_chat": "explorer.recording.chatimport",
    "open_capture": "explorer.recording.capture",
    "replay": "explorer.recording.replays",
    "time_series": "explorer.rest.tables",
}

# The modules' old paths (``explorer.<old>``), from before the toolkit's parts became folders
# and older moves, and where each is now (``explorer.<new>``): each warns on use and names
# the new path, for one release.
_MOVED = {
    "account": "rest.account",
    "auth": "rest.auth",
    "broadcasts": "collect.broadcasts",
    "capture": "recording.capture",
    "captureformats": "recording.formats",
    "capturesprites": "recording.sprites",
    "channel": "rest.channel",
    "channelrefs": "rest.channelrefs",
    "chatclient": "chat.client",
    "chatformats": "recording.chatformats",
    "chatimport": "recording.chatimport",
    "chatsocket": "chat.socket",
    "chatviews": "events.frames",
    "closing": "core.closing",
    "columns": "core.columns",
    "compaction": "recording.compaction",
    "confetti": "rest.confetti",
    "constellation": "live.constellation",
    "coverage": "recording.coverage",
    "deprecation": "core.deprecation",
    "durations": "core.durations",
    "endpoints": "rest.endpoints",
    "eventchunks": "events.chunks",
    "eventlog": "events.log",
    "eventrows": "events.rows",
    "eventtables": "events.tables",
    "exclusions": "events.exclusions",
    "feeds": "events.feeds",
    "follows": "live.follows",
    "games": "rest.games",
    "handle": "rest.handle",
    "heap": "core.heap",
    "jupyterhub": "core.jupyterhub",
    "loop": "core.loop",
    "pacing": "rest.pacing",
    "pageplan": "rest.pageplan",
    "polarsframes": "core.polarsframes",
    "processes": "core.processes",
    "progress": "rest.progress",
    "ranksize": "core.ranksize",
    "recorder": "recording.recorder",
    "recordworker": "recording.worker",
    "rendering": "views.rendering",
    "replay": "recording.replays",
    "replays": "recording.replays",
    "schemas": "rest.schemas",
    "session": "chat.session",
    "settings": "core.settings",
    "shortcode": "rest.shortcode",
    "sprites": "views.sprites",
    "storage": "recording.storage",
    "tables": "rest.tables",
    "textformats": "events.textformats",
    "tokenfiles": "rest.tokenfiles",
    "track": "collect.track",
    "trackview": "views.track",
    "transport": "rest.transport",
    "twins": "views.twins",
    "watch": "collect.watch",
    "watchmembers": "collect.members",
    "watchview": "views.watch",
    "widgets": "views.chat",
    "worldclock": "core.worldclock",
}
for _old, _new in _MOVED.items():
    moved_module(f"explorer.{_old}", f"explorer.{_new}")

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
    "compact",
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
