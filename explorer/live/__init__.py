"""Live events: the Constellation client (``live/constellation.py``), what a feed follows unless
told otherwise (``live/follows.py``) and the event log of channels' and users' live events
(``log.py``: :class:`Live`, :class:`AsyncLive`, importable from here, loaded on first use)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from explorer.live.log import AsyncLive, Live

__all__ = ["AsyncLive", "Live"]


def __getattr__(name: str) -> Any:
    """A public name, from ``log.py`` on first use."""
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module("explorer.live.log"), name)
