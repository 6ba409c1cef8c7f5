"""Interactive games, editors, versions and channel sessions: state, permissions, bad input.

The seeded world has "Streamer Trivia" (owned by streamer, edited by moderator, versions
1.0.0 published, 1.1.0 pending, 1.2.0 draft, run on the streamer's channel) and the viewer's
unpublished "Prototype Racer".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from explorer.emulator import Platform

SignIn = Callable[..., httpx.Client]
PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 64
#: The id of the seeded "Streamer Trivia" (the first game stored).
TRIVIA = 1


def owned_game(client: httpx.Client) -> dict[str, Any]:
    """The first game the signed-in ``client`` owns."""
    game: dict[str, Any] = client.get("/interactive/games/owned").json()[0]
    return game


def versions_by_name(client: httpx.Client, game_id: int) -> dict[str, dict[str, Any]]:
    """The versions of ``game_id`` that ``client`` sees, by version string."""
    return {v["version"]: v for v in client.get(f"/interactive/games/{game_id}/versions").json()}


def test_catalogue_lists_only_published_games(platform: Platform) -> None:
    """GET /interactive/games lists games with a published version, not private drafts."""
    reply = httpx.get(f"{platform.base_url}/interactive/games")
    names = [game["name"] for game in reply.json()]
    assert "Streamer Trivia" in names and "Prototype Racer" not in names
    assert reply.headers["X-Total-Count"] == str(len(names))
    assert all(game["hasPublishedVersions"] for game in reply.json())


def test_unpublished_game_is_hidden_from_others(platform: Platform, signed_in: SignIn) -> None:
    """A game with nothing published is 404 for other users and anonymous, 200 for its owner."""
    viewer = signed_in(platform.base_url, "viewer")
    game = owned_game(viewer)
    path = f"/interactive/games/{game['id']}"
    assert viewer.get(path).status_code == 200
    assert signed_in(platform.base_url, "viewer2").get(path).status_code == 404
    assert httpx.get(platform.base_url + path).status_code == 404


def test_owned_shared_and_editor_listings(platform: Platform, signed_in: SignIn) -> None:
    """An editor sees the game under shared and editor, not owned; the owner under owned."""
    moderator = signed_in(platform.base_url, "moderator")
    listed = {
        which: [g["name"] for g in moderator.get(f"/interactive/games/{which}").json()]
        for which in ("owned", "shared", "editor")
    }
    assert listed == {"owned": [], "shared": ["Streamer Trivia"], "editor": ["Streamer Trivia"]}
    streamer = signed_in(platform.base_url, "streamer")
    assert [g["name"] for g in streamer.get("/interactive/games/shared").json()] == []


def test_reviewing_lists_pending_games_for_staff_only(
    platform: Platform, signed_in: SignIn
) -> None:
    """Staff see games awaiting review; anyone else gets 403, anonymous 401."""
    staff = signed_in(platform.base_url, "staff")
    assert "Streamer Trivia" in [
        g["name"] for g in staff.get("/interactive/games/reviewing").json()
    ]
    viewer = signed_in(platform.base_url, "viewer")
    assert viewer.get("/interactive/games/reviewing").status_code == 403
    assert httpx.get(f"{platform.base_url}/interactive/games/reviewing").status_code == 401


def test_game_round_trip(make_platform: Callable[..., Platform], signed_in: SignIn) -> None:
    """A game is created (201), read, changed and deleted (then 404)."""
    platform = make_platform()
    viewer2 = signed_in(platform.base_url, "viewer2")
    created = viewer2.post("/interactive/games", json={"name": "Quiz", "description": "Q"})
    assert created.status_code == 201
    game = created.json()
    assert game["ownerId"] == viewer2.get("/users/current").json()["id"]
    assert game["controlVersion"] == "2.0" and game["hasPublishedVersions"] is False
    path = f"/interactive/games/{game['id']}"
    changed = viewer2.put(path, json={"name": "Quiz Night", "description": None}).json()
    assert (changed["name"], changed["description"]) == ("Quiz Night", None)
    assert viewer2.get(path).json() == changed
    assert viewer2.delete(path).status_code == 204
    assert viewer2.get(path).status_code == 404


def test_first_game_earns_the_achievement(
    make_platform: Callable[..., Platform], signed_in: SignIn
) -> None:
    """Creating games earns game-creator once: its sparks credited and notified once."""
    platform = make_platform()
    viewer2 = signed_in(platform.base_url, "viewer2")
    before = viewer2.get("/users/current").json()["sparks"]
    for name in ("One", "Two"):
        viewer2.post("/interactive/games", json={"name": name})
    earned = {a["slug"]: a for a in viewer2.get("/achievements").json()}["game-creator"]
    assert earned["earned"] is True
    assert viewer2.get("/users/current").json()["sparks"] == before + earned["sparks"]
    told = [n for n in viewer2.get("/notifications").json() if n["type"] == "achievement"]
    assert [n["payload"]["slug"] for n in told].count("game-creator") == 1


@pytest.mark.parametrize(
    "body",
    [{}, {"name": ""}, {"name": 5}, {"name": "x" * 81}, {"name": "ok", "controlVersion": None}],
)
def test_create_game_bad_input_is_400(platform: Platform, signed_in: SignIn, body: Any) -> None:
    """A missing, empty, mistyped or too long field is refused with 400 naming it."""
    reply = signed_in(platform.base_url, "viewer").post("/interactive/games", json=body)
    assert reply.status_code == 400
    assert reply.json()["details"][0]["path"] in ("name", "controlVersion")


def test_create_game_needs_sign_in(platform: Platform) -> None:
    """Anonymous game creation is 401."""
    reply = httpx.post(f"{platform.base_url}/interactive/games", json={"name": "x"})
    assert reply.status_code == 401


def test_strangers_cannot_change_or_delete_a_game(platform: Platform, signed_in: SignIn) -> None:
    """A user who neither owns nor edits a visible game gets 403 on PUT and DELETE."""
    viewer = signed_in(platform.base_url, "viewer")
    path = f"/interactive/games/{TRIVIA}"
    assert viewer.put(path, json={"name": "Mine now"}).status_code == 403
    assert viewer.delete(path).status_code == 403


def test_editor_may_change_but_not_delete(
    make_platform: Callable[..., Platform], signed_in: SignIn
) -> None:
    """An editor updates the game but cannot delete it."""
    platform = make_platform()
    moderator = signed_in(platform.base_url, "moderator")
    path = f"/interactive/games/{TRIVIA}"
    assert moderator.put(path, json={"installation": "Press start."}).status_code == 200
    assert moderator.delete(path).status_code == 403


def test_owner_adds_and_removes_editors(
    make_platform: Callable[..., Platform], signed_in: SignIn
) -> None:
    """An added editor is listed and sees the game as shared; a second add is 409."""
    platform = make_platform()
    streamer, viewer = (signed_in(platform.base_url, n) for n in ("streamer", "viewer"))
    viewer_id = viewer.get("/users/current").json()["id"]
    editors = f"/interactive/games/{TRIVIA}/editors"
    added = streamer.post(editors, json={"userId": viewer_id})
    assert added.status_code == 201 and added.json()["username"] == "viewer"
    assert streamer.post(editors, json={"userId": viewer_id}).status_code == 409
    assert "viewer" in [e["username"] for e in httpx.get(platform.base_url + editors).json()]
    assert [g["id"] for g in viewer.get("/interactive/games/shared").json()] == [TRIVIA]
    assert streamer.delete(f"{editors}/{viewer_id}").status_code == 204
    assert viewer.get("/interactive/games/shared").json() == []
    assert streamer.delete(f"{editors}/{viewer_id}").status_code == 404


def test_editor_may_leave_but_not_manage_editors(
    make_platform: Callable[..., Platform], signed_in: SignIn
) -> None:
    """An editor cannot add editors (403) but can remove themself (204)."""
    platform = make_platform()
    moderator = signed_in(platform.base_url, "moderator")
    me = moderator.get("/users/current").json()["id"]
    editors = f"/interactive/games/{TRIVIA}/editors"
    assert moderator.post(editors, json={"userId": 4}).status_code == 403
    assert moderator.delete(f"{editors}/{me}").status_code == 204
    assert moderator.get("/interactive/games/shared").json() == []


@pytest.mark.parametrize(
    ("body", "status"),
    [({"userId": "3"}, 400), ({"userId": True}, 400), ({"userId": 999_999}, 404)],
)
def test_add_editor_bad_input(
    platform: Platform, signed_in: SignIn, body: dict[str, Any], status: int
) -> None:
    """A non-numeric user id is 400, an unknown user 404."""
    streamer = signed_in(platform.base_url, "streamer")
    reply = streamer.post(f"/interactive/games/{TRIVIA}/editors", json=body)
    assert reply.status_code == status


def test_owner_cannot_be_added_as_editor(platform: Platform, signed_in: SignIn) -> None:
    """Adding the owner as an editor is 400."""
    streamer = signed_in(platform.base_url, "streamer")
    game = owned_game(streamer)
    reply = streamer.post(
        f"/interactive/games/{game['id']}/editors", json={"userId": game["ownerId"]}
    )
    assert reply.status_code == 400


def test_cover_upload_sets_cover_url(
    make_platform: Callable[..., Platform], signed_in: SignIn
) -> None:
    """An editor's PNG upload becomes the game's coverUrl, which serves those bytes."""
    platform = make_platform()
    moderator = signed_in(platform.base_url, "moderator")
    upload = moderator.post(f"/interactive/games/{TRIVIA}/cover", files={"file": ("c.png", PNG)})
    assert upload.status_code == 201
    url = moderator.get(f"/interactive/games/{TRIVIA}").json()["coverUrl"]
    assert url == upload.json()["url"]
    assert httpx.get(platform.root_url + url).content == PNG


def test_cover_upload_by_a_stranger_is_403(platform: Platform, signed_in: SignIn) -> None:
    """Someone who neither owns nor edits the game cannot upload its cover."""
    viewer = signed_in(platform.base_url, "viewer")
    reply = viewer.post(f"/interactive/games/{TRIVIA}/cover", files={"file": ("c.png", PNG)})
    assert reply.status_code == 403


def test_cover_that_is_not_an_image_is_415(platform: Platform, signed_in: SignIn) -> None:
    """A cover that is neither PNG nor JPEG is 415."""
    streamer = signed_in(platform.base_url, "streamer")
    reply = streamer.post(f"/interactive/games/{TRIVIA}/cover", files={"file": ("c.gif", b"GIF")})
    assert reply.status_code == 415


def test_version_goes_draft_pending_published(
    make_platform: Callable[..., Platform], signed_in: SignIn
) -> None:
    """An editor drafts and submits a version; only staff publish it; then the channel runs it."""
    platform = make_platform()
    moderator, streamer, staff = (
        signed_in(platform.base_url, n) for n in ("moderator", "streamer", "staff")
    )
    created = moderator.post(
        "/interactive/versions",
        json={"gameId": TRIVIA, "version": "2.0.0", "controls": {"scenes": []}},
    )
    assert created.status_code == 201
    version = created.json()
    assert (version["state"], version["versionOrder"]) == ("draft", 4)
    path = f"/interactive/versions/{version['id']}"
    assert moderator.put(path, json={"state": "pending"}).json()["state"] == "pending"
    assert streamer.put(path, json={"state": "published"}).status_code == 403
    assert staff.put(path, json={"state": "published"}).json()["state"] == "published"
    session = httpx.get(f"{platform.base_url}/interactive/streamer").json()
    assert session["version"]["version"] == "2.0.0"


def test_staff_reject_sends_a_version_back_to_draft(
    make_platform: Callable[..., Platform], signed_in: SignIn
) -> None:
    """Staff may move a pending version back to draft."""
    platform = make_platform()
    pending = versions_by_name(signed_in(platform.base_url, "streamer"), TRIVIA)["1.1.0"]
    staff = signed_in(platform.base_url, "staff")
    reply = staff.put(f"/interactive/versions/{pending['id']}", json={"state": "draft"})
    assert reply.json()["state"] == "draft"


def test_impossible_move_is_409(platform: Platform, signed_in: SignIn) -> None:
    """draft -> published skips review: 409, for staff too."""
    draft = versions_by_name(signed_in(platform.base_url, "streamer"), TRIVIA)["1.2.0"]
    staff = signed_in(platform.base_url, "staff")
    reply = staff.put(f"/interactive/versions/{draft['id']}", json={"state": "published"})
    assert reply.status_code == 409


def test_published_version_is_final(platform: Platform, signed_in: SignIn) -> None:
    """A published version can be neither changed nor deleted (409)."""
    streamer = signed_in(platform.base_url, "streamer")
    published = versions_by_name(streamer, TRIVIA)["1.0.0"]
    path = f"/interactive/versions/{published['id']}"
    assert streamer.put(path, json={"changelog": "Rewritten."}).status_code == 409
    assert streamer.delete(path).status_code == 409


def test_draft_round_trip(make_platform: Callable[..., Platform], signed_in: SignIn) -> None:
    """A draft's content changes with PUT; DELETE removes it."""
    platform = make_platform()
    streamer = signed_in(platform.base_url, "streamer")
    draft = versions_by_name(streamer, TRIVIA)["1.2.0"]
    path = f"/interactive/versions/{draft['id']}"
    changed = streamer.put(path, json={"version": "1.3.0", "changelog": "Teams of four."})
    assert (changed.json()["version"], changed.json()["changelog"]) == ("1.3.0", "Teams of four.")
    assert streamer.delete(path).status_code == 204
    assert streamer.get(path).status_code == 404


def test_drafts_are_hidden_from_others(platform: Platform, signed_in: SignIn) -> None:
    """Others see only published versions; a draft by id is 404 for them."""
    streamer = signed_in(platform.base_url, "streamer")
    draft = versions_by_name(streamer, TRIVIA)["1.2.0"]
    public = httpx.get(f"{platform.base_url}/interactive/games/{TRIVIA}/versions").json()
    assert [v["state"] for v in public] == ["published"]
    viewer = signed_in(platform.base_url, "viewer")
    assert viewer.get(f"/interactive/versions/{draft['id']}").status_code == 404
    assert viewer.get(f"/interactive/versions/{public[0]['id']}").status_code == 200


def test_strangers_cannot_touch_versions(platform: Platform, signed_in: SignIn) -> None:
    """A non-editor gets 403 adding a version to or changing one of a visible game."""
    viewer = signed_in(platform.base_url, "viewer")
    reply = viewer.post("/interactive/versions", json={"gameId": TRIVIA, "version": "9.0.0"})
    assert reply.status_code == 403
    published = versions_by_name(viewer, TRIVIA)["1.0.0"]
    assert (
        viewer.put(f"/interactive/versions/{published['id']}", json={"state": "draft"}).status_code
        == 403
    )


def test_duplicate_version_is_409(platform: Platform, signed_in: SignIn) -> None:
    """A version string already used in the game is 409."""
    streamer = signed_in(platform.base_url, "streamer")
    reply = streamer.post("/interactive/versions", json={"gameId": TRIVIA, "version": "1.0.0"})
    assert reply.status_code == 409


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"version": "1.0.0"}, "gameId"),
        ({"gameId": TRIVIA, "version": "one"}, "version"),
        ({"gameId": TRIVIA}, "version"),
        ({"gameId": TRIVIA, "version": "3.0.0", "controls": []}, "controls"),
    ],
)
def test_version_bad_input_is_400(
    platform: Platform, signed_in: SignIn, body: dict[str, Any], field: str
) -> None:
    """A missing game id, a non-semver version or non-object controls is 400 naming it."""
    reply = signed_in(platform.base_url, "streamer").post("/interactive/versions", json=body)
    assert reply.status_code == 400
    assert reply.json()["details"][0]["path"] == field


def test_unknown_state_is_400(platform: Platform, signed_in: SignIn) -> None:
    """PUT with a state outside draft/pending/published is 400."""
    streamer = signed_in(platform.base_url, "streamer")
    draft = versions_by_name(streamer, TRIVIA)["1.2.0"]
    reply = streamer.put(f"/interactive/versions/{draft['id']}", json={"state": "live"})
    assert reply.status_code == 400


def test_hosts_are_listed(platform: Platform) -> None:
    """GET /interactive/hosts lists wss addresses."""
    hosts = httpx.get(f"{platform.base_url}/interactive/hosts").json()
    assert hosts and all(h["address"].startswith("wss://") for h in hosts)


def test_channel_runs_newest_published_version(platform: Platform) -> None:
    """The streamer's channel runs Trivia 1.0.0 (not the pending 1.1.0) on one of the hosts."""
    session = httpx.get(f"{platform.base_url}/interactive/streamer").json()
    assert session["interactive"] is True and session["version"]["version"] == "1.0.0"
    hosts = [h["address"] for h in httpx.get(f"{platform.base_url}/interactive/hosts").json()]
    assert session["address"].rsplit("/", 1)[0] in hosts


def test_channel_without_game_has_no_session(platform: Platform) -> None:
    """A channel running no game answers with a null version and address."""
    session = httpx.get(f"{platform.base_url}/interactive/viewer").json()
    assert (session["gameId"], session["version"], session["address"]) == (None, None, None)


def test_unknown_channel_is_404(platform: Platform) -> None:
    """GET /interactive/{channel} of no channel is 404."""
    assert httpx.get(f"{platform.base_url}/interactive/nobody-here").status_code == 404


def test_robot_is_for_the_channel_owner(platform: Platform, signed_in: SignIn) -> None:
    """The robot address and key go to the owner; others 403, anonymous 401."""
    robot = signed_in(platform.base_url, "streamer").get("/interactive/streamer/robot")
    assert robot.status_code == 200 and robot.json()["address"].startswith("wss://")
    viewer = signed_in(platform.base_url, "viewer")
    assert viewer.get("/interactive/streamer/robot").status_code == 403
    assert httpx.get(f"{platform.base_url}/interactive/streamer/robot").status_code == 401


def test_deleting_a_game_stops_the_channel_session(
    make_platform: Callable[..., Platform], signed_in: SignIn
) -> None:
    """After its game is deleted the channel is no longer interactive."""
    platform = make_platform()
    streamer = signed_in(platform.base_url, "streamer")
    assert streamer.delete(f"/interactive/games/{TRIVIA}").status_code == 204
    session = httpx.get(f"{platform.base_url}/interactive/streamer").json()
    assert (session["interactive"], session["gameId"], session["version"]) == (False, None, None)
    channel = httpx.get(f"{platform.base_url}/channels/streamer").json()
    assert (channel["interactive"], channel["interactiveGameId"]) == (False, None)


def test_deleting_a_game_removes_its_cover(
    make_platform: Callable[..., Platform], signed_in: SignIn
) -> None:
    """A deleted game's cover URL answers 404."""
    platform = make_platform()
    streamer = signed_in(platform.base_url, "streamer")
    url = streamer.post(f"/interactive/games/{TRIVIA}/cover", files={"file": ("c.png", PNG)})
    streamer.delete(f"/interactive/games/{TRIVIA}")
    assert httpx.get(platform.root_url + url.json()["url"]).status_code == 404
