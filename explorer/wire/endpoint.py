"""How one REST endpoint of the contract is declared, and the one place its path is filled.

An :class:`Endpoint` row says what both halves must agree on: method, path, bucket, sign-in,
OAuth scopes and the record it answers. The rows themselves are in ``routes.py`` and
``channel_routes.py``. Paths are relative to ``/api/v1`` with ``{name}`` placeholders, one
spelling on both sides: ``{channel}`` is a channel id or token, the others ids.
:meth:`Endpoint.url` is the one place a path is filled: each value is percent-quoted with
nothing safe, so no id or name can change the request path (``a/../b`` stays one segment).
Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import quote

#: Who may call: anyone, anyone (a signed-in caller is shown more), or a signed-in caller.
SignIn = Literal["none", "optional", "user"]

_PLACEHOLDER = re.compile(r"\{(\w+)\}")


def segment(value: object) -> str:
    """One path segment, percent-quoted so that no value can change the path."""
    return quote(str(value), safe="")


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One REST endpoint of the contract.

    ``bucket`` is the rate-limit bucket it is charged to (``explorer.wire.ratelimit``), ``also``
    any further buckets (failed logins), ``search`` the ``(query parameter, bucket)`` switch:
    a request carrying that parameter is charged to that bucket instead (a channel search).
    ``scopes`` are the OAuth scopes a bearer token needs. ``record`` names the answer's record
    (an OpenAPI component; ``many``: a list of them).
    """

    method: str
    path: str
    bucket: str
    signin: SignIn = "none"
    scopes: tuple[str, ...] = ()
    also: tuple[str, ...] = ()
    search: tuple[str, str] | None = None
    record: str = ""
    many: bool = False

    @property
    def placeholders(self) -> tuple[str, ...]:
        """The names of the path's placeholders, in order."""
        return tuple(_PLACEHOLDER.findall(self.path))

    @property
    def template(self) -> str:
        """The path with ``{}`` for each placeholder: how two spellings are compared."""
        return _PLACEHOLDER.sub("{}", self.path)

    def url(self, values: Mapping[str, object]) -> str:
        """The path with every placeholder filled from ``values``, each value quoted whole."""
        return _PLACEHOLDER.sub(lambda match: segment(values[match[1]]), self.path)

    def bucket_for(self, params: Mapping[str, Any] | None) -> str:
        """The bucket a request with query ``params`` is charged to."""
        if self.search is not None and params and params.get(self.search[0]) is not None:
            return self.search[1]
        return self.bucket

    def matches(self, method: str, path: str) -> bool:
        """Whether ``method path`` (a concrete path, no query) is a request to this row."""
        return method == self.method and _pattern(self.template).fullmatch(path) is not None


def _pattern(template: str) -> re.Pattern[str]:
    return re.compile("[^/]+".join(re.escape(part) for part in template.split("{}")))


def rows_of(values: Iterable[object]) -> tuple[Endpoint, ...]:
    """The rows among ``values`` (a table module's globals), in declaration order."""
    return tuple(value for value in values if isinstance(value, Endpoint))
