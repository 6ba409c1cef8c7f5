"""Every error the toolkit raises, in one tree, so notebooks can catch exactly what they mean.

The platform's error bodies (``{"statusCode", "error", "message", "details"?}``) become a
:class:`PlatformError` subclass chosen by status; a chat method's error reply becomes a
:class:`ChatError` carrying a :class:`ChatErrorCode` (the codes are the wire's,
``explorer.wire.codes``). Network failures are translated at the
edges (``clients.py`` for HTTP, ``chat/socket.py`` for websockets) into :class:`ConnectionFailed`,
so no ``httpx`` or ``websockets`` exception escapes. Pure: no I/O here.

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
    ├── ChatError                  a chat method failed: ``code`` (a ChatErrorCode),
    │                              ``message``, ``data``
    ├── ChatTimeout                (also TimeoutError) a chat method got no reply, or a chat
    │                              node no handshake, in time
    ├── ConnectionFailed           (also ConnectionError) network failure, timeout, bad reply
    ├── CaptureError               (also ValueError) a capture cannot be read: not a capture
    │   │                          folder, a damaged file, a failed query (DuckDB's error is
    │   │                          its ``__cause__``)
    │   └── CaptureNotFound        (also FileNotFoundError) no capture folder at that path
    ├── TokenFileError             (also ValueError) a token_file that is not a kept token
    ├── CredentialLost             the chat closed the connection because the credential behind
    │                              its authkey ended (logout, revoked token, ...): sign in again
    ├── ClientClosed               (also RuntimeError) the client was used after close()
    └── LoopThreadError            (also RuntimeError) the sync API was called from the
                                   toolkit's own event-loop thread, where it would deadlock

Arguments the toolkit can check itself (an unknown field or choice) raise ``ValueError`` before
anything is sent; they are mistakes in the calling code, not outcomes to handle.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from explorer.wire.codes import CLOSE_CREDENTIAL_ENDED, Refusal
from explorer.wire.codes import ChatErrorCode as ChatErrorCode


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
            if detail.get("message") != message:  # (a detail that only repeats it adds nothing)
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

    ``reset_at`` is the epoch time in seconds when the bucket refills, when the platform said;
    ``bucket`` the bucket whose window is full, when it said (``X-RateLimit-Bucket``).
    """

    status_code = 429

    def __init__(
        self,
        status: int,
        error: str,
        message: str,
        details: Sequence[Mapping[str, Any]] = (),
        reset_at: float | None = None,
        bucket: str | None = None,
    ) -> None:
        super().__init__(status, error, message, details)
        self.reset_at = reset_at
        self.bucket = bucket


#: The platform's lockout of failed sign-ins (counted per address).
LOCKOUT_BUCKET = "user-login-failed"


def limit_said(bucket: str, reset_at: float | None, now: float) -> str:
    """One line for a used-up rate limit: which, until when, and what to do meanwhile."""
    if reset_at is None:
        until = "for a while"
    else:
        left = max(0, round(reset_at - now))
        clock = time.strftime("%H:%M:%S", time.gmtime(reset_at))
        wait = f"{left // 60} min {left % 60} s" if left >= 60 else f"{left} s"
        until = f"until {clock} UTC (in {wait})"
    if bucket == LOCKOUT_BUCKET:
        return (
            f"Too many failed sign-ins from this address: signing in is locked {until}. "
            "Check the username and password (the demo accounts' password is 'explorer'); "
            "restarting the platform also lifts the lock."
        )
    return f"The platform's {bucket!r} rate limit is used up {until}: wait, or ask less often."


class CsrfError(PlatformError):
    """461: the session's CSRF token was refused even after retrying with a fresh one."""

    status_code = 461


class ServerError(PlatformError):
    """5xx: the platform failed."""

    status_code = 500


class ChatError(ExplorerError, Refusal):
    """A chat method failed: the client raises it for an error reply.

    Built from the reply's error object (:meth:`from_object`); the platform sends those by
    raising the wire's own :class:`~explorer.wire.codes.Refusal`, which this extends for the
    toolkit's tree. ``code`` is usually a :class:`ChatErrorCode`; ``str()`` gives
    ``"<message> (code <code>)"``.
    """

    @classmethod
    def from_object(cls, error: Mapping[str, Any]) -> ChatError:
        """The exception for a reply's error object (``code``/``message`` default to 0/"")."""
        code = error.get("code")
        message = error.get("message")
        data = error.get("data")
        return cls(
            code if isinstance(code, int) else 0,
            message if isinstance(message, str) else "",
            data if isinstance(data, Mapping) else None,
        )


class ChatTimeout(ExplorerError, TimeoutError):
    """A chat method got no reply, or a chat node did not finish its handshake, in time."""


class SignInTimeout(ExplorerError, TimeoutError):
    """Nobody approved a shortcode sign-in before it (or the wait) expired."""


class ConnectionFailed(ExplorerError, ConnectionError):
    """The platform could not be reached, timed out or sent something that is not HTTP."""


class CaptureError(ExplorerError, ValueError):
    """A capture cannot be read: the folder is not one a recorder wrote, a file is damaged or
    a query failed (the underlying DuckDB or file error is the ``__cause__``)."""


class CaptureNotFound(CaptureError, FileNotFoundError):
    """No capture folder at the given path."""


class TokenFileError(ExplorerError, ValueError):
    """A ``token_file`` that is not a token explorer kept (damaged, or another file): it is
    left as it is (``explorer.rest.tokenfiles``)."""


class CredentialLost(ExplorerError):
    """A chat node closed the connection because the credential that fetched its authkey
    ended (logout, revoked or reused token, password change, suspension). Reconnecting with
    the same key cannot work: sign in again and join anew."""

    #: The close code the platform's chat nodes send for it.
    CLOSE_CODE = CLOSE_CREDENTIAL_ENDED


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
    status: int,
    body: object,
    reason: str = "",
    reset_at: float | None = None,
    bucket: str | None = None,
    now: float = 0.0,
) -> PlatformError:
    """The typed error for a response with ``status`` and decoded JSON ``body``.

    ``body`` may be anything the platform sent (a non-object gives the ``reason`` phrase);
    ``reset_at`` and ``bucket`` are kept on a :class:`RateLimited`, whose message then says
    which limit it is and how long it lasts from ``now`` (:func:`limit_said`).
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
        if bucket:
            message = limit_said(bucket, reset_at, now)
        return RateLimited(status, error, message, details, reset_at=reset_at, bucket=bucket)
    return cls(status, error, message, details)
