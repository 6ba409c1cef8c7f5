"""The platform of platform.md, emulated: REST under /api/v1, chat nodes, a seeded world.

``start()`` runs one in a background thread (port 0) and returns a :class:`Platform` with its
``base_url`` and ``stop()``; ``explorer serve`` runs one in the foreground.

The three names load the platform (``explorer.emulator.server``) when first named, so a
submodule such as ``explorer.emulator.config`` imports without it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from explorer.emulator.server import Platform, PlatformOptions, start

__all__ = ["Platform", "PlatformOptions", "start"]


def __getattr__(name: str) -> Any:
    """Import the platform on first use of one of its public names, and keep the name."""
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from explorer.emulator import server

    value = getattr(server, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The module's names, the not yet loaded public ones included."""
    return sorted({*globals(), *__all__})
