"""How a record is declared (:class:`Field`, :class:`Record`), and the fields of the core
records (Channel, User, Type) once: name, kind, nullability, whether lists filter and sort by
them, and the values of an enumeration.

The platform renders and validates by them (``explorer.emulator.shapes``: its columns, its
OpenAPI properties, what ``where``/``order`` of ``GET /channels`` accept) and the toolkit
types its frames by them (``explorer.rest.schemas``), so a new field is one row here; the other
records an endpoint answers with are declared the same way in ``models.py``. Pure data.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from explorer.wire.kinds import Kind
from explorer.wire.query import FieldKind


@dataclass(frozen=True, slots=True)
class Field:
    """One field of a record: its name (also its column), its kind, whether it may be null,
    whether a listing filters (``where``) and sorts (``order``) by it, its ``choices`` when it
    is an enumeration, and whether it is ``stored`` (or counted when the record is shown)."""

    name: str
    kind: Kind
    nullable: bool = False
    filter: bool = False
    choices: tuple[str, ...] = ()
    stored: bool = True
    #: A regular expression every value matches, and what it means in words (for errors).
    pattern: str = ""
    pattern_said: str = ""
    #: Whether the record may leave the field out, its column shown only when some record
    #: has it (what few callers see: a stream key, a client's secret).
    optional: bool = False
    #: Whether some answers leave the field out (a caller without the scope, an event of
    #: another kind), its column in every frame all the same (null where it is missing).
    sometimes: bool = False
    #: What the field means, for readers of the API description.
    doc: str = ""
    #: An embedded record, flattened into the record's columns by the toolkit: another
    #: record by name, or one of its own (a nested object without a name).
    of: Record | str | None = None
    #: The most characters a text holds (the platform refuses a longer one).
    longest: int | None = None
    #: JSON-schema words beyond what the kind says: an array's items, a bound, a format.
    schema: Mapping[str, Any] | None = None

    def refusal(self, value: object) -> str | None:
        """What is wrong with ``value`` as this field's value in a ``where`` (None: nothing):
        a value outside the choices or the pattern would silently match no row."""
        text = str(value)
        if self.choices and text not in self.choices:
            valid = ", ".join(map(repr, self.choices))
            return f"{self.name} is one of {valid}, not {text!r}."
        if self.pattern and re.fullmatch(self.pattern, text) is None:
            return f"{self.name} is {self.pattern_said}, not {text!r}."
        return None

    @property
    def filter_kind(self) -> FieldKind:
        """How a ``where`` value for this field is read (a category as text)."""
        kind = self.kind
        if kind in ("int", "float", "bool", "str", "time"):
            return kind
        if kind == "category":
            return "str"
        raise ValueError(f"{self.name}: a {kind} field cannot be filtered")


@dataclass(frozen=True, slots=True)
class Record:
    """A record an endpoint answers with: its ``name`` (an API description's component, the
    key the toolkit finds its schema by; empty for a nested object), its fields in column
    order, and the field that identifies it (the toolkit's frame index)."""

    name: str
    fields: tuple[Field, ...]
    index: str | None = None

    @property
    def names(self) -> tuple[str, ...]:
        """The field names, in order (a table's columns, say)."""
        return tuple(field.name for field in self.fields)


def _ids(*names: str) -> tuple[Field, ...]:
    return tuple(Field(name, "int", nullable=True) for name in names)


#: The Channel record's own fields, in column and rendering order.
CHANNEL: tuple[Field, ...] = (
    Field("id", "int", filter=True),
    Field("userId", "int", filter=True),
    Field("token", "str", filter=True),
    Field("name", "str", filter=True),
    Field("online", "bool", filter=True),
    Field("featured", "bool", filter=True),
    Field("partnered", "bool", filter=True),
    Field("suspended", "bool"),
    Field("interactive", "bool", filter=True),
    Field("hasVod", "bool", filter=True),
    Field("vodsEnabled", "bool", filter=True),
    Field("hasTranscodes", "bool", filter=True),
    Field("featureLevel", "int", filter=True),
    Field("ftl", "int", filter=True),
    Field("audience", "category", filter=True, choices=("family", "teen", "18+")),
    Field("viewersTotal", "int", filter=True),
    Field("viewersCurrent", "int", filter=True),
    Field("numFollowers", "int", filter=True),
    Field("description", "str", nullable=True),
    Field("typeId", "int", nullable=True, filter=True),
    Field(
        "languageId",
        "category",
        nullable=True,
        filter=True,
        pattern="[a-z]{2}",
        pattern_said="a two-letter ISO 639-1 code such as 'en' or 'de' (the languages "
        "listing, api.languages(), names those in use)",
    ),
    *_ids("interactiveGameId", "transcodingProfileId", "coverId", "thumbnailId"),
    *_ids("badgeId", "hosteeId"),
    Field("bannerUrl", "str", nullable=True),
    Field("costreamId", "str", nullable=True),
    Field("createdAt", "time", filter=True),
    Field("updatedAt", "time", filter=True),
    Field("deletedAt", "time", nullable=True),
)
#: Channel fields only its owner is shown.
CHANNEL_PRIVATE: tuple[Field, ...] = (Field("streamKey", "str", optional=True),)

#: The User record's fields, in column and rendering order.
USER: tuple[Field, ...] = (
    Field("id", "int"),
    Field("username", "str"),
    Field("level", "int"),
    Field("experience", "int"),
    Field("sparks", "int"),
    Field("avatarUrl", "str", nullable=True),
    Field("bio", "str", nullable=True),
    Field("social", "object"),
    Field("primaryTeam", "int", nullable=True),
    Field("verified", "bool"),
    Field("createdAt", "time"),
    Field("updatedAt", "time"),
    Field("deletedAt", "time", nullable=True),
)

#: The Type record's fields (a game or category); its live counts come from the channels.
TYPE: tuple[Field, ...] = (
    Field("id", "int"),
    Field("name", "str"),
    Field("parent", "str"),
    Field("description", "str", nullable=True),
    Field("source", "str"),
    Field("viewersCurrent", "int", stored=False),
    Field("coverUrl", "str", nullable=True),
    Field("backgroundUrl", "str", nullable=True),
    Field("online", "int", stored=False),
    Field("availableAt", "time", nullable=True),
)
