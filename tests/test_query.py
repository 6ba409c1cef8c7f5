"""The list-query grammar shared by platform and toolkit: rendering, parsing, validation."""

from __future__ import annotations

import pytest

from explorer.wire.query import (
    Condition,
    FieldKind,
    ListQuery,
    Order,
    QueryError,
    convert,
    format_order,
    format_where,
    parse_fields,
    parse_list_query,
    parse_order,
    parse_where,
)

FIELDS: dict[str, FieldKind] = {
    "id": "int",
    "online": "bool",
    "viewersTotal": "int",
    "languageId": "str",
    "score": "float",
}


def test_format_where_passes_strings_and_none_through() -> None:
    """A string ``where`` is sent as written; None stays None."""
    assert format_where("online:eq:1") == "online:eq:1"
    assert format_where(None) is None


def test_format_where_renders_a_dict() -> None:
    """Plain values mean eq, collections mean in, (op, value) pairs name the operator."""
    where = {"online": True, "languageId": ["en", "de"], "viewersTotal": ("gte", 1000)}
    assert format_where(where) == "online:eq:1,languageId:in:en;de,viewersTotal:gte:1000"


def test_format_where_renders_an_explicit_in_and_false() -> None:
    """``("in", [...])`` lists values; False renders as 0."""
    assert format_where({"id": ("in", [1, 2]), "online": False}) == "id:in:1;2,online:eq:0"


def test_format_order_joins_lists() -> None:
    """A list of order terms is comma-joined; a string passes through."""
    assert format_order(["viewersTotal:desc", "id:asc"]) == "viewersTotal:desc,id:asc"
    assert format_order("viewersTotal:DESC") == "viewersTotal:DESC"
    assert format_order(None) is None


def test_parse_where_reads_both_syntaxes() -> None:
    """Colon and the older dot form parse alike; neq means ne; in converts each value."""
    assert parse_where("online.eq.1,viewersTotal:neq:5,id:in:1;2", FIELDS) == (
        Condition("online", "eq", True),
        Condition("viewersTotal", "ne", 5),
        Condition("id", "in", (1, 2)),
    )


def test_parse_where_round_trips_format_where() -> None:
    """What the toolkit renders from a dict, the platform parses back."""
    text = format_where({"online": True, "languageId": ["en", "de"], "score": ("lt", 2.5)})
    assert text is not None
    assert parse_where(text, FIELDS) == (
        Condition("online", "eq", True),
        Condition("languageId", "in", ("en", "de")),
        Condition("score", "lt", 2.5),
    )


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ("nope:eq:1", "where.nope"),
        ("online:like:1", "where.online"),
        ("online", "where"),
        ("online:eq:maybe", "where"),
        ("viewersTotal:gt:many", "where"),
    ],
)
def test_parse_where_rejects_bad_terms(text: str, path: str) -> None:
    """Unknown fields or operators and unconvertible values raise QueryError with a path."""
    with pytest.raises(QueryError) as info:
        parse_where(text, FIELDS)
    assert info.value.param == "where"
    assert info.value.path == path


def test_parse_order_is_case_insensitive_and_defaults_to_asc() -> None:
    """``DESC`` works like ``desc``; a bare field sorts ascending."""
    assert parse_order("viewersTotal:DESC,id", FIELDS) == (
        Order("viewersTotal", True),
        Order("id", False),
    )


def test_parse_order_rejects_unknown_fields_and_directions() -> None:
    """An unknown field or direction raises QueryError."""
    with pytest.raises(QueryError):
        parse_order("nope:asc", FIELDS)
    with pytest.raises(QueryError):
        parse_order("id:sideways", FIELDS)


def test_parse_fields_dedupes_and_validates() -> None:
    """A projection keeps first occurrences and rejects unknown or empty lists."""
    assert parse_fields("id,token,id", ["id", "token"]) == ("id", "token")
    with pytest.raises(QueryError):
        parse_fields("id,secret", ["id"])
    with pytest.raises(QueryError):
        parse_fields(",", ["id"])


def test_parse_list_query_defaults() -> None:
    """No parameters give page 0, 50 rows, all scopes, with a count."""
    assert parse_list_query({}, FIELDS, FIELDS) == ListQuery()


def test_parse_list_query_reads_everything() -> None:
    """Every list parameter lands in the ListQuery."""
    query = parse_list_query(
        {
            "page": "2",
            "limit": "100",
            "fields": "id",
            "order": "id:desc",
            "where": "online:eq:true",
            "q": "kart",
            "scope": "Names",
            "noCount": "1",
        },
        FIELDS,
        FIELDS,
    )
    assert query == ListQuery(
        where=(Condition("online", "eq", True),),
        order=(Order("id", True),),
        fields=("id",),
        page=2,
        limit=100,
        q="kart",
        scope="names",
        count=False,
    )


@pytest.mark.parametrize(
    ("params", "param"),
    [
        ({"limit": "101"}, "limit"),
        ({"limit": "0"}, "limit"),
        ({"page": "-1"}, "page"),
        ({"page": "x"}, "page"),
        ({"scope": "everything"}, "scope"),
        ({"noCount": "perhaps"}, "noCount"),
    ],
)
def test_parse_list_query_rejects_out_of_range_values(params: dict[str, str], param: str) -> None:
    """Page size, page, scope and noCount are validated, naming the parameter."""
    with pytest.raises(QueryError) as info:
        parse_list_query(params, FIELDS, FIELDS)
    assert info.value.param == param


@pytest.mark.parametrize(
    ("kind", "raw", "value"),
    [
        ("bool", "TRUE", True),
        ("bool", "0", False),
        ("int", "-7", -7),
        ("float", "2.5", 2.5),
        ("str", "en", "en"),
    ],
)
def test_convert_accepts_each_kind(kind: FieldKind, raw: str, value: object) -> None:
    """Text converts to the field's kind."""
    assert convert(kind, raw) == value


@pytest.mark.parametrize(("kind", "raw"), [("int", str(2**63)), ("float", "inf"), ("float", "nan")])
def test_convert_rejects_out_of_range_numbers(kind: FieldKind, raw: str) -> None:
    """Integers beyond 64 bits and non-finite floats are refused."""
    with pytest.raises(QueryError):
        convert(kind, raw)
