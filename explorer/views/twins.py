"""The shell the blocking twins share: :class:`~explorer.chat.Chat` (of ``ChatClient``),
:class:`~explorer.collect.watch.Watch` (of ``AsyncWatch``) and
:class:`~explorer.collect.track.Tracker` (of ``AsyncTracker``).

A twin wraps an async object that runs on the toolkit's loop (``core/loop.py``) in ``_aio``: its
coroutine methods are :class:`~explorer.core.loop.Blocking` descriptors, its attributes
:class:`Mirror` descriptors. :class:`BlockingTwin` adds what blocking code and Jupyter need:
a repr, closing (also with ``with``), and showing as a live widget, made once on first display
and reused by later ones, which keeps its last state once the twin is closed;
:class:`LoggedTwin` adds the event log of a core that keeps one.
Nothing of Jupyter is imported here: each twin imports its view inside
:meth:`BlockingTwin.widget`.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Generic, Never, Protocol, Self, TypeVar, overload

import pandas as pd

from explorer.core import loop
from explorer.core.loop import Twin
from explorer.core.renames import Renamed
from explorer.events.log import EventLog, LogViews

if TYPE_CHECKING:
    from explorer.views.watch import WatchView


class Core(Protocol):
    """What a twin wraps: an async object with a one-line summary and ``aclose``."""

    def _summary(self) -> str: ...

    async def aclose(self) -> None: ...


class LoggedCore(Core, Protocol):
    """A core with an event log, which also describes itself as an HTML table."""

    log: EventLog

    def _html(self, title: str) -> str: ...


class View(Protocol):
    """A live widget a twin shows."""

    def freeze(self) -> None: ...

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


def recording_line(recorder: Any) -> str:
    """A recorder's progress as a status line: where, events and files written."""
    written = recorder.stats
    return f"{recorder.path}: {written.events:,} events in {written.files:,} files"


class Described:
    """How the collecting objects (``AsyncWatch``, ``AsyncLive``) show themselves: a repr
    from :meth:`_summary`, an HTML table of :meth:`status`."""

    def status(self) -> dict[str, str]:
        """What a view shows above its table (each class says what)."""
        raise NotImplementedError

    def _summary(self) -> str:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self._summary()}>"

    def _html(self, title: str) -> str:
        return facts_table(title, self.status())

    def _repr_html_(self) -> str:
        """The status as a small table (Jupyter)."""
        return self._html(type(self).__name__)


T = TypeVar("T")
A = TypeVar("A", bound=Core)
L = TypeVar("L", bound=LoggedCore)
V = TypeVar("V", bound=View)


class Mirror(Generic[T]):
    """A read-only attribute of a blocking twin: the same-named one of the async object it
    wraps (``_aio``), as :class:`~explorer.core.loop.Blocking` is for its coroutine methods;
    ``doc`` is what ``help()`` shows for it."""

    def __init__(self, doc: str) -> None:
        self.__doc__ = doc

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    @overload
    def __get__(self, instance: None, owner: type) -> Mirror[T]: ...

    @overload
    def __get__(self, instance: Twin, owner: type) -> T: ...

    def __get__(self, instance: Twin | None, owner: type) -> Mirror[T] | T:
        if instance is None:
            return self
        value: T = getattr(instance._aio, self._name)
        return value

    def __set__(self, instance: Twin, value: Never) -> None:
        raise AttributeError(f"{self._name!r} is read-only (it mirrors the async object's).")


class BlockingTwin(Generic[A, V]):
    """The blocking twin of ``aio`` (see the module docstring), shown as a ``V`` widget."""

    def __init__(self, aio: A) -> None:
        self._aio = aio
        self._widget: V | None = None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self._aio._summary()}>"

    @property
    def async_twin(self) -> A:
        """The async object underneath (a ``ChatClient``, ``AsyncWatch`` or ``AsyncTracker``;
        its coroutines run on the toolkit's loop)."""
        return self._aio

    client = Renamed("async_twin")

    def close(self) -> None:
        """Close the async object underneath; a widget shown keeps its last state (it stops
        refreshing after showing the object closed, and stays in the notebook)."""
        loop.run(self._aio.aclose())
        if self._widget is not None:
            self._widget.freeze()

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


class LoggedTwin(BlockingTwin[L, V], LogViews):
    """A twin whose core keeps an event log: the log, its views, and the core's facts as an
    HTML table."""

    def _repr_html_(self) -> str:
        """What the object knows as a small table (where no widget shows)."""
        return self._aio._html(type(self).__name__)

    @property
    def log(self) -> EventLog:
        """Every event so far, as a growing table (``.log.frame``, ``.messages()``, ...)."""
        return self._aio.log


class FeedCore(LoggedCore, Protocol):
    """A collecting core a :class:`~explorer.views.watch.WatchView` shows (a watch, a live
    feed): its per-row stats, total rate, status lines and the platform's REST base."""

    base_url: str | None

    def stats(self) -> pd.DataFrame: ...

    def rate(self) -> float: ...

    def status(self) -> dict[str, str]: ...


F = TypeVar("F", bound=FeedCore)


class FeedTwin(LoggedTwin[F, "WatchView"]):
    """The blocking twin of a collecting core: its stats, rate and a WatchView."""

    def stats(self) -> pd.DataFrame:
        """One row per channel (a watch) or event name (a live feed), busiest first."""
        return self._aio.stats()

    def rate(self) -> float:
        """Events per second over the last 10 s, all together."""
        return self._aio.rate()

    def widget(self) -> WatchView:
        """A live view for Jupyter: the rows, events per second as a sparkline, the
        busiest rows of :meth:`stats`, the latest events."""
        from explorer.views.watch import WatchView

        return WatchView(
            self.log,
            self.stats,
            self._aio.status,
            loop=loop.get_loop(),
            base_url=self._aio.base_url,
        )
