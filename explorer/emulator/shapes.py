"""The JSON shapes of the core records (Channel, User, Type), rendered from store rows.

Resources embed each other (a channel embeds its owner and type, the current user embeds their
channel), so rendering lives here once. The Channel, User and Type fields are declared once,
in the wire (``explorer.wire.records``: name, kind, filter); the column lists, the OpenAPI
properties (:func:`json_schema`) and the ``where``/``fields`` validation of ``GET /channels``
all derive from them. Rows are plain tuples the data layer selects in that order
(``db/channels.py``); rendering is a ``zip`` plus a few conversions, which keeps
``GET /channels`` fast.
"""

from __future__ import annotations

from typing import Any

import orjson

from explorer.emulator.db import types as type_rows
from explorer.emulator.db.engine import Store
from explorer.wire.query import FieldKind, ValueCheck
from explorer.wire.records import CHANNEL, TYPE, USER, Field, Record

#: JSON schema atoms of record fields (the OpenAPI description is built from them).
INT: dict[str, Any] = {"type": "integer"}
STR: dict[str, Any] = {"type": "string"}
BOOL: dict[str, Any] = {"type": "boolean"}
TIME: dict[str, Any] = {"type": "string", "format": "date-time"}


def nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` that also allows null."""
    return {**schema, "nullable": True}


_SCHEMAS: dict[str, dict[str, Any]] = {
    "int": INT,
    "float": {"type": "number"},
    "str": STR,
    "category": STR,
    "bool": BOOL,
    "time": TIME,
    "object": {"type": "object"},
}


def json_schema(field: Field) -> dict[str, Any]:
    """The OpenAPI schema of a record field, from its kind (an enumeration lists its values),
    its embedded record (a reference to a named one) and its further JSON-schema words."""
    schema: dict[str, Any]
    if isinstance(field.of, str):
        ref = {"$ref": f"#/components/schemas/{field.of}"}
        schema = {"allOf": [ref]} if field.nullable or field.doc else ref
    elif field.of is not None:
        schema = component(field.of)
    else:
        schema = {**_SCHEMAS[field.kind], **(field.schema or {})}
        if field.longest is not None:
            schema["maxLength"] = field.longest
    if field.choices:
        schema = {**schema, "enum": list(field.choices)}
    if field.doc:
        schema = {**schema, "description": field.doc}
    return nullable(schema) if field.nullable else schema


def component(record: Record) -> dict[str, Any]:
    """The OpenAPI schema of a wire record: an object of exactly its fields (so the API
    description's tests catch a field the platform sends but the wire lacks)."""
    return {
        "type": "object",
        "required": [
            field.name for field in record.fields if not (field.optional or field.sometimes)
        ],
        "properties": {field.name: json_schema(field) for field in record.fields},
        "additionalProperties": False,
    }


CHANNEL_FIELDS: tuple[str, ...] = tuple(field.name for field in CHANNEL)
CHANNEL_BOOLS = tuple(field.name for field in CHANNEL if field.kind == "bool")
#: What ``where`` may filter and ``order`` sort channels by, and as what kind of value.
CHANNEL_FILTERS: dict[str, FieldKind] = {
    field.name: field.filter_kind for field in CHANNEL if field.filter
}
#: The channel fields whose ``where`` values are checked (enumerations and coded values).
CHANNEL_CHECKS: dict[str, ValueCheck] = {
    field.name: field.refusal for field in CHANNEL if field.choices or field.pattern
}
USER_FIELDS: tuple[str, ...] = tuple(field.name for field in USER)
#: The stored Type columns (its live counts are added when it is shown).
TYPE_FIELDS: tuple[str, ...] = tuple(field.name for field in TYPE if field.stored)
GROUP_IDS = {"User": 1, "Partner": 2, "Staff": 3, "Founder": 4, "Pro": 5}

_NC = len(CHANNEL_FIELDS)
_NU = len(USER_FIELDS)
_BOOL_INDEX = tuple(CHANNEL_FIELDS.index(name) for name in CHANNEL_BOOLS)


def render_user(row: tuple[Any, ...]) -> dict[str, Any]:
    """A User object from a row of ``USER_FIELDS``."""
    user = dict(zip(USER_FIELDS, row, strict=True))
    user["social"] = orjson.loads(user["social"])
    user["verified"] = bool(user["verified"])
    return user


class TypeCatalog:
    """Types with their live aggregates (``online`` channels, ``viewersCurrent``), cached until
    the catalog changes."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._version = -1
        self._types: dict[int, dict[str, Any]] = {}

    def all(self) -> dict[int, dict[str, Any]]:
        """Every Type object by id."""
        version = self.store.catalog_version()
        if self._version != version or not self._types:
            types = {}
            width = len(TYPE_FIELDS)
            for row in type_rows.with_live(self.store, TYPE_FIELDS):
                item = dict(zip(TYPE_FIELDS, row[:width], strict=True))
                online, viewers = row[width:]
                item["viewersCurrent"], item["online"] = viewers, online
                types[item["id"]] = item
            self._types, self._version = types, version
        return self._types


def render_channel(
    row: tuple[Any, ...], types: dict[int, dict[str, Any]], owner_view: bool = False
) -> dict[str, Any]:
    """A Channel object (with embedded ``type`` and ``user``) from a row of
    :data:`~explorer.emulator.db.channels.WITH_OWNER`."""
    values = list(row[:_NC])
    for index in _BOOL_INDEX:
        values[index] = bool(values[index])
    channel = dict(zip(CHANNEL_FIELDS, values, strict=True))
    type_id = channel["typeId"]
    channel["type"] = types.get(type_id) if type_id is not None else None
    channel["user"] = render_user(row[_NC + 1 : _NC + 1 + _NU])
    if owner_view:
        channel["streamKey"] = row[_NC]
    return channel


def user_groups(raw: str) -> list[dict[str, Any]]:
    """The ``groups`` array from the stored list of group names."""
    return [{"id": GROUP_IDS.get(name, 0), "name": name} for name in orjson.loads(raw)]
