"""Column declarations per resource: what each REST record's frame looks like.

A :class:`Schema` names a resource's fields in display order with their kinds; ``rest/tables.py``
turns records into DataFrames driven by these declarations. The records' schemas are derived
from the wire's declarations (``explorer.wire.records`` and ``explorer.wire.models``), so a
record's new field is one row there (analytics points included); this module adds only the
toolkit's own views (an emoticon pack as rows, e-mail opt-outs, the rate-limit budget). No
pandas here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TypeAlias, Union

from explorer.wire import models, records
from explorer.wire.kinds import Kind

#: How a field's values become a column: a kind (``explorer.wire.kinds``, which ``core/columns.py``
#: maps to a dtype), or an embedded object's schema.
Spec: TypeAlias = Union[Kind, "Schema"]


@dataclass(frozen=True, slots=True)
class Schema:
    """The declared shape of one resource: its fields in display order and their kinds.

    A field whose spec is another :class:`Schema` is an embedded object, flattened with its
    name as prefix. ``categories`` fixes the category order of an enum column (values outside
    it are still kept); ``optional`` fields appear only when present.
    """

    fields: Mapping[str, Spec]
    index: str | None = None
    categories: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    optional: frozenset[str] = frozenset()


def schema_of(record: records.Record, by_name: Mapping[str, Schema]) -> Schema:
    """The frame schema of a wire ``record``: each field's kind, an embedded record's own
    schema (one named in ``by_name``, or one of its own), enumerations as categories."""

    def spec(field: records.Field) -> Spec:
        if isinstance(field.of, str):
            return by_name[field.of]
        if field.of is not None:
            return schema_of(field.of, by_name)
        return field.kind

    return Schema(
        {field.name: spec(field) for field in record.fields},
        index=record.index,
        categories={field.name: field.choices for field in record.fields if field.choices},
        optional=frozenset(field.name for field in record.fields if field.optional),
    )


def _core() -> dict[str, Schema]:
    """Type, User, and Channel with its type and owner embedded."""
    found: dict[str, Schema] = {}
    found["Type"] = schema_of(records.Record("Type", records.TYPE, "id"), found)
    found["User"] = schema_of(records.Record("User", records.USER, "id"), found)
    channel = (
        *records.CHANNEL,
        *records.CHANNEL_PRIVATE,
        records.Field("type", "object", nullable=True, of="Type"),
        records.Field("user", "object", of="User"),
    )
    found["Channel"] = schema_of(records.Record("Channel", channel, "id"), found)
    return found


def _records() -> dict[str, Schema]:
    """Every record's schema by name, an embedded one's before the record embedding it."""
    found = _core()
    waiting = dict(models.RECORDS)
    while waiting:
        for name, record in list(waiting.items()):
            needs = {field.of for field in record.fields if isinstance(field.of, str)}
            if needs <= found.keys():
                found[name] = schema_of(record, found)
                del waiting[name]
    return dict(sorted(found.items()))


#: The schema of each record the platform names (``explorer.wire`` rows' ``record``): what an
#: endpoint's answer becomes unless its method says otherwise.
RECORDS: dict[str, Schema] = _records()
CHANNEL = RECORDS["Channel"]
CURRENT_USER = RECORDS["CurrentUser"]
INVOICE = RECORDS["Invoice"]
TYPE = RECORDS["Type"]
USER = RECORDS["User"]


#: A rate-limit bucket as the client knows it (``api.budget()``): from the answers' headers,
#: else the bucket table (see ``pacing.Pacer.budget``).
BUDGET = Schema(
    {
        "bucket": "str",
        "limit": "int",
        "remaining": "int",
        "resets": "seconds",
        "in_flight": "int",
        "reported": "bool",
        "unlimited": "bool",
    },
    index="bucket",
)

#: One emoticon of a channel's pack: its code and place on the sprite sheet.
EMOTICON = Schema(
    {"code": "str", "x": "int", "y": "int", "width": "int", "height": "int"}, index="code"
)

#: A category of notification e-mail the user opted out of, and since when.
EMAIL_OPT_OUT = Schema({"category": "str", "since": "time"}, index="category")


#: Anything without a declared schema: every field inferred, ``id`` the index when present.
GENERIC = Schema({}, index="id")


def of_record(record: str) -> Schema:
    """The schema of the platform's ``record`` (:data:`GENERIC` when none is declared)."""
    return RECORDS.get(record, GENERIC)
