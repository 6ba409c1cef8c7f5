"""The chat methods, declared once: wire name and arguments.

The platform's chat node answers each (the room methods through
``explorer.emulator.chat.dispatch``, the connection's own in ``node.py``); the toolkit's
``ChatClient`` calls them by these rows, and the fuzz test draws its packets from them. A new
method is one row here, its handler in the platform module that owns its rule, and its
coroutine on ``ChatClient``; tests fail when a side leaves a row out.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ChatMethod:
    """One chat method: the ``name`` clients call, its ``arguments`` in order (as refusals name
    them), and whether it acts in a joined room (``room``) or on the connection itself."""

    name: str
    arguments: tuple[str, ...] = ()
    room: bool = True


#: Join a chat: anonymously with the channel id alone, or as a user with their authkey (the
#: spec also allows a fourth argument, an access key).
AUTH = ChatMethod("auth", ("channel id", "user id", "authkey"), room=False)
PING = ChatMethod("ping", room=False)
ATTACH_EMOTES = ChatMethod("attachEmotes", room=False)
#: Event names this connection no longer wants (any number of them).
OPT_OUT_EVENTS = ChatMethod("optOutEvents", ("event names",), room=False)
MSG = ChatMethod("msg", ("text",))
WHISPER = ChatMethod("whisper", ("user name", "text"))
HISTORY = ChatMethod("history", ("count",))
TIMEOUT = ChatMethod("timeout", ("user name", "duration"))
PURGE = ChatMethod("purge", ("user name",))
DELETE_MESSAGE = ChatMethod("deleteMessage", ("message id",))
CLEAR_MESSAGES = ChatMethod("clearMessages")
VOTE_START = ChatMethod("vote:start", ("question", "answers", "duration"))
VOTE_CHOOSE = ChatMethod("vote:choose", ("option index",))
#: The older name of ``vote:choose``.
VOTE = ChatMethod("vote", ("option index",))
GIVEAWAY_START = ChatMethod("giveaway:start")

#: Every chat method, in declaration order.
TABLE: tuple[ChatMethod, ...] = tuple(
    value for value in list(globals().values()) if isinstance(value, ChatMethod)
)
