"""The platform of platform.md, emulated: REST under /api/v1, chat nodes, a seeded world.

``start()`` runs one in a background thread (port 0) and returns a :class:`Platform` with its
``base_url`` and ``stop()``; ``explorer serve`` runs one in the foreground.
"""

from explorer.emulator.server import Platform, PlatformOptions, start

__all__ = ["Platform", "PlatformOptions", "start"]
