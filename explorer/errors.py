"""Every error the toolkit raises, in one tree, so notebooks can catch exactly what they mean.

The platform's error bodies (``{"statusCode", "error", "message", "details"?}``) become a
:class:`PlatformError` subclass chosen by status; network failures from the HTTP library are
translated at the edge (``rest.py``) into :class:`ConnectionFailed`, so no ``httpx`` exception
escapes. Pure: no I/O here.

::

    ExplorerError
    ├── PlatformError              the platform answered with an error status
    │   ├── BadRequest             400, with ``details`` when the platform gives them
    │   ├── Unauthorized           401: no or bad credentials, expired token
    │   ├── Forbidden              403: e.g. a bearer token without the needed scope
    │   ├── NotFound               404
    │   ├── Conflict               409: e.g. a username that is taken
    │   ├── RateLimited            429 that survived the client's pacing and retries
    │   ├── CsrfError              461 that survived the one CSRF retry
    │   └── ServerError            5xx
    ├── ChatError                  a chat method failed: ``code``, ``message``, ``data``
    │                              (defined with the wire format in ``explorer.packets``)
    ├── ConnectionFailed           (also ConnectionError) network failure, timeout, bad reply
    ├── ClientClosed               (also RuntimeError) the client was used after close()
    └── LoopThreadError            (also RuntimeError) the sync API was called from the
                                   toolkit's own event-loop thread, where it would deadlock
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


class ExplorerError(Exception):
    """Base of every error the toolkit raises."""


class PlatformError(ExplorerError):
    """The platform answered with an error status.

    ``status`` is the HTTP status, ``error`` its reason phrase as the platform names it (e.g.
    ``"Not Found"``), ``message`` the human explanation and ``details`` the per-field problems a
    400 may list (``[{"path", "type", "message"}]``).
    """

    status_code = 0

    def __init__(
        self,
        status: int,
        error: str,
        message: str,
        details: Sequence[Mapping[str, Any]] = (),
    ) -> None:
        self.status = status
        self.error = error
        self.message = message
        self.details = list(details)
        text = (
            f"{status} {error}: {message}" if message and message != error else f"{status} {error}"
        )
        for detail in self.details:
            text += f"\n  {detail.get('path', '?')}: {detail.get('message', '')}"
        super().__init__(text)


class BadRequest(PlatformError):
    """400: the request was malformed, e.g. an unknown field in ``where``."""

    status_code = 400


class Unauthorized(PlatformError):
    """401: credentials are missing, wrong or expired."""

    status_code = 401


class Forbidden(PlatformError):
    """403: the caller may not do this, e.g. a token lacks a scope."""

    status_code = 403


class NotFound(PlatformError):
    """404: no such resource."""

    status_code = 404


class Conflict(PlatformError):
    """409: the request clashes with the current state, e.g. a taken username."""

    status_code = 409


class RateLimited(PlatformError):
    """429: a bucket was exhausted and waiting did not help (or the request was not a GET).

    ``reset_at`` is the epoch time in seconds when the bucket refills, when the platform said.
    """

    status_code = 429

    def __init__(
        self,
        status: int,
        error: str,
        message: str,
        details: Sequence[Mapping[str, Any]] = (),
        reset_at: float | None = None,
    ) -> None:
        super().__init__(status, error, message, details)
        self.reset_at = reset_at


class CsrfError(PlatformError):
    """461: the session's CSRF token was refused even after retrying with a fresh one."""

    status_code = 461


class ServerError(PlatformError):
    """5xx: the platform failed."""

    status_code = 500


class ConnectionFailed(ExplorerError, ConnectionError):
    """The platform could not be reached, timed out or sent something that is not HTTP."""


class ClientClosed(ExplorerError, RuntimeError):
    """The client was used after it was closed."""


class LoopThreadError(ExplorerError, RuntimeError):
    """The sync API was called from the toolkit's event-loop thread, where it would deadlock.

    Inside a coroutine use :class:`explorer.AsyncClient` and ``await`` instead.
    """


_BY_STATUS: dict[int, type[PlatformError]] = {
    cls.status_code: cls
    for cls in (BadRequest, Unauthorized, Forbidden, NotFound, Conflict, RateLimited, CsrfError)
}


def error_for(
    status: int, body: object, reason: str = "", reset_at: float | None = None
) -> PlatformError:
    """The typed error for a response with ``status`` and decoded JSON ``body``.

    ``body`` may be anything the platform sent (a non-object gives the ``reason`` phrase);
    ``reset_at`` is kept on a :class:`RateLimited`.
    """
    fields: Mapping[str, Any] = body if isinstance(body, Mapping) else {}
    error = str(fields.get("error") or reason or "Error")
    message = str(fields.get("message") or error)
    raw_details = fields.get("details")
    details = (
        [d for d in raw_details if isinstance(d, Mapping)] if isinstance(raw_details, list) else []
    )
    cls = _BY_STATUS.get(status, ServerError if status >= 500 else PlatformError)
    if cls is RateLimited:
        return RateLimited(status, error, message, details, reset_at=reset_at)
    return cls(status, error, message, details)
