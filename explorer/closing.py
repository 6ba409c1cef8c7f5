"""``async with`` for the toolkit's async objects (``AsyncClient``, ``ChatClient``,
``AsyncWatch``, ``AsyncTracker``): entering runs the object's own first step (sign in, join,
start; nothing for one already running), leaving closes it with ``aclose``."""

from __future__ import annotations

from typing import Self


class AsyncClosing:
    """``async with obj:`` runs :meth:`_enter`, then the block, then :meth:`aclose`."""

    async def _enter(self) -> None:
        """What entering does before the block (by default nothing: already running)."""

    async def aclose(self) -> None:
        """Close the object (each class says how)."""
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        await self._enter()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
