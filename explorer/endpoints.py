"""Endpoint rows: what one REST endpoint is to the toolkit, and the one place paths are built.

An :class:`Endpoint` declares a platform route as the toolkit uses it: method, path template,
the rate-limit bucket it is charged to, the schema of its answer and what kind of result it
gives (:class:`Result`). The rows are written where the methods they back are declared (the
handle classes, see ``handle.py``), so adding an endpoint is one decorated method; the table
of every row is gathered from those classes (``rest.ENDPOINTS``) and a test pairs each row with
the platform's route of the same method and path, which must name the same bucket.

Paths are built only by :meth:`Endpoint.url`: every value is percent-quoted with nothing safe,
so an id or a channel name can never change the request path (``a/../b`` stays one segment).
A placeholder may instead be a *choice* (an analytics series, a manifest kind): the value is
checked against the known options and replaced by the fixed path fragment it stands for.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any
from urllib.parse import quote

from explorer.schemas import GENERIC, Schema

_PLACEHOLDER = re.compile(r"\{(\w+)\}")


class Result(Enum):
    """What a call gives back, decided by the endpoint."""

    #: A list, as one DataFrame shaped by the schema.
    TABLE = "table"
    #: A paged list, followed in the largest pages to the end (or ``max_rows``).
    PAGED = "paged"
    #: A list of timed points, as a frame with a sorted UTC ``DatetimeIndex``.
    SERIES = "series"
    #: One object, as a one-row frame.
    RECORD = "record"
    #: One object, as a dict (settings rather than records).
    OBJECT = "object"
    #: The answer's text (manifests).
    TEXT = "text"
    #: The answer's bytes (images).
    BYTES = "bytes"
    #: Nothing (deletions and other acknowledgements).
    NONE = "none"


def segment(value: object) -> str:
    """One path segment, percent-quoted so that no value can change the path."""
    return quote(str(value), safe="")


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One REST endpoint as the toolkit calls it.

    ``path`` is relative to the base URL with ``{name}`` placeholders; ``choices`` maps a
    placeholder to its options and the path fragment each stands for. ``search`` is the
    platform's ``(query parameter, bucket)`` switch: a request carrying that parameter is
    charged to that bucket instead (a channel search). ``shape`` turns a decoded object answer
    into the result where the kind alone does not say how. ``name`` is the method it backs.
    """

    method: str
    path: str
    bucket: str
    schema: Schema = GENERIC
    result: Result = Result.RECORD
    search: tuple[str, str] | None = None
    choices: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    shape: Callable[[dict[str, Any]], Any] | None = None
    name: str = ""

    @property
    def placeholders(self) -> tuple[str, ...]:
        """The names of the path's placeholders, in order."""
        return tuple(_PLACEHOLDER.findall(self.path))

    def url(self, values: Mapping[str, object]) -> str:
        """The path with every placeholder filled from ``values`` (quoted, or a choice's
        fragment); ``ValueError`` names the options when a choice is unknown."""

        def fill(match: re.Match[str]) -> str:
            name = match[1]
            options = self.choices.get(name)
            if options is None:
                return segment(values[name])
            value = str(values[name])
            if value not in options:
                raise ValueError(f"Unknown {name} {value!r}; choose one of: {', '.join(options)}.")
            return options[value]

        return _PLACEHOLDER.sub(fill, self.path)

    def bucket_for(self, params: Mapping[str, Any] | None) -> str:
        """The bucket a request with query ``params`` is charged to."""
        if self.search is not None and params and params.get(self.search[0]) is not None:
            return self.search[1]
        return self.bucket

    def paths(self) -> tuple[str, ...]:
        """Every route template this row covers, choices expanded, ``{}`` for each value."""
        found = [self.path]
        for name, options in self.choices.items():
            found = [p.replace(f"{{{name}}}", part) for p in found for part in options.values()]
        return tuple(_PLACEHOLDER.sub("{}", p) for p in found)

    def matches(self, method: str, path: str) -> bool:
        """Whether ``method path`` (a concrete path, no query) is a request to this row."""
        if method != self.method:
            return False
        return any(_pattern(template).fullmatch(path) for template in self.paths())


def _pattern(template: str) -> re.Pattern[str]:
    parts = template.split("{}")
    return re.compile("[^/]+".join(re.escape(part) for part in parts))


def bucket_of(endpoints: Iterable[Endpoint], method: str, path: str) -> str:
    """The bucket of ``method path`` among ``endpoints``; unknown requests are paced under a
    name of their own (method and first path segment), learnt from the headers like any."""
    path, _, query = path.partition("?")
    for endpoint in endpoints:
        if endpoint.matches(method, path):
            searched = endpoint.search is not None and f"{endpoint.search[0]}=" in query
            return endpoint.search[1] if endpoint.search and searched else endpoint.bucket
    return f"{method} /{path.strip('/').split('/', 1)[0]}"


#: Sign-in endpoints the transport calls itself (the others are declared on the handles).
LOGIN = Endpoint("POST", "/users/login", "user-login", result=Result.OBJECT, name="login")
LOGOUT = Endpoint(
    "DELETE", "/users/current/session", "user-write", result=Result.NONE, name="logout"
)
AUTHORIZE = Endpoint("GET", "/oauth/authorize", "user-write", result=Result.NONE, name="authorize")
AUTHORIZE_JWT = Endpoint(
    "POST", "/jwt/authorize", "user-login", result=Result.NONE, name="authorize_jwt"
)
SHORTCODE = Endpoint(
    "POST", "/oauth/shortcode", "user-login", result=Result.OBJECT, name="shortcode"
)
SHORTCODE_CHECK = Endpoint(
    "GET",
    "/oauth/shortcode/check/{handle}",
    "user-read",
    result=Result.OBJECT,
    name="shortcode_check",
)
SHORTCODE_APPROVE = Endpoint(
    "POST", "/oauth/shortcode/approve", "user-write", result=Result.OBJECT, name="approve_code"
)
SHORTCODE_DENY = Endpoint(
    "POST", "/oauth/shortcode/deny", "user-write", result=Result.OBJECT, name="deny_code"
)
TOKEN = Endpoint("POST", "/oauth/token", "user-login", result=Result.OBJECT, name="token")
SIGN_IN: tuple[Endpoint, ...] = (
    LOGIN,
    LOGOUT,
    AUTHORIZE,
    AUTHORIZE_JWT,
    SHORTCODE,
    SHORTCODE_CHECK,
    SHORTCODE_APPROVE,
    SHORTCODE_DENY,
    TOKEN,
)
