"""Every record the two halves share is declared once, in the wire, and both halves derive
their shapes from it: the toolkit's frame schemas and the platform's API description.

The platform's side of the same contract, that it answers with exactly the declared fields, is
walked in ``tests/test_endpoint_walk.py``: each record's component is closed
(``additionalProperties: false``) and lists every field that is not optional as required, so
a field the platform sends but the wire lacks, or the wire declares but the platform never
sends, fails there.
"""

from __future__ import annotations

from explorer.emulator.app import modules, platform_routes
from explorer.emulator.openapi import describe, extra_schemas
from explorer.emulator.shapes import component
from explorer.rest import schemas
from explorer.wire import models
from explorer.wire import routes as wire
from explorer.wire.records import Record

CORE = {"Channel", "User", "Type"}


def _embedded(record: Record) -> set[str]:
    """The names of the records ``record`` references (embedded or listed in a field)."""
    found = {field.of for field in record.fields if isinstance(field.of, str)}
    found |= {
        str(field.schema["items"]["$ref"]).rsplit("/", 1)[1]
        for field in record.fields
        if field.schema and "$ref" in field.schema.get("items", {})
    }
    return found


def test_the_toolkit_types_exactly_the_wire_records() -> None:
    """The toolkit's record schemas are the wire's records, no more and no fewer."""
    assert set(schemas.RECORDS) == set(models.RECORDS) | CORE


def test_each_toolkit_schema_has_the_wire_fields_and_kinds() -> None:
    """A toolkit schema holds its wire record's fields in order, each of the declared kind."""
    for name, record in models.RECORDS.items():
        schema = schemas.RECORDS[name]
        assert tuple(schema.fields) == record.names, name
        for field in record.fields:
            if field.of is None:
                assert schema.fields[field.name] == field.kind, f"{name}.{field.name}"
            assert schema.categories.get(field.name, ()) == field.choices, f"{name}.{field.name}"
        assert schema.optional == {field.name for field in record.fields if field.optional}


def test_the_api_description_derives_every_wire_record() -> None:
    """/openapi.json's component of each wire record is the one derived from its wire row,
    and no resource module restates one."""
    restated = extra_schemas(modules())
    components = describe(platform_routes(), restated)["components"]["schemas"]
    for name, record in models.RECORDS.items():
        assert name not in restated, f"{name} is restated by a resource module"
        assert components[name] == component(record), name


def test_every_wire_record_is_answered_or_embedded() -> None:
    """Each wire record is what some endpoint answers with, or embedded in such a record."""
    answered = {row.record for row in wire.TABLE}
    embedded = set().union(*(_embedded(record) for record in models.RECORDS.values()))
    assert set(models.RECORDS) <= answered | embedded
