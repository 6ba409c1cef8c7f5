"""How a toolkit method binds to the wire's endpoint rows, and how its path is filled.

A :class:`Binding` is a handle method's side of one endpoint of ``explorer.wire.routes``: the
row itself (method, path, bucket, sign-in, scopes and record come from there, never restated)
and what kind of result it gives (:class:`Result`); the answer is typed by the schema of the
row's record (``schemas.RECORDS``) unless the method says otherwise. Bindings are written where
the methods they back are declared (the handle classes, see ``rest/handle.py``), so adding an
endpoint is one wire row, its platform handler and one decorated method; the bindings of every
class are gathered in ``api.ENDPOINTS`` and a test checks that the toolkit binds every row.

A method argument may instead *choose* among rows (:class:`Choice`: an analytics series, a
manifest kind): the value is checked against the known options and picks the row. Path
placeholders are filled from the handle's values and the method's arguments: ``{user}`` takes
a ``user_id`` when there is one, else ``user``; the wire row quotes every value whole.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from explorer.rest.schemas import Schema
from explorer.wire import routes as wire
from explorer.wire.endpoint import Endpoint


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


@dataclass(frozen=True, slots=True)
class Choice:
    """A method argument that picks one of several rows: ``options`` maps its values to them."""

    argument: str
    options: Mapping[str, Endpoint]


@dataclass(frozen=True, slots=True)
class Binding:
    """One handle method's binding to a wire row (or a :class:`Choice` of rows).

    ``schema`` types the answer when the row's record does not (``schemas.of_record``);
    ``shape`` turns a decoded object answer into the result where the kind alone does not say
    how. ``name`` is the method it backs.
    """

    target: Endpoint | Choice
    schema: Schema | None = None
    result: Result = Result.RECORD
    shape: Callable[[dict[str, Any]], Any] | None = None
    name: str = ""

    @property
    def rows(self) -> tuple[Endpoint, ...]:
        """The wire rows this binding may call."""
        target = self.target
        return tuple(target.options.values()) if isinstance(target, Choice) else (target,)

    def unfilled(self, known: Iterable[str]) -> set[str]:
        """The placeholders (and choice argument) that none of the ``known`` names fills."""
        names = set(known)
        missing = {
            name
            for row in self.rows
            for name in row.placeholders
            if name not in names and f"{name}_id" not in names
        }
        if isinstance(self.target, Choice) and self.target.argument not in names:
            missing.add(self.target.argument)
        return missing

    def row(self, values: Mapping[str, object]) -> Endpoint:
        """The row a call with ``values`` goes to; ``ValueError`` names the options when a
        choice is unknown."""
        target = self.target
        if not isinstance(target, Choice):
            return target
        value = str(values[target.argument])
        if value not in target.options:
            raise ValueError(
                f"Unknown {target.argument} {value!r}; choose one of: {', '.join(target.options)}."
            )
        return target.options[value]

    def url(self, values: Mapping[str, object]) -> str:
        """The path of the call with ``values``, each placeholder from ``<name>_id`` or
        ``<name>``, quoted whole."""
        row = self.row(values)
        return row.url(
            {
                name: values[f"{name}_id"] if f"{name}_id" in values else values[name]
                for name in row.placeholders
            }
        )


def bucket_of(rows: Iterable[Endpoint], method: str, path: str) -> str:
    """The bucket of ``method path`` among ``rows``; unknown requests are paced under a name
    of their own (method and first path segment), learnt from the headers like any."""
    path, _, query = path.partition("?")
    for row in rows:
        if row.matches(method, path):
            searched = row.search is not None and f"{row.search[0]}=" in query
            return row.search[1] if row.search and searched else row.bucket
    return f"{method} /{path.strip('/').split('/', 1)[0]}"


#: Sign-in rows the transport calls itself (the others are bound on the handles).
SIGN_IN: tuple[Endpoint, ...] = (
    wire.LOGIN,
    wire.LOGOUT,
    wire.AUTHORIZE,
    wire.AUTHORIZE_JWT,
    wire.SHORTCODE,
    wire.SHORTCODE_CHECK,
    wire.SHORTCODE_APPROVE,
    wire.SHORTCODE_DENY,
    wire.TOKEN,
)
