"""The shell the blocking twins share: :class:`~explorer.chat.Chat` (of ``ChatClient``) and
:class:`~explorer.watch.Watch` (of ``AsyncWatch``).

A twin wraps an async object that runs on the toolkit's loop (``loop.py``; its methods are
:class:`~explorer.loop.Blocking` descriptors) and adds what blocking code and Jupyter need:
reprs, the event log, closing (also with ``with``), and showing as a live widget, made once on
first display and reused by later ones. Nothing of Jupyter is imported here: each twin imports
its view inside :meth:`BlockingTwin.widget`.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any, Generic, Protocol, Self, TypeVar

from explorer import loop
from explorer.eventlog import EventLog


class Core(Protocol):
    """What a twin wraps: an async object with an event log, a summary and ``aclose``."""

    log: EventLog

    def _summary(self) -> str: ...

    def _html(self, title: str) -> str: ...

    async def aclose(self) -> None: ...


class View(Protocol):
    """A live widget a twin shows."""

    def close(self) -> None: ...

    def _repr_mimebundle_(self, **kwargs: Any) -> Any: ...


def facts_table(title: str, facts: Mapping[str, str]) -> str:
    """``facts`` as a two-column HTML table captioned ``title``: the async objects' HTML
    repr, which their twins show where no widget does."""
    rows = "".join(
        f"<tr><th style='text-align:left'>{name}</th>"
        f"<td style='text-align:left'>{html.escape(value)}</td></tr>"
        for name, value in facts.items()
    )
    return f"<table><caption>{html.escape(title)}</caption>{rows}</table>"


A = TypeVar("A", bound=Core)
V = TypeVar("V", bound=View)


class BlockingTwin(Generic[A, V]):
    """The blocking twin of ``aio`` (see the module docstring), shown as a ``V`` widget."""

    def __init__(self, aio: A) -> None:
        self._aio = aio
        self._widget: V | None = None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self._aio._summary()}>"

    def _repr_html_(self) -> str:
        """What the object knows as a small table (where no widget shows)."""
        return self._aio._html(type(self).__name__)

    @property
    def client(self) -> A:
        """The async object underneath (its coroutines run on the toolkit's loop)."""
        return self._aio

    @property
    def log(self) -> EventLog:
        """Every event so far, as a growing table (``.log.frame``, ``.messages()``, ...)."""
        return self._aio.log

    def close(self) -> None:
        """Close the widget, if one was shown, and leave."""
        if self._widget is not None:
            self._widget.close()
        loop.run(self._aio.aclose())

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def widget(self) -> V:
        """The live view for Jupyter (each twin says which)."""
        raise NotImplementedError

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        """Shown in Jupyter as its :meth:`widget` (one, reused by later displays)."""
        if self._widget is None:
            self._widget = self.widget()
        return self._widget._repr_mimebundle_(**kwargs)
