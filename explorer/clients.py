"""The REST clients: :class:`AsyncClient`, its blocking twin :class:`Client`, and ``connect()``.

Both are the same surface (:class:`~explorer.api.Api` and the handles it hands out, declared
once in ``api.py``, ``rest/channel.py``, ``rest/account.py``, ``rest/games.py`` and
``rest/confetti.py``) in two modes: ``AsyncClient`` methods are awaited; ``Client`` methods block,
running the same coroutines on the toolkit's private event loop (``core/loop.py``) so they work
inside a running Jupyter kernel. This module only builds clients from settings and owns their
lifetime; the wire is ``rest/transport.py`` (pacing in ``rest/pacing.py``, page planning in
``rest/pageplan.py``), the endpoint rows are ``rest/endpoints.py``.
"""

from __future__ import annotations

from types import TracebackType
from typing import Any, ClassVar, Self

import httpx

from explorer import embedded
from explorer.api import Api
from explorer.core import loop
from explorer.core.closing import AsyncClosing
from explorer.core.renames import Renamed
from explorer.core.settings import DEFAULT_CONCURRENCY, DEFAULT_TIMEOUT, resolve
from explorer.rest.handle import Async, M, Sync
from explorer.rest.transport import Transport


class _Connected(Api[M]):
    """What both clients are built from: the client settings (``base_url`` and credentials,
    then ``EXPLORER_*`` variables, then defaults) and their transport, in the subclass's mode
    (``_MODE``). The constructor's arguments are declared here once."""

    _MODE: ClassVar[type[Any]]

    def __init__(
        self,
        base_url: str | None = None,
        *,
        token: str | None = None,
        username: str | None = None,
        password: str | None = None,
        progress: bool | None = None,
        concurrency: int = DEFAULT_CONCURRENCY,
        timeout: float = DEFAULT_TIMEOUT,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        settings = resolve(
            base_url, token=token, username=username, password=password, progress=progress
        )
        wire = Transport(
            settings.base_url or embedded.base_url(),
            token=settings.token,
            credentials=(settings.username, settings.password or "") if settings.username else None,
            progress=settings.progress,
            concurrency=concurrency,
            timeout=timeout,
            transport=transport,
        )
        super().__init__(wire, self._MODE)
        self._opened()

    def _opened(self) -> None:
        """What a client does once built (the async one nothing: it signs in on first use)."""


class AsyncClient(AsyncClosing, _Connected[Async]):
    """Async client for the platform's REST API; results come back as DataFrames.

    ``base_url`` defaults to ``EXPLORER_BASE_URL``, else the embedded platform (started once per
    process). Credentials: ``token=`` (OAuth bearer) or ``username=``/``password=`` (cookie
    session, signed in on first use), else ``EXPLORER_TOKEN`` / ``EXPLORER_USERNAME`` and
    ``EXPLORER_PASSWORD``, else anonymous. ``progress`` shows tqdm bars on multi-page fetches,
    ``concurrency`` is how many pages of one listing are in flight at once, ``transport`` an
    httpx transport to use instead of the network (tests). Use ``async with`` or
    :meth:`aclose`.
    """

    _MODE = Async

    async def start(self) -> Self:
        """Sign in with the credentials given at construction (otherwise done on first use);
        returns the client."""
        await self._transport.open()
        return self

    open = Renamed("start")

    async def aclose(self) -> None:
        """Close the connections; the client cannot be used afterwards."""
        await self._transport.aclose()


class Client(_Connected[Sync]):
    """Blocking client for the platform's REST API: the surface of :class:`AsyncClient`, each
    call waiting for its result, safe to call from a running Jupyter kernel.

    Takes the arguments of :class:`AsyncClient`; signs in at once when given credentials. Use
    ``with`` or :meth:`close`.
    """

    _MODE = Sync

    def _opened(self) -> None:
        """Sign in at once when given credentials (closing again if that fails)."""
        if self._transport.signs_in:
            try:
                loop.run(self._transport.open())
            except BaseException:
                self.close()
                raise

    def close(self) -> None:
        """Close the connections; the client cannot be used afterwards."""
        if not self.closed:
            loop.run(self._transport.aclose())

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def connect(
    base_url: str | None = None,
    *,
    token: str | None = None,
    username: str | None = None,
    password: str | None = None,
    progress: bool | None = None,
) -> Client:
    """A blocking :class:`Client` for the platform at ``base_url``.

    ``base_url`` defaults to ``EXPLORER_BASE_URL``, else the embedded platform (started in this
    process on first need and reused). Sign in with ``token=`` (OAuth bearer) or
    ``username=``/``password=`` (cookie session); progress bars are on unless
    ``progress=False`` (or ``EXPLORER_PROGRESS=0``).
    """
    return Client(base_url, token=token, username=username, password=password, progress=progress)
