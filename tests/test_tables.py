"""JSON records to typed DataFrames: golden frames built by hand from reference.md shapes."""

from __future__ import annotations

import copy
from typing import Any

import pandas as pd
import pytest
from pandas.testing import assert_frame_equal, assert_series_equal

from explorer.rest import schemas, tables

# -- records written from reference.md (Channel, User, Type), not produced by the platform ----

TYPE_3: dict[str, Any] = {
    "id": 3,
    "name": "Star Raiders",
    "parent": "Games",
    "description": "Space shooter.",
    "source": "player",
    "viewersCurrent": 120,
    "coverUrl": "https://example.org/covers/3.png",
    "backgroundUrl": None,
    "online": 4,
    "availableAt": "2004-02-23T03:29:01.523Z",
}
USER_1: dict[str, Any] = {
    "id": 1,
    "username": "streamer",
    "level": 13,
    "experience": 6972,
    "sparks": 28482,
    "avatarUrl": "/api/v1/users/1/avatar",
    "bio": None,
    "social": {"twitter": "https://twitter.com/streamer"},
    "primaryTeam": None,
    "verified": True,
    "createdAt": "2018-02-22T05:53:23.245Z",
    "updatedAt": "2020-05-24T15:41:10.560Z",
    "deletedAt": None,
}
USER_94: dict[str, Any] = {
    **USER_1,
    "id": 94,
    "username": "elzen",
    "level": 2,
    "experience": 40,
    "sparks": 0,
    "avatarUrl": None,
    "bio": "hi",
    "social": {},
    "primaryTeam": 7,
    "verified": False,
    "createdAt": "2016-04-09T07:37:51.000Z",
    "updatedAt": "2016-04-09T07:37:51.000Z",
}
CHANNEL_A: dict[str, Any] = {
    "id": 100164,
    "userId": 1,
    "token": "streamer",
    "name": "First challenge",
    "online": True,
    "featured": False,
    "partnered": True,
    "suspended": False,
    "interactive": False,
    "hasVod": False,
    "vodsEnabled": True,
    "hasTranscodes": False,
    "featureLevel": 0,
    "ftl": 0,
    "audience": "teen",
    "viewersTotal": 250000,
    "viewersCurrent": 479,
    "numFollowers": 21738,
    "description": "<p>Welcome!</p>",
    "typeId": 3,
    "languageId": "en",
    "interactiveGameId": None,
    "transcodingProfileId": 1,
    "coverId": None,
    "thumbnailId": 55,
    "badgeId": None,
    "hosteeId": None,
    "bannerUrl": None,
    "costreamId": None,
    "createdAt": "2016-04-09T07:37:51.000Z",
    "updatedAt": "2020-01-02T03:04:05.678Z",
    "deletedAt": None,
    "type": TYPE_3,
    "user": USER_1,
}
CHANNEL_B: dict[str, Any] = {
    **CHANNEL_A,
    "id": 100293,
    "userId": 94,
    "token": "elzen",
    "name": "Hardcore",
    "online": False,
    "partnered": False,
    "audience": "18+",
    "viewersTotal": 4397,
    "viewersCurrent": 0,
    "numFollowers": 347,
    "description": None,
    "typeId": None,
    "languageId": None,
    "transcodingProfileId": None,
    "thumbnailId": None,
    "createdAt": "2017-06-01T00:00:00.000Z",
    "updatedAt": "2017-06-02T00:00:00.000Z",
    "type": None,
    "user": USER_94,
}


def ints(*values: int | None) -> Any:
    return pd.array(list(values), dtype="Int64")


def texts(*values: str | None) -> Any:
    return pd.array(list(values), dtype="str")


def flags(*values: bool | None) -> Any:
    return pd.array(list(values), dtype="boolean")


def times(*values: str | None) -> Any:
    return (
        pd.DatetimeIndex([pd.Timestamp(v) if v else pd.NaT for v in values])
        .tz_localize(None)
        .tz_localize("UTC")
        .as_unit("ms")
        .array
    )


def objects(*values: Any) -> Any:
    return pd.Series(list(values), dtype=object).array


def ids(*values: int) -> pd.Index:
    return pd.Index(list(values), dtype="int64", name="id")


def expected_channels() -> pd.DataFrame:
    """The two channels above, column by column, as the toolkit promises them."""
    return pd.DataFrame(
        {
            "userId": ints(1, 94),
            "token": texts("streamer", "elzen"),
            "name": texts("First challenge", "Hardcore"),
            "online": flags(True, False),
            "featured": flags(False, False),
            "partnered": flags(True, False),
            "suspended": flags(False, False),
            "interactive": flags(False, False),
            "hasVod": flags(False, False),
            "vodsEnabled": flags(True, True),
            "hasTranscodes": flags(False, False),
            "featureLevel": ints(0, 0),
            "ftl": ints(0, 0),
            "audience": pd.Categorical(["teen", "18+"], categories=["family", "teen", "18+"]),
            "viewersTotal": ints(250000, 4397),
            "viewersCurrent": ints(479, 0),
            "numFollowers": ints(21738, 347),
            "description": texts("<p>Welcome!</p>", None),
            "typeId": ints(3, None),
            "languageId": pd.Categorical(["en", None], categories=["en"]),
            "interactiveGameId": ints(None, None),
            "transcodingProfileId": ints(1, None),
            "coverId": ints(None, None),
            "thumbnailId": ints(55, None),
            "badgeId": ints(None, None),
            "hosteeId": ints(None, None),
            "bannerUrl": texts(None, None),
            "costreamId": texts(None, None),
            "createdAt": times("2016-04-09T07:37:51.000Z", "2017-06-01T00:00:00.000Z"),
            "updatedAt": times("2020-01-02T03:04:05.678Z", "2017-06-02T00:00:00.000Z"),
            "deletedAt": times(None, None),
            "type.id": ints(3, None),
            "type.name": texts("Star Raiders", None),
            "type.parent": texts("Games", None),
            "type.description": texts("Space shooter.", None),
            "type.source": texts("player", None),
            "type.viewersCurrent": ints(120, None),
            "type.coverUrl": texts("https://example.org/covers/3.png", None),
            "type.backgroundUrl": texts(None, None),
            "type.online": ints(4, None),
            "type.availableAt": times("2004-02-23T03:29:01.523Z", None),
            "user.id": ints(1, 94),
            "user.username": texts("streamer", "elzen"),
            "user.level": ints(13, 2),
            "user.experience": ints(6972, 40),
            "user.sparks": ints(28482, 0),
            "user.avatarUrl": texts("/api/v1/users/1/avatar", None),
            "user.bio": texts(None, "hi"),
            "user.social": objects({"twitter": "https://twitter.com/streamer"}, {}),
            "user.primaryTeam": ints(None, 7),
            "user.verified": flags(True, False),
            "user.createdAt": times("2018-02-22T05:53:23.245Z", "2016-04-09T07:37:51.000Z"),
            "user.updatedAt": times("2020-05-24T15:41:10.560Z", "2016-04-09T07:37:51.000Z"),
            "user.deletedAt": times(None, None),
        },
        index=ids(100164, 100293),
    )


def test_channels_golden_frame() -> None:
    """Channel records flatten to the declared dotted columns, dtypes and id index."""
    assert_frame_equal(tables.frame([CHANNEL_A, CHANNEL_B], schemas.CHANNEL), expected_channels())


def test_frame_leaves_records_untouched() -> None:
    """Building a frame does not modify the records it was given."""
    records = [copy.deepcopy(CHANNEL_A)]
    tables.frame(records, schemas.CHANNEL)
    assert records == [CHANNEL_A]


def test_empty_listing_keeps_columns_and_dtypes() -> None:
    """No records still give every declared column with its dtype."""
    empty = tables.frame([], schemas.CHANNEL)
    golden = expected_channels()
    assert list(empty.columns) == list(golden.columns)
    assert_series_equal(
        empty.dtypes.drop(["audience", "languageId"]),
        golden.dtypes.drop(["audience", "languageId"]),
    )
    assert empty.index.dtype == "int64" and empty.index.name == "id"


def test_projection_keeps_only_the_named_fields_in_order() -> None:
    """With fields= only those columns come back, typed, in the order asked."""
    records = [
        {"viewersTotal": 250000, "token": "streamer"},
        {"viewersTotal": 4397, "token": "elzen"},
    ]
    got = tables.frame(records, schemas.CHANNEL, fields=["viewersTotal", "token"])
    expected = pd.DataFrame(
        {"viewersTotal": ints(250000, 4397), "token": texts("streamer", "elzen")}
    )
    assert_frame_equal(got, expected)


def test_projection_of_an_embedded_object_brings_its_columns() -> None:
    """Projecting ``type`` gives all the ``type.*`` columns."""
    records: list[dict[str, Any]] = [{"id": 100164, "type": TYPE_3}, {"id": 100293, "type": None}]
    got = tables.frame(records, schemas.CHANNEL, fields=["id", "type"])
    assert_frame_equal(got, expected_channels().filter(like="type."))


def test_optional_column_appears_only_when_present() -> None:
    """``streamKey`` (the owner's view) is a column only when a record has it."""
    assert "streamKey" not in tables.frame([CHANNEL_A], schemas.CHANNEL).columns
    owned = tables.frame([{**CHANNEL_A, "streamKey": "100164-abc"}], schemas.CHANNEL)
    assert owned["streamKey"].tolist() == ["100164-abc"]


def test_undeclared_fields_are_kept_with_inferred_dtypes() -> None:
    """Fields the schema does not know come last, flattened and typed by their values."""
    extra = {
        "score": 1.5,
        "rank": 2,
        "seenAt": "2020-01-01T00:00:00.000Z",
        "badge": {"id": 9, "url": "/b/9"},
        "tags": ["a", "b"],
    }
    got = tables.frame([{**CHANNEL_A, **extra}], schemas.CHANNEL)
    expected = pd.DataFrame(
        {
            "score": pd.Series([1.5], dtype="float64").array,
            "rank": ints(2),
            "seenAt": times("2020-01-01T00:00:00.000Z"),
            "badge.id": ints(9),
            "badge.url": texts("/b/9"),
            "tags": objects(["a", "b"]),
        },
        index=ids(100164),
    )
    assert_frame_equal(got[list(expected.columns)], expected)
    assert list(got.columns[-6:]) == list(expected.columns)


def test_enum_values_outside_the_declared_categories_are_kept() -> None:
    """An audience the schema does not list becomes an extra category, not a missing value."""
    got = tables.frame([{**CHANNEL_A, "audience": "kids"}], schemas.CHANNEL)
    assert list(got["audience"].cat.categories) == ["family", "teen", "18+", "kids"]
    assert got["audience"].tolist() == ["kids"]


def test_a_missing_field_beside_an_extra_one_keeps_both_columns() -> None:
    """A record lacking a declared field and holding an undeclared one (as many fields as the
    schema's) gives a missing value in the first column and the extra column."""
    swapped = {key: value for key, value in CHANNEL_B.items() if key != "name"}
    got = tables.frame([CHANNEL_A, {**swapped, "rank": 2}], schemas.CHANNEL)
    assert got["name"].tolist()[0] == CHANNEL_A["name"] and pd.isna(got["name"].iloc[1])
    assert pd.isna(got["rank"].iloc[0]) and got["rank"].iloc[1] == 2 and got.columns[-1] == "rank"


def test_users_golden_frame() -> None:
    """User records become a frame indexed by user id with declared dtypes."""
    expected = pd.DataFrame(
        {
            "username": texts("streamer", "elzen"),
            "level": ints(13, 2),
            "experience": ints(6972, 40),
            "sparks": ints(28482, 0),
            "avatarUrl": texts("/api/v1/users/1/avatar", None),
            "bio": texts(None, "hi"),
            "social": objects({"twitter": "https://twitter.com/streamer"}, {}),
            "primaryTeam": ints(None, 7),
            "verified": flags(True, False),
            "createdAt": times("2018-02-22T05:53:23.245Z", "2016-04-09T07:37:51.000Z"),
            "updatedAt": times("2020-05-24T15:41:10.560Z", "2016-04-09T07:37:51.000Z"),
            "deletedAt": times(None, None),
        },
        index=ids(1, 94),
    )
    assert_frame_equal(tables.frame([USER_1, USER_94], schemas.USER), expected)


def test_types_golden_frame() -> None:
    """Type records become a frame indexed by type id."""
    expected = pd.DataFrame(
        {
            "name": texts("Star Raiders"),
            "parent": texts("Games"),
            "description": texts("Space shooter."),
            "source": texts("player"),
            "viewersCurrent": ints(120),
            "coverUrl": texts("https://example.org/covers/3.png"),
            "backgroundUrl": texts(None),
            "online": ints(4),
            "availableAt": times("2004-02-23T03:29:01.523Z"),
        },
        index=ids(3),
    )
    assert_frame_equal(tables.frame([TYPE_3], schemas.TYPE), expected)


def test_current_user_flattens_channel_and_keeps_groups() -> None:
    """The current user's channel flattens to ``channel.*``; groups stay one object column."""
    channel = {k: v for k, v in CHANNEL_A.items() if k != "user"}
    record = {
        **USER_1,
        "channel": channel,
        "groups": [{"id": 1, "name": "User"}],
        "email": "streamer@example.org",
        "preferences": {"chat:sounds:play": True},
    }
    got = tables.frame([record], schemas.CURRENT_USER)
    golden = expected_channels().iloc[:1]
    assert got["channel.id"].tolist() == [100164]
    assert_series_equal(
        got["channel.viewersTotal"], golden["viewersTotal"], check_names=False, check_index=False
    )
    assert got["channel.type.name"].tolist() == ["Star Raiders"]
    assert got["groups"].tolist() == [[{"id": 1, "name": "User"}]]
    assert got["email"].dtype == "str"
    assert not any(c.startswith("channel.user.") for c in got.columns)


def test_generic_frame_infers_dtypes_and_uses_id_as_index() -> None:
    """Without a schema every field is inferred and ``id`` becomes the index."""
    got = tables.frame([{"id": 2, "name": "x", "ok": True}, {"id": 5, "name": None, "ok": None}])
    expected = pd.DataFrame({"name": texts("x", None), "ok": flags(True, None)}, index=ids(2, 5))
    assert_frame_equal(got, expected)


def test_generic_frame_without_id_has_a_range_index() -> None:
    """Records without ``id`` keep a plain range index."""
    got = tables.frame([{"slug": "a", "sparks": 10}, {"slug": "b", "sparks": 20}])
    assert_frame_equal(got, pd.DataFrame({"slug": texts("a", "b"), "sparks": ints(10, 20)}))


@pytest.mark.parametrize(
    "stamps",
    [
        ["2020-01-01T00:00:02.000Z", "2020-01-01T00:00:00.000Z", "2020-01-01T00:00:01.000Z"],
        [1577836802000, 1577836800000, 1577836801000],
    ],
    ids=["iso", "epoch-ms"],
)
def test_time_series_has_a_sorted_utc_datetime_index(stamps: list[Any]) -> None:
    """Time-series records come back sorted on a UTC DatetimeIndex (ISO text or epoch ms)."""
    records = [{"time": t, "viewers": v} for t, v in zip(stamps, [3, 1, 2], strict=True)]
    got = tables.time_series(records)
    index = (
        pd.DatetimeIndex(
            ["2020-01-01T00:00:00", "2020-01-01T00:00:01", "2020-01-01T00:00:02"], name="time"
        )
        .tz_localize("UTC")
        .as_unit("ms")
    )
    assert_frame_equal(got, pd.DataFrame({"viewers": ints(1, 2, 3)}, index=index))


def test_timestamps_with_an_offset_are_converted_to_utc() -> None:
    """ISO timestamps with a UTC offset (not only ``Z``) land on the same UTC instant."""
    schema = schemas.Schema({"at": "time"})
    got = tables.frame([{"at": "2020-01-01T02:00:00+02:00"}, {"at": None}], schema)
    assert_frame_equal(got, pd.DataFrame({"at": times("2020-01-01T00:00:00Z", None)}))
