"""Listing pages read by Arrow: the same frame as orjson + ``tables.frame`` of the same pages."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import httpx
import orjson
import pytest
from pandas.testing import assert_frame_equal

import explorer
from explorer.emulator import Platform
from explorer.rest import pagecolumns, schemas, tables
from tests.test_tables import CHANNEL_A, CHANNEL_B


def pages_of(platform: Platform, **query: Any) -> list[bytes]:
    """Every page of the platform's channel ranking, 100 channels each, as bytes."""
    bodies: list[bytes] = []
    with httpx.Client(base_url=platform.base_url) as http:
        while True:
            answer = http.get("/channels", params={**query, "page": len(bodies), "limit": 100})
            answer.raise_for_status()
            bodies.append(answer.content)
            if len(orjson.loads(answer.content)) < 100:
                return bodies


def old_way(bodies: list[bytes], schema: schemas.Schema, fields: Any = None) -> Any:
    """The frame as the toolkit built it before: orjson records and ``tables.frame``."""
    records = [record for body in bodies for record in orjson.loads(body)]
    return tables.frame(records, schema, fields=fields)


def native(bodies: list[bytes], schema: schemas.Schema, fields: Any = None) -> Any:
    """The frame from pages Arrow read (asserting each was), and the pages."""
    reader = pagecolumns.Reader(schema, fields)
    pages = [reader.columns(body) for body in bodies]
    assert all(page is not None for page in pages)
    return reader.frame([page for page in pages if page is not None])


def body(*records: Any) -> bytes:
    """A page of ``records`` (the standard library writes integers beyond 64 bits too)."""
    return json.dumps(list(records), separators=(",", ":")).encode()


def test_platform_ranking_read_by_arrow_equals_the_old_frame(platform: Platform) -> None:
    """Every column and dtype of the platform's whole ranking, read natively, as before."""
    bodies = pages_of(platform, order="viewersTotal:desc")
    expected = old_way(bodies, schemas.CHANNEL)
    # The shared platform has 1,000 seeded channels plus those other tests' accounts added.
    total = httpx.get(f"{platform.base_url}/channels", params={"limit": 1}).headers
    assert len(expected) == int(total["x-total-count"]) >= 1000 and "user.social" in expected
    assert_frame_equal(native(bodies, schemas.CHANNEL), expected, check_exact=True)


def test_projection_read_by_arrow_equals_the_old_frame(platform: Platform) -> None:
    """A projection with an embedded object brings the same columns in the same order."""
    fields = ("token", "user", "viewersTotal", "id")
    bodies = pages_of(platform, order="id:asc", fields=",".join(fields))
    assert_frame_equal(
        native(bodies, schemas.CHANNEL, fields), old_way(bodies, schemas.CHANNEL, fields)
    )


def test_nullable_and_nested_fields_keep_their_dtypes() -> None:
    """Null embedded objects, all-null columns and free-form objects read as before."""
    a, b = copy.deepcopy(CHANNEL_A), copy.deepcopy(CHANNEL_B)
    b["user"]["social"] = {"twitter": "https://twitter.com/elzen", "links": ["a", "b"]}
    pages = [body(a, b), body(b), body()]
    frame = native(pages, schemas.CHANNEL)
    assert_frame_equal(frame, old_way(pages, schemas.CHANNEL))
    assert str(frame["type.name"].dtype) == "str" and frame["type.name"].isna().sum() == 2
    assert str(frame["coverId"].dtype) == "Int64" and frame["coverId"].isna().all()
    assert frame["user.social"].tolist()[0] == {"twitter": "https://twitter.com/streamer"}


@pytest.mark.parametrize(
    "change",
    [
        pytest.param({"viewersTotal": "many"}, id="text in an integer column"),
        pytest.param({"viewersTotal": 12.0}, id="an integral float"),
        pytest.param({"name": 7}, id="a number in a text column"),
        pytest.param({"online": 1}, id="a number in a flag column"),
        pytest.param({"viewersTotal": 2**70}, id="beyond int64"),
        pytest.param({"extra": {"a": 1}}, id="an undeclared field"),
        pytest.param({"streamKey": "k"}, id="an optional field"),
        pytest.param({"type": {**CHANNEL_A["type"], "new": 1}}, id="undeclared embedded"),
        pytest.param(
            {"user": {**CHANNEL_A["user"], "social": {"at": "2020-01-01T00:00Z"}}},
            id="a free-form time",
        ),
    ],
)
def test_what_arrow_cannot_promise_goes_the_old_way(change: dict[str, Any]) -> None:
    """A page Arrow would read differently is refused, and the frame is the old one."""
    pages = [body(CHANNEL_A), body({**CHANNEL_B, **change})]
    reader = pagecolumns.Reader(schemas.CHANNEL)
    assert reader.columns(pages[1]) is None
    read = [reader.columns(pages[0]), pagecolumns.Page(pages[1], None, 1, orjson.loads(pages[1]))]
    assert_frame_equal(
        reader.frame([page for page in read if page is not None]),
        old_way(pages, schemas.CHANNEL),
    )


def test_toolkit_ranking_is_the_old_frame(
    make_platform: Callable[..., Platform], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``api.channels()`` reads its pages natively and gives what orjson + ``tables.frame``
    gave for the same ranking (a world whose clock stands still, so both see one ranking)."""
    still = make_platform(channels=300, rate_limits=False, clock=lambda: 1.6e9)

    def refuse(*_: Any) -> None:
        raise AssertionError("a page of the platform's went the old way")

    with explorer.Client(still.base_url, progress=False) as api, monkeypatch.context() as patch:
        patch.setattr(pagecolumns.Reader, "_old", refuse)
        frame = api.channels(order="viewersTotal:desc", max_rows=250)
    expected = old_way(pages_of(still, order="viewersTotal:desc"), schemas.CHANNEL)
    assert_frame_equal(frame, expected.iloc[:250])


def test_a_null_member_of_a_free_form_object_is_left_out() -> None:
    """Arrow reads an absent member and a null one alike: ``{"a": null}`` reads as ``{}``."""
    user = {**CHANNEL_A["user"], "social": {"twitter": None}}
    frame = native([body({**CHANNEL_A, "user": user})], schemas.CHANNEL)
    assert frame["user.social"].tolist() == [{}]


def test_pages_read_in_one_call_are_the_pages_read_alone() -> None:
    """Several pages read by one Arrow call give each page's own columns; a page Arrow cannot
    read leaves the others read natively."""
    a, b = copy.deepcopy(CHANNEL_A), copy.deepcopy(CHANNEL_B)
    b["user"]["social"] = {"links": ["x"]}
    good = [body(a, b), body(b), body()]
    bad = body({**CHANNEL_B, "viewersTotal": "many"})
    reader = pagecolumns.Reader(schemas.CHANNEL)
    alone = reader.frame([page for page in map(reader.columns, good) if page is not None])
    for batch in (good, [*good, bad]):
        together = reader.pages(batch)
        assert [page is None for page in together] == [each == bad for each in batch]
        read = [page for page in together if page is not None]
        assert_frame_equal(reader.frame(read), alone, check_exact=True)
