"""How requests carry credentials: httpx auth flows, plus the OAuth implicit grant's URLs.

The platform signs callers in three ways (platform.md "Authentication"), each a small httpx
auth flow so the rest of the toolkit never touches credential headers:

- :class:`CsrfAuth` for a cookie session. The cookie itself lives in the HTTP client's jar;
  this flow adds the session's ``X-CSRF-Token``, learns a fresh token from any response that
  carries one, and on a 461 retries the request once with the token that answer brought. The
  retry is safe for every method: a 461 is refused before anything happens.
- :class:`BearerAuth` for an OAuth access token (no cookie, no CSRF).
- :class:`JwtAuth` for a token from ``POST /jwt/authorize``.
- :class:`RefreshingAuth` for a code grant's access token (the shortcode sign-in): it trades
  its refresh token for a new pair shortly before the access token expires.

:func:`authorize_url` and :func:`parse_grant` are the two ends of the implicit grant: the
signed-in session asks ``/oauth/authorize`` and reads the token from the redirect's fragment.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Iterable
from dataclasses import dataclass
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx

from explorer.wire.numbers import identifier

CSRF_HEADER = "X-CSRF-Token"
CSRF_STATUS = 461
JWT_HEADER = "X-JWT"
#: The public OAuth client the platform seeds for the toolkit.
CLIENT_ID = "explorer-toolkit"
REDIRECT_URI = "http://127.0.0.1/oauth/callback"


class CsrfAuth(httpx.Auth):
    """Send the session's CSRF token; on a 461 retry once with the fresh one."""

    def __init__(self) -> None:
        self.token: str | None = None

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        """Add the token, learn a new one from the answer, retry a 461 with it once."""
        if self.token:
            request.headers[CSRF_HEADER] = self.token
        response = yield request
        self._learn(response)
        if response.status_code == CSRF_STATUS and self.token:
            request.headers[CSRF_HEADER] = self.token
            self._learn((yield request))

    def _learn(self, response: httpx.Response) -> None:
        token = response.headers.get(CSRF_HEADER)
        if token:
            self.token = token


class _SchemeAuth(httpx.Auth):
    scheme = ""

    def __init__(self, token: str) -> None:
        self.token = token

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        """Send ``Authorization: <scheme> <token>``."""
        request.headers["Authorization"] = f"{self.scheme} {self.token}"
        yield request


class BearerAuth(_SchemeAuth):
    """``Authorization: Bearer <access token>``."""

    scheme = "Bearer"


class JwtAuth(_SchemeAuth):
    """``Authorization: JWT <token>``."""

    scheme = "JWT"


@dataclass(frozen=True, slots=True)
class Grant:
    """An access token from the implicit grant (or, with a refresh token, a code grant)."""

    access_token: str
    token_type: str
    expires_in: int | None
    scopes: tuple[str, ...]
    state: str | None
    refresh_token: str | None = None


def token_grant(body: dict[str, object]) -> Grant:
    """The :class:`Grant` in a ``POST /oauth/token`` answer."""
    expires = body.get("expires_in")
    refresh = body.get("refresh_token")
    return Grant(
        access_token=str(body["access_token"]),
        token_type=str(body.get("token_type") or "Bearer"),
        expires_in=expires if isinstance(expires, int) else None,
        scopes=tuple(str(body.get("scope") or "").split()),
        state=None,
        refresh_token=refresh if isinstance(refresh, str) else None,
    )


class RefreshingAuth(httpx.Auth):
    """``Authorization: Bearer`` with a token that renews itself: once the access token is
    within ``margin`` seconds of expiring, the next request first refreshes the pair at
    ``token_url`` (``grant_type=refresh_token``, single use, so the new refresh token is kept).
    ``expires_at`` (epoch seconds) restores a kept token's expiry (default: ``expires_in``
    from now); ``on_refresh`` is called with each new grant and its expiry (a token file keeps
    them, ``rest/tokenfiles.py``).
    """

    requires_response_body = True

    def __init__(
        self,
        grant: Grant,
        token_url: str,
        client_id: str,
        *,
        margin: float = 60.0,
        clock: Callable[[], float] = time.time,
        expires_at: float | None = None,
        on_refresh: Callable[[Grant, float | None], object] | None = None,
    ) -> None:
        self.token_url, self.client_id, self.margin, self.clock = (
            token_url,
            client_id,
            margin,
            clock,
        )
        self.on_refresh = on_refresh
        self._take(grant)
        if expires_at is not None:
            self.expires_at = expires_at

    def _take(self, grant: Grant) -> None:
        self.grant = grant
        lifetime = grant.expires_in if grant.expires_in is not None else float("inf")
        self.expires_at = self.clock() + lifetime

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        """Refresh first when the token nears expiry, then send with the current token."""
        if self.grant.refresh_token and self.clock() >= self.expires_at - self.margin:
            form = {
                "grant_type": "refresh_token",
                "refresh_token": self.grant.refresh_token,
                "client_id": self.client_id,
            }
            response = yield httpx.Request("POST", self.token_url, data=form)
            if response.status_code == 200:
                self._take(token_grant(response.json()))
                if self.on_refresh is not None:
                    finite = self.expires_at if self.expires_at != float("inf") else None
                    self.on_refresh(self.grant, finite)
        request.headers["Authorization"] = f"Bearer {self.grant.access_token}"
        yield request


def authorize_url(
    scopes: Iterable[str],
    state: str,
    client_id: str = CLIENT_ID,
    redirect_uri: str = REDIRECT_URI,
) -> str:
    """The ``/oauth/authorize`` path and query (relative to the base URL) of an implicit grant."""
    query = {
        "response_type": "token",
        "client_id": client_id,
        "redirect_uri": redirect_uri,
        "scope": " ".join(scopes),
        "state": state,
    }
    return "/oauth/authorize?" + urlencode(query)


def parse_grant(location: str) -> Grant:
    """The grant in a redirect ``Location`` whose fragment carries ``access_token=...``.

    Raises :class:`ValueError` when the fragment has no token (e.g. ``error=access_denied``).
    """
    fragment = parse_qs(urlsplit(location).fragment)

    def first(name: str) -> str | None:
        values = fragment.get(name)
        return values[0] if values else None

    token = first("access_token")
    if not token:
        reason = first("error_description") or first("error") or "no access_token"
        raise ValueError(f"The authorization was not granted: {reason}.")
    expires = first("expires_in")
    return Grant(
        access_token=token,
        token_type=first("token_type") or "Bearer",
        expires_in=identifier(expires),
        scopes=tuple((first("scope") or "").split()),
        state=first("state"),
    )
