"""OAuth tokens kept in a file the user chooses, so a sign-in outlives the process.

``api.authorize(scopes, token_file=path)`` reads the file first: a kept token of the same
platform, for at least the scopes asked, that has not expired or can be refreshed is used as
it is, and nobody is asked to approve a code again. Otherwise the flow runs and its token is
written to the file. A token that renews itself (the shortcode flow's,
:class:`~explorer.rest.auth.RefreshingAuth`) rewrites the file at each refresh, so the file always
holds the newest refresh token (each is good once). ``on_refresh`` is called with the new
:class:`~explorer.rest.auth.Grant` after each refresh, once the file is written.

The file is JSON: the grant's fields, ``expires_at`` (epoch seconds), the platform's base URL
and the OAuth client id. It is written whole (a dot file in the same folder, then renamed) and
readable by its owner only (mode 600): it holds credentials. A file that is not such JSON is
refused with a :class:`~explorer.errors.TokenFileError` naming it, never overwritten; one of
another platform is left unused (and replaced by this sign-in's token).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

import orjson

from explorer.errors import TokenFileError
from explorer.rest.auth import Grant

#: What a token file is allowed (owner read and write).
MODE = 0o600
#: A kept token without a refresh token is used only with at least this many seconds left.
MARGIN = 60.0


@dataclass(frozen=True, slots=True)
class Kept:
    """A token as its file keeps it."""

    grant: Grant
    expires_at: float | None
    base_url: str
    client_id: str

    def serves(self, base_url: str, scopes: Iterable[str], now: float) -> bool:
        """Whether this token may sign requests to ``base_url`` for ``scopes`` at ``now``."""
        alive = self.expires_at is None or self.expires_at - MARGIN > now
        return (
            self.base_url == base_url
            and set(scopes) <= set(self.grant.scopes)
            and (alive or self.grant.refresh_token is not None)
        )


def load(path: str | os.PathLike[str]) -> Kept | None:
    """The token kept at ``path`` (None when there is no file). Raises
    :class:`~explorer.errors.TokenFileError` for a file that is not a kept token."""
    file = Path(path).expanduser()
    try:
        body = orjson.loads(file.read_bytes())
        grant = body["grant"]
        kept = Kept(
            Grant(
                access_token=str(grant["access_token"]),
                token_type=str(grant["token_type"]),
                expires_in=grant.get("expires_in"),
                scopes=tuple(str(s) for s in grant["scopes"]),
                state=None,
                refresh_token=grant.get("refresh_token"),
            ),
            body.get("expires_at"),
            str(body["base_url"]),
            str(body["client_id"]),
        )
    except FileNotFoundError:
        return None
    except (OSError, orjson.JSONDecodeError, KeyError, TypeError) as damaged:
        raise TokenFileError(
            f"{str(file)!r} is not a token file explorer wrote ({damaged!r}); move it away "
            "or choose another token_file."
        ) from damaged
    if not isinstance(kept.expires_at, int | float | None):
        raise TokenFileError(f"{str(file)!r} has no valid expires_at.")
    return kept


def save(path: str | os.PathLike[str], kept: Kept) -> None:
    """Write ``kept`` to ``path`` whole, readable by its owner only (its folder is made,
    owner-only, when missing)."""
    file = Path(path).expanduser()
    file.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    body = {
        "grant": asdict(kept.grant),
        "expires_at": kept.expires_at,
        "base_url": kept.base_url,
        "client_id": kept.client_id,
    }
    partial = file.with_name(f".{file.name}.partial")
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, MODE)
    try:
        with os.fdopen(descriptor, "wb") as out:
            out.write(orjson.dumps(body, option=orjson.OPT_INDENT_2))
        os.chmod(partial, MODE)  # an older partial file may have had another mode
        os.replace(partial, file)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            partial.unlink()
        raise


class Keeper:
    """What a refreshing token calls after each refresh: write the file (when there is one),
    then call ``on_refresh`` with the new grant."""

    def __init__(
        self,
        path: str | os.PathLike[str] | None,
        base_url: str,
        client_id: str,
        on_refresh: Callable[[Grant], object] | None = None,
    ) -> None:
        self.path, self.base_url, self.client_id = path, base_url, client_id
        self.on_refresh = on_refresh

    def keep(self, grant: Grant, expires_at: float | None) -> None:
        """Write ``grant`` to the file (when there is one)."""
        if self.path is not None:
            save(self.path, Kept(grant, expires_at, self.base_url, self.client_id))

    def __call__(self, grant: Grant, expires_at: float | None) -> None:
        self.keep(grant, expires_at)
        if self.on_refresh is not None:
            self.on_refresh(grant)


def expiry(grant: Grant, now: float | None = None) -> float | None:
    """When a just-issued ``grant`` expires (epoch seconds; None: it does not say)."""
    return None if grant.expires_in is None else (now or time.time()) + grant.expires_in
