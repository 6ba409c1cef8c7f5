"""How the toolkit's async objects (``AsyncClient``, ``ChatClient``, ``AsyncWatch``,
``AsyncTracker``) begin and end, spelt one way: ``await obj.start()`` (or ``await obj``)
begins one (sign in, join, start; nothing for one that began when it was made) and returns
it; ``async with obj:`` begins it, runs the block, then closes it with ``aclose``, and closes
it too when beginning fails."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any, Self


class AsyncClosing:
    """``start()``, ``await obj`` and ``async with obj:`` (see the module docstring)."""

    async def start(self) -> Self:
        """Begin (by default nothing: already running); returns the object."""
        return self

    def __await__(self) -> Generator[Any, None, Self]:
        return self.start().__await__()

    async def aclose(self) -> None:
        """Close the object (each class says how)."""
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        try:
            await self.start()
        except BaseException:
            await self.aclose()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
