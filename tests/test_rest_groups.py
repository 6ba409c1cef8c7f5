"""Every resource group through the toolkit against a real platform: a round trip per group,
typed frames (golden ones built by hand), writes that change state, refusals as typed errors."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from pandas.testing import assert_frame_equal

import explorer
from explorer.emulator import Platform
from explorer.errors import BadRequest, Conflict, Forbidden, NotFound, PlatformError, Unauthorized
from explorer.rest import schemas, tables
from explorer.rest.channel import ANALYTICS, ANALYTICS_SERIES
from tests.chatkit import World
from tests.conftest import SMALL_WORLD, UNLIMITED
from tests.databases import start

#: A minimal JPEG: start of image, a JFIF header, end of image (the platform checks the magic).
JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00\xff\xd9"
UTC_MS = "datetime64[ms, UTC]"
#: The demo account ``viewer2`` (the demo accounts are the world's first users).
VIEWER2 = 4


@pytest.fixture(scope="module")
def world() -> Iterator[Platform]:
    """A platform of this module's own, so its writes stay out of the shared one."""
    with start(channels=SMALL_WORLD, rate_limits=False, buckets=UNLIMITED) as running:
        yield running


def _client(world: Platform, username: str | None) -> Iterator[explorer.Client]:
    """A sync client on ``world``, signed in as ``username`` (anonymous when None)."""
    credentials = {"username": username, "password": "explorer"} if username else {}
    with explorer.connect(world.base_url, progress=False, **credentials) as client:
        yield client


@pytest.fixture(scope="module")
def anon(world: Platform) -> Iterator[explorer.Client]:
    """An anonymous client."""
    yield from _client(world, None)


@pytest.fixture(scope="module")
def streamer(world: Platform) -> Iterator[explorer.Client]:
    """The owner of the partnered, online channel ``streamer``."""
    yield from _client(world, "streamer")


@pytest.fixture(scope="module")
def viewer(world: Platform) -> Iterator[explorer.Client]:
    """A plain signed-in viewer."""
    yield from _client(world, "viewer")


@pytest.fixture(scope="module")
def staff(world: Platform) -> Iterator[explorer.Client]:
    """Platform staff."""
    yield from _client(world, "staff")


@pytest.fixture(scope="module")
def viewer_id(viewer: explorer.Client) -> int:
    """The viewer's user id."""
    return int(viewer.me.info().index[0])


def _objects(*values: Any) -> Any:
    """An object column holding ``values`` as they are (lists stay lists)."""
    column = np.empty(len(values), dtype=object)
    column[:] = values
    return column


# -- golden frames ------------------------------------------------------------------------------


def test_analytics_points_become_a_sorted_utc_time_series() -> None:
    """Series points are indexed by their UTC time, sorted, with the series' declared dtypes."""
    points = [
        {"channel": 7, "time": "2020-07-01T01:00:00.000Z", "anon": 3, "authed": 5},
        {"channel": 7, "time": "2020-07-01T00:00:00.000Z", "anon": 0, "authed": 0},
    ]
    expected = pd.DataFrame(
        {
            "channel": pd.array([7, 7], dtype="Int64"),
            "anon": pd.array([0, 3], dtype="Int64"),
            "authed": pd.array([0, 5], dtype="Int64"),
        },
        index=pd.DatetimeIndex(
            ["2020-07-01T00:00:00", "2020-07-01T01:00:00"], tz="UTC", name="time"
        ).as_unit("ms"),
    )
    got = tables.time_series(points, "time", schemas.RECORDS["AnalyticViewers"])
    assert_frame_equal(got, expected)


def test_invoice_records_become_a_typed_frame() -> None:
    """An invoice gives nullable ints, a status category, its items as objects, UTC times."""
    items = [{"name": "Chat skill: confetti", "quantity": 1, "sparks": -500}]
    record = {
        "id": 9,
        "userId": 3,
        "status": "pending",
        "items": items,
        "sparks": -500,
        "createdAt": "2020-07-21T00:00:00.000Z",
        "updatedAt": "2020-07-21T00:00:00.000Z",
        "capturedAt": None,
    }
    day = pd.DatetimeIndex(["2020-07-21"], tz="UTC").as_unit("ms").array
    expected = pd.DataFrame(
        {
            "userId": pd.array([3], dtype="Int64"),
            "status": pd.Categorical(["pending"], categories=["pending", "captured"]),
            "items": _objects(items),
            "sparks": pd.array([-500], dtype="Int64"),
            "createdAt": day,
            "updatedAt": day,
            "capturedAt": pd.DatetimeIndex([pd.NaT], tz="UTC").as_unit("ms").array,
        },
        index=pd.Index([9], name="id"),
    )
    assert_frame_equal(tables.frame([record], schemas.INVOICE), expected)


def test_an_empty_series_keeps_its_columns_and_datetime_index() -> None:
    """No points still gives the series' columns over an empty UTC DatetimeIndex."""
    empty = tables.time_series([], "time", schemas.RECORDS["AnalyticStreamSession"])
    assert list(empty.columns) == ["channel", "online", "partnered", "duration", "type"]
    assert isinstance(empty.index, pd.DatetimeIndex) and str(empty.index.dtype) == UTC_MS


# -- follows, roles, relationship ---------------------------------------------------------------


def test_follow_shows_in_followers_and_the_count(
    viewer: explorer.Client, anon: explorer.Client, viewer_id: int
) -> None:
    """Following adds the caller to the followers and numFollowers; unfollowing undoes both."""
    followed = viewer.channel("streamer").follow()
    assert followed["following"].tolist() == [True]
    followers = anon.channel("streamer").followers()
    assert viewer_id in followers.index and str(followers["followedAt"].dtype) == UTC_MS
    left = viewer.channel("streamer").unfollow()
    assert left["following"].tolist() == [False]
    assert left["numFollowers"].iloc[0] == followed["numFollowers"].iloc[0] - 1


def test_set_roles_grants_and_revokes_a_role(
    streamer: explorer.Client, anon: explorer.Client, viewer_id: int
) -> None:
    """A granted role shows in the channel's users and the relationship; revoking removes it."""
    granted = streamer.channel("streamer").set_roles(viewer_id, add="Subscriber")
    assert "Subscriber" in granted.loc[viewer_id, "roles"]
    assert viewer_id in anon.channel("streamer").users(role="Subscriber").index
    relation = anon.channel("streamer").relationship(viewer_id)
    assert "Subscriber" in relation["status.roles"].iloc[0]
    revoked = streamer.channel("streamer").set_roles(viewer_id, remove=["Subscriber"])
    assert "Subscriber" not in revoked.loc[viewer_id, "roles"]


# -- hosting and discovery ----------------------------------------------------------------------


def test_set_hostee_shows_in_the_hosted_channels_hosters(
    streamer: explorer.Client, anon: explorer.Client
) -> None:
    """Hosting a channel lists the host among its hosters; stopping clears the hostee."""
    home = int(anon.channel("streamer").info().index[0])
    other = int(anon.channel("viewer").info().index[0])
    hosting = streamer.channel("streamer").set_hosting(other)
    assert hosting["hostee.id"].tolist() == [other]
    assert home in anon.channel(other).hosters().index
    streamer.channel("streamer").clear_hosting()
    assert anon.channel("streamer").hosting()["hosteeId"].isna().all()


def test_related_channels_are_channel_frames(anon: explorer.Client) -> None:
    """Related channels come back shaped like channels(), indexed by id."""
    related = anon.channel("streamer").related(max_rows=5)
    assert 0 < len(related) <= 5 and related.index.dtype == "int64"
    assert list(related.columns) == list(anon.channels(max_rows=1).columns)


# -- channel settings ---------------------------------------------------------------------------


def test_update_channel_changes_its_fields(
    streamer: explorer.Client, anon: explorer.Client
) -> None:
    """An edited description is answered and then read back by anyone."""
    edited = streamer.channel("streamer").update(description="Tonight: speedruns.")
    assert edited["description"].tolist() == ["Tonight: speedruns."]
    assert anon.channel("streamer").info()["description"].tolist() == ["Tonight: speedruns."]


def test_reset_stream_key_issues_a_new_key(streamer: explorer.Client) -> None:
    """Each reset answers a different key, the one the owner now reads."""
    first, second = (
        streamer.channel("streamer").reset_stream_key(),
        streamer.channel("streamer").reset_stream_key(),
    )
    assert first != second and streamer.channel("streamer").info()["streamKey"].tolist() == [second]


def test_preferences_are_dicts_that_merge_changes(streamer: explorer.Client) -> None:
    """Setting one preference keeps the others; None resets it to its default."""
    before = streamer.channel("streamer").preferences()
    after = streamer.channel("streamer").set_preferences({"channel:slowchat": 5})
    assert after == {**before, "channel:slowchat": 5}
    assert streamer.channel("streamer").set_preferences({"channel:slowchat": None}) == before


def test_emoticons_are_indexed_by_code(streamer: explorer.Client, anon: explorer.Client) -> None:
    """An emoticon added to the pack is read back with its place on the sprite sheet."""
    place = {"x": 24, "y": 0, "width": 24, "height": 24}
    streamer.channel("streamer").set_emoticons({"wave": place})
    pack = anon.channel("streamer").emoticons()
    assert pack.index.name == "code" and pack.loc["wave"].tolist() == list(place.values())


def test_discord_guild_channels_and_roles_are_frames(streamer: explorer.Client) -> None:
    """The guild's channels and roles are frames indexed by their Discord ids."""
    channels, roles = (
        streamer.channel("streamer").discord_channels(),
        streamer.channel("streamer").discord_roles(),
    )
    assert {"text", "voice"} <= set(channels["type"]) and channels.index.dtype == "str"
    assert len(roles) > 0 and roles["color"].dtype == "Int64"


def test_discord_settings_let_viewers_get_invites(
    streamer: explorer.Client, viewer: explorer.Client
) -> None:
    """Opening invites to everyone in the settings lets a viewer ask for one."""
    text = streamer.channel("streamer").discord_channels().query("type == 'text'").index[0]
    settings = {"inviteSettings": "everyone", "inviteChannel": text}
    assert streamer.channel("streamer").set_discord(settings)["inviteSettings"] == "everyone"
    assert viewer.channel("streamer").discord_invite()["eligible"] is True
    assert viewer.channel("streamer").new_discord_invite()["url"]


# -- partnership and suspension -----------------------------------------------------------------


def test_apply_for_partnership_is_pending(viewer: explorer.Client) -> None:
    """A fresh application is pending and is what the owner reads back."""
    applied = viewer.channel("viewer").apply_for_partnership(
        "Streaming every evening for a year now."
    )
    assert applied["status"].tolist() == ["pending"]
    assert_frame_equal(viewer.channel("viewer").partnership(), applied)


def test_partnership_codes_are_a_typed_frame(streamer: explorer.Client) -> None:
    """A partner's codes come back with their declared columns, indexed by id."""
    codes = streamer.channel("streamer").partnership_codes()
    assert codes.index.name == "id" and codes["state"].dtype == "category"


def test_suspension_hides_a_channel_until_lifted(
    staff: explorer.Client, anon: explorer.Client
) -> None:
    """A suspended channel is not found by others; unsuspending brings it back."""
    assert staff.channel("viewer2").suspend()["suspended"].tolist() == [True]
    with pytest.raises(NotFound):
        anon.channel("viewer2").info()
    assert staff.channel("viewer2").unsuspend()["suspended"].tolist() == [False]
    assert anon.channel("viewer2").info()["token"].tolist() == ["viewer2"]


# -- media --------------------------------------------------------------------------------------


def test_recordings_are_a_typed_frame(anon: explorer.Client) -> None:
    """A channel with VODs lists recordings indexed by id with state, duration and files."""
    token = anon.channels(where={"hasVod": True, "vodsEnabled": True}, max_rows=1)["token"].iloc[0]
    recordings = anon.channel(token).recordings(order="viewsTotal:desc")
    assert len(recordings) > 0 and recordings.index.dtype == "int64"
    assert recordings["state"].dtype == "category" and recordings["duration"].dtype == "float64"
    assert recordings["viewsTotal"].is_monotonic_decreasing


def test_manifests_are_text(anon: explorer.Client) -> None:
    """The HLS manifest is a playlist; the JSON kinds come back as their text."""
    assert anon.channel("streamer").manifest().startswith("#EXTM3U")
    assert anon.channel("streamer").manifest("light2").startswith("{")


def test_a_manifest_kind_is_checked_before_sending(anon: explorer.Client) -> None:
    """An unknown manifest kind raises ValueError naming the kinds."""
    with pytest.raises(ValueError, match="m3u8"):
        anon.channel("streamer").manifest("mpd")


def test_the_manifest_of_an_offline_channel_is_not_found(anon: explorer.Client) -> None:
    """Offline channels have no manifest: the platform's 404."""
    offline = anon.channels(where={"online": False}, max_rows=1)["token"].iloc[0]
    with pytest.raises(NotFound):
        anon.channel(offline).manifest()


def test_upload_a_thumbnail_from_a_path(
    streamer: explorer.Client, anon: explorer.Client, tmp_path: Path
) -> None:
    """A file uploaded by path is stored, and its id serves the exact bytes."""
    image = tmp_path / "thumb.jpg"
    image.write_bytes(JPEG)
    stored = streamer.channel("streamer").set_thumbnail(image)
    assert stored["contentType"].tolist() == ["image/jpeg"]
    assert anon.image(int(stored.index[0])) == JPEG


def test_upload_a_banner_from_bytes_then_remove_it(
    streamer: explorer.Client, anon: explorer.Client
) -> None:
    """Uploaded bytes become the banner; removing it makes the banner not found."""
    stored = streamer.channel("streamer").set_banner(JPEG)
    assert anon.channel("streamer").banner().index.tolist() == stored.index.tolist()
    streamer.channel("streamer").clear_banner()
    with pytest.raises(NotFound):
        anon.channel("streamer").banner()


def test_an_upload_that_is_not_an_image_is_refused(streamer: explorer.Client) -> None:
    """Bytes that are not PNG or JPEG get the platform's 415 as a PlatformError."""
    with pytest.raises(PlatformError) as refused:
        streamer.channel("streamer").set_badge(b"GIF89a not wanted")
    assert refused.value.status == 415


def test_unlock_transcodes_once(streamer: explorer.Client) -> None:
    """Unlocking sets hasTranscodes; unlocking again is a conflict."""
    assert streamer.channel("streamer").unlock_transcodes()["hasTranscodes"].tolist() == [True]
    with pytest.raises(Conflict):
        streamer.channel("streamer").unlock_transcodes()


# -- analytics ----------------------------------------------------------------------------------


def test_analytics_have_a_utc_datetime_index(streamer: explorer.Client) -> None:
    """A day of hourly viewers is 24 points on a sorted UTC DatetimeIndex."""
    day = streamer.channel("streamer").analytics(
        "viewers", start=datetime(2020, 7, 1), end="2020-07-02T00:00:00Z"
    )
    assert isinstance(day.index, pd.DatetimeIndex) and str(day.index.dtype) == UTC_MS
    assert len(day) == 24 and day.index.is_monotonic_increasing
    assert day.index[0] == pd.Timestamp("2020-07-01", tz="UTC")


def test_every_analytics_series_answers_with_its_columns(streamer: explorer.Client) -> None:
    """Each known series comes back with the columns its schema declares."""
    for series in ANALYTICS_SERIES:
        frame = streamer.channel("streamer").analytics(series, "2020-07-01", "2020-07-04")
        assert (
            list(frame.columns)
            == list(schemas.of_record(ANALYTICS.options[series].record).fields)[1:]
        ), series
        assert str(frame.index.dtype) == UTC_MS


def test_an_unknown_series_is_refused_before_sending(streamer: explorer.Client) -> None:
    """A series name not in ANALYTICS_SERIES raises ValueError."""
    with pytest.raises(ValueError, match="viewerSummary"):
        streamer.channel("streamer").analytics("viewer")


def test_analytics_of_another_channel_are_forbidden(viewer: explorer.Client) -> None:
    """Only the owner reads a channel's analytics."""
    with pytest.raises(Forbidden):
        viewer.channel("streamer").analytics("followers")


def test_a_backwards_range_is_a_bad_request_with_details(streamer: explorer.Client) -> None:
    """from after to answers 400 whose details name the parameter."""
    with pytest.raises(BadRequest) as refused:
        streamer.channel("streamer").analytics("cpm", start="2020-07-05", end="2020-07-01")
    assert [d["path"] for d in refused.value.details] == ["from"]


# -- chat presence ------------------------------------------------------------------------------


def test_chat_users_lists_who_is_in_the_chat(world: Platform, viewer_id: int) -> None:
    """A viewer in the chat is listed, found by prefix and fetched by id, with their roles."""
    chat_world = World(world)

    async def scenario() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
        chat = await chat_world.join("viewer")
        try:
            async with explorer.AsyncClient(world.base_url, progress=False) as api:
                return (
                    await api.channel("streamer").chatters(),
                    await api.channel("streamer").find_chatters("VIE"),
                    await api.channel("streamer").chatter(viewer_id),
                )
        finally:
            await chat.close()

    try:
        everyone, found, one = asyncio.run(scenario())
    finally:
        for client in chat_world.clients.values():
            client.close()
    assert viewer_id in everyone.index and everyone.index.name == "userId"
    assert viewer_id in found.index
    assert one["userName"].tolist() == ["viewer"] and "User" in one["userRoles"].iloc[0]


# -- confetti -----------------------------------------------------------------------------------


def test_confetti_create_update_delete(streamer: explorer.Client, anon: explorer.Client) -> None:
    """A created confetti is listed for its channel, changes, and is gone once deleted."""
    channel_id = int(anon.channel("streamer").info().index[0])
    made = streamer.create_confetti(
        "Hearts", [{"type": "emoji", "value": "💖"}], channel_id=channel_id, count=40
    )
    confetti_id = int(made.index[0])
    assert anon.channel("streamer").confetti().loc[confetti_id, "count"] == 40
    changed = streamer.confetti(confetti_id).update(durationMs=1500)
    assert changed["durationMs"].tolist() == [1500]
    streamer.confetti(confetti_id).delete()
    assert confetti_id not in anon.channel("streamer").confetti().index


def test_a_bad_particle_is_a_bad_request_naming_it(streamer: explorer.Client) -> None:
    """A color that is not #rrggbb is refused with details pointing at that particle."""
    with pytest.raises(BadRequest) as refused:
        streamer.create_confetti("Red", [{"type": "color", "value": "red"}])
    assert [d["path"] for d in refused.value.details] == ["particles.0"]


# -- interactive ----------------------------------------------------------------------------------


def test_game_create_update_list_delete(viewer: explorer.Client, anon: explorer.Client) -> None:
    """A new game is the caller's own, changes, and is not found once deleted."""
    game = viewer.create_game("Guess the Level", description="Vote on the next level.")
    game_id = int(game.index[0])
    assert game_id in viewer.games(listing="owned").index
    assert game_id not in anon.games().index  # no published version yet
    assert viewer.game(game_id).update(name="Level Vote")["name"].tolist() == ["Level Vote"]
    viewer.game(game_id).delete()
    with pytest.raises(NotFound):
        viewer.game(game_id).info()


def test_version_draft_submit_and_delete(viewer: explorer.Client) -> None:
    """A version starts as a draft, is submitted for review, withdrawn and deleted."""
    game_id = int(viewer.create_game("Poll Board").index[0])
    draft = viewer.game(game_id).add_version("0.1.0", controls={"scenes": []})
    version_id = int(draft.index[0])
    assert draft["state"].tolist() == ["draft"]
    assert viewer.game_version(version_id).update(state="pending")["state"].tolist() == ["pending"]
    assert version_id in viewer.game(game_id).versions().index
    viewer.game_version(version_id).update(state="draft")
    viewer.game_version(version_id).delete()
    assert viewer.game(game_id).versions().empty


def test_game_editors_are_added_and_removed(viewer: explorer.Client) -> None:
    """An added editor is listed until removed."""
    game_id = int(viewer.create_game("Co-op Quiz").index[0])
    assert viewer.game(game_id).add_editor(VIEWER2).index.tolist() == [VIEWER2]
    assert viewer.game(game_id).editors().index.tolist() == [VIEWER2]
    viewer.game(game_id).remove_editor(VIEWER2)
    assert viewer.game(game_id).editors().empty


def test_upload_a_game_cover(viewer: explorer.Client) -> None:
    """A cover upload is stored and the game's coverUrl points at it."""
    game_id = int(viewer.create_game("Cover Story").index[0])
    stored = viewer.game(game_id).set_cover(JPEG)
    assert viewer.game(game_id).info()["coverUrl"].tolist() == stored["url"].tolist()


def test_interactive_hosts_channel_and_robot(
    streamer: explorer.Client, anon: explorer.Client
) -> None:
    """A channel's game, its published version and host, and the owner's robot key."""
    hosts = anon.interactive_hosts()
    session = anon.channel("streamer").interactive()
    assert session["version.state"].tolist() == ["published"]
    assert session["address"].iloc[0].startswith(tuple(hosts["address"]))
    robot = streamer.channel("streamer").interactive_robot()
    assert robot["gameId"].tolist() == session["gameId"].tolist() and robot["key"].iloc[0]


def test_an_unknown_game_listing_is_refused_before_sending(anon: explorer.Client) -> None:
    """A listing outside GAME_LISTINGS raises ValueError."""
    with pytest.raises(ValueError, match="owned"):
        anon.games(listing="mine")


# -- the caller's account -------------------------------------------------------------------------


def test_achievements_show_progress_only_when_signed_in(
    streamer: explorer.Client, anon: explorer.Client
) -> None:
    """Signed in, achievements carry earned/earnedAt; anonymous callers get the catalogue."""
    mine, public = streamer.achievements(), anon.achievements()
    assert mine.index.name == "slug" and mine["earned"].dtype == "boolean"
    assert "earned" not in public.columns and public.index.equals(mine.index)


def test_capture_an_invoice_exactly_once(viewer: explorer.Client) -> None:
    """Capturing a pending invoice credits its sparks; a second capture is a conflict."""
    invoices = viewer.me.invoices()
    invoice_id = int(invoices.query("status == 'pending' and sparks > 0").index[0])
    before = viewer.me.info()["sparks"].iloc[0]
    captured = viewer.me.capture_invoice(invoice_id)
    assert captured["status"].tolist() == ["captured"] and captured["capturedAt"].notna().all()
    assert viewer.me.info()["sparks"].iloc[0] == before + captured["sparks"].iloc[0]
    with pytest.raises(Conflict):
        viewer.me.capture_invoice(invoice_id)
    assert viewer.me.invoice(invoice_id)["status"].tolist() == ["captured"]


def test_share_a_subscription_notification(streamer: explorer.Client) -> None:
    """A subscription notification can be shared to chat and the share taken back."""
    notes = streamer.me.notifications()
    note = str(notes[notes["type"] == "subscribe"].index[0])
    assert streamer.me.share_subscription(note)["payload"].iloc[0]["shared"] is True
    assert streamer.me.notification(note)["payload"].iloc[0]["shared"] is True
    assert streamer.me.unshare_subscription(note)["payload"].iloc[0]["shared"] is False


def test_unsubscribe_email_lists_the_opt_outs(viewer: explorer.Client) -> None:
    """Opting out of a category answers every opt-out held, indexed by category."""
    held = viewer.me.unsubscribe_email("host")
    assert "host" in held.index and str(held["since"].dtype) == UTC_MS


def test_update_user_changes_the_bio(viewer: explorer.Client, viewer_id: int) -> None:
    """A new bio is answered and read back."""
    bio = "Here for the speedruns."
    assert viewer.user(viewer_id).update(bio=bio)["bio"].tolist() == [bio]
    assert viewer.user(viewer_id).info()["bio"].tolist() == [bio]


def test_oauth_clients_register_list_delete(viewer: explorer.Client) -> None:
    """A confidential client shows its secret once, is listed without it, then deleted."""
    made = viewer.me.add_oauth_client("Notebook", "https://example.org/cb", confidential=True)
    client_id = made.index[0]
    assert made["secret"].iloc[0] and made["confidential"].tolist() == [True]
    listed = viewer.me.oauth_clients()
    assert client_id in listed.index and "secret" not in listed.columns
    viewer.me.remove_oauth_client(client_id)
    assert client_id not in viewer.me.oauth_clients().index


def test_invoices_need_a_signed_in_caller(anon: explorer.Client) -> None:
    """Without credentials the platform's 401 arrives as Unauthorized."""
    with pytest.raises(Unauthorized):
        anon.me.invoices()


# -- platform-wide ------------------------------------------------------------------------------


def test_staff_announcements_reach_every_user(
    staff: explorer.Client, viewer: explorer.Client
) -> None:
    """An announcement is counted and arrives among a viewer's notifications."""
    made = staff.announce("Maintenance at midnight.", level="warning")
    assert made["level"].tolist() == ["warning"] and made["recipients"].iloc[0] > 0
    latest = viewer.me.notifications().query("type == 'announcement'")["payload"]
    assert any(p["message"] == "Maintenance at midnight." for p in latest)


def test_only_staff_may_announce(streamer: explorer.Client) -> None:
    """A user without the staff role gets Forbidden."""
    with pytest.raises(Forbidden):
        streamer.announce("Free sparks for all!")


def test_frontend_versions_of_one_app(anon: explorer.Client) -> None:
    """Filtering by app keeps that app's releases, one of them current."""
    web = anon.frontend_versions(app="web")
    assert set(web["app"]) == {"web"} and web["current"].sum() == 1
    assert web["releasedAt"].is_monotonic_decreasing


def test_the_best_ingest_is_the_least_loaded(anon: explorer.Client) -> None:
    """best_ingest is one of the ingests, with the lowest load."""
    every, best = anon.ingests(), anon.best_ingest()
    assert best.index[0] in every.index
    assert best["load"].iloc[0] == every["load"].min()


def test_language_listings(anon: explorer.Client) -> None:
    """Active languages are among the used ones, which are among the available ones."""
    used, active = anon.languages(), anon.languages("active")
    available = anon.languages("available")
    assert set(active.index) <= set(used.index) <= set(available.index)
    assert (active["online"] > 0).all() and used["channels"].dtype == "Int64"


def test_group_methods_await_on_the_async_client(world: Platform) -> None:
    """AsyncClient serves the same group methods as coroutines."""

    async def read() -> pd.DataFrame:
        async with explorer.AsyncClient(world.base_url, progress=False) as api:
            return await api.channel("streamer").confetti()

    assert len(asyncio.run(read())) >= 2


def test_a_channel_that_does_not_exist_is_not_found(anon: explorer.Client) -> None:
    """Sub-resources of an unknown channel raise NotFound with the platform's message."""
    with pytest.raises(NotFound, match="Channel"):
        anon.channel("no-such-channel").followers()
