"""List-query parameters (``where``, ``order``, ``fields``, ``limit``, ``page``, ``q``): parse,
validate and format.

The platform parses what clients send with :func:`parse_list_query`; the toolkit renders what
users write (a dict or the string syntax) with :func:`format_where` / :func:`format_order`. Both
sides share this grammar so they cannot drift. Pure: no I/O.

Grammar (reference.md): ``where`` is a comma-separated AND list of ``field:op:value`` or the older
dot form ``field.op.value``; ops ``eq ne neq gt gte lt lte in`` (``in`` values separated by
``;``); booleans accept ``1/0/true/false``. ``order`` is ``field:asc|desc`` comma-separated, case
insensitive. ``fields`` is a comma-separated projection.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from explorer.wire.numbers import integer

FieldKind = Literal["int", "float", "bool", "str", "time"]
Op = Literal["eq", "ne", "gt", "gte", "lt", "lte", "in"]

OPS: frozenset[str] = frozenset({"eq", "ne", "neq", "gt", "gte", "lt", "lte", "in"})
SCOPES: frozenset[str] = frozenset({"names", "titles", "types", "all"})
DEFAULT_LIMIT = 50
MAX_LIMIT = 100
MAX_PAGE = 1_000_000
#: Most ``where`` terms and ``order`` keys in one query: past a thousand or so, SQLite refuses
#: the expression instead of answering.
MAX_TERMS = 50

_TRUE = frozenset({"1", "true"})
_FALSE = frozenset({"0", "false"})


class QueryError(ValueError):
    """A list-query parameter is malformed; ``param`` names it, ``path`` the offending part."""

    def __init__(self, param: str, message: str, path: str | None = None) -> None:
        super().__init__(message)
        self.param = param
        self.message = message
        self.path = path or param


#: A check of one field's ``where`` values: the problem with a value (None: none).
ValueCheck = Callable[[Any], str | None]


def unknown_field(param: str, name: str, known: Iterable[str]) -> QueryError:
    """The error for a field ``param`` does not know: close names when there are some (so a
    typo says its fix), else every name it knows."""
    names = sorted(known)
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
    if close:
        hint = f"did you mean {' or '.join(map(repr, close))}?"
    else:
        hint = f"the fields are {', '.join(names)}." if names else "it takes none."
    return QueryError(param, f"Unknown field {name!r}: {hint}", f"{param}.{name}")


@dataclass(frozen=True, slots=True)
class Condition:
    """One ``where`` term with its value converted to the field's kind."""

    field: str
    op: Op
    value: Any


@dataclass(frozen=True, slots=True)
class Order:
    """One ``order`` term."""

    field: str
    descending: bool


@dataclass(frozen=True, slots=True)
class ListQuery:
    """A validated list request."""

    where: tuple[Condition, ...] = ()
    order: tuple[Order, ...] = ()
    fields: tuple[str, ...] | None = None
    page: int = 0
    limit: int = DEFAULT_LIMIT
    q: str | None = None
    scope: str = "all"
    count: bool = True


def convert(kind: FieldKind, raw: str, param: str = "where") -> Any:
    """Convert the text ``raw`` to a value of ``kind``, or raise :class:`QueryError`."""
    if kind == "bool":
        low = raw.lower()
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
        raise QueryError(param, f"{raw!r} is not a boolean (use 1, 0, true or false).")
    if kind == "int":
        value = integer(raw)
        if value is None:
            raise QueryError(param, f"{raw!r} is not an integer (digits 0-9, 64-bit).")
        return value
    if kind == "float":
        try:
            if not raw.isascii():  # float() reads other scripts' digits too
                raise ValueError(raw)
            number = float(raw)
        except ValueError:
            raise QueryError(param, f"{raw!r} is not a number.") from None
        if number != number or number in (float("inf"), float("-inf")):
            raise QueryError(param, f"{raw!r} is not a finite number.")
        return number
    return raw


def _split_term(term: str) -> tuple[str, str, str]:
    sep = ":" if ":" in term else "."
    parts = term.split(sep, 2)
    if len(parts) != 3:
        raise QueryError("where", f"{term!r} is not of the form field:op:value.")
    return parts[0], parts[1].lower(), parts[2]


def _terms(text: str, param: str) -> list[str]:
    """The comma-separated terms of ``param``, at most :data:`MAX_TERMS` of them."""
    terms = [t for t in text.split(",") if t]
    if len(terms) > MAX_TERMS:
        raise QueryError(param, f"{param} takes at most {MAX_TERMS} terms.")
    return terms


def parse_where(
    text: str, fields: Mapping[str, FieldKind], checks: Mapping[str, ValueCheck] | None = None
) -> tuple[Condition, ...]:
    """Parse a ``where`` string against the filterable ``fields``; ``checks`` refuse values a
    field never takes (an enumeration's others), which would otherwise match nothing."""
    conditions: list[Condition] = []
    for term in _terms(text, "where"):
        name, op, raw = _split_term(term)
        if name not in fields:
            raise unknown_field("where", name, fields)
        if op not in OPS:
            raise QueryError(
                "where",
                f"Unknown operator {op!r}: use one of {', '.join(sorted(OPS))}.",
                f"where.{name}",
            )
        kind = fields[name]
        values = tuple(convert(kind, v) for v in (raw.split(";") if op == "in" else [raw]))
        check = (checks or {}).get(name)
        problems = [p for p in map(check, values) if p] if check and op in ("eq", "in") else []
        if problems:
            raise QueryError("where", problems[0], f"where.{name}")
        if op == "in":
            conditions.append(Condition(name, "in", values))
        else:
            conditions.append(Condition(name, "ne" if op == "neq" else op, values[0]))  # type: ignore[arg-type]
    return tuple(conditions)


def parse_order(text: str, fields: Mapping[str, FieldKind]) -> tuple[Order, ...]:
    """Parse an ``order`` string against the sortable ``fields``."""
    orders: list[Order] = []
    for term in _terms(text, "order"):
        name, _, direction = term.partition(":")
        if name not in fields:
            raise unknown_field("order", name, fields)
        direction = direction.lower() or "asc"
        if direction not in ("asc", "desc"):
            raise QueryError("order", f"Direction must be asc or desc, not {direction!r}.")
        orders.append(Order(name, direction == "desc"))
    return tuple(orders)


def parse_fields(text: str, known: Iterable[str]) -> tuple[str, ...]:
    """Parse a ``fields`` projection; every name must be a known field."""
    allowed = set(known)
    names = tuple(dict.fromkeys(f for f in text.split(",") if f))
    unknown = [n for n in names if n not in allowed]
    if unknown:
        raise unknown_field("fields", unknown[0], allowed)
    if not names:
        raise QueryError("fields", "fields must name at least one field.")
    return names


def _int_param(params: Mapping[str, str], name: str, default: int, low: int, high: int) -> int:
    raw = params.get(name)
    if raw is None or raw == "":
        return default
    value = convert("int", raw, name)
    if not low <= value <= high:
        raise QueryError(name, f"{name} must be between {low} and {high}.")
    return int(value)


def parse_list_query(
    params: Mapping[str, str],
    filterable: Mapping[str, FieldKind],
    projectable: Iterable[str],
    checks: Mapping[str, ValueCheck] | None = None,
) -> ListQuery:
    """Validate every list parameter of a request at once, raising on the first bad one
    (``checks``: see :func:`parse_where`)."""
    q = params.get("q") or None
    scope = (params.get("scope") or "all").lower()
    if scope not in SCOPES:
        raise QueryError("scope", f"scope must be one of {', '.join(sorted(SCOPES))}.")
    fields_raw = params.get("fields")
    return ListQuery(
        where=parse_where(params.get("where", ""), filterable, checks),
        order=parse_order(params.get("order", ""), filterable),
        fields=parse_fields(fields_raw, projectable) if fields_raw is not None else None,
        page=_int_param(params, "page", 0, 0, MAX_PAGE),
        limit=_int_param(params, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT),
        q=q,
        scope=scope,
        count=not convert("bool", params.get("noCount", "0") or "0", "noCount"),
    )


def _render(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


def format_where(where: Mapping[str, Any] | str | None) -> str | None:
    """Render a ``where`` for the wire.

    A string passes through. In a dict, a plain value means ``eq``, a list/tuple/set of values
    means ``in``, and a pair ``(op, value)`` names the operator: ``{"online": True,
    "languageId": ["en", "de"], "viewersTotal": ("gte", 1000)}``.
    """
    if where is None or isinstance(where, str):
        return where
    terms: list[str] = []
    for name, spec in where.items():
        if isinstance(spec, tuple) and len(spec) == 2 and str(spec[0]).lower() in OPS:
            op, value = str(spec[0]).lower(), spec[1]
            if op == "in":
                terms.append(f"{name}:in:{';'.join(_render(v) for v in value)}")
            else:
                terms.append(f"{name}:{op}:{_render(value)}")
        elif isinstance(spec, list | tuple | set | frozenset):
            terms.append(f"{name}:in:{';'.join(_render(v) for v in spec)}")
        else:
            terms.append(f"{name}:eq:{_render(spec)}")
    return ",".join(terms)


def format_order(order: str | Iterable[str] | None) -> str | None:
    """Render ``order`` for the wire: a string passes through, a list is comma-joined."""
    if order is None or isinstance(order, str):
        return order
    return ",".join(order)
