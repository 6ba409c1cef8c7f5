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
"""

from explorer.auth import Grant
from explorer.capture import Capture, open_capture
from explorer.chat import Chat, ChatClient, ChatDetails
from explorer.errors import ChatError, ChatErrorCode
from explorer.eventlog import EventLog
from explorer.live import AsyncLive, Live
from explorer.recorder import Recorder
from explorer.replay import Replay, replay
from explorer.rest import AsyncClient, Client, connect
from explorer.tables import time_series
from explorer.track import AsyncTracker, Tracker
from explorer.watch import AsyncWatch, Watch

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
