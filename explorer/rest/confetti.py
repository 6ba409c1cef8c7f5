"""A confetti as a handle: ``api.confetti(id)``, to read, change or delete it.

Listing what a channel may fire is ``api.channel(c).confetti()``; creating one is
``api.create_confetti(...)`` (for a channel, or platform-wide).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from explorer.rest.endpoints import Result
from explorer.rest.handle import Call, Handle, M, endpoint
from explorer.wire import routes as wire


class Confetti(Handle[M]):
    """One confetti, by id."""

    _bound = ("confetti_id",)

    def __repr__(self) -> str:
        key = self._values["confetti_id"]
        return f"<Confetti {key!r} at {self.base_url} as {self._identity()}>"

    @endpoint(wire.CONFETTI)
    def info(self) -> Call[pd.DataFrame]:
        """The confetti, as one row."""
        return Call()

    @endpoint(wire.CONFETTI_UPDATE)
    def update(self, **changes: Any) -> Call[pd.DataFrame]:
        """Change the ``name``, ``particles``, ``count`` or ``durationMs``."""
        return Call(json=changes)

    @endpoint(wire.CONFETTI_DELETE, result=Result.NONE)
    def delete(self) -> Call[None]:
        """Delete the confetti (its creator, its channel's owner or staff)."""
        return Call()
