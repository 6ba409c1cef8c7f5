"""Text the platform takes in: no NUL character (U+0000) anywhere in it.

PostgreSQL's ``text`` cannot hold a NUL at all and SQLite stores one, so a request carrying it
would be stored on one engine and fail with a 500 on the other. The platform refuses it where
input is parsed, before anything is written, the same on every engine: a REST request's path,
query and body (a 400 with the platform's error body: :mod:`explorer.emulator.policy` and
:class:`~explorer.emulator.context.Context`), and a chat method's name and arguments (a 4000
reply: :mod:`explorer.emulator.chat.node`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from starlette.requests import Request

from explorer.emulator.responses import bad_request

#: The character no input text may hold.
NUL = "\x00"
#: What a refusal says.
MESSAGE = "Text may not contain a NUL character (U+0000)."


def holds_nul(value: Any) -> bool:
    """Whether a string anywhere in ``value`` (a parsed JSON value: keys, nested arrays and
    objects included; or an iterable of strings) holds a NUL."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            if NUL in item:
                return True
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, Iterable) and not isinstance(item, bytes | bytearray):
            pending.extend(item)
    return False


def may_hold_nul(query_string: bytes) -> bool:
    """Whether a raw query string may decode to text holding a NUL: the cheap test of a layer
    answering in front of routing, which leaves such a request to the guard's refusal."""
    return b"%00" in query_string or b"\x00" in query_string


def check_request(request: Request) -> None:
    """Refuse (400) a request whose path or query parameters, percent-decoded, hold a NUL."""
    if NUL in request.scope["path"]:
        raise bad_request(MESSAGE, "path", "text")
    if holds_nul(request.query_params.multi_items()):
        raise bad_request(MESSAGE, "query", "text")


def check_body(value: Any) -> Any:
    """``value``, a parsed request body, unless a string in it holds a NUL (a 400)."""
    if holds_nul(value):
        raise bad_request(MESSAGE, "body", "text")
    return value
