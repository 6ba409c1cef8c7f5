"""Live chat: the session without I/O (``chat/session.py``), one websocket (``socket.py``), the
async :class:`ChatClient` (``client.py``) and its blocking twin :class:`Chat`
(``blocking.py``). The four public names are importable from here, loaded on first use so
that importing one module of the folder does not load the others."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from explorer.chat.blocking import Chat, join
    from explorer.chat.client import ChatClient, ChatDetails

_LAZY = {
    "Chat": "explorer.chat.blocking",
    "join": "explorer.chat.blocking",
    "ChatClient": "explorer.chat.client",
    "ChatDetails": "explorer.chat.client",
}
__all__ = ["Chat", "ChatClient", "ChatDetails", "join"]


def __getattr__(name: str) -> Any:
    """A public name, from its module on first use."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_LAZY[name]), name)
