"""explorer: the live-streaming platform from Python and Jupyter, with the platform embedded.

``explorer.connect()`` gives a blocking client whose REST results are pandas DataFrames;
``explorer.AsyncClient`` is its async twin. ``client.chat(channel)`` joins a channel's live
chat (a blocking :class:`Chat`, or a :class:`ChatClient` from the async client) whose events
grow an :class:`EventLog`. Errors live in ``explorer.errors``; the chat's, :class:`ChatError`
and its codes :class:`ChatErrorCode`, are here too.
"""

from explorer.auth import Grant
from explorer.chat import Chat, ChatClient, ChatDetails
from explorer.errors import ChatError, ChatErrorCode
from explorer.eventlog import EventLog
from explorer.rest import AsyncClient, Client, connect
from explorer.tables import time_series

__all__ = [
    "AsyncClient",
    "Chat",
    "ChatClient",
    "ChatDetails",
    "ChatError",
    "ChatErrorCode",
    "Client",
    "EventLog",
    "Grant",
    "connect",
    "time_series",
]
