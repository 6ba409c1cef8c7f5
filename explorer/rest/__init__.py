"""The REST side: transport, pacing and sign-in, schemas and tables, handles and their methods.

``explorer.rest`` used to be the module of the clients, now :mod:`explorer.clients`: its old
names still answer here for one release, with a warning.
"""

import importlib
from typing import Any

from explorer.core.renames import warn_renamed

_MOVED = ("AsyncClient", "Client", "connect")


def __getattr__(name: str) -> Any:
    """An old name of the clients' module, with a warning naming the new one."""
    if name not in _MOVED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warn_renamed(f"explorer.rest.{name}", f"explorer.clients.{name}")
    return getattr(importlib.import_module("explorer.clients"), name)
