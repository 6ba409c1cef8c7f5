"""GET /channels and friends: paging, ordering, filters, search, projection, bad input."""

from __future__ import annotations

import httpx
import pytest

from explorer.emulator import Platform
from tests.conftest import SMALL_WORLD

CHANNEL_KEYS = {
    "id",
    "userId",
    "token",
    "name",
    "online",
    "featured",
    "partnered",
    "suspended",
    "interactive",
    "hasVod",
    "vodsEnabled",
    "hasTranscodes",
    "featureLevel",
    "ftl",
    "audience",
    "viewersTotal",
    "viewersCurrent",
    "numFollowers",
    "description",
    "typeId",
    "languageId",
    "interactiveGameId",
    "transcodingProfileId",
    "coverId",
    "thumbnailId",
    "badgeId",
    "hosteeId",
    "bannerUrl",
    "costreamId",
    "createdAt",
    "updatedAt",
    "deletedAt",
    "type",
    "user",
}
USER_KEYS = {
    "id",
    "username",
    "level",
    "experience",
    "sparks",
    "avatarUrl",
    "bio",
    "social",
    "primaryTeam",
    "verified",
    "createdAt",
    "updatedAt",
    "deletedAt",
}
TYPE_KEYS = {
    "id",
    "name",
    "parent",
    "description",
    "source",
    "viewersCurrent",
    "coverUrl",
    "backgroundUrl",
    "online",
    "availableAt",
}


def get(platform: Platform, path: str, **params: object) -> httpx.Response:
    return httpx.get(platform.base_url + path, params=params, timeout=10)  # type: ignore[arg-type]


def test_default_page_holds_50_channels(platform: Platform) -> None:
    """Without a limit a page holds 50 channels and the total is in X-Total-Count."""
    response = get(platform, "/channels")
    assert response.status_code == 200
    assert len(response.json()) == 50
    assert response.headers["X-Total-Count"] == str(SMALL_WORLD)


def test_channel_object_has_the_reference_shape(platform: Platform) -> None:
    """A listed channel carries every reference.md field, with embedded user and type."""
    channel = get(platform, "/channels", where="typeId:gt:0", limit=1).json()[0]
    assert set(channel) == CHANNEL_KEYS
    assert set(channel["user"]) == USER_KEYS
    assert set(channel["type"]) == TYPE_KEYS
    assert channel["id"] != channel["userId"]
    assert channel["createdAt"].endswith("Z") and len(channel["createdAt"]) == 24


def test_successive_pages_are_slices_of_one_ordering(platform: Platform) -> None:
    """Pages of 50 concatenate to the same ranking as pages of 100."""
    small = [
        c["id"]
        for p in range(6)
        for c in get(platform, "/channels", order="viewersTotal:desc", page=p).json()
    ]
    large = [
        c["id"]
        for p in range(3)
        for c in get(platform, "/channels", order="viewersTotal:desc", page=p, limit=100).json()
    ]
    assert small == large
    assert len(set(small)) == 300


def test_ranking_is_sorted_with_ties_broken_by_id(platform: Platform) -> None:
    """order=viewersTotal:DESC sorts descending and breaks ties by ascending id."""
    rows = [
        (c["viewersTotal"], c["id"])
        for p in range(3)
        for c in get(platform, "/channels", order="viewersTotal:DESC", page=p, limit=100).json()
    ]
    assert rows == sorted(rows, key=lambda r: (-r[0], r[1]))


def test_several_order_fields(platform: Platform) -> None:
    """order accepts several comma-separated fields, applied left to right."""
    rows = get(platform, "/channels", order="online:desc,numFollowers:asc", limit=100).json()
    keys = [(not c["online"], c["numFollowers"], c["id"]) for c in rows]
    assert keys == sorted(keys)


@pytest.mark.parametrize(
    ("where", "check"),
    [
        ("online:eq:1", lambda c: c["online"] is True),
        ("online.eq.true", lambda c: c["online"] is True),
        ("online:eq:false", lambda c: c["online"] is False),
        ("viewersTotal:gte:100", lambda c: c["viewersTotal"] >= 100),
        ("viewersTotal:lt:5,online:ne:1", lambda c: c["viewersTotal"] < 5 and not c["online"]),
        ("languageId:in:de;fr", lambda c: c["languageId"] in ("de", "fr")),
        ("audience:neq:teen", lambda c: c["audience"] != "teen"),
        ("viewersTotal.lte.10", lambda c: c["viewersTotal"] <= 10),
    ],
)
def test_where_filters(platform: Platform, where: str, check: object) -> None:
    """Each where form and operator keeps exactly the matching channels."""
    response = get(platform, "/channels", where=where, limit=100)
    rows = response.json()
    assert rows and all(check(c) for c in rows)  # type: ignore[operator]
    pages = range(SMALL_WORLD // 100)
    everything = [c for p in pages for c in get(platform, "/channels", page=p, limit=100).json()]
    assert int(response.headers["X-Total-Count"]) == sum(1 for c in everything if check(c))  # type: ignore[operator]


def test_fields_projects_the_response(platform: Platform) -> None:
    """fields=id,viewersTotal returns only those keys."""
    rows = get(platform, "/channels", fields="id,viewersTotal", limit=5).json()
    assert [set(r) for r in rows] == [{"id", "viewersTotal"}] * 5


def test_no_count_skips_the_total(platform: Platform) -> None:
    """noCount=1 leaves out X-Total-Count."""
    assert "X-Total-Count" not in get(platform, "/channels", noCount=1).headers


def test_search_by_name(platform: Platform) -> None:
    """q with scope=names finds the channel by its token."""
    rows = get(platform, "/channels", q="stream", scope="names").json()
    assert "streamer" in [c["token"] for c in rows]
    assert all("stream" in c["token"].lower() for c in rows)


def test_channels_without_a_value_come_first_ascending_and_last_descending(
    platform: Platform,
) -> None:
    """Ordered by a field some channels lack (languageId), those without it lead in ascending
    order and trail in descending order, on every engine (SQLite's order of NULLs)."""
    up = get(platform, "/channels", order="languageId:asc", limit=5).json()
    down = get(platform, "/channels", order="languageId:desc", limit=5).json()
    assert up[0]["languageId"] is None and down[0]["languageId"] is not None


def test_search_by_type_name(platform: Platform) -> None:
    """q with scope=types matches the channel's type name."""
    rows = get(platform, "/channels", q="chess", scope="types", limit=100).json()
    assert rows and all(c["type"]["name"] == "Chess" for c in rows)


def test_search_treats_wildcards_literally(platform: Platform) -> None:
    """A % in q is a literal character, not a LIKE wildcard."""
    assert get(platform, "/channels", q="%", scope="names").json() == []


@pytest.mark.parametrize(
    ("params", "path"),
    [
        ({"where": "bogus:eq:1"}, "where.bogus"),
        ({"where": "viewersTotal:like:1"}, "where.viewersTotal"),
        ({"where": "viewersTotal:gt:many"}, "where"),
        ({"where": "online:eq:maybe"}, "where"),
        ({"where": "justonepart"}, "where"),
        ({"limit": "1000"}, "limit"),
        ({"limit": "0"}, "limit"),
        ({"page": "-1"}, "page"),
        ({"page": "x"}, "page"),
        ({"order": "bogus:desc"}, "order.bogus"),
        ({"order": "viewersTotal:sideways"}, "order"),
        ({"fields": "id,password"}, "fields.password"),
        ({"scope": "everything"}, "scope"),
        ({"noCount": "perhaps"}, "noCount"),
    ],
)
def test_bad_list_parameters_are_400(platform: Platform, params: dict[str, str], path: str) -> None:
    """Every malformed list parameter answers 400 with a JSON body naming it."""
    response = get(platform, "/channels", **params)
    assert response.status_code == 400
    body = response.json()
    assert body["statusCode"] == 400 and body["error"] == "Bad Request" and body["message"]
    assert body["details"][0]["path"] == path


def test_channel_by_id_and_by_token_agree(platform: Platform) -> None:
    """GET /channels/{token} and /channels/{id} return the same channel."""
    by_token = get(platform, "/channels/streamer").json()
    assert get(platform, f"/channels/{by_token['id']}").json() == by_token
    assert by_token["token"] == "streamer" and by_token["online"] is True


def test_single_channel_accepts_fields(platform: Platform) -> None:
    """GET /channels/{id}?fields=viewersTotal returns only that field."""
    assert get(platform, "/channels/streamer", fields="viewersTotal").json().keys() == {
        "viewersTotal"
    }


def test_stream_key_is_not_public(platform: Platform) -> None:
    """The stream key is never in a channel seen by someone other than its owner."""
    assert "streamKey" not in get(platform, "/channels/streamer").json()


def test_owner_sees_own_stream_key(platform: Platform, signed_in: object) -> None:
    """The owner's own view of the channel includes streamKey."""
    client = signed_in(platform.base_url, "streamer")  # type: ignore[operator]
    assert client.get("/channels/streamer").json()["streamKey"]


def test_unknown_channel_is_404(platform: Platform) -> None:
    """An unknown channel answers 404 with the platform's error body."""
    response = get(platform, "/channels/nosuchchannel")
    assert response.status_code == 404
    assert response.json() == {
        "statusCode": 404,
        "error": "Not Found",
        "message": "Channel not found.",
    }


def test_channel_details_add_media_resources(platform: Platform) -> None:
    """GET /channels/{id}/details is the channel plus thumbnail, cover and badge."""
    details = get(platform, "/channels/streamer/details").json()
    assert {"thumbnail", "cover", "badge"} <= set(details)
    assert details["id"] == get(platform, "/channels/streamer").json()["id"]


def test_types_count_live_channels(platform: Platform) -> None:
    """A type's online count equals the online channels listed with that type."""
    types = get(platform, "/types").json()
    busiest = max(types, key=lambda t: t["online"])
    listed = get(platform, "/channels", where=f"typeId:eq:{busiest['id']},online:eq:1", limit=100)
    assert int(listed.headers["X-Total-Count"]) == busiest["online"]
    assert get(platform, f"/types/{busiest['id']}").json() == busiest


def test_unknown_path_and_method_get_json_errors(platform: Platform) -> None:
    """Unknown paths answer 404 and wrong methods 405, both as JSON errors."""
    missing = get(platform, "/nothing-here")
    assert missing.status_code == 404 and missing.json()["statusCode"] == 404
    wrong = httpx.delete(platform.base_url + "/channels")
    assert wrong.status_code == 405 and wrong.json()["error"] == "Method Not Allowed"


def test_openapi_describes_every_route(platform: Platform) -> None:
    """/api/v1/openapi.json is an OpenAPI 3 document listing the served routes."""
    document = get(platform, "/openapi.json").json()
    assert document["openapi"].startswith("3.")
    assert {"get"} <= set(document["paths"]["/channels"])
    assert "Channel" in document["components"]["schemas"]
