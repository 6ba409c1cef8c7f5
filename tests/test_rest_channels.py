"""Channels as DataFrames against a real platform: paging, projection, filters, order, dtypes."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import httpx
import pandas as pd
import pytest
from pandas.testing import assert_frame_equal

import explorer
import explorer.rest.progress
from explorer.emulator import Platform


@pytest.fixture(scope="module")
def api(platform: Platform) -> Iterator[explorer.Client]:
    """A sync client on the shared platform, without progress bars."""
    with explorer.connect(platform.base_url, progress=False) as client:
        yield client


@pytest.fixture(scope="module")
def raw_ranking(platform: Platform) -> list[int]:
    """Channel ids by viewersTotal desc, fetched page by page with plain httpx."""
    ids: list[int] = []
    with httpx.Client(base_url=platform.base_url) as client:
        page = 0
        while True:
            params: dict[str, str | int] = {
                "order": "viewersTotal:desc",
                "page": page,
                "limit": 100,
            }
            rows = client.get("/channels", params=params).json()
            ids += [row["id"] for row in rows]
            if len(rows) < 100:
                return ids
            page += 1


def test_full_ranking_follows_every_page(api: explorer.Client, raw_ranking: list[int]) -> None:
    """Without limits, every page is fetched: the same channels in the same order."""
    ranking = api.channels(order="viewersTotal:desc")
    assert ranking.index.tolist() == raw_ranking
    assert ranking["viewersTotal"].is_monotonic_decreasing


def test_max_rows_stops_at_that_many_rows(api: explorer.Client, raw_ranking: list[int]) -> None:
    """max_rows returns the first rows of the ranking only."""
    top = api.channels(order="viewersTotal:desc", max_rows=130)
    assert top.index.tolist() == raw_ranking[:130]


def test_pages_caps_the_number_of_pages(api: explorer.Client, raw_ranking: list[int]) -> None:
    """pages=3 with a page size of 20 gives the first 60 rows."""
    top = api.channels(order="viewersTotal:desc", limit=20, pages=3)
    assert top.index.tolist() == raw_ranking[:60]


def test_concurrent_pages_equal_sequential_pages(platform: Platform) -> None:
    """Fetching pages concurrently yields exactly the frame fetched one page at a time."""

    async def rank(concurrency: int) -> pd.DataFrame:
        async with explorer.AsyncClient(
            platform.base_url, progress=False, concurrency=concurrency
        ) as client:
            return await client.channels(order="viewersTotal:desc", limit=25)

    assert_frame_equal(asyncio.run(rank(1)), asyncio.run(rank(8)))


def test_fields_returns_only_those_columns_typed(api: explorer.Client) -> None:
    """A projection gives just the named columns, with their declared dtypes."""
    top = api.channels(order="viewersTotal:desc", fields=["id", "token", "viewersTotal"], pages=1)
    assert list(top.columns) == ["token", "viewersTotal"]
    assert (top.index.dtype, top.index.name) == ("int64", "id")
    assert top.dtypes.astype(str).tolist() == ["str", "Int64"]


def test_fields_with_an_embedded_object_flattens_it(api: explorer.Client) -> None:
    """Projecting ``user`` brings the dotted ``user.*`` columns."""
    top = api.channels(fields="id,user", max_rows=5)
    assert top.columns[0] == "user.id" and "user.username" in top.columns
    assert all(c.startswith("user.") for c in top.columns)


def test_where_as_dict_equals_where_as_string(api: explorer.Client) -> None:
    """The dict form of ``where`` renders to the same filter as the string syntax."""
    by_dict = api.channels(where={"online": True, "viewersTotal": ("gte", 100)})
    by_text = api.channels(where="online:eq:1,viewersTotal:gte:100")
    assert_frame_equal(by_dict, by_text)
    assert len(by_dict) > 0
    assert by_dict["online"].all() and (by_dict["viewersTotal"] >= 100).all()


def test_where_with_a_list_means_in(api: explorer.Client) -> None:
    """A list value filters on membership."""
    found = api.channels(where={"languageId": ["en", "de"]})
    assert len(found) > 0
    assert set(found["languageId"].dropna().unique()) <= {"en", "de"}


def test_order_by_several_terms(api: explorer.Client) -> None:
    """A list of order terms sorts by each in turn."""
    ranked = api.channels(order=["viewersCurrent:asc", "id:desc"], fields="id,viewersCurrent")
    pairs = list(zip(ranked["viewersCurrent"], -ranked.index.to_series(), strict=True))
    assert pairs == sorted(pairs)


def test_listing_dtypes(api: explorer.Client) -> None:
    """A listing carries the declared dtypes: nullable ints, booleans, categories, UTC times."""
    frame = api.channels(max_rows=50)
    dtypes = frame.dtypes.astype(str)
    assert frame.index.dtype == "int64"
    assert dtypes[["viewersTotal", "typeId", "user.id"]].tolist() == ["Int64"] * 3
    assert dtypes[["online", "partnered", "user.verified"]].tolist() == ["boolean"] * 3
    assert dtypes[["audience", "languageId"]].tolist() == ["category"] * 2
    assert dtypes[["createdAt", "user.createdAt"]].tolist() == ["datetime64[ms, UTC]"] * 2
    assert dtypes[["token", "type.name"]].tolist() == ["str"] * 2
    assert list(frame["audience"].cat.categories[:3]) == ["family", "teen", "18+"]


def test_search_finds_a_channel_by_name(api: explorer.Client) -> None:
    """``q`` with ``scope="names"`` searches channel tokens."""
    found = api.channels(q="streamer", scope="names")
    assert "streamer" in found["token"].tolist()


def test_an_empty_result_keeps_the_columns(api: explorer.Client) -> None:
    """A filter matching nothing gives an empty frame with the full typed schema."""
    empty = api.channels(where={"viewersTotal": ("lt", -1)})
    full = api.channels(max_rows=1)
    assert empty.empty
    assert list(empty.columns) == list(full.columns)
    assert empty["viewersTotal"].dtype == "Int64"


def test_channel_by_id_and_by_token_is_the_same_row(api: explorer.Client) -> None:
    """One channel comes back as a one-row frame, whether asked by id or token."""
    by_token = api.channel("streamer").info()
    by_id = api.channel(int(by_token.index[0])).info()
    assert len(by_token) == 1
    assert_frame_equal(by_id, by_token)
    assert by_token["token"].iloc[0] == "streamer"


def test_channel_matches_its_row_in_the_listing(api: explorer.Client) -> None:
    """The single-channel frame lines up with the same channel's listing row."""
    one = api.channel("streamer").info()
    listed = api.channels(where={"token": "streamer"})
    assert_frame_equal(one, listed, check_categorical=False)


def test_channel_with_fields(api: explorer.Client) -> None:
    """``fields`` projects a single channel too."""
    one = api.channel("streamer").info(fields=["id", "viewersTotal"])
    assert list(one.columns) == ["viewersTotal"]


def test_channel_details_adds_media_columns(api: explorer.Client) -> None:
    """Details carry the channel plus its media resources, flattened."""
    details = api.channel("streamer").details()
    assert details["token"].iloc[0] == "streamer"
    assert {"thumbnail", "cover", "badge"} & {c.split(".")[0] for c in details.columns}


def test_progress_bar_reports_rows(
    platform: Platform, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A multi-page fetch reports its rows (as lines, stderr being captured here: every line
    due at once); progress=False reports nothing."""
    monkeypatch.setattr(explorer.rest.progress, "LINE_INTERVAL", 0.0)
    with explorer.connect(platform.base_url) as client:
        client.channels(limit=50)
        shown = capsys.readouterr().err
        client.channels(limit=50, progress=False)
        hidden = capsys.readouterr().err
    assert "/channels" in shown and "rows" in shown
    assert hidden == ""
