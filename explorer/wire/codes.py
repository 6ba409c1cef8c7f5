"""Chat error codes, the error object a reply carries, and the refusal that sends one.

The platform's chat node raises :class:`Refusal` to answer a method with an error reply; the
toolkit reads the reply's error object and builds its own user-facing
:class:`explorer.errors.ChatError` from it. The two exceptions are kept apart on purpose: what
the server sends must not change when the toolkit's exception changes. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import IntEnum
from typing import Any, TypedDict

#: Error messages with a fixed spelling (platform.md and reference.md).
UNOTFOUND = "UNOTFOUND"
UNOTJSON = "UNOTJSON"
UACCESS = "UACCESS"

#: The websocket close code a chat node sends when the credential behind a connection's
#: authkey ended (logout, revoked token, ...).
CLOSE_CREDENTIAL_ENDED = 4001


class ChatErrorCode(IntEnum):
    """The code of a chat error reply.

    The spec names only code 1; reference.md names the messages ``UNOTJSON`` and ``UACCESS``
    and the range 4000-4007 for other method errors, but not which code means what. Ours::

        code  name               message and condition
        1     UNOTFOUND          "UNOTFOUND": ``auth`` matched no record (the spec's own code)
        4000  BAD_REQUEST        "UNOTJSON" when the frame is not JSON; a human message when
                                 the packet is JSON but malformed or a method's arguments are
                                 wrong
        4001  UNKNOWN_METHOD     no method of that name
        4002  ACCESS_DENIED      "UACCESS" for a bare denial (banned, no access to the
                                 channel); a human message naming what is missing otherwise
        4003  NOT_AUTHENTICATED  the method needs an authenticated connection
        4004  THROTTLED          sending too fast (slow chat, method rate)
        4005  NOT_FOUND          the message or user named in the arguments does not exist
        4006  POLL_ERROR         no poll running, a poll already running, no such option
        4007  TIMED_OUT          "You are timed out for 42 more seconds."
    """

    UNOTFOUND = 1
    BAD_REQUEST = 4000
    UNKNOWN_METHOD = 4001
    ACCESS_DENIED = 4002
    NOT_AUTHENTICATED = 4003
    THROTTLED = 4004
    NOT_FOUND = 4005
    POLL_ERROR = 4006
    TIMED_OUT = 4007


class ChatErrorObj(TypedDict):
    """A chat error as it travels in a reply's ``error`` field (platform.md)."""

    code: int
    message: str
    stacktrace: list[Any]
    data: dict[str, Any]


def error_object(code: int, message: str, data: Mapping[str, Any] | None = None) -> ChatErrorObj:
    """Build the spec's error object ``{code, message, stacktrace: [], data: {}}``."""
    return {"code": int(code), "message": message, "stacktrace": [], "data": dict(data or {})}


class Refusal(Exception):
    """A chat method is refused: raised on the platform to send an error reply.

    ``code`` is usually a :class:`ChatErrorCode`; ``str()`` gives ``"<message> (code <code>)"``.
    """

    def __init__(self, code: int, message: str, data: Mapping[str, Any] | None = None) -> None:
        super().__init__(code, message, data)
        self.code = int(code)
        self.message = message
        self.data: dict[str, Any] = dict(data or {})

    def __str__(self) -> str:
        return f"{self.message} (code {self.code})"

    def to_object(self) -> ChatErrorObj:
        """The error object to put in the reply."""
        return error_object(self.code, self.message, self.data)
